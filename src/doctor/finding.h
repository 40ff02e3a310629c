// One answer of `devgraph doctor`: what a check found, how serious it is,
// and the one line that fixes it.
//
// Contract: `message` and `fix` are one line each (no newline); `fix` is
// empty exactly when the level is ok. `id` names the check (stable, for
// scripts reading --json); `area` is the word the table shows.
#pragma once

#include <string>
#include <string_view>

namespace devgraph::doctor {

// ok: nothing to do. warning: devgraph works, but something is missing or
// left over that a person may want to look at. problem: a devgraph command
// would fail or misbehave until it is fixed (`doctor` exits 1).
enum class Level { ok, warning, problem };

std::string_view level_name(Level level);

struct Finding {
  std::string id;
  std::string area;
  Level level = Level::ok;
  std::string message;
  std::string fix;
};

Finding ok(std::string id, std::string area, std::string message);
Finding warning(std::string id, std::string area, std::string message, std::string fix);
Finding problem(std::string id, std::string area, std::string message, std::string fix);

}  // namespace devgraph::doctor
