// The simulated agent: a deterministic, offline stand-in for an agent CLI,
// driven by a scenario file. It runs as a real child process
// (`devgraph sim-agent ...`, the worktree as its working directory), so it
// goes through exactly the supervision path a real CLI does, and it prints
// the same JSON document as `claude -p --output-format json`.
//
// Scenario file (JSON; full description in docs/sim-scenario.md):
//
//   {
//     "default": { "latency_ms": 50, "result": {"status": "DONE", ...} },
//     "personas": {
//       "tdd-writer": [
//         { "task": "T1",
//           "files": [ {"path": "tests/test_add.py", "content": "..."} ],
//           "result": {"status": "DONE", "summary": "RED for {task}", "evidence": []} }
//       ],
//       "code-reviewer": [
//         { "call": 1, "result": {"status": "DONE_WITH_CONCERNS", ..., "findings": [{}]} },
//         { "result": {"status": "DONE", "summary": "approved", "evidence": []} }
//       ]
//     }
//   }
//
// A persona's rules are tried in order; the first whose conditions all hold
// is used, else "default". Conditions: "bundle" (exact bundle id), "task"
// (exact task id; "" matches a launch without a task), "call" (this is the
// Nth launch of this persona for this task, counting from 1), "after_call"
// (N < call), "dispatch_contains" (a substring of the prompt). Actions:
// "files" (written relative to the working directory, before the answer;
// absolute paths and ".." refused), "latency_ms" (one timed wait),
// "result" (the RESULT_JSON object), "text" (prose before the RESULT_JSON
// line), "resume_result" (what a --resume call answers; default:
// "result"), "fail" (a failure mode instead of the answer: "cli_error",
// "malformed", "junk", "hang", "usage_limit", "signal", "flood"),
// "exit_code" (cli_error, default 1), "reset_after_s" (usage_limit,
// default 60), "flood_bytes" (flood, default 64 MiB), "cost_usd" and
// "tokens" (what the answer reports it cost; default 0; a --resume
// answer reports the session's cost so far as claude does, twice
// "cost_usd", and its own tokens), "tool_calls"
// (the tool calls it reports, as claude's num_turns - 1; default: one read
// plus one write per file).
//
// Strings in "files" (paths and contents), "result", "resume_result" and
// "text" may use {persona}, {task} and {bundle} (each "" when the launch
// has none), replaced in one pass, so one scenario serves every bundle of
// a run: a planner rule writes docs/develop/plans/{bundle}.tasks.json. A
// file path is checked again once the ids are in.
//
// Launch counts live in the state directory (one small file per persona
// and task, updated under a lock), so a rerun with a fresh state directory
// replays the same story. Each bundle's runtime has its own state
// directory (bundle/layout.h sim_state), so counts are per bundle too. A
// scenario without "call" or "after_call" rules keeps no counts: every
// launch is call 1.
#pragma once

#include <map>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "util/expected.h"
#include "util/json.h"

namespace devgraph::agents {

struct SimFile {
  std::string path;
  std::string content;
};

struct SimRule {
  std::optional<std::string> bundle;
  std::optional<std::string> task;
  std::optional<int> call;
  std::optional<int> after_call;
  std::string dispatch_contains;
  // The launch runs at this model or reasoning effort (--model, --effort).
  std::optional<std::string> setting;
  long long latency_ms = 0;
  std::vector<SimFile> files;
  Json result;  // null: a generic DONE result
  std::optional<Json> resume_result;
  std::string text;
  std::string fail;  // empty: answer normally
  int exit_code = 1;
  long long reset_after_s = 60;
  long long flood_bytes = 64LL * 1024 * 1024;
  double cost_usd = 0.0;  // reported as total_cost_usd
  long long tokens = 0;   // reported as usage.output_tokens
  // The tool calls the answer reports (as num_turns - 1); -1: as played,
  // one read of the persona file plus one write per file.
  long long tool_calls = -1;
};

struct SimScenario {
  std::map<std::string, std::vector<SimRule>> personas;
  SimRule fallback;

  static Expected<SimScenario> load(const std::string& path);
  static Expected<SimScenario> parse(const Json& doc, const std::string& origin);
  // The rule for this launch: the persona's first matching rule, else the
  // default. `bundle`, `task` and `settings` (the launch's model and
  // effort) are "" for none.
  const SimRule& match(const std::string& bundle, const std::string& persona,
                       const std::string& task, int call, const std::string& prompt,
                       const std::vector<std::string>& settings = {}) const;
  // Whether a rule depends on the launch count ("call", "after_call") or on
  // the prompt ("dispatch_contains"). Only then does the agent keep launch
  // counters, and the runtime write prompt files: each is a file created
  // per launch, and a simulated persona should cost little beyond its
  // latency.
  bool counts_calls() const;
  bool reads_prompt() const;
};

struct SimInvocation {
  std::string scenario;
  std::string persona;
  std::string bundle;       // "" for none
  std::string task;         // "" for none
  std::string state_dir;    // launch counters; empty: no counting (call 1)
  std::string prompt_file;  // optional: the prompt, for dispatch_contains
  std::string resume;       // session id of a --resume call, else empty
  std::string model;        // --model, else empty
  std::string effort;       // --effort, else empty
  // CLOCK_MONOTONIC (ns) when the runtime started this call: the rule's
  // latency counts from there. Unset: from this process's start of waiting.
  std::optional<long long> launched_at_ns;
};

// CLOCK_MONOTONIC now, in nanoseconds: the clock of `launched_at_ns`.
long long monotonic_ns();

// Plays one launch: writes the rule's files under the current directory,
// waits its latency, prints the claude-style JSON answer on `out`. Returns
// the process exit code. Failure modes that end the process abnormally
// ("signal") do so here.
int run_sim_agent(const SimInvocation& invocation, std::ostream& out, std::ostream& err);

}  // namespace devgraph::agents
