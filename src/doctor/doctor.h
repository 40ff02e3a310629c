// `devgraph doctor`: whether this machine and this repository are ready for
// devgraph, each check answered as ok, warning or problem with the one
// line that fixes it. The checks, by concept: tools.h (git, gh, the agent
// CLIs), repository.h (what `devgraph run` checks before it starts),
// setup.h (the placement guard, devgraph's grants, disk space),
// leftovers.h (stale locks, orphaned worktrees, runs waiting for a
// person).
//
// Contract:
// - Nothing is changed, anywhere: every check only reads files and runs
//   read-only commands (versions, help texts, `gh auth status`, git
//   queries) through the CommandRunner, argv only, each with a timeout and
//   bounded output; no model is ever called. A leftover is reported with
//   the command that clears it, never cleared.
// - Every check runs, whatever an earlier one found: a failing check is a
//   finding, never a stop. Findings come in a fixed order (tools,
//   repository, guard, install, disk, leftovers).
// - The exit code is 0 when no finding is a problem (warnings allowed),
//   1 otherwise.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "agents/backend.h"
#include "doctor/finding.h"
#include "guard/guard.h"
#include "install/install.h"
#include "proc/command.h"
#include "util/json.h"

namespace devgraph::doctor {

struct Options {
  std::string repo = ".";
  bool repo_given = false;  // --repo: a directory that is no repository is then a problem
  // The backend `devgraph run` would use (--agent): its CLI missing is a
  // problem, the others' a warning.
  agents::BackendKind agent = agents::BackendKind::claude;
  std::string claude_bin;  // --claude-bin
  std::optional<std::string> skill;
  guard::Roots roots;
  // home, devgraph_bin and the tools' config variables; `location` is set
  // to the primary clone.
  install::Context install;
  std::string path;  // $PATH, where the CLIs are looked for
};

std::vector<Finding> run_doctor(const Options& options, CommandRunner& runner);

bool any_problem(const std::vector<Finding>& findings);
// 0 without a problem, else 1.
int exit_code(const std::vector<Finding>& findings);

// One line per finding, `<level> <area> <message>[ — <fix>]`, in aligned
// columns, then a summary line.
std::string render_table(const std::vector<Finding>& findings);
// {"ok": no problem, "counts": {...}, "checks": [{"id", "area", "level",
// "message", "fix"}, ...]}.
Json to_json(const std::vector<Finding>& findings);

}  // namespace devgraph::doctor
