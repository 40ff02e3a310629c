// The task lane (GRAPH.yaml lane `task`) of one bundle, driven in code:
// the task scheduler starts runnable tasks, and each task cursor walks its
// nodes by the routes the graph gives, with the personas the graph names.
//
// Contract:
// - A node with personas runs them (all at once for agent_parallel, joined
//   by all); a saved result for the cursor's current visit is used instead
//   of a launch. A node without personas is code: commit_task checks the
//   footprint and commits exactly the task's changed paths (`git add --`
//   and `git commit --` by pathspec, never -A, never the whole index), with
//   the trailer `Devgraph-Task: <bundle>/<task>`, looked up in git before
//   committing when an earlier driver may have committed it. The changed
//   paths are git status's, so a file git ignores (.gitignore,
//   .git/info/exclude, core.excludesFile) never reaches a commit.
// - Footprints at commit: a changed path outside every in-flight footprint
//   counts as this task's when one of its writers listed it among its
//   `artifacts`, or when no other task is in flight (or waits for a
//   person) that may have written it; otherwise it is left for whoever
//   wrote it. Any path that counts is a FOOTPRINT_VIOLATION: the cursor
//   enters blocker_recovery, which extends the footprint to take the paths
//   (RECOVERED, back to the node it came from, then the commit) when every
//   one was listed and none conflicts with another in-flight footprint,
//   else parks the task for a person with the paths held out of every
//   commit (footprint_outside). A path nobody listed is never committed
//   under the task.
// - Strays (bundle/quarantine.h): an untracked file outside every task's
//   footprint that no writer of this task listed is not a violation. As
//   each persona result arrives, git status is read and each new such path
//   gets the tasks in flight then as its suspects. At a commit, a stray
//   goes to the bundle's quarantine when its one suspect is this task or
//   nothing else is in flight (or waits), else it is left for later; one
//   NOTE event (topic "quarantined") names the paths, their suspects and
//   the single task a path is attributed to, when there is one, and never
//   any other task as its writer. The bundle goes on. What the pre-commit
//   hook writes is never a stray (a violation, as above).
// - Hooks (GRAPH.yaml headless.run_git_hooks): before the commit the
//   repository's pre-commit hook runs on the task's paths
//   (Git::pre_commit); the footprint is checked again after it, so a file
//   it rewrote inside the footprint is committed with the task and one
//   outside it is a FOOTPRINT_VIOLATION as above. A refusal is
//   COMMIT_HOOK_REJECTED: commit_task's hook_rejected route to repair_task,
//   the implementer repairing with the hook's output as a fenced finding,
//   within repair_task's max_cycles (then awaiting_human, as any repair).
//   A commit-msg refusal (of devgraph's own message) waits for a person.
// - Results become routes: done; concerns_actionable for a correctness or
//   scope concern (bundle/triage.h) while repair cycles remain
//   (repair_task's persona is the findings' owner); concerns_observational
//   for observational ones, recorded in the result with the persona that
//   raised them and on the move's `concern_triage`; BLOCKED and
//   NEEDS_CONTEXT go through the recovery nodes (bundle/recovery.h). The
//   lane's completion node (commit_task) is moved onto after its work, with
//   TASK_COMMITTED.
// - Tasks waiting for a human keep their uncommitted files and their
//   footprints: they are neither runnable nor free slots, other tasks'
//   commits never take their files, and a path one of them wrote outside
//   its footprint (FOOTPRINT_VIOLATION) is held for the human. Once a
//   person has answered (src/inbox/), the cursor is active again where it
//   came from and is simply driven on; its next dispatch carries the
//   answer (bundle/answer.h).
// - Completions are served by urgency: the task with the longest chain of
//   dependent tasks ahead first (schedule::tail_lengths); runnable tasks
//   start in the same order.
// - Once the run's limits allow no new launch (PersonaDispatch::halted),
//   no task starts and no persona is launched; results still arriving move
//   their cursors on, each cursor then stands at its next node, and run()
//   returns the reason once nothing is in flight.
// - Evidence (GRAPH.yaml `evidence`, bundle/evidence.h): at a node with
//   check_fails (write_tdd) a DONE moves on only once devgraph has run the
//   test writer's check itself and seen it fail; a check that passes, that
//   cannot run or that is not allowed sends the writer back through
//   blocker_recovery (a BLOCKED with the reason, retried within its budget,
//   then a person). At check_passes (verify) the same check, read from the
//   test writer's saved result, must pass, or the implementer repairs.
// - A writer's or verifier's DONE whose CLI reports no tool call at all in
//   that launch (PersonaResult::tool_calls == 0) is sent back the same way:
//   it read, wrote and ran nothing. A CLI that reports no count is not
//   judged by it.
// - Every journal change the store refuses stops the lane with that error.
#pragma once

#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "bundle/bundle_run.h"
#include "bundle/dispatch.h"
#include "bundle/evidence.h"
#include "bundle/gates.h"
#include "bundle/quarantine.h"
#include "bundle/recovery.h"
#include "bundle/triage.h"
#include "lane/routes.h"
#include "schedule/schedule.h"
#include "util/expected.h"

namespace devgraph::bundle {

class TaskLane {
 public:
  TaskLane(BundleRun& run, schedule::Plan& plan, const std::vector<int>& tails, GateInputs gates,
           int max_parallel, size_t max_live);

  // Drives every task to its commit. "" when every task is committed, else
  // the reason the bundle cannot go on (tasks waiting for a person).
  Expected<std::string> run();
  // Tasks committed so far.
  int committed() const;
  // Marks every task committed (a bundle resumed past its task lane).
  void mark_all_committed();

 private:
  enum class Stage { none, active, done, blocked };
  struct TaskRun {
    std::string id;
    Stage stage = Stage::none;
    std::string node;  // the cursor's node while active
    std::string base_commit;
    int repairs = 0;
    std::map<std::string, PersonaResult> joined;  // agent_parallel: persona -> result
    std::string blocker;
    std::vector<std::string> held;   // paths held for a human (footprint_outside)
    std::set<std::string> reported;  // artifacts its writers reported in this run
    bool started_here = false;       // no earlier driver can have committed it
  };

  Status start_task(TaskRun& t);
  Status enter(TaskRun& t, const std::string& node, const std::string& extra = "");
  Status launch(TaskRun& t, const std::string& persona, const std::string& node,
                const std::string& extra);
  Status on_result(const PersonaResult& r);
  Status on_writer(TaskRun& t, const PersonaResult& r);
  Status on_joined(TaskRun& t, const PersonaResult& r);
  Status take(TaskRun& t, std::string_view route, std::string_view event, Json detail,
              Json merge = Json(), const std::string& extra = "");
  Status stop(TaskRun& t, const PersonaResult& r);
  Status recovered(TaskRun& t, const Recovered& where, const std::string& extra);
  Status start_repair(TaskRun& t, std::vector<std::string> findings, Json detail,
                      const std::string& lead, std::string_view from_route,
                      const std::string& owner,
                      std::string_view event = lane::event::kConcernTriaged,
                      Json merge = Json());
  Status commit(TaskRun& t);
  // The evidence gates (bundle/evidence.h): the test writer's check, which
  // must fail at write_tdd and pass at verify.
  Expected<std::vector<CheckCommand>> check_of(const std::string& id,
                                               const std::vector<std::string>& commands,
                                               const std::vector<std::string>& artifacts) const;
  struct CheckRun {
    CheckVerdict verdict = CheckVerdict::green;
    std::string what;    // the deciding command and its outcome
    std::string output;  // its output's tail
    int exit = 0;
  };
  CheckRun run_check(const std::string& id, const std::vector<CheckCommand>& cmds);
  Status red_gate(TaskRun& t, const PersonaResult& r, std::string_view route,
                  std::string_view event);
  // `route`: done, or concerns_observational when observational concerns
  // ride on the move.
  Status green_gate(TaskRun& t, Json detail, std::string_view route);
  // Observational concerns, into the bundle's result with who raised them.
  void record_concerns(const TaskRun& t, const Triage& tr);
  Status send_back(TaskRun& t, const PersonaResult& r, const std::string& why);
  Status block(TaskRun& t, const std::string& why);
  Status adopt_cursors();

  Expected<std::string> write_brief(const std::string& id);
  Expected<std::string> writer_dispatch(const std::string& id, const std::string& extra);
  Expected<std::string> verifier_dispatch(const std::string& id);
  std::string concurrent_block(const std::string& id) const;
  std::vector<std::string> in_flight(const std::string& except = "") const;
  std::set<std::string> reported_by(const std::string& id) const;
  // The personas of the task lane's nodes; writers_only leaves out the
  // agent_parallel nodes (verifiers).
  std::vector<std::string> task_personas(const std::string& id, bool writers_only) const;
  std::string implementer(const std::string& id) const;
  std::string test_writer() const;
  std::vector<std::string> test_artifacts(const std::string& id) const;
  // The footprint check at commit_task. report.outside holds the paths
  // that count as this task's (see the contract); unlisted names those of
  // them none of its writers listed.
  struct CommitCheck {
    schedule::FootprintReport report;
    std::vector<std::string> unlisted;
    std::vector<std::string> strays;  // to quarantine before the commit
  };
  // Reads git status and gives each new stray its suspects (as a result
  // arrives); a git that fails records nothing, so nobody is blamed.
  void observe_strays();
  bool outside_every_footprint(const std::string& path) const;
  Status quarantine_strays(TaskRun& t, const std::vector<std::string>& paths);
  Expected<CommitCheck> footprint_check(const std::string& id,
                                        const std::vector<std::string>& others,
                                        bool take_strays);
  // blocker_recovery for a footprint violation: true when the footprint
  // was extended (commit again), false when the task now waits for a
  // person.
  Expected<bool> recover_footprint(TaskRun& t, const CommitCheck& check,
                                   const std::vector<std::string>& others);
  Expected<schedule::RunnableSet> runnable() const;
  const schedule::Task& spec(const std::string& id) const;

  BundleRun& run_;
  schedule::Plan& plan_;
  const std::vector<int>& tails_;
  GateInputs gates_;
  std::string spec_path_;
  int max_parallel_;
  size_t max_live_;
  std::map<std::string, TaskRun> tasks_;
  StrayLedger strays_;
};

// The markdown section of the plan whose heading names the task, up to the
// next heading of the same or a higher level; "" when there is none.
std::string plan_section(const std::string& plan, const std::string& id);
// A task is infrastructure when it says so (kind iac/infra) or its
// footprint names infrastructure files (terraform, workflows, ...).
bool is_infrastructure(const schedule::Task& task);

}  // namespace devgraph::bundle
