// The bundle lane's own nodes (GRAPH.yaml lane `bundle`) before delivery:
// plan_bundle (the planner, then the plan check and its commit), and after
// the task lane the gates: bundle_verify (the recorded test and build
// commands, as argv), final_review (code-reviewer), repair_bundle
// (developer) and documentation_review (documentation-reviewer).
//
// Contract:
// - Which gate runs at the cursor's node comes from what GRAPH.yaml
//   declares about it (lane/node_kind.h), never from its name: a route
//   that leads to the lane's completion node (create_pr) delivers from
//   wherever it starts.
// - Every transition follows the node's route in the graph; repair cycles
//   are bounded by repair_bundle's max_cycles, and a review finding that
//   survives a repair cycle escalates at once.
// - A final review whose findings hold a blocking gap (severity Critical or
//   Important, with its file) runs the fix loop (fix/loop.h) inside
//   repair_bundle, its personas bundle-level visits through the bundle's
//   dispatch (a call on another backend than the bundle's, the
//   re-reviewer's or the final gate's, on a runtime of its own, its spend
//   in the ledger), its files in <bundle>/fix-<cycle>/: SHIP goes on to
//   bundle_verify; an overdesigned plan goes back to plan_bundle (route
//   replan, BUNDLE_REPLANNED) while fix.max_replans lasts, the planner told
//   what to leave out and which task ids the committed tasks hold (a plan
//   reusing one is refused); any other end is a FIX_DIAGNOSED event and a
//   wait for a person with the loop's route and question, the bundle still
//   in progress. The cursor's `fix` record keeps the raises used and the
//   setting reached; when the loop stopped at the raise cap, a person's
//   approval in the inbox is the recorded decision (from, to, the answer
//   as reason, the approver, the answer's time) and the loop runs again.
//   Other findings get the single repair dispatch. A persona that stops goes
//   through the recovery nodes (bundle/recovery.h).
// - A persona's result for the bundle cursor's current visit is reused; the
//   plan, repairs and documentation changes are committed by pathspec once,
//   each with a `Devgraph-Bundle-Step` trailer looked up before a repeat.
//   Each commit takes the changed paths (git status, so never a file git
//   ignores) its persona reported among its `artifacts`; the plan's commit
//   also takes the plan and tasks.json, so the planner's own files (its
//   copy of the spec) are on the branch before any task starts.
// - A bundle cursor a person answered (src/inbox/) carries the answer in
//   the first dispatch of the node it came back to (bundle/answer.h).
// - Returns "" when the bundle reached create_pr's doorstep (ready to
//   deliver) or was sent back to plan_bundle (the driver plans again),
//   else the reason it cannot go on; an Error when the journal refused a
//   change.
#pragma once

#include <functional>
#include <string>

#include "bundle/bundle_run.h"
#include "bundle/critique_gate.h"
#include "util/expected.h"

namespace devgraph::bundle {

struct GateInputs {
  std::string spec_path;
  // Called while the test and build commands run (the live view's clock).
  std::function<void()> on_wait;
  std::chrono::milliseconds command_timeout{std::chrono::minutes(30)};
  // The discuss rounds (bundle/critique_gate.h): off unless enabled.
  CritiqueSettings critique;
};

// Runs `argv` in the worktree as a gate does (the command timeout, bounded
// output, stopped by a stop signal, which then stops the driver too),
// with command_started / command_finished in the bundle's log under
// `label`.
Expected<CommandResult> run_logged(BundleRun& run, const GateInputs& in, const std::string& label,
                                   const std::vector<std::string>& argv, const std::string& text);

// plan_bundle: "" once the cursor moved on to the task scheduler.
Expected<std::string> run_plan(BundleRun& run, const GateInputs& in);
// bundle_verify .. documentation_review: "" once every gate passed.
Expected<std::string> run_gates(BundleRun& run, const GateInputs& in, std::string& evidence);

}  // namespace devgraph::bundle
