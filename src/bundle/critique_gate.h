// A discuss round as a gate of the bundle lane (GRAPH.yaml discuss.rounds):
// when a run turns the rounds on, the plan is critiqued after plan_bundle,
// before any task starts, and the finished branch before create_pr (the
// sign-off). bundle/gates.cpp calls these at those two points.
//
// Contract:
// - decide_round() is pure. A round whose consensus was reached proceeds
//   with its notes; blocked at MEDIUM or LOW it proceeds with a warning
//   recorded on the run; blocked at HIGH (or with a result that is not a
//   discuss result: never a silent pass) it goes back once per revision
//   the round allows (GRAPH.yaml discuss.rounds[].revisions), then waits
//   for a person; the sign-off at HIGH always waits.
// - discuss_flags() is pure: the driver's backend flags as `devgraph
//   discuss` takes them. The sim and command backends play every
//   perspective (no fallback: a test or a demo stays deterministic). A
//   real CLI keeps each perspective's own backend from GRAPH.yaml and
//   falls back to the run's backend first; the run's --model and
//   --claude-bin go only to the backend they were given for.
// - run_round() runs `devgraph discuss` as one of the bundle's commands
//   (argv, in the worktree, stopped by a stop signal, which then stops the
//   driver), with the spec as the requirements. Its record and result go
//   to <bundle>/discussions/; a round whose result file is already there
//   is read back, not run again (a driver killed after the round). Each
//   critic's spend is one line of the bundle's ledger before the result
//   file is written, so the run's budgets count it. A discuss that cannot
//   run, or whose last line is no RESULT_JSON, is an Error for the gate,
//   which then waits for a person.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "bundle/bundle_run.h"
#include "graph/graph.h"
#include "util/expected.h"
#include "util/json.h"

namespace devgraph::bundle {

// The driver's backend flags, for its critics.
struct CritiqueSettings {
  bool enabled = false;          // --discuss-rounds, the run's record or GRAPH.yaml
  std::string agent = "claude";  // the run's backend
  std::string agent_bin;         // --claude-bin
  std::optional<std::string> model;
  std::string sim_scenario;
  std::optional<std::string> agent_command;  // the flag's text
  std::optional<double> persona_timeout_seconds;
};

std::vector<std::string> discuss_flags(const CritiqueSettings& settings,
                                       const std::vector<std::string>& graph_fallback);

enum class RoundRoute { proceed, revise, park };

struct RoundDecision {
  RoundRoute route = RoundRoute::proceed;
  // proceed: a warning for the run (blocked at MEDIUM or LOW), else "".
  // revise and park: why, in one line.
  std::string note;
};

RoundDecision decide_round(const Json& result, bool sign_off, int revisions_done,
                           int revisions_allowed);

// The round of GRAPH.yaml discuss.rounds that runs after `after` (or
// before `before`); nullptr when there is none.
const DiscussRound* round_after(const Graph& graph, const std::string& node);
const DiscussRound* round_before(const Graph& graph, const std::string& node);

struct RoundRequest {
  const DiscussRound* round = nullptr;
  std::string id;        // the record's name: <round>-<n>
  std::string artifact;  // the file judged
  std::string context;   // the requirements (the spec)
  bool sign_off = false;
  bool already_revised = false;
  std::chrono::milliseconds timeout{std::chrono::minutes(30)};
  std::function<void()> on_wait;
};

// The discuss RESULT_JSON object of the round (exit 0 or 2).
Expected<Json> run_round(BundleRun& run, const CritiqueSettings& settings,
                         const RoundRequest& request);

// The text the next dispatch gets after a round: the action items (data,
// fenced) and where the record is.
std::string round_brief(const Json& result, const std::string& lead);

}  // namespace devgraph::bundle
