#include "support/fake_gh.h"

#include <algorithm>
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

bool misread_label(const std::string& label) {
  return label.empty() || label[0] == '-' || label.find_first_of(",\"\n") != std::string::npos;
}

bool flag_or_lines(const std::string& s) {
  return (!s.empty() && s[0] == '-') || s.find('\n') != std::string::npos;
}

Error unknown_pr(const std::string& what, long long number) {
  return fail(gh::kFailed, what +
                               " failed: GraphQL: Could not resolve to a PullRequest with the "
                               "number of " +
                               std::to_string(number) + ". (repository.pullRequest)");
}

}  // namespace

bool FakeGh::merge(long long number, const std::string& commit, const std::string& at) {
  auto it = prs.find(number);
  if (it == prs.end()) return false;
  it->second.open = false;
  it->second.merge_commit = commit;
  it->second.merged_at = at;
  return true;
}

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
  if (label && misread_label(*label))
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

Expected<std::vector<gh::MergedPr>> FakeGh::list_merged_prs() {
  calls.push_back("list_merged_prs");
  if (auto e = take(merged_list_failures)) return *e;
  std::vector<gh::MergedPr> merged = merged_prs;
  for (const auto& [number, pr] : prs)
    if (pr.merge_commit)
      merged.push_back(
          gh::MergedPr{number, pr.title, pr.url, pr.head, pr.base, *pr.merge_commit, pr.merged_at});
  std::stable_sort(merged.begin(), merged.end(), [](const gh::MergedPr& a, const gh::MergedPr& b) {
    return a.number > b.number;
  });
  if (merged.size() > 200) merged.resize(200);
  return merged;
}

Expected<std::vector<gh::Review>> FakeGh::pr_reviews(long long number) {
  calls.push_back("pr_reviews " + std::to_string(number));
  if (auto e = take(review_failures)) return *e;
  if (number <= 0)
    return fail(gh::kBadRequest,
                "gh pr view: not a pull request number: " + std::to_string(number));
  auto it = reviews.find(number);
  if (it != reviews.end()) return it->second;
  if (prs.count(number)) return std::vector<gh::Review>();
  return unknown_pr("gh pr view " + std::to_string(number) + " --json reviews", number);
}

Expected<std::vector<gh::IssueComment>> FakeGh::issue_comments(long long number) {
  calls.push_back("issue_comments " + std::to_string(number));
  if (auto e = take(comment_failures)) return *e;
  if (number <= 0)
    return fail(gh::kBadRequest, "gh issue view: not an issue number: " + std::to_string(number));
  auto it = issue_comment_lists.find(number);
  if (it != issue_comment_lists.end()) return it->second;
  return std::vector<gh::IssueComment>();
}

Expected<std::string> FakeGh::pr_diff(long long number) {
  calls.push_back("pr_diff " + std::to_string(number));
  if (auto e = take(diff_failures)) return *e;
  if (number <= 0)
    return fail(gh::kBadRequest,
                "gh pr diff: not a pull request number: " + std::to_string(number));
  auto it = diffs.find(number);
  if (it == diffs.end()) return unknown_pr("gh pr diff " + std::to_string(number), number);
  return gh::bounded_diff(it->second);
}

Expected<std::string> FakeGh::failed_job_log(const std::string& check_link) {
  calls.push_back("failed_job_log " + check_link);
  if (auto e = take(job_log_failures)) return *e;
  auto job = gh::actions_job_id(check_link);
  if (!job)
    return fail(gh::kBadRequest, "gh run view: not a GitHub Actions job link: " + check_link);
  for (const auto& [link, log] : job_logs)
    if (gh::actions_job_id(link) == job) return gh::bounded_log(log);
  return fail(gh::kFailed, "gh run view --job " + *job +
                               " failed: failed to get job: HTTP 404: Not Found "
                               "(https://api.github.com/repos/owner/repo/actions/jobs/" +
                               *job + ")");
}

Status FakeGh::ensure_label(const std::string& name, const std::string& color,
                            const std::string& description) {
  calls.push_back("ensure_label " + name);
  if (auto e = take(label_failures)) return *e;
  if (name.empty() || flag_or_lines(name) || flag_or_lines(color) || flag_or_lines(description))
    return fail(gh::kBadRequest, "gh label create: not a value gh reads as one: " + name);
  for (const auto& l : labels)
    if (ascii_lower(l) == ascii_lower(name)) return {};
  labels.push_back(name);
  return {};
}

Expected<long long> FakeGh::create_issue(const gh::NewIssue& issue) {
  calls.push_back("create_issue " + issue.title);
  if (auto e = take(issue_create_failures)) return *e;
  if (issue.title.empty() || issue.body_file.empty() || flag_or_lines(issue.title) ||
      issue.body_file[0] == '-')
    return fail(gh::kBadRequest, "gh issue create: not a title and body file gh reads as such");
  for (const auto& label : issue.labels)
    if (misread_label(label))
      return fail(gh::kBadRequest, "gh issue create: not a label gh reads as one: " + label);
  auto body = read_file(issue.body_file);
  if (!body)
    return fail(gh::kFailed,
                "gh issue create failed: open " + issue.body_file + ": no such file or directory");
  for (const auto& label : issue.labels) {
    bool known = false;
    for (const auto& l : labels) known = known || ascii_lower(l) == ascii_lower(label);
    if (!known)
      return fail(gh::kFailed,
                  "gh issue create failed: could not add label: '" + label + "' not found");
  }
  devgraph::issues::Issue created;
  created.number = ++last_issue_number;
  created.title = issue.title;
  created.body = std::move(*body);
  created.labels = issue.labels;
  created.parent = devgraph::issues::parent_from_body(created.body);
  created.priority = devgraph::issues::priority_from_labels(created.labels);
  created.created = now;
  created.updated = now;
  issues.insert(issues.begin(), std::move(created));
  return last_issue_number;
}

Expected<std::vector<devgraph::issues::Issue>> FakeGh::list_labeled_issues(
    const std::string& label) {
  calls.push_back("list_labeled_issues " + label);
  if (auto e = take(labeled_list_failures)) return *e;
  if (misread_label(label))
    return fail(gh::kBadRequest, "gh issue list: not a label gh reads as one: " + label);
  std::vector<devgraph::issues::Issue> labeled;
  for (const auto& issue : issues)
    if (has_label(issue, label)) labeled.push_back(issue);
  return labeled;
}

}  // namespace devgraph::test
