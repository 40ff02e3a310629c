// Which run `devgraph run` continues, and which issues and branches belong
// to bundles of other runs that wait for a person: a pure decision over
// the runs' states, so that a later run never bundles a parked issue
// again, never cleans its worktree or branch, and reports it.
//
// Contract:
// - waiting_of() lists what waits for a person in one run's state, as the
//   inbox does (inbox/inbox.h): a bundle or task cursor whose status is
//   "waiting_human", or a bundle entry "parked" none of whose cursors
//   waits; nothing of a bundle whose entry is "delivered", "rejected" or
//   "stopped". Sorted by key ("b1", "b2/T1").
// - decide_ownership() takes the runs newest first. Unless `fresh`, it
//   continues the newest run (not devgraph clean's own) whose status is
//   running or handoff, or which reached its end without recording it
//   (RunView::end_unrecorded). An answer reopens a run that waited
//   (inbox::answer: status running, RUN_RESUMED), so "the newest run that
//   waits for a person and was answered since" is that run. A run to
//   continue of another repository is an error (ErrorKind::usage).
// - A run that waits and was not answered is not continued: the new run
//   takes new issues only (the decision README documents). Everything
//   that waits in every live run (running, handoff, human_required) of
//   this repository other than the one continued is `held`: its issues
//   and branches are nobody else's until the bundle is delivered or
//   rejected.
#pragma once

#include <optional>
#include <set>
#include <string>
#include <vector>

#include "util/expected.h"
#include "util/json.h"

namespace devgraph::orchestrator {

struct RunView {
  std::string dir;
  Json state;
  // Its status is complete or human_required but its end is not in the
  // log (orchestrator.h end_recorded()): the caller reads that.
  bool end_unrecorded = false;
};

struct Waiting {
  std::string run_id, run_dir;
  std::string bundle;
  std::string key;     // "b1" or "b2/T1"
  std::string reason;  // the cursor's recovery_why, the entry's parked_reason
  std::string branch;  // the bundle's branch; "" when it has no entry
  std::vector<long long> issues;
};

// The issue numbers a state.json bundle entry lists ("issues": 3 or "#3");
// anything else in the list is left out.
std::vector<long long> bundle_issue_numbers(const Json& entry);

std::vector<Waiting> waiting_of(const Json& state, const std::string& run_dir);

struct Ownership {
  std::string resume;         // the run directory to continue; "" for a new run
  bool finishing = false;     // it only needs its end recorded
  std::vector<Waiting> held;  // waiting work of the other runs, newest run first
  std::set<long long> issues;
  std::set<std::string> branches;
};

Expected<Ownership> decide_ownership(const std::vector<RunView>& newest_first,
                                     const std::string& repo_identity, bool fresh);

// "waiting for a person: b1 (planner question), b2/T1 (footprint)", the
// run named when it is not the same for all; "" when nothing is held.
std::string held_line(const std::vector<Waiting>& held);

}  // namespace devgraph::orchestrator
