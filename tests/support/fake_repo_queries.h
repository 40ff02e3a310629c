// An in-memory RepoQueries (git/repo.h) for unit tests of the
// orchestrator: the primary clone's answers are fields the test sets, every
// call is recorded, and failures are scripted per method.
//
// Contract: fetch_prune() succeeds (nothing to fetch); default_branch()
// answers `default_branch_name` whatever `remote` is; is_ancestor(a, d) is
// true when a == d or the pair (a, d) is in `reachable` (what a person
// merged); branches(prefix) answers the names of `local_branches` that
// start with the prefix, in the order of the list; worktrees() answers
// `worktree_list`. A scripted failure is returned once, in the order
// queued, before any of that happens (the call is still recorded).
#pragma once

#include <deque>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "git/repo.h"

namespace devgraph::test {

class FakeRepoQueries final : public git::RepoQueries {
 public:
  std::string default_branch_name = "main";
  // (ancestor, descendant): commits reachable from a branch.
  std::set<std::pair<std::string, std::string>> reachable;
  std::vector<std::string> local_branches;
  std::vector<git::WorktreeEntry> worktree_list;
  // One line per call, in order: "fetch_prune", "default_branch",
  // "is_ancestor <a> <d>", "branches <prefix>", "worktrees".
  std::vector<std::string> calls;
  std::deque<Error> fetch_failures;
  std::deque<Error> ancestor_failures;
  std::deque<Error> branch_failures;

  Status fetch_prune() override;
  Expected<std::string> default_branch(bool remote) override;
  Expected<bool> is_ancestor(const std::string& ancestor, const std::string& descendant) override;
  Expected<std::vector<std::string>> branches(const std::string& prefix) override;
  Expected<std::vector<git::WorktreeEntry>> worktrees() override;

  // How many recorded calls begin with `prefix`.
  size_t count(const std::string& prefix) const;
};

}  // namespace devgraph::test
