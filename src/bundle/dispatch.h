// Persona dispatch for one bundle: launches personas through the Launcher,
// reuses a result saved for the same visit of a node, keeps the cost
// ledger, and hands every completion to its owner as one typed
// PersonaResult.
//
// Contract:
// - A visit is (persona, task or none, node, the cursor's move count when
//   the node was entered). A result file saved for that exact visit
//   (<bundle>/[tasks/<T>/]<persona>.result.json, carrying node and
//   cursor_moves) is reused instead of launching again; any other saved
//   result is ignored.
// - Every completion is recorded before anyone sees it: its ledger line
//   (ledger.jsonl, one per completed persona, no fsync: handle, persona,
//   cost_usd, and tokens where the CLI reported them), its result file
//   (with tokens and usage where reported, which a reused result reports
//   again; a file without them reads as none), and the MALFORMED_RESULT
//   event when the persona never answered. Then
//   the crash point saved:<bundle>[/<task>]/<persona>. A withdrawn launch
//   (kOutcomeWithdrawn: it never started) records nothing and is handed
//   to its owner like an interrupted one.
// - Launches, back-offs and resumes are recorded as they happen
//   (PERSONA_DISPATCHED, NOTE cli_error_backoff, MALFORMED_RESULT). A
//   journal change the store refuses is returned as an Error.
// - A stop signal (LaunchEvent interrupted) stops every launch at once
//   (Launcher::stop_all); the launches then complete as "interrupted",
//   and such a completion saves no result file: a resumed driver launches
//   that visit again instead of reading a stop as the persona's answer.
// - next() returns the most urgent completion waiting: everything that has
//   already happened is taken from the runtime first, then the completion
//   with the highest urgency() wins (ties: arrival order). wait_for() waits
//   for one launch; completions of other launches stay queued for their
//   owners and are never dropped.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "bundle/crash_points.h"
#include "bundle/journal.h"
#include "bundle/launcher.h"
#include "bundle/layout.h"
#include "util/expected.h"
#include "util/json.h"
#include "util/token_usage.h"

namespace devgraph::bundle {

// One persona's answer, read once from its RESULT_JSON.
struct PersonaResult {
  std::uint64_t id = 0;
  std::string persona;
  std::optional<std::string> task;
  std::string node;     // the visit it answers
  long long moves = 0;  // the cursor's move count at that visit
  std::string handle;
  std::string session_id;
  std::string outcome;  // "result", "malformed_result", "timeout", ...
  double cost_usd = 0.0;
  long long duration_ms = 0;
  bool resumed = false;
  bool reused = false;  // read back from a result file an earlier driver saved
  // The tool calls its CLI reported; nullopt when the CLI reports none.
  std::optional<int> tool_calls;
  // The tokens its CLI reported (agents/usage.h): their total, and part by
  // part; nullopt and empty when the CLI reports none.
  std::optional<long long> tokens;
  TokenUsage usage;

  Json raw = Json::object();  // the RESULT_JSON object
  std::string status;
  std::string summary;
  std::vector<std::string> concerns, artifacts, blockers, missing_context;
  Json findings = Json::array();

  static PersonaResult from_json(Json raw);
  bool has_findings() const { return findings.is_array() && !findings.empty(); }
  bool has_blocker(std::string_view name) const;
  // BLOCKED or NEEDS_CONTEXT: the persona could not finish.
  bool stopped() const { return status == "BLOCKED" || status == "NEEDS_CONTEXT"; }
  // The files the findings name ("file" or "path"), in order.
  std::vector<std::string> finding_files() const;
  // The event detail every persona move carries: agent_handle, persona,
  // status, cost_usd, duration_ms, session_id, summary, then `tokens` and
  // `usage` (TokenUsage::to_json) where the CLI reported any.
  Json detail() const;
};

struct Visit {
  std::string persona;
  std::optional<std::string> task;
  std::string node;
  long long moves = 0;
  // This launch's own model and effort (a fix loop's raise); nullopt: the
  // runtime's.
  std::optional<std::string> model = std::nullopt;
  std::optional<std::string> effort = std::nullopt;
};

class PersonaDispatch {
 public:
  // `urgency` ranks a completion by its task (nullopt: a bundle-level
  // persona); higher goes first.
  // `base` carries what every launch shares (worktree, run and skill
  // directories).
  PersonaDispatch(Launcher& launcher, Journal& journal, const BundleLayout& layout,
                  CrashPoints& crash, agents::LaunchRequest base,
                  std::function<int(const std::optional<std::string>&)> urgency);

  // The result an earlier visit saved, if it answers this very visit.
  std::optional<PersonaResult> recorded(const Visit& visit) const;
  Expected<std::uint64_t> launch(const Visit& visit, const std::string& dispatch);
  // The most urgent completion; nullopt when nothing is outstanding.
  Expected<std::optional<PersonaResult>> next();
  // Waits for launch `id`.
  Expected<PersonaResult> wait_for(std::uint64_t id);
  // Launches not yet handed to their owner.
  size_t unhandled() const { return launcher_.outstanding() + arrived_.size(); }
  // Cost (rounded to 1/10000 of a dollar) and persona runs in the ledger.
  std::pair<double, int> ledger_sum() const;
  // The stop signal that arrived (0: none). Once one has, every launch is
  // being stopped (Launcher::stop_all): nothing new may start, and the
  // completions still to come are only drained.
  int stop_signal() const { return stop_signal_; }
  // Asks every launch to stop, as a signal would (a command of the
  // driver's own was interrupted by `signal`).
  void stop(int signal);
  // Why no new persona may be launched (the run's limits: the budget is
  // spent, or the limits went away; Launcher::refusing); nullopt while
  // launches may start. Unlike a stop, what is in flight goes on and its
  // results are used: the driver parks at its next node.
  std::optional<std::string> halted() const { return launcher_.refusing(); }

 private:
  Expected<std::optional<PersonaResult>> take(LaunchEvent ev);
  // A completed launch: ledger line, result file, the typed result.
  PersonaResult complete(LaunchEvent ev);

  Launcher& launcher_;
  Journal& journal_;
  const BundleLayout& layout_;
  CrashPoints& crash_;
  agents::LaunchRequest base_;
  std::function<int(const std::optional<std::string>&)> urgency_;
  std::map<std::uint64_t, Visit> live_;
  std::vector<PersonaResult> arrived_;
  int stop_signal_ = 0;
};

// The cost (USD, rounded to 1/10000) and the number of completed persona
// runs a bundle's ledger (BundleLayout::ledger) records; a torn last line
// is skipped.
std::pair<double, int> ledger_totals(const std::string& ledger_path);

// The same, with the tokens of the lines that carry them (nullopt when
// none does: the CLI reported no tokens).
struct LedgerTotals {
  double cost_usd = 0.0;
  int persona_runs = 0;
  std::optional<long long> tokens;
};
LedgerTotals ledger_usage(const std::string& ledger_path);

}  // namespace devgraph::bundle
