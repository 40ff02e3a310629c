// `devgraph discuss`: every perspective of a round critiques one artifact
// at once, and code decides (discuss/rules.h).
//
// Contract:
// - Nothing runs for a request that cannot: a missing or unreadable
//   artifact or context file, an unknown perspective or backend, a
//   perspective named in --perspectives that reads the requirements
//   without --context (each one line; a missing artifact is a failure,
//   exit 1, the rest usage, exit 3). With no --perspectives and no
//   --context, the perspectives that read the requirements (coverage) are
//   left out, and the record and the result say so (`left_out`).
// - The artifact and the requirements are copied into the round's own
//   directory (<out>/discussions/<round>/input/), so every critic reads the
//   same bytes whatever happens to the originals meanwhile.
// - Each perspective is one `devgraph critique` child (discuss/critique.h),
//   all started at once on one event loop, so the round takes about as
//   long as its slowest critic. A perspective's backends: --agent-map's
//   for it, else --agent, else GRAPH.yaml's; then the fallback backends
//   (--fallback, else GRAPH.yaml discuss.fallback_backends).
// - A perspective whose child fails, or whose answer cannot be read, is a
//   failed perspective with its reason, never a silent pass (rules.h says
//   what a failed voice does to the verdict).
// - The record goes to <out>/discussions/<round>-discussion.md (written
//   whole or not at all); every answer stays in the round's directory.
//   The result adds `critics` (per perspective: seconds, the backend that
//   answered, and each attempt's backend, outcome and cost, for whoever
//   counts the spend) and `wall_seconds`.
// - A stop signal ends every critic (TERM, then KILL after the grace) and
//   is an interrupted error, exit 128 + N; no record is written.
#pragma once

#include <chrono>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "util/expected.h"
#include "util/json.h"

namespace devgraph::discuss {

struct PanelRequest {
  std::string artifact;
  std::string round;
  std::vector<std::string> perspectives;             // empty: every perspective of GRAPH.yaml
  std::string context;                               // requirements file; empty: none
  std::string out;                                   // where discussions/ goes
  std::optional<std::string> agent;                  // every perspective's first backend
  std::map<std::string, std::string> agent_map;      // perspective -> first backend
  std::optional<std::vector<std::string>> fallback;  // instead of GRAPH.yaml's
  bool final_sign_off = false;
  bool already_revised = false;
  std::optional<std::string> skill;
  // Passed to every critic.
  std::string agent_bin;
  std::optional<std::string> model;
  std::string sim_scenario;
  std::optional<std::string> agent_command;  // the flag's text, as given
  std::optional<double> persona_timeout_seconds;
};

struct PanelReport {
  int exit_code = 0;  // 0 consensus reached, 2 blocked
  std::string record_path;
  Json result;  // the RESULT_JSON object
};

Expected<PanelReport> run_panel(const PanelRequest& request);

}  // namespace devgraph::discuss
