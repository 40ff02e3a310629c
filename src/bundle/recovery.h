// The shared recovery nodes of GRAPH.yaml for any bundle or task cursor:
// context_recovery (a persona said NEEDS_CONTEXT) and blocker_recovery (it
// said BLOCKED, or never answered).
//
// Contract:
// - decide() is pure. NEEDS_CONTEXT goes to the node's needs_context route
//   where the node has one (else its blocked route). Context is looked for
//   in the plan, the bundle's spec, the repository (a named path that
//   exists), the branch's commits and the other tasks' saved results; the
//   cursor goes back to its node (retry_previous) when something was found
//   and it has recovered context fewer than context_recovery's max_retries
//   times, else to a person. BLOCKED: a provider limit goes to a person at
//   once (a relaunch would meet the same limit); a capacity blocker (the
//   persona ran out of context) is retried without spending the budget;
//   anything else (timeouts, malformed results, a persona's own block) is
//   retried while blocker_recovery's max_retries allows.
// - pass() makes the two moves: into the recovery node with the persona's
//   event (NEEDS_CONTEXT, BLOCKED, FOOTPRINT_VIOLATION), recording the
//   decision and the spent budgets on the cursor, then out of it: RECOVERED
//   back to the node it came from, or AWAITING_HUMAN at the shared cursor
//   interrupt (a route to the run's human_required stops only this
//   cursor). resume() finishes the second move for a cursor a killed
//   driver left standing on a recovery node.
// - Every cursor that waits for a person says why on its record
//   (kWaitingWhyKey), whichever part of the driver parked it: the inbox
//   (src/inbox/) shows that line to the person.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "bundle/bundle_run.h"
#include "bundle/dispatch.h"
#include "util/expected.h"
#include "util/json.h"

namespace devgraph::bundle {

// The cursor's field saying why it waits for a person (or, on a recovery
// node, why recovery decided what it did), clipped to 300 characters.
inline constexpr const char* kWaitingWhyKey = "recovery_why";
// The merge for a move to the cursor interrupt: the reason, on the cursor.
Json waiting_merge(const std::string& why);

// Where to look for what a persona said it was missing.
struct ContextSources {
  std::string plan;  // the plan's markdown
  std::string spec;  // the bundle's spec
  // Repository paths that exist (relative to the worktree), among the
  // names asked for.
  std::vector<std::string> existing_paths;
  std::vector<std::string> branch_commits;  // "<hash> <subject>"
  // Other tasks' saved results: (task/persona, summary and evidence).
  std::vector<std::pair<std::string, std::string>> sibling_results;
};

// The sources for `missing`: the bundle's plan and spec, the named paths
// that exist in the worktree (never one outside it), the branch's commits,
// and `results` (other tasks' saved results).
ContextSources gather_context(BundleRun& run, const std::vector<std::string>& missing,
                              std::vector<std::pair<std::string, std::string>> results);

// One pointer per place that mentions an item, as lines for the persona
// ("- the greeting: plan, line 12: ...").
std::vector<std::string> find_context(const std::vector<std::string>& missing,
                                      const ContextSources& sources);

struct RecoveryDecision {
  std::string route;  // needs_context | blocked | footprint_violation
  std::string event;  // the move into the recovery node
  bool retry = false;
  bool spends_retry = false;          // counts against blocker_recovery's budget
  bool spends_context = false;        // counts against context_recovery's budget
  std::string why;                    // for a person, or for the log
  std::vector<std::string> pointers;  // context found
  Json recovered_detail;              // added to the RECOVERED move's detail (retry)
};

struct Budgets {
  int retries = 0;  // blocker retries spent by the cursor
  int context = 0;  // context recoveries spent by the cursor
};

RecoveryDecision decide(const lane::Walker& walker, const std::string& node,
                        const PersonaResult& result, const Budgets& spent,
                        const std::vector<std::string>& pointers);

// Where a cursor stands after recovery.
struct Recovered {
  bool retry = false;
  std::string node;   // the node it is back on (retry), or where it waits
  std::string extra;  // for the relaunch: where the recovered context is
  std::string why;    // for a person
};

Budgets spent_budgets(const Json& cursor);

Expected<Recovered> pass(BundleRun& run, const std::string& lane,
                         const std::optional<std::string>& task, const std::string& node,
                         const RecoveryDecision& decision, Json detail,
                         Json merge = Json::object());
Expected<Recovered> resume(BundleRun& run, const std::string& lane,
                           const std::optional<std::string>& task);

}  // namespace devgraph::bundle
