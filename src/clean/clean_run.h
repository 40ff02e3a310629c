// `devgraph clean`: a run of GRAPH.yaml's clean lane over the repository's
// own branches, carried out by code with git alone (no persona), recorded
// like any run (state.json "mode": "clean", events.jsonl) and resumable
// after a kill at any instant.
//
// Contract:
// - Nothing is written before every check passed: a primary clone (not
//   bare, not a linked worktree) with no tracked change and a branch
//   checked out, a default branch, a strategy that resolves
//   (clean/plan.h), open pull requests read (github delivery), and no
//   other orchestrator holding the repository (the lock `devgraph run`
//   holds). Each failure is one line, exit code 3 (1 when GitHub could
//   not be read).
// - The run walks clean_discover -> clean_classify -> (clean_integrate ->
//   clean_verify_integration ->) clean_cleanup -> clean_report ->
//   complete; every node's work is idempotent, so a resumed run repeats
//   the node it was killed in and finishes with the same result.
// - The source branch is never rewritten: every integration is built on
//   develop/clean-integrated-<slug> in its own worktree, cut from the
//   default ref (github: origin/<default>, fetched just before each one);
//   a conflict aborts it and removes the throwaway. github: the throwaway
//   is pushed to the default branch (never forced) and the result is
//   verified on origin/<default> after a fetch; a push the default branch
//   rejects leaves the source branch as it was and removes the throwaway,
//   worktree and branch. local: nothing lands, the report gives the
//   fast-forward command and the throwaway branch stays (its worktree is
//   removed) until a later clean run finds it landed.
// - Deletion only of what was proven: a worktree only at its canonical
//   path, by `git worktree remove` (git refuses one with changes); a
//   branch only at the commit proven merged or whose integration was
//   verified, by compare-and-delete (`git update-ref -d REF OLD`), never
//   `branch -D`.
// - The primary clone's working tree, index and checked-out branch are
//   never touched.
// - A stop signal ends the git command under way, hands the run off
//   (status handoff) and exits 128 + N; the next `devgraph clean`
//   resumes it. `devgraph run` never resumes a clean run, nor clean an
//   ordinary one.
// - dry_run classifies and prints the plan; it writes nothing.
#pragma once

#include <functional>
#include <optional>
#include <ostream>
#include <string>

#include "util/expected.h"
#include "util/json.h"

namespace devgraph::clean {

struct CleanRequest {
  std::string repo = ".";
  std::optional<std::string> strategy;
  std::optional<std::string> skill;
  bool dry_run = false;
  bool fresh = false;  // --new: a new clean run even if one is unfinished
  // Asked once before the first change (a terminal without --yes); false
  // stops with nothing changed. Empty: no question.
  std::function<bool(const std::string& plan)> confirm;
  std::function<void(const std::string&)> on_line;  // progress, for stderr
  // Told the run directory once it holds the run's state, before the lane
  // walks (`--board` serves it from then on). Not called for a dry run or
  // a declined plan.
  std::function<void(const std::string& run_dir)> on_run_dir;
};

struct CleanReport {
  int exit_code = 0;
  std::string report;  // the human report, printed before RESULT_JSON
  Json result;
};

Expected<CleanReport> run_clean(const CleanRequest& request);

}  // namespace devgraph::clean
