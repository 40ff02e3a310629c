// The task lane's deterministic scheduler: the planner's tasks.json, file
// footprints, which tasks may start now, the longest dependency chain, and
// whether a task's uncommitted changes stayed inside its footprint.
//
// Everything here is a pure function of a plan, task cursor states and (for
// the footprint check) the output of `git status`, so the bundle driver calls
// it in-process and tests feed it canned inputs. The `devgraph schedule`
// verb is a thin printer over these functions; its JSON keeps the field
// names and order of the reference runtime's schedule script.
//
// Footprint semantics (one glob engine serves both conflict tests and path
// matching):
// - A footprint is a list of globs relative to the worktree root. `**`
//   crosses directories; `*` and `?` stay inside one path segment. Only
//   `*`, `**` and `?` are supported (no `[]` or `{}`).
// - A glob without wildcards names that path and everything beneath it.
// - The literal prefix of a glob is the part before its first wildcard,
//   backed up to a whole directory when the wildcard sits mid-segment:
//   `src/domain/**` -> `src/domain`, `src/a*.ts` -> `src`, `**/x` -> ``.
// - Two globs conflict when their literal prefixes are equal or one is a
//   parent directory of the other, compared segment by segment (so `e2e`
//   does not conflict with `e2e-helpers`). An empty prefix is the whole
//   tree and conflicts with everything. This over-serializes on purpose:
//   two writers on one file is worse than a task waiting.
#pragma once

#include <cstddef>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "git/status.h"
#include "proc/command.h"
#include "util/expected.h"
#include "util/json.h"

namespace devgraph::schedule {

// ---------------------------------------------------------------------------
// Globs and footprints
// ---------------------------------------------------------------------------

// One compiled footprint glob. Matching simulates an automaton (no regex,
// no backtracking): its cost is bounded by path length x pattern length
// whatever the pattern.
class Glob {
 public:
  // Leading/trailing whitespace and slashes are ignored, as in the reference.
  explicit Glob(std::string_view pattern);

  // `path` is relative to the worktree root; leading/trailing slashes are
  // ignored.
  bool matches(std::string_view path) const;
  const std::string& pattern() const { return pattern_; }  // as given
  const std::string& normalized() const { return glob_; }  // trimmed
  const std::string& literal_prefix() const { return prefix_; }
  bool has_wildcard() const { return has_wildcard_; }

 private:
  std::string pattern_;
  std::string glob_;
  std::string prefix_;
  std::u32string program_;  // compiled matcher: code points and wildcard atoms
  bool has_wildcard_ = false;
};

std::string literal_prefix(std::string_view glob);
// Equal, or one is a parent directory of the other (segment-wise); an empty
// prefix conflicts with everything.
bool prefixes_conflict(std::string_view a, std::string_view b);
bool glob_matches(std::string_view glob, std::string_view path);

using GlobPair = std::pair<std::string, std::string>;
// Every (glob of a, glob of b) pair whose literal prefixes conflict, in the
// order a x b.
std::vector<GlobPair> footprint_conflicts(const std::vector<std::string>& a,
                                          const std::vector<std::string>& b);

// A task's footprint, compiled once.
class Footprint {
 public:
  Footprint() = default;
  explicit Footprint(const std::vector<std::string>& globs);
  bool contains(std::string_view path) const;
  bool conflicts_with(const Footprint& other) const;
  const std::vector<Glob>& globs() const { return globs_; }

 private:
  std::vector<Glob> globs_;
};

// ---------------------------------------------------------------------------
// tasks.json
// ---------------------------------------------------------------------------

struct Task {
  std::string id;
  std::string title;
  std::vector<std::string> depends_on;
  std::vector<std::string> files;  // footprint globs, as written
  std::string kind;                // "" when absent
  Footprint footprint;             // `files`, compiled
};

struct Plan {
  std::string bundle;
  std::vector<Task> tasks;                        // plan order is priority order
  std::unordered_map<std::string, size_t> index;  // id -> position in tasks

  const Task* find(std::string_view id) const;
};

// Kinds a task may declare (absent means code).
inline constexpr const char* kTaskKinds[] = {"code", "iac", "docs"};

// Every structural problem of a tasks.json document, in a stable order:
// the bundle, the task list, ids, duplicates, each task's dependencies,
// self-dependency, footprint and kind, then every dependency cycle with its
// path ("dependency cycle: T1 -> T2 -> T1", meaning T1 depends on T2 ...).
// Cycles are searched over the well-formed edges only, so a bad dependency
// elsewhere does not hide one. Empty when the plan is valid.
std::vector<std::string> check_plan(const Json& doc);

// Parses and validates. An invalid plan fails with exit code 1 and the
// message "tasks.json is invalid:" followed by one indented line per
// problem (the reference's shape; the only multi-line error of the module).
Expected<Plan> plan_from_json(const Json& doc);
// Reads `path` and calls plan_from_json; an unreadable or unparsable file
// fails with "cannot read tasks.json at PATH: ...".
Expected<Plan> load_plan(const std::string& path);

// ---------------------------------------------------------------------------
// Runnable tasks
// ---------------------------------------------------------------------------

// Task cursor states of one bundle, from state.json's tasks_runtime.
struct TaskCursors {
  std::set<std::string> complete;   // status "complete"
  std::set<std::string> in_flight;  // status "active" with a node
};

// Reads tasks_runtime records whose "bundle" is `bundle`. A record without
// a string "task" takes the task id from its key ("<bundle>/<task>").
TaskCursors cursors_from_state(const Json& state, std::string_view bundle);
// Reads RUN_DIR/state.json (or any state file) directly.
Expected<TaskCursors> read_task_cursors(const std::string& state_path, std::string_view bundle);

inline constexpr const char* kRouteAvailable = "task_available";
inline constexpr const char* kRouteWaiting = "waiting";
inline constexpr const char* kRouteDeadlock = "deadlock";
inline constexpr const char* kRouteComplete = "bundle_tasks_complete";

struct RunnableSet {
  std::string bundle;
  std::string route;
  std::vector<std::string> runnable;   // plan order
  std::vector<std::string> in_flight;  // sorted
  std::vector<std::string> complete;   // sorted
  std::vector<std::string> remaining;  // plan order, not complete
  int max_parallel = 0;
  // Insertion (plan) order, as the reference prints them.
  std::vector<std::pair<std::string, std::vector<std::string>>> waiting_on_deps;
  std::vector<std::pair<std::string, std::vector<std::string>>> waiting_on_footprint;
  std::vector<std::string> waiting_on_capacity;
  bool deadlock = false;

  Json to_json() const;
};

// A task may start when every dependency is complete, its footprint is
// disjoint from every in-flight task and every task chosen before it in
// this call, and fewer than `max_parallel` tasks would then be in flight.
// Route: bundle_tasks_complete when nothing remains; task_available when
// something can start; deadlock when nothing can start and nothing is in
// flight; waiting otherwise. Fails (exit 1) when a cursor marks a task in
// flight that the plan does not list: its footprint is unknown, so nothing
// could be proven disjoint from it.
Expected<RunnableSet> compute_runnable(const Plan& plan, const TaskCursors& cursors,
                                       int max_parallel);

// ---------------------------------------------------------------------------
// Critical path and conflicts
// ---------------------------------------------------------------------------

struct CriticalPath {
  std::vector<std::string> path;  // dependency first
  int ceiling = 0;
  bool within_ceiling = true;
  size_t task_count = 0;

  Json to_json() const;
};

// max(3, ceil(task_count / 2)).
int default_chain_ceiling(size_t task_count);
// The longest dependency chain (first found in plan order on ties). A
// diagnostic: a plan is never rejected for its real dependencies. The plan
// must be acyclic (plan_from_json guarantees it).
CriticalPath critical_path(const Plan& plan, std::optional<int> ceiling);

// For each task (indexed like plan.tasks), the number of tasks on the
// longest dependency chain that starts at it: 1 for a task nothing depends
// on. A driver serves the task with the longest tail first when several
// need it at once, since a delay there delays the whole bundle. The plan
// must be acyclic.
std::vector<int> tail_lengths(const Plan& plan);

struct ConflictPair {
  std::string a;  // earlier in plan order
  std::string b;
  std::vector<GlobPair> globs;
};
// Every pair of tasks whose footprints conflict (they serialize).
std::vector<ConflictPair> all_conflicts(const Plan& plan);
Json conflicts_to_json(const std::vector<ConflictPair>& pairs);

// ---------------------------------------------------------------------------
// Footprint check of uncommitted changes
// ---------------------------------------------------------------------------

// One entry of `git status --porcelain=v1 -z`. Paths are exact bytes (no
// quoting: -z output is never quoted).
// Changed paths as git status lists them (git/status.h).
using git::StatusEntry;

// The exact argv footprint-check runs (in the worktree).
std::vector<std::string> git_status_argv(const std::string& worktree);
// Runs git status through `runner`; a failing git is an error naming it.
Expected<std::vector<StatusEntry>> uncommitted_changes(CommandRunner& runner,
                                                       const std::string& worktree);

struct FootprintReport {
  std::string task;
  std::vector<std::string> own;  // in git status order
  // Owner -> paths, owners in order of first appearance.
  std::vector<std::pair<std::string, std::vector<std::string>>> other_in_flight;
  std::vector<std::string> outside;
  bool violation = false;
  // `git add` / `git commit` pathspec that selects exactly the task's own
  // changed paths (both sides of an owned rename), as ":(literal)PATH"
  // words: a footprint glob handed to git would use git's own glob rules,
  // where `*` crosses directories and could pick up another task's file.
  std::vector<std::string> add_pathspec;

  Json to_json() const;
};

// Classifies every changed path: inside `task`'s footprint (own), else
// inside the first listed in-flight task's footprint, else outside. Both
// sides of a rename or copy are classified, so moving a file out of an
// unowned path is a violation even when the new name is owned. Unknown
// `task` or in-flight ids fail (exit 1).
Expected<FootprintReport> classify_changes(const Plan& plan, const std::string& task,
                                           const std::vector<std::string>& in_flight,
                                           const std::vector<StatusEntry>& changes);

// uncommitted_changes + classify_changes.
Expected<FootprintReport> footprint_check(const Plan& plan, const std::string& task,
                                          const std::vector<std::string>& in_flight,
                                          const std::string& worktree, CommandRunner& runner);

}  // namespace devgraph::schedule
