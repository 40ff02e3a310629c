// The headless tech lead: drives one bundle's bundle lane and task lanes as
// code, walking GRAPH.yaml (lanes `bundle` and `task`; the tech-lead
// persona is the specification). The driver is wiring: the parts are
// bundle/gates.h (plan and gates), bundle/task_lane.h (the task lane),
// bundle/recovery.h (the shared recovery nodes), bundle/delivery.h
// (create_pr), bundle/dispatch.h (personas) and bundle/journal.h (state).
//
// Contracts:
// - Every cursor move and event goes through the RunStore, so state.json and
//   events.jsonl look as the reference runtime would leave them; a change
//   the store refuses stops the bundle with that message.
// - Resume: the driver may be killed at any instant and run again. It
//   continues from the recorded cursors; a persona whose result was saved
//   for the cursor's current visit of its node is not launched again, and
//   every external effect is reconciled before it is repeated (commit
//   trailers, the remote branch, `gh pr view`). Intent events are recorded
//   before each effect.
// - The outcome is the tech-lead result (the reference's RESULT_JSON fields)
//   and an exit code: 0 DONE / DONE_WITH_CONCERNS, 2 BLOCKED / NEEDS_CONTEXT.
//   open() fails with exit code 3 for a usage or state error found before
//   any work.
// - Limits: once the launcher refuses new launches (Launcher::refusing:
//   under `devgraph run`, the run's or the bundle's budget is spent, or
//   the run's limits went away; bundle/slot_gate.h), nothing new is
//   launched, what is in flight finishes and its cursor moves on to its
//   next node, and the driver answers BLOCKED with that reason (exit 2).
//   The next driver resumes from those cursors.
// - Stop: a SIGINT, SIGTERM or SIGHUP (when the launcher watches them)
//   starts nothing new, ends every persona process group (TERM, then KILL
//   after the grace) and the bundle's own test or build command, leaves
//   each cursor where it stood, and answers HANDOFF with exit 128 + N.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "bundle/bundle_run.h"
#include "bundle/crash_points.h"
#include "bundle/critique_gate.h"
#include "bundle/launcher.h"
#include "gh/gh.h"
#include "git/git.h"
#include "graph/graph.h"
#include "proc/command.h"
#include "store/run_store.h"
#include "util/expected.h"
#include "util/json.h"

namespace devgraph::bundle {

inline constexpr int kExitOk = 0;
inline constexpr int kExitBlocked = 2;
inline constexpr int kExitUsage = 3;
// Stopped by signal N (SIGINT, SIGTERM, SIGHUP): 128 + N, as a shell
// reports it. Every persona was ended first; the run is resumable.
inline constexpr int kExitSignalBase = 128;

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
  // The discuss rounds as gates (GRAPH.yaml discuss.rounds): on when
  // critique.enabled, GRAPH.yaml's rounds_enabled or the run's
  // `discuss_rounds` say so; the critics get the backend flags here.
  CritiqueSettings critique;
};

// The driver's collaborators, each behind its seam: a test hands in fakes.
struct DriverParts {
  RunStore& store;
  const Graph& graph;
  CommandRunner& runner;
  // Named crash points; null: DEVGRAPH_BUNDLE_CRASH_AT (EnvCrashPoints).
  CrashPoints* crash = nullptr;
  // git in the bundle's worktree; null: the real git through `runner`.
  git::Git* git = nullptr;
  // The GitHub CLI in the bundle's worktree; null: the real gh through
  // `runner`.
  gh::Gh* gh = nullptr;
};

struct DriverOutcome {
  int exit_code = kExitOk;
  Json result;
};

class Driver {
 public:
  // Reads the run and the bundle cursor; exit code 3 errors on anything
  // missing, and on a worktree or run directory the placement guard
  // refuses (bundle/placement.h), before writing anything. Takes the
  // bundle's driver lock, ends the children a killed predecessor left, and
  // writes driver.pid. Touches nothing else.
  static Expected<std::unique_ptr<Driver>> open(DriverOptions options, DriverParts parts);
  ~Driver();

  const BundleContext& context() const;
  const BundleLayout& layout() const;
  // Drives the bundle to create_pr or to a blocker. Writes
  // tech-lead.result.json; the caller prints the RESULT_JSON line.
  DriverOutcome run(Launcher& launcher);

  struct Impl;

 private:
  explicit Driver(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace devgraph::bundle
