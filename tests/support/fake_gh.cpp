#include "support/fake_gh.h"

#include <cctype>
#include <utility>

#include "gh/closing.h"
#include "util/fs.h"

namespace devgraph::test {
namespace {

std::optional<Error> take(std::deque<Error>& queue) {
  if (queue.empty()) return std::nullopt;
  Error e = std::move(queue.front());
  queue.pop_front();
  return e;
}

std::string ascii_lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

bool has_label(const devgraph::issues::Issue& issue, const std::string& label) {
  for (const auto& name : issue.labels)
    if (ascii_lower(name) == ascii_lower(label)) return true;
  return false;
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

Expected<std::vector<devgraph::issues::Issue>> FakeGh::list_open_issues(
    const std::optional<std::string>& label) {
  calls.push_back(label ? "list_open_issues " + *label : "list_open_issues");
  if (auto e = take(issue_list_failures)) return *e;
  if (label &&
      (label->empty() || (*label)[0] == '-' || label->find_first_of(",\"\n") != std::string::npos))
    return Error{"gh issue list: not a label gh reads as one: " + *label, 1, gh::kBadRequest};
  std::vector<devgraph::issues::Issue> open;
  for (const auto& issue : issues)
    if (issue.state == "open" && (!label || has_label(issue, *label))) open.push_back(issue);
  return open;
}

Expected<std::vector<gh::OpenPr>> FakeGh::list_open_prs() {
  calls.push_back("list_open_prs");
  if (auto e = take(pr_list_failures)) return *e;
  std::vector<gh::OpenPr> open;
  for (auto it = prs.rbegin(); it != prs.rend(); ++it)
    if (it->second.open)
      open.push_back(gh::OpenPr{it->second.number, it->second.url, it->second.head, it->second.base,
                                gh::closing_issues(it->second.body)});
  return open;
}

size_t FakeGh::count(const std::string& prefix) const {
  size_t n = 0;
  for (const auto& c : calls) n += c.rfind(prefix, 0) == 0;
  return n;
}

Expected<gh::PrStatus> FakeGh::pr_status(long long number) {
  calls.push_back("pr_status " + std::to_string(number));
  if (auto e = take(status_failures)) return *e;
  auto it = status_answers.find(number);
  if (it == status_answers.end() || it->second.empty())
    return fail(gh::kFailed, "gh pr view " + std::to_string(number) +
                                 " failed: could not resolve to a PullRequest with the number of " +
                                 std::to_string(number));
  std::string answer = it->second.front();
  if (it->second.size() > 1) it->second.pop_front();
  return gh::parse_pr_status(answer);
}

}  // namespace devgraph::test
