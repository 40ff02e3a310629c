#include "util/passwd.h"

#include <charconv>
#include <fstream>
#include <vector>

namespace devgraph {
namespace {

// Calls `match(fields)` for each well-formed line until it returns true;
// returns that line's home directory (field 6).
template <typename Match>
std::optional<std::string> find_home(const std::string& passwd_file, Match match) {
  std::ifstream in(passwd_file);
  std::string line;
  while (std::getline(in, line)) {
    std::vector<std::string_view> fields;
    std::string_view rest(line);
    while (true) {
      auto colon = rest.find(':');
      fields.push_back(rest.substr(0, colon));
      if (colon == std::string_view::npos) break;
      rest.remove_prefix(colon + 1);
    }
    if (fields.size() != 7 || fields[0].empty()) continue;
    if (!match(fields)) continue;
    if (fields[5].empty()) return std::nullopt;
    return std::string(fields[5]);
  }
  return std::nullopt;
}

}  // namespace

std::optional<std::string> home_of_user(std::string_view name, const std::string& passwd_file) {
  if (name.empty()) return std::nullopt;
  return find_home(passwd_file, [&](const auto& f) { return f[0] == name; });
}

std::optional<std::string> home_of_uid(uid_t uid, const std::string& passwd_file) {
  return find_home(passwd_file, [&](const auto& f) {
    unsigned long long v = 0;
    auto [end, ec] = std::from_chars(f[2].data(), f[2].data() + f[2].size(), v);
    return ec == std::errc() && end == f[2].data() + f[2].size() && v == uid;
  });
}

}  // namespace devgraph
