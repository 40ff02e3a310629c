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
// each closing what its body closes (gh/closing.h). A scripted failure is
// returned once, in the order queued, before any of that happens (the
// call is still recorded).
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
  };

  // Pull requests by number.
  std::map<long long, Pr> prs;
  // The issues on GitHub, in the order gh lists them (newest first), open
  // or closed; a test may change them between calls.
  std::vector<devgraph::issues::Issue> issues;
  // One line per call, in order: "find_pr <branch>", "create_pr <base>
  // <head>", "enable_auto_merge <number>", "list_open_issues" or
  // "list_open_issues <label>", "list_open_prs", "pr_status <number>".
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
  // Pull request N's url is url_prefix + N.
  std::string url_prefix = "https://github.invalid/owner/repo/pull/";

  Expected<std::optional<gh::PullRequest>> find_pr(const std::string& branch) override;
  Status create_pr(const gh::CreateRequest& request) override;
  Expected<gh::MergeAnswer> enable_auto_merge(long long number) override;
  Expected<std::vector<devgraph::issues::Issue>> list_open_issues(
      const std::optional<std::string>& label) override;
  Expected<std::vector<gh::OpenPr>> list_open_prs() override;
  Expected<gh::PrStatus> pr_status(long long number) override;
  // Not built yet.
  Expected<std::vector<gh::MergedPr>> list_merged_prs() override {
    return fail(ErrorKind::usage, "not built");
  }
  Expected<std::vector<gh::Review>> pr_reviews(long long) override {
    return fail(ErrorKind::usage, "not built");
  }
  Expected<std::string> pr_diff(long long) override { return fail(ErrorKind::usage, "not built"); }
  Expected<std::string> failed_job_log(const std::string&) override {
    return fail(ErrorKind::usage, "not built");
  }
  Status ensure_label(const std::string&, const std::string&, const std::string&) override {
    return fail(ErrorKind::usage, "not built");
  }
  Expected<long long> create_issue(const gh::NewIssue&) override {
    return fail(ErrorKind::usage, "not built");
  }
  Expected<std::vector<devgraph::issues::Issue>> list_labeled_issues(const std::string&) override {
    return fail(ErrorKind::usage, "not built");
  }

  // How many recorded calls begin with `prefix` ("create_pr" counts them all).
  size_t count(const std::string& prefix) const;
};

}  // namespace devgraph::test
