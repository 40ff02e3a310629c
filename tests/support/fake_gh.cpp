#include "support/fake_gh.h"

#include <utility>

#include "util/fs.h"

namespace devgraph::test {
namespace {

std::optional<Error> take(std::deque<Error>& queue) {
  if (queue.empty()) return std::nullopt;
  Error e = std::move(queue.front());
  queue.pop_front();
  return e;
}

}  // namespace

Expected<std::optional<gh::PullRequest>> FakeGh::find_pr(const std::string& branch) {
  calls.push_back("find_pr " + branch);
  if (auto e = take(find_failures)) return *e;
  // The newest pull request of the head, as gh shows it.
  for (auto it = prs.rbegin(); it != prs.rend(); ++it)
    if (it->second.head == branch)
      return std::optional<gh::PullRequest>(
          gh::PullRequest{it->second.number, it->second.url, it->second.auto_merge});
  return std::optional<gh::PullRequest>();
}

Status FakeGh::create_pr(const gh::CreateRequest& request) {
  calls.push_back("create_pr " + request.base + " " + request.head);
  if (auto e = take(create_failures)) return *e;
  for (const auto& [number, pr] : prs)
    if (pr.head == request.head)
      return Error{"a pull request for branch \"" + request.head + "\" into branch \"" + pr.base +
                       "\" already exists: " + pr.url,
                   1, gh::kFailed};
  auto body = read_file(request.body_file);
  if (!body)
    return Error{"open " + request.body_file + ": no such file or directory", 1, gh::kFailed};
  Pr pr;
  pr.number = prs.empty() ? 1 : prs.rbegin()->first + 1;
  pr.url = url_prefix + std::to_string(pr.number);
  pr.base = request.base;
  pr.head = request.head;
  pr.title = request.title;
  pr.body = std::move(*body);
  prs[pr.number] = std::move(pr);
  return {};
}

Expected<gh::MergeAnswer> FakeGh::enable_auto_merge(long long number) {
  calls.push_back("enable_auto_merge " + std::to_string(number));
  if (auto e = take(merge_failures)) return *e;
  auto it = prs.find(number);
  if (it == prs.end())
    return gh::MergeAnswer{
        false, "could not resolve to a PullRequest with the number of " + std::to_string(number)};
  if (refuse_auto_merge) return gh::MergeAnswer{false, *refuse_auto_merge};
  it->second.auto_merge = true;
  return gh::MergeAnswer{true, ""};
}

size_t FakeGh::count(const std::string& prefix) const {
  size_t n = 0;
  for (const auto& c : calls) n += c.rfind(prefix, 0) == 0;
  return n;
}

}  // namespace devgraph::test
