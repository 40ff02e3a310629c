// The evidence gates of the task lane (GRAPH.yaml `evidence` on a node):
// a test writer's DONE needs a test devgraph has itself seen fail, and a
// task's verification needs that same check passing. Missing evidence is
// never success.
//
// Contract:
// - check_commands() is pure. A test writer's result lists in `commands`
//   exactly the commands that run its new test, in order (a build, then
//   the test, for a compiled language). They are persona output, so data
//   until each passes this filter: split into argv without a shell
//   (words.h), and allowed only when its program is
//   (a) the program of a recorded test or build command, with the words
//       that command has before its first option ("npm test", "go test",
//       "python3 -m pytest", "ctest");
//   (b) a file of the task's own, given as a path inside the worktree (its
//       footprint, or an artifact its writers reported): `tests/t.sh`;
//   (c) an interpreter (sh, bash, python3, node, ...) given such a file.
//   An interpreter never takes inline code (-c, -e, --eval, -p, ...), no
//   path leaves the worktree (absolute, or with a `..`), and git, gh,
//   devgraph and the like are never allowed. One command not allowed, or
//   none at all, is an error with the reason, for the writer to act on.
// - The check runs its commands in order and stops at the first that does
//   not exit 0. It is red proof when that one ran and exited non-zero, but
//   not 126 or 127 (the shell's "cannot run" and "not found"), not timed
//   out and not interrupted; it is green when every command exited 0.
// - The check is run by the driver with the bundle's command runner: argv,
//   the worktree as working directory, the command timeout, bounded output.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "proc/command.h"
#include "schedule/schedule.h"
#include "util/expected.h"

namespace devgraph::bundle {

// GRAPH.yaml `evidence` values.
inline constexpr std::string_view kEvidenceCheckFails = "check_fails";
inline constexpr std::string_view kEvidenceCheckPasses = "check_passes";

struct CheckCommand {
  std::vector<std::string> argv;
  std::string text;  // as the writer wrote it
};

struct CheckInputs {
  std::vector<std::string> commands;  // the test writer's `commands`, in order
  std::vector<std::string> recorded;  // the run's test and build commands
  const schedule::Footprint* footprint = nullptr;
  std::vector<std::string> artifacts;  // reported by the task's writers
};

Expected<std::vector<CheckCommand>> check_commands(const CheckInputs& in);

// What one command's run proves (a check's verdict is that of the first
// command that is not green, else green).
enum class CheckVerdict { red, green, not_run };
CheckVerdict verdict_of(const Expected<CommandResult>& run);

// One line for a person or a persona: "`tests/t.sh` exited 1".
std::string describe_check(const CheckCommand& cmd, const Expected<CommandResult>& run);

}  // namespace devgraph::bundle
