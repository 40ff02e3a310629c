// The orchestrator lane as code: scan, bundle, bundle_scheduler, the
// nodes after delivery, and the run's two ends (complete, human_required),
// walked from GRAPH.yaml's routes like the bundle lane. No model decides a
// transition.
//
// One process, one thread, one event loop (DriverPool): a `devgraph
// run-bundle` child per bundle in flight, at most max_bundles at once.
//
// Contracts:
// - Every decision is recorded in the run before its effect is relied on,
//   and every effect can be done again: a bundle is formed once (its issues
//   are then taken), started idempotently (bundle/start.h), and a driver
//   that died is relaunched and resumes from its cursors. A killed
//   orchestrator's successor ends the drivers it left (proc/leftovers.h)
//   and continues from state.json.
// - A bundle's status is the entry's "status" when it says the bundle is
//   finished ("delivered", "parked", "stopped", "rejected"); otherwise the
//   bundle is "running" when its cursor exists and "pending" when not
//   (bundle_status()).
// - A driver's RESULT_JSON decides its bundle: DONE* delivered
//   (TECH_LEAD_DONE), BLOCKED or NEEDS_CONTEXT parked (TECH_LEAD_BLOCKED),
//   HANDOFF relaunched (TECH_LEAD_HANDOFF); no result is a crash, relaunched
//   up to the node's retry budget, then parked.
// - After each driver's exit, intake looks for new work (INTAKE_DONE, then
//   the new_work route through `bundle`), stops the bundles whose issue was
//   closed or lost its label, and rewrites the spec of an edited issue.
// - After the bundles, monitor_prs, cleanup_merged, audit_merged and
//   audit_triage run (orchestrator/after_delivery.h), parked bundles or
//   not; the run then scans again. A scan with no work in a repository
//   with develop/ branches takes that round once per run (through bundle
//   and the scheduler, which start nothing), and a watched run once every
//   watch period.
// - The run reaches human_required only when nothing else can progress;
//   with a watch period it waits instead and looks again.
// - A stop signal stops starting work, stops the drivers (each leaves its
//   cursors where they stood) and parks the run at the pause node.
// - Failures of the issue source are retried with back-off on the loop
//   (drivers keep being served meanwhile); one that does not clear is an
//   error, and nothing recorded is lost.
#pragma once

#include <chrono>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "bundle/crash_points.h"
#include "gh/gh.h"
#include "git/git.h"
#include "git/repo.h"
#include "graph/graph.h"
#include "lane/lane.h"
#include "orchestrator/bundling.h"
#include "orchestrator/drivers.h"
#include "orchestrator/sources.h"
#include "store/run_store.h"
#include "util/json.h"

namespace devgraph::orchestrator {

struct OrchestratorConfig {
  std::string delivery = "local";  // "github" | "local"
  std::string default_branch = "main";
  std::string base;  // what worktrees start from: origin/<default> or <default>
  IntakePolicy policy;
  int max_bundles = 3;
  // Keep the run alive: an empty scan (or a run with only parked work)
  // waits this long and looks again.
  std::optional<std::chrono::milliseconds> watch;
  // Back-off of the issue source: first wait, doubled per attempt.
  std::chrono::milliseconds source_backoff{std::chrono::seconds(2)};
  int source_attempts = 5;
  // The canonical worktree of a branch (the placement guard's answer).
  std::function<std::string(const std::string& branch)> worktree_for;
  // The driver of a bundle: argv, cwd, environment.
  std::function<DriverSpec(const std::string& bundle)> driver_for;
  // One line per thing that happened, for the person watching.
  std::function<void(const std::string& line)> on_line;
  // The state after each change (the live view).
  std::function<void(const Json& state)> on_state;
  // Every tick_every while drivers run (the live view's clock; the
  // drivers' own changes to state.json are read then too).
  std::function<void()> on_tick;
  std::chrono::milliseconds tick_every{std::chrono::seconds(1)};
  // How often intake looks at the issues while drivers run (besides after
  // each driver's exit): a closed or edited issue is noticed this soon.
  std::chrono::milliseconds intake_every{std::chrono::seconds(60)};
  // After delivery (orchestrator/after_delivery.h).
  std::string merge_policy = "never";  // "never" | "auto_when_checks_pass"
  std::string develop_home;            // where the audit marker lives
  std::string repo_top;                // the primary clone
  // The auditor child of one audit window entry.
  std::function<DriverSpec(const std::string& key)> audit_driver_for;
  std::chrono::milliseconds command_timeout{std::chrono::minutes(30)};
  // Work of other runs' bundles that wait for a person
  // (orchestrator/ownership.h): these issues are never bundled here (the
  // map's text is why), these branches never cleaned nor reported as
  // foreign.
  std::map<long long, std::string> held_issues;
  std::set<std::string> held_branches;
};

struct OrchestratorParts {
  RunStore& store;
  const Graph& graph;
  git::Git& repo_git;  // the primary clone: only `worktree add` is asked of it
  git::RepoQueries& repo;
  IssueSource& issues;
  DriverPool& drivers;
  bundle::CrashPoints& crash;
  gh::Gh* gh = nullptr;             // github delivery: pull requests, issues
  CommandRunner* runner = nullptr;  // git and the bundle's commands after delivery
};

struct Outcome {
  int exit_code = 0;  // 0 complete, 2 human required, 128+N stopped, 1 error
  Json result;        // the RESULT_JSON object
};

// Exit codes.
inline constexpr int kExitComplete = 0;
inline constexpr int kExitError = 1;
inline constexpr int kExitHumanRequired = 2;
inline constexpr int kExitUsage = 3;
inline constexpr int kExitSignalBase = 128;

// The status of state.bundles[i] (see the contract above).
std::string bundle_status(const Json& state, const Json& entry);

// The RESULT_JSON object and the summary text of a run's state: each
// bundle with its issues, node, status, PR or branch and HEAD, what waits
// for a person and why, the cost from the bundles' ledgers, and the run's
// limits when it has any (orchestrator/limits.h: the budget and whether it
// is spent, a provider pause in force).
Json run_result(const Json& state, const std::string& run_dir, const std::string& status);
std::string run_summary(const Json& result);

// Whether a run at complete or human_required has recorded its end
// (RUN_COMPLETE or HUMAN_REQUIRED since it was last reopened) in an event
// that state.json counts: a line past state.event_seq, appended by a
// record killed before it committed, is not one. A run killed before its
// end was recorded is finished by the next `devgraph run`.
bool end_recorded(const Json& state, const std::string& run_dir);

class Orchestrator {
 public:
  Orchestrator(OrchestratorConfig config, OrchestratorParts parts);
  // Issues read before the run was opened (the first scan uses them
  // instead of asking again).
  void prime(std::vector<issues::Issue> open, std::set<long long> closed_by_prs);
  Outcome run();

 private:
  struct Impl;
  std::shared_ptr<Impl> impl_;
};

}  // namespace devgraph::orchestrator
