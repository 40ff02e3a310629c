#include "doctor/finding.h"

#include <utility>

namespace devgraph::doctor {

std::string_view level_name(Level level) {
  switch (level) {
    case Level::ok:
      return "ok";
    case Level::warning:
      return "warning";
    case Level::problem:
      return "problem";
  }
  return "problem";
}

Finding ok(std::string id, std::string area, std::string message) {
  return Finding{std::move(id), std::move(area), Level::ok, std::move(message), ""};
}

Finding warning(std::string id, std::string area, std::string message, std::string fix) {
  return Finding{std::move(id), std::move(area), Level::warning, std::move(message),
                 std::move(fix)};
}

Finding problem(std::string id, std::string area, std::string message, std::string fix) {
  return Finding{std::move(id), std::move(area), Level::problem, std::move(message),
                 std::move(fix)};
}

}  // namespace devgraph::doctor
