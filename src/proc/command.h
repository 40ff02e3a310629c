// Running one short external command to completion: git, gh, a project's
// test or build command. For the long-lived, concurrently supervised agent
// processes see the agents module.
//
// Contract: argv only (never a shell); the child gets its own process
// group, stdin from /dev/null unless `input` is given, and the environment
// of this process plus `env` (an empty value removes a variable). stdout
// and stderr are read concurrently into buffers bounded by
// `max_output_bytes` each (the tail is kept). When `timeout` passes, the
// whole process group gets SIGTERM, then SIGKILL after `kill_grace`.
// With `stop_on_signal`, a stop signal (SIGINT, SIGTERM, SIGHUP; see
// proc/stop_signals.h) does the same while the command runs, and the
// result's `interrupted_by` says so; a second one KILLs without waiting
// out the grace.
#pragma once

#include <chrono>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "util/expected.h"

namespace devgraph {

struct CommandSpec {
  std::vector<std::string> argv;
  std::string cwd;                         // empty: inherit
  std::map<std::string, std::string> env;  // overrides; "" value unsets
  std::string input;                       // written to stdin when non-empty
  std::chrono::milliseconds timeout{std::chrono::minutes(10)};
  std::chrono::milliseconds kill_grace{std::chrono::seconds(5)};
  size_t max_output_bytes = 16 * 1024 * 1024;
  // Called about every `wait_tick` while the command runs, from the wait
  // itself (no thread): a caller's live view keeps its clock moving during
  // a long test suite. Empty: not called.
  std::function<void()> on_wait;
  std::chrono::milliseconds wait_tick{250};
  // Watch the stop signals while the command runs (they do not end this
  // process meanwhile). A stop signal nobody has read yet when run() is
  // called keeps the command from starting at all: the result is then
  // interrupted at once, with exit_code -1 and no output.
  bool stop_on_signal = false;
};

struct CommandResult {
  int exit_code = -1;   // -1 when the child died by a signal
  int term_signal = 0;  // the signal, when it died by one
  bool timed_out = false;
  bool output_truncated = false;
  std::string out;
  std::string err;
  // The stop signal that ended the command early (stop_on_signal), or 0.
  // Set whatever the command did on receiving its TERM, even exit 0.
  int interrupted_by = 0;
  bool ok() const { return exit_code == 0 && !timed_out && interrupted_by == 0; }
  bool interrupted() const { return interrupted_by != 0; }
};

// The seam: production code takes a CommandRunner so tests can answer
// commands without spawning anything.
class CommandRunner {
 public:
  virtual ~CommandRunner() = default;
  // Fails only when the command could not be started (not found, bad cwd);
  // a command that ran and exited non-zero is a successful CommandResult.
  virtual Expected<CommandResult> run(const CommandSpec& spec) = 0;
};

class RealCommandRunner final : public CommandRunner {
 public:
  Expected<CommandResult> run(const CommandSpec& spec) override;
};

// Convenience: run with a RealCommandRunner.
Expected<CommandResult> run_command(const CommandSpec& spec);

// "git status" -> the words joined for messages, quoting words with spaces.
std::string describe_argv(const std::vector<std::string>& argv);

}  // namespace devgraph
