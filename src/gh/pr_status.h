// What monitor_prs reads about one pull request (GRAPH.yaml `monitor_prs`):
// the answer of `gh pr view <number> --json
// number,state,headRefName,headRefOid,mergeCommit,reviewDecision,statusCheckRollup`,
// read whole into its state, its review decision and one verdict over its
// checks; monitor_prs (orchestrator/after_delivery.h) reads it.
//
// Contract: parse_pr_status() is pure. An answer with any field missing or
// of the wrong type, or a check of a kind it does not know, is kMalformed
// (gh.h) with one line naming the field; nothing is guessed.
//
// Checks: a check run still queued or in progress, or a status context
// pending or expected, is pending; a run that concluded FAILURE,
// TIMED_OUT, CANCELLED, ACTION_REQUIRED or STARTUP_FAILURE, or a context in
// FAILURE or ERROR, is failing; SUCCESS, NEUTRAL and SKIPPED pass (STALE
// counts as pending: GitHub will run it again). The verdict is failing when
// any check fails, else pending when any is pending, else passing; none
// when the PR has no checks at all.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "util/expected.h"

namespace devgraph::gh {

enum class ChecksVerdict { none, pending, failing, passing };
std::string_view checks_verdict_name(ChecksVerdict v);

struct Check {
  std::string name;                                // a run's name (with its workflow), or a context
  std::string link;                                // detailsUrl or targetUrl; may be empty
  ChecksVerdict verdict = ChecksVerdict::pending;  // pending, failing or passing
};

struct PrStatus {
  long long number = 0;
  std::string state;  // OPEN, CLOSED or MERGED
  std::string head;   // headRefName
  std::string head_commit;
  std::optional<std::string> merge_commit;  // set once merged
  // APPROVED, CHANGES_REQUESTED, REVIEW_REQUIRED, or "" (no review rule).
  std::string review_decision;
  std::vector<Check> checks;
  ChecksVerdict verdict = ChecksVerdict::none;
  std::vector<Check> failing() const;
};

Expected<PrStatus> parse_pr_status(std::string_view answer);

}  // namespace devgraph::gh
