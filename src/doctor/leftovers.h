// `devgraph doctor`'s look at what runs left behind in a repository:
// stale locks, orphaned worktrees, and runs that wait for a person.
//
// Contract:
// - Gathering only reads: the develop home's files, each run's
//   state.json, `git worktree list --porcelain` (git::RepoQueries), the
//   inbox (inbox::list_items), and whether a process lives (/proc). No
//   lock is taken, nothing is removed or pruned: each finding says what a
//   person may run.
// - The check_* functions are pure.
// - A stale lock: devgraph's locks are flock()s the kernel releases when
//   their holder dies, so a lock file never blocks anyone; what a killed
//   orchestrator leaves is its note. orchestrator.lock names a pid ("pid
//   N") that no longer runs, or none, while a run of the repository is
//   still marked running: that run's orchestrator was killed, and the next
//   `devgraph run` (or `devgraph clean`, for a clean run) resumes it. A
//   warning.
// - An orphaned worktree: one git lists as prunable (its directory is
//   gone; under the canonical worktrees directory a problem, since git
//   then refuses a new worktree for its branch there, else a warning); a
//   develop/ worktree under the canonical directory that no run's
//   state.json names (a warning); a directory in the canonical directory
//   that is no worktree git lists (a warning).
// - Runs waiting for a person (`devgraph inbox`): one warning per item,
//   at most kMaxWaiting, then one line for the rest.
#pragma once

#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "doctor/finding.h"
#include "git/repo.h"
#include "inbox/inbox.h"
#include "proc/command.h"
#include "util/expected.h"

namespace devgraph::doctor {

struct RunFacts {
  std::string id;
  std::string status;  // state.json's
  std::string mode;    // "clean" for a clean run, else ""
};

// Every run under <develop_home>/runs whose state.json reads, by name.
std::vector<RunFacts> gather_runs(const std::string& develop_home);

struct LockFacts {
  std::string path;  // <develop_home>/orchestrator.lock
  bool exists = false;
  std::optional<int> pid;  // from its note
  bool pid_alive = false;
  std::vector<RunFacts> runs;
};

// "pid 123" -> 123; nullopt for anything else.
std::optional<int> pid_in_note(std::string_view note);
LockFacts gather_lock(const std::string& develop_home, std::vector<RunFacts> runs);
Finding check_lock(const LockFacts& facts);

struct WorktreeFacts {
  std::string top;                             // the primary clone
  std::string canonical_dir;                   // <worktrees root>/<owner>/<repo>, symlinks resolved
  std::optional<std::string> error;            // git worktree list failed
  std::vector<git::WorktreeEntry> registered;  // paths with symlinks resolved
  std::set<std::string> recorded;   // worktree paths some run's state.json names, resolved
  std::vector<std::string> strays;  // directories in canonical_dir git does not list
};

WorktreeFacts gather_worktrees(CommandRunner& runner, const std::string& top,
                               const std::string& canonical_dir, const std::string& develop_home,
                               const std::string& home);
std::vector<Finding> check_worktrees(const WorktreeFacts& facts);

inline constexpr size_t kMaxWaiting = 10;

std::vector<Finding> check_waiting(const Expected<std::vector<inbox::Item>>& items);

}  // namespace devgraph::doctor
