// An in-memory IssueSource for unit tests of the orchestrator: the issues
// live in a vector the test changes between calls (file one, close one,
// edit one), every call is recorded, and failures are scripted per method.
//
// Contract: FakeIssueSource keeps what the orchestrator relies on in
// orchestrator/sources.h. open_issues() answers the issues of `issues`
// whose state is "open", in the order of the vector (the orchestrator
// sorts); closed_by_open_prs() answers `closed_by_prs`;
// delivered_issues() the issues, open or not, with a recorded branch and
// head; record_delivery() records the branch and head on the issue and
// close() closes it with its reason (an unknown number is not_found). A
// scripted failure is returned once, in the order queued, before any of
// that happens (the call is still recorded, and counted by on_open_issues).
#pragma once

#include <deque>
#include <functional>
#include <set>
#include <string>
#include <vector>

#include "orchestrator/sources.h"

namespace devgraph::test {

class FakeIssueSource final : public orchestrator::IssueSource {
 public:
  // What kind() answers: "local" or "github".
  std::string source_kind = "local";
  // Every issue, open or closed; a test may change them between calls.
  std::vector<issues::Issue> issues;
  // What closed_by_open_prs() answers.
  std::set<long long> closed_by_prs;
  // One line per call, in order: "open_issues", "closed_by_open_prs",
  // "delivered_issues", "record_delivery <n> <branch> <head>",
  // "close <n> <reason>".
  std::vector<std::string> calls;
  // The next call of each method fails with the first Error queued here.
  std::deque<Error> open_failures;
  std::deque<Error> pr_failures;
  std::deque<Error> delivered_failures;
  std::deque<Error> record_failures;
  std::deque<Error> close_failures;
  // Runs at the start of every open_issues() call with its number (from 1),
  // before a scripted failure or the answer: where a test files, closes or
  // edits an issue "between two looks", or raises a stop.
  std::function<void(int call)> on_open_issues;

  std::string kind() const override { return source_kind; }
  Expected<std::vector<issues::Issue>> open_issues() override;
  Expected<std::set<long long>> closed_by_open_prs() override;
  Expected<std::vector<issues::Issue>> delivered_issues() override;
  Status record_delivery(long long number, const std::string& branch,
                         const std::string& head) override;
  Status close(long long number, const std::string& reason) override;

  // The issue numbered `number`, or nullptr.
  issues::Issue* find(long long number);
  // How many recorded calls begin with `prefix`.
  size_t count(const std::string& prefix) const;

 private:
  int open_calls_ = 0;
};

}  // namespace devgraph::test
