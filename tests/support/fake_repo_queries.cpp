#include "support/fake_repo_queries.h"

#include <optional>

namespace devgraph::test {
namespace {

std::optional<Error> take(std::deque<Error>& queue) {
  if (queue.empty()) return std::nullopt;
  Error e = std::move(queue.front());
  queue.pop_front();
  return e;
}

}  // namespace

Status FakeRepoQueries::fetch_prune() {
  calls.push_back("fetch_prune");
  if (auto e = take(fetch_failures)) return *e;
  return {};
}

Expected<std::string> FakeRepoQueries::default_branch(bool) {
  calls.push_back("default_branch");
  return default_branch_name;
}

Expected<bool> FakeRepoQueries::is_ancestor(const std::string& ancestor,
                                            const std::string& descendant) {
  calls.push_back("is_ancestor " + ancestor + " " + descendant);
  if (auto e = take(ancestor_failures)) return *e;
  return ancestor == descendant || reachable.count({ancestor, descendant}) > 0;
}

Expected<std::vector<std::string>> FakeRepoQueries::branches(const std::string& prefix) {
  calls.push_back("branches " + prefix);
  if (auto e = take(branch_failures)) return *e;
  std::vector<std::string> out;
  for (const auto& b : local_branches)
    if (b.rfind(prefix, 0) == 0) out.push_back(b);
  return out;
}

Expected<std::vector<git::WorktreeEntry>> FakeRepoQueries::worktrees() {
  calls.push_back("worktrees");
  return worktree_list;
}

size_t FakeRepoQueries::count(const std::string& prefix) const {
  size_t n = 0;
  for (const auto& c : calls)
    if (c.rfind(prefix, 0) == 0) ++n;
  return n;
}

}  // namespace devgraph::test
