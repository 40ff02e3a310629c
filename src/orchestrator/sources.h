// Where a run's issues come from: local issue files (issues/local_store.h)
// or GitHub through gh (gh/gh.h). The orchestrator sees one interface.
//
// Contract:
// - open_issues() is every open issue the source shows (GitHub: those
//   carrying the label, when one is given); a failure is an Error (gh's
//   kinds: transient ones are retried by the caller), never a partial or
//   empty list standing in for "could not ask".
// - closed_by_open_prs() is the issues an open pull request closes by
//   keyword (GitHub), empty for local issues.
// - record_delivery() notes a ready branch on a local issue; close()
//   closes one (its branch was merged). Both are no-ops on GitHub, where
//   the pull request's closing keywords do it.
#pragma once

#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "gh/gh.h"
#include "issues/issue.h"
#include "issues/local_store.h"
#include "util/expected.h"

namespace devgraph::orchestrator {

class IssueSource {
 public:
  virtual ~IssueSource() = default;
  virtual std::string kind() const = 0;  // "local" | "github"
  virtual Expected<std::vector<issues::Issue>> open_issues() = 0;
  virtual Expected<std::set<long long>> closed_by_open_prs() = 0;
  // Local issues with a recorded branch, open or not: the scan closes the
  // ones whose branch a person merged.
  virtual Expected<std::vector<issues::Issue>> delivered_issues() = 0;
  virtual Status record_delivery(long long number, const std::string& branch,
                                 const std::string& head) = 0;
  virtual Status close(long long number, const std::string& reason) = 0;
};

std::unique_ptr<IssueSource> local_source(issues::LocalIssues& store);
// `label`: nullopt lists every open issue (--all-issues).
std::unique_ptr<IssueSource> github_source(gh::Gh& gh, std::optional<std::string> label);

}  // namespace devgraph::orchestrator
