// An in-memory GitHub behind gh::Gh, for unit tests of code that delivers
// through it or reads issues from it: pull requests live in a map, issues
// in a list, every call is recorded, and a test scripts failures and
// refusals ahead of time.
//
// Contract: FakeGh keeps what callers of gh.h rely on. find_pr finds the
// pull request whose head is the branch; create_pr reads the body file,
// opens pull request number 1, 2, ... and refuses a second one for the
// same head (kFailed, as gh does); enable_auto_merge turns auto-merge on
// for a known number and answers "not enabled" with a reason otherwise.
// list_open_issues answers the issues of `issues` whose state is "open"
// and, when a label is asked for, that carry it (any ASCII case), in the
// order of the list; a label gh would misread is kBadRequest, as in gh.h.
// list_open_prs answers the open pull requests of `prs`, newest first,
// each closing what its body closes (gh/closing.h).
// list_merged_prs answers the pull requests of `prs` a test marked merged
// (merge()) and those of `merged_prs`, newest (highest number) first, at
// most 200. pr_reviews answers `reviews[N]` (none for a pull request of
// `prs` without any), pr_diff `diffs[N]` cut as gh.h says (bounded_diff),
// failed_job_log the entry of `job_logs` whose link names the same job,
// its tail (bounded_log); a number or job not known fails as gh does, and
// a link that names no job is kBadRequest. ensure_label adds a name to
// `labels` once (any ASCII case is the same label). create_issue refuses
// what gh.h refuses, fails like gh when the body file is missing or a
// label is not in `labels` ("could not add label: 'x' not found"), and
// otherwise puts the new issue first in `issues`, open, numbered
// last_issue_number + 1 (which it then becomes); list_labeled_issues
// answers the issues of `issues` carrying the label, open or closed, in
// the order of the list. A scripted failure is returned once, in the
// order queued, before any of that happens (the call is still recorded).
#pragma once

#include <deque>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "gh/gh.h"

namespace devgraph::test {

class FakeGh final : public gh::Gh {
 public:
  struct Pr {
    long long number = 0;
    std::string url;
    std::string base;
    std::string head;
    std::string title;
    std::string body;  // the body file's text when the pull request was opened
    bool auto_merge = false;
    bool open = true;  // false: merged or closed, not listed by list_open_prs
    // Set by merge(): listed by list_merged_prs.
    std::optional<std::string> merge_commit;
    std::string merged_at;
  };

  // Marks pull request `number` of `prs` merged (no longer open) with its
  // merge commit and time; false when there is no such pull request.
  bool merge(long long number, const std::string& commit,
             const std::string& at = "2026-11-04T12:00:00Z");

  // Pull requests by number.
  std::map<long long, Pr> prs;
  // The issues on GitHub, in the order gh lists them (newest first), open
  // or closed; a test may change them between calls.
  std::vector<devgraph::issues::Issue> issues;
  // One line per call, in order: "find_pr <branch>", "create_pr <base>
  // <head>", "enable_auto_merge <number>", "list_open_issues" or
  // "list_open_issues <label>", "list_open_prs", "pr_status <number>",
  // "list_merged_prs", "pr_reviews <number>", "issue_comments <number>", "pr_diff <number>",
  // "failed_job_log <link>", "ensure_label <name>", "create_issue
  // <title>", "list_labeled_issues <label>".
  std::vector<std::string> calls;
  // The next call of each method fails with the first Error queued here.
  std::deque<Error> find_failures;
  std::deque<Error> create_failures;
  std::deque<Error> merge_failures;
  std::deque<Error> issue_list_failures;  // list_open_issues
  std::deque<Error> pr_list_failures;     // list_open_prs
  // When set, auto-merge is refused (not enabled) with this reason, as on a
  // repository that does not allow it.
  std::optional<std::string> refuse_auto_merge;
  // What pr_status(N) answers, as gh's JSON: the first entry of
  // status_answers[N] is served and removed while more than one is left
  // (the last one stays), so a test scripts checks that change between
  // calls; a number without answers fails as gh does for an unknown PR.
  std::map<long long, std::deque<std::string>> status_answers;
  std::deque<Error> status_failures;  // pr_status
  // Merged pull requests other than those of `prs`, as gh lists them.
  std::vector<gh::MergedPr> merged_prs;
  // Each pull request's reviews, oldest first.
  std::map<long long, std::vector<gh::Review>> reviews;
  // Each pull request's diff, as gh prints it.
  std::map<long long, std::string> diffs;
  // The failed steps' log of a job, by the job's link (a check's
  // detailsUrl); a query with any link naming the same job finds it.
  std::map<std::string, std::string> job_logs;
  // The repository's labels.
  std::vector<std::string> labels;
  // The number of the last issue: create_issue numbers on from it.
  long long last_issue_number = 1000;
  // When create_issue stamps a new issue (createdAt and updatedAt).
  std::string now = "2026-11-05T08:00:00Z";
  std::deque<Error> merged_list_failures;   // list_merged_prs
  std::deque<Error> review_failures;        // pr_reviews
  // Each issue's comments, oldest first; an issue with none answers [].
  std::map<long long, std::vector<gh::IssueComment>> issue_comment_lists;
  std::deque<Error> comment_failures;       // issue_comments
  std::deque<Error> diff_failures;          // pr_diff
  std::deque<Error> job_log_failures;       // failed_job_log
  std::deque<Error> label_failures;         // ensure_label
  std::deque<Error> issue_create_failures;  // create_issue
  std::deque<Error> labeled_list_failures;  // list_labeled_issues
  // Pull request N's url is url_prefix + N.
  std::string url_prefix = "https://github.invalid/owner/repo/pull/";

  Expected<std::optional<gh::PullRequest>> find_pr(const std::string& branch) override;
  Status create_pr(const gh::CreateRequest& request) override;
  Expected<gh::MergeAnswer> enable_auto_merge(long long number) override;
  Expected<std::vector<devgraph::issues::Issue>> list_open_issues(
      const std::optional<std::string>& label) override;
  Expected<std::vector<gh::OpenPr>> list_open_prs() override;
  Expected<gh::PrStatus> pr_status(long long number) override;
  Expected<std::vector<gh::MergedPr>> list_merged_prs() override;
  Expected<std::vector<gh::Review>> pr_reviews(long long number) override;
  Expected<std::vector<gh::IssueComment>> issue_comments(long long number) override;
  Expected<std::string> pr_diff(long long number) override;
  Expected<std::string> failed_job_log(const std::string& check_link) override;
  Status ensure_label(const std::string& name, const std::string& color,
                      const std::string& description) override;
  Expected<long long> create_issue(const gh::NewIssue& issue) override;
  Expected<std::vector<devgraph::issues::Issue>> list_labeled_issues(
      const std::string& label) override;

  // How many recorded calls begin with `prefix` ("create_pr" counts them all).
  size_t count(const std::string& prefix) const;
};

}  // namespace devgraph::test
