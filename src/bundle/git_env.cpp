#include "bundle/git_env.h"

#include <cstdlib>

#include "util/args.h"

namespace devgraph::bundle {

std::map<std::string, std::string> driver_git_env() {
  long long n = 0;
  if (const char* count = std::getenv("GIT_CONFIG_COUNT")) {
    auto parsed = parse_int(count);
    if (!parsed || *parsed < 0) return {};  // a malformed count: leave git's config alone
    n = *parsed;
  }
  std::string i = std::to_string(n);
  return {{"GIT_CONFIG_COUNT", std::to_string(n + 1)},
          {"GIT_CONFIG_KEY_" + i, "maintenance.auto"},
          {"GIT_CONFIG_VALUE_" + i, "false"}};
}

}  // namespace devgraph::bundle
