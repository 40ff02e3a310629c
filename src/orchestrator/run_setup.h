// Everything `devgraph run` does around the orchestrator: where the run
// lives (the placement guard's answer), which run it continues, the one
// orchestrator per repository, the first look at the issues, and the
// parts the orchestrator is built from.
//
// Contracts:
// - Nothing is written before every check passed: the repository is a
//   primary clone (not a linked worktree, not bare, not outside git), its
//   origin (if any) names a GitHub repository, no other orchestrator holds
//   it, the run to continue belongs to it, and the issue source answered
//   with what was asked. Each failure is one line and exit code 3 (usage,
//   state or placement) or 1 (the issue source could not be read).
// - Resume by default: the newest run under <develop_home>/runs whose
//   status is running or handoff (a waiting run an answer reopened is
//   one); `fresh` starts a new one. A run of another repository is
//   refused, never continued. What waits for a person in the other runs
//   stays theirs (orchestrator/ownership.h): the run never bundles its
//   issues nor cleans its branches, and a run that would end complete or
//   waiting while such work exists ends HUMAN_REQUIRED (exit 2), listing
//   it in its summary and in RESULT_JSON `waiting_elsewhere`.
// - One orchestrator per repository: <develop_home>/orchestrator.lock is
//   held for the whole run.
// - dry_run reads and prints, and writes nothing at all.
// - DEVGRAPH_SOURCE_BACKOFF_MS, when set, is the issue source's first
//   back-off in milliseconds (OrchestratorConfig::source_backoff, else 2 s),
//   so tests of a failing gh do not wait; a value that is not a whole
//   number is a usage error.
// - A new run writes the audit marker (<develop_home>/last-audit) at the
//   default branch's tip when the repository has none: the post-merge
//   audit covers what merges from the first run on.
// - Every driver is started with DEVGRAPH_LIMITS_SOCKET naming the run's
//   limits broker (orchestrator/limits.h), which lives as long as the
//   run; an inherited value is never passed on.
// - With a board (--board), the run serves its live board on the socket
//   bound for it (orchestrator/run_board.h) from the moment its directory
//   is known until it stops, and says where through on_notice; a board
//   that cannot be served, or a browser that cannot be started (--open),
//   is a notice and the run goes on: the board is a view.
// - A run that stops at a terminal state or at a handoff leaves its board
//   as one HTML file where GRAPH.yaml observability.snapshot_on_terminal
//   says (board/snapshot.h, atomic replace), named in RunReport; one that
//   cannot be written is a line, never a failure.
#pragma once

#include <chrono>
#include <functional>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "board/server.h"
#include "guard/guard.h"
#include "proc/command.h"
#include "util/expected.h"
#include "util/json.h"

namespace devgraph::orchestrator {

// The repository as `devgraph run` takes it, checked before anything is
// written (and reported by `devgraph doctor`): a directory inside git, not
// bare, the primary clone rather than a linked worktree, whose origin, when
// it has one, names a GitHub repository. Only reads (git as argv through
// `runner`). A fault is an answer, with the one line `run` refuses with;
// an Error only when git could not be run.
struct RepositoryCheck {
  enum class Fault { none, no_directory, not_git, bare, linked_worktree, foreign_origin };
  Fault fault = Fault::none;
  std::string why;  // a fault's one line
  std::string dir;  // the directory asked about, absolute
  // The placement guard's answer: set from linked_worktree on.
  guard::Placement place;
  std::string top;       // the primary clone's top: set from foreign_origin on
  std::string origin;    // origin's URL; "" when there is none
  std::string delivery;  // "github" | "local": set when there is no fault
};
Expected<RepositoryCheck> check_repository(CommandRunner& runner, const std::string& repo,
                                           const guard::Roots& roots);

struct RunSetupRequest {
  std::string repo = ".";
  std::optional<std::string> issues;  // "github" | "local"; default from the origin
  std::optional<std::string> label;
  bool all_issues = false;
  std::optional<int> max_bundles;
  std::optional<std::chrono::milliseconds> watch;
  // --budget-usd: no new persona once the run's recorded cost reaches it
  // (orchestrator/limits.h); nullopt keeps the budget the run recorded.
  std::optional<double> budget_usd;
  // --merge-policy: "never" or "auto_when_checks_pass" (GRAPH.yaml
  // delivery.github.merge_options); nullopt keeps the run's (a new run:
  // GRAPH.yaml delivery.github.merge).
  std::optional<std::string> merge_policy;
  // --discuss-rounds: every bundle's plan and finished branch are critiqued
  // (bundle/critique_gate.h). Recorded on the run (`discuss_rounds`), so a
  // resume without the flag keeps them on.
  bool discuss_rounds = false;
  bool fresh = false;
  bool dry_run = false;
  std::optional<std::string> skill;
  // Flags every driver gets (--agent ..., --sim-scenario ...).
  std::vector<std::string> driver_flags;
  std::function<void(const std::string&)> on_line;
  std::function<void(const Json& state)> on_state;  // the live view's feeds
  std::function<void()> on_tick;
  // --board: the board's socket, bound before anything else was done, which
  // the run takes over; nullptr: no board. open_board: --open.
  board::Listener* board = nullptr;
  bool open_board = false;
  // Lines for stderr whatever the live view draws (the board's URL).
  std::function<void(const std::string&)> on_notice;
};

struct RunReport {
  int exit_code = 0;
  std::string run_dir;
  std::string summary;  // printed before RESULT_JSON
  Json result;
  std::string board_snapshot;  // where the board's snapshot was written; empty: nowhere
};

Expected<RunReport> run_repository(const RunSetupRequest& request, std::ostream& out);

}  // namespace devgraph::orchestrator
