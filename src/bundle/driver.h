// The headless tech lead: drives one bundle's bundle lane and task lanes as
// code (GRAPH.yaml lanes `bundle` and `task`; the tech-lead persona is the
// specification).
//
//   plan_bundle -> task_scheduler -> bundle_verify -> final_review
//     -> [repair_bundle -> bundle_verify ...] -> documentation_review -> create_pr
//   per task: write_tdd -> implement -> verify (tester + adversarial-tester)
//     -> commit_task, with repair_task, retries and awaiting_human
//
// Contracts:
// - Every cursor move and event goes through the RunStore, so state.json and
//   events.jsonl look as the reference runtime would leave them.
// - Resume: the driver may be killed at any instant and run again. It
//   continues from the recorded cursors. A persona whose result file was
//   saved for the cursor's current visit of its node (the file carries the
//   node and the cursor's move count) is not launched again. Every external
//   effect is reconciled before it is repeated: a task commit carries the
//   trailer `Devgraph-Task: <bundle>/<task>` and is looked up in git before
//   committing; bundle repairs, documentation alignment and the plan carry
//   their own trailers; a push is skipped when the remote branch already
//   points at HEAD; a pull request is looked up with `gh pr view` before
//   `gh pr create`, and auto-merge is asked for only when the pull request
//   does not have it yet. Intent events are recorded before each of them.
// - Commits stage and commit exactly the task's changed paths (`git add --
//   <pathspec>` and `git commit -- <pathspec>` from the footprint check),
//   never -A and never the whole index. Tasks waiting for a human keep their
//   uncommitted files and their footprints: they are neither runnable nor
//   free slots, other tasks' commits never take their files, and a path one
//   of them wrote outside its footprint (FOOTPRINT_VIOLATION) is held for
//   the human.
// - Retries: BLOCKED / NEEDS_CONTEXT results (malformed results and timeouts
//   included) are re-dispatched twice per task, then the task waits for a
//   human; capacity and provider-limit blockers are re-dispatched without
//   spending that budget.
// - The recorded test and build commands run as argv (split_command), never
//   through a shell.
// - The outcome is the tech-lead result (the reference's RESULT_JSON fields)
//   and an exit code: 0 DONE / DONE_WITH_CONCERNS, 2 BLOCKED / NEEDS_CONTEXT.
//   open() fails with exit code 3 for a usage or state error found before
//   any work.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "bundle/launcher.h"
#include "graph/graph.h"
#include "proc/command.h"
#include "store/run_store.h"
#include "util/expected.h"
#include "util/json.h"

namespace devgraph::bundle {

inline constexpr int kExitOk = 0;
inline constexpr int kExitBlocked = 2;
inline constexpr int kExitUsage = 3;
// <run>/bundles/<bundle>/live-children: the persona processes alive now
// (proc/leftovers.h); a driver that opens the bundle ends any left there.
inline constexpr const char* kChildrenRecord = "live-children";

struct DriverOptions {
  std::string run_dir;
  std::string bundle;
  std::string skill_dir;
  std::optional<int> max_parallel;
  std::optional<std::string> base;
  // Called with each log record as it is written (the verb prints them or
  // feeds the live view); may be empty.
  std::function<void(const Json&)> on_log;
  // Called with state.json after each transaction the driver makes (the
  // live view); may be empty.
  std::function<void(const Json&)> on_state;
  // Called every few hundred milliseconds while the driver waits on a
  // command of its own (the bundle's test and build commands), so a live
  // view keeps time; may be empty.
  std::function<void()> on_wait;
};

struct DriverOutcome {
  int exit_code = kExitOk;
  Json result;
};

// What the driver read from state.json before doing anything.
struct BundleContext {
  std::string worktree;
  std::string branch;
  std::string base;
  std::string delivery;  // "github" | "local"
  std::string default_branch;
  std::string merge_policy;
  Json commands;
  std::string bundle_dir;  // <run>/bundles/<bundle>
};

class Driver {
 public:
  // Reads the run and the bundle cursor; exit code 3 errors on anything
  // missing, and on a worktree or run directory the placement guard
  // refuses (bundle/placement.h), before writing anything. Writes
  // driver.pid. Touches nothing else.
  static Expected<std::unique_ptr<Driver>> open(DriverOptions options, RunStore& store,
                                                const Graph& graph, CommandRunner& runner);
  ~Driver();

  const BundleContext& context() const;
  // Drives the bundle to create_pr or to a blocker. Writes
  // tech-lead.result.json; the caller prints the RESULT_JSON line.
  DriverOutcome run(Launcher& launcher);

  struct Impl;

 private:
  explicit Driver(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace devgraph::bundle
