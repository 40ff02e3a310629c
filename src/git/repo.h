// The primary clone as the orchestrator reads it. The primary clone is
// read-only for a whole run: nothing here touches its working tree or its
// index. fetch_prune() updates remote-tracking refs only; every other call
// only reads.
//
// Contract: argv only, through a CommandRunner, in the clone's top
// directory; a failure is an Error whose message quotes git's last stderr
// line. A fetch that could not reach the remote is ErrorKind::transient.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "proc/command.h"
#include "util/expected.h"

namespace devgraph::git {

struct WorktreeEntry {
  std::string path;
  std::string branch;  // "" when detached
  // git's `prunable` note: the worktree is registered but its directory
  // (or its .git file) is gone, so `git worktree prune` would drop it.
  bool prunable = false;
};

class RepoQueries {
 public:
  virtual ~RepoQueries() = default;
  // `git fetch --prune origin`.
  virtual Status fetch_prune() = 0;
  // The default branch: origin's HEAD when `remote` is set (refs/remotes/
  // origin/HEAD, else the first of main/master that origin has), else
  // the branch checked out in the clone.
  virtual Expected<std::string> default_branch(bool remote) = 0;
  // Is `ancestor` reachable from `descendant`?
  virtual Expected<bool> is_ancestor(const std::string& ancestor,
                                     const std::string& descendant) = 0;
  // Local branch names under `prefix`, whole path components
  // ("develop/": every develop/* branch).
  virtual Expected<std::vector<std::string>> branches(const std::string& prefix) = 0;
  // `git worktree list --porcelain`, the primary clone itself excluded.
  // A prunable one is listed, marked so.
  virtual Expected<std::vector<WorktreeEntry>> worktrees() = 0;
};

std::unique_ptr<RepoQueries> make_repo_queries(CommandRunner& runner, std::string top,
                                               std::map<std::string, std::string> env = {});

}  // namespace devgraph::git
