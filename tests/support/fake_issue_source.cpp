#include "support/fake_issue_source.h"

#include <optional>
#include <utility>

namespace devgraph::test {
namespace {

std::optional<Error> take(std::deque<Error>& queue) {
  if (queue.empty()) return std::nullopt;
  Error e = std::move(queue.front());
  queue.pop_front();
  return e;
}

}  // namespace

Expected<std::vector<issues::Issue>> FakeIssueSource::open_issues() {
  calls.push_back("open_issues");
  if (on_open_issues) on_open_issues(++open_calls_);
  if (auto e = take(open_failures)) return *e;
  std::vector<issues::Issue> out;
  for (const auto& i : issues)
    if (i.state == "open") out.push_back(i);
  return out;
}

Expected<std::set<long long>> FakeIssueSource::closed_by_open_prs() {
  calls.push_back("closed_by_open_prs");
  if (auto e = take(pr_failures)) return *e;
  return closed_by_prs;
}

Expected<std::vector<issues::Issue>> FakeIssueSource::delivered_issues() {
  calls.push_back("delivered_issues");
  if (auto e = take(delivered_failures)) return *e;
  std::vector<issues::Issue> out;
  for (const auto& i : issues)
    if (i.branch && i.head) out.push_back(i);
  return out;
}

Status FakeIssueSource::record_delivery(long long number, const std::string& branch,
                                        const std::string& head) {
  calls.push_back("record_delivery " + std::to_string(number) + " " + branch + " " + head);
  if (auto e = take(record_failures)) return *e;
  issues::Issue* i = find(number);
  if (!i) return fail(ErrorKind::not_found, "no issue #" + std::to_string(number));
  i->branch = branch;
  i->head = head;
  return {};
}

Status FakeIssueSource::close(long long number, const std::string& reason) {
  calls.push_back("close " + std::to_string(number) + " " + reason);
  if (auto e = take(close_failures)) return *e;
  issues::Issue* i = find(number);
  if (!i) return fail(ErrorKind::not_found, "no issue #" + std::to_string(number));
  i->state = "closed";
  i->close_reason = reason;
  return {};
}

issues::Issue* FakeIssueSource::find(long long number) {
  for (auto& i : issues)
    if (i.number == number) return &i;
  return nullptr;
}

size_t FakeIssueSource::count(const std::string& prefix) const {
  size_t n = 0;
  for (const auto& c : calls)
    if (c.rfind(prefix, 0) == 0) ++n;
  return n;
}

}  // namespace devgraph::test
