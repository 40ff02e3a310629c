#include "orchestrator/merge_audit.h"

#include <gtest/gtest.h>

#include "support/test_util.h"

namespace devgraph::orchestrator {
namespace {

const std::string kMerge(40, 'c');

Json request_doc(const std::string& diff_file = "", const std::string& git_range = "") {
  return Json{{"key", "pr-12"},
              {"pr", 12},
              {"title", "Fix `the` parser"},
              {"merge_commit", kMerge},
              {"merged_at", "2024-05-01T10:00:00Z"},
              {"default_branch", "main"},
              {"repo", "/srv/repo"},
              {"worktree", "/srv/run/audit/pr-12/wt"},
              {"diff_file", diff_file},
              {"git_range", git_range}};
}

MergeAuditRequest request(const std::string& diff_file = "", const std::string& git_range = "") {
  MergeAuditRequest r;
  r.key = "pr-12";
  r.pr = 12;
  r.merge_commit = kMerge;
  r.repo = "/srv/repo";
  r.worktree = "/srv/wt";
  r.default_branch = "main";
  r.diff_file = diff_file;
  r.git_range = git_range;
  return r;
}

agents::Completion completed(Json result, agents::Outcome outcome = agents::Outcome::result,
                             std::string error = "") {
  agents::Completion c;
  c.outcome = outcome;
  c.result = std::move(result);
  c.error = std::move(error);
  return c;
}

TEST(MergeAudit, KeysAreLowerCaseWordsThatCannotLeaveTheAuditDirectory) {
  for (const char* ok : {"pr-12", "branch-develop-b1-x", "a.b_c", "7"})
    EXPECT_TRUE(valid_audit_key(ok)) << ok;
  for (const char* bad : {"", ".", "..", "PR-12", "pr/12", "../x", "pr 12", "pr-12\n", "é"})
    EXPECT_FALSE(valid_audit_key(bad)) << bad;
  EXPECT_EQ(audit_key_dir("/r", "pr-12"), "/r/audit/pr-12");
}

TEST(MergeAudit, AWellFormedRequestIsReadAsWritten) {
  test::Scratch s;
  std::string diff = s / "pr.diff";
  test::write_text(diff, "diff --git a/x b/x\n");
  auto r = parse_merge_audit_request(request_doc(diff), "pr-12");
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->pr, 12);
  EXPECT_EQ(r->title, "Fix `the` parser");
  EXPECT_EQ(r->merge_commit, kMerge);
  EXPECT_EQ(r->diff_file, diff);
  EXPECT_EQ(r->git_range, "");
  Json local = request_doc("", "abc123..def456");
  local["pr"] = 0;
  auto l = parse_merge_audit_request(local, "pr-12");
  ASSERT_TRUE(l) << l.error().message;
  EXPECT_EQ(l->git_range, "abc123..def456");
}

TEST(MergeAudit, ARequestMissingAFieldOrOfTheWrongShapeIsAUsageErrorNamingIt) {
  struct Case {
    const char* field;
    Json value;  // null: the field is removed
    const char* message;
  };
  const Case cases[] = {
      {"title", nullptr, "no field title"},
      {"merge_commit", nullptr, "no field merge_commit"},
      {"pr", nullptr, "no field pr"},
      {"pr", "12", "pr is not a number"},
      {"pr", -1, "pr is not a number"},
      {"title", 5, "title is not a string"},
      {"key", "pr-13", "key is 'pr-13', not 'pr-12'"},
      {"merge_commit", "abc", "not a full commit hash"},
      {"merge_commit", std::string(40, 'C'), "not a full commit hash"},
      {"repo", "relative/repo", "repo is not an absolute path"},
      {"worktree", "wt", "worktree is not an absolute path"},
      {"worktree", "/srv/repo/", "worktree is the repository itself"},
      {"diff_file", "/no/such/file.diff", "is not a file"},
      {"diff_file", "pr.diff", "diff_file is not an absolute path"},
      {"git_range", "--output=/tmp/x..HEAD", "is not a range"},
      {"git_range", "a b..c", "is not a range"},
      {"git_range", "main", "is not a range"},
      {"git_range", "a...b", "is not a range"},
      {"default_branch", "", "default_branch is empty"},
  };
  for (const auto& c : cases) {
    Json doc = request_doc();
    if (c.value.is_null())
      doc.erase(c.field);
    else
      doc[c.field] = c.value;
    auto r = parse_merge_audit_request(doc, "pr-12");
    ASSERT_FALSE(r) << c.field << " " << dump_py(c.value);
    EXPECT_EQ(r.error().kind, ErrorKind::usage);
    EXPECT_EQ(r.error().exit_code, kAuditExitUsage);
    EXPECT_NE(r.error().message.find(c.message), std::string::npos) << r.error().message;
    EXPECT_EQ(r.error().message.find('\n'), std::string::npos);
  }
  EXPECT_FALSE(parse_merge_audit_request(Json::array(), "pr-12"));
}

TEST(MergeAudit, TheFirstRangeIsTheGivenOneElseTheMergeFormElseThePrDiff) {
  auto merge = first_audit_range(request("/d/pr.diff"), 2);
  ASSERT_TRUE(merge);
  EXPECT_FALSE(merge->pr_diff);
  EXPECT_EQ(merge->git_range, kMerge + "^1.." + kMerge);
  auto squash = first_audit_range(request("/d/pr.diff"), 1);
  ASSERT_TRUE(squash);
  EXPECT_TRUE(squash->pr_diff);
  EXPECT_EQ(diff_range_text(request("/d/pr.diff"), *squash),
            "the pull request's diff in /d/pr.diff");
  auto given = first_audit_range(request("", "a1..b2"), 2);
  ASSERT_TRUE(given);
  EXPECT_EQ(given->git_range, "a1..b2");
  EXPECT_EQ(diff_range_text(request(), *given), "a1..b2");
  // A squash without its diff: the first-parent range is what there is.
  auto no_diff = first_audit_range(request(), 1);
  ASSERT_TRUE(no_diff);
  EXPECT_EQ(no_diff->git_range, kMerge + "^1.." + kMerge);
  EXPECT_FALSE(first_audit_range(request(), 0));
}

TEST(MergeAudit, NeedsContextSwitchesToTheOtherFormWhenTheRecomputedRangeIsTheSame) {
  const std::string first_parent = kMerge + "^1.." + kMerge;
  // A squash given its diff: the first-parent range next.
  auto r = recomputed_audit_range(request("/d/pr.diff"), AuditRange{true, ""}, 1);
  EXPECT_FALSE(r.pr_diff);
  EXPECT_EQ(r.git_range, first_parent);
  // A merge commit: the PR's diff when there is one, else the same range.
  r = recomputed_audit_range(request("/d/pr.diff"), AuditRange{false, first_parent}, 2);
  EXPECT_TRUE(r.pr_diff);
  r = recomputed_audit_range(request(), AuditRange{false, first_parent}, 2);
  EXPECT_FALSE(r.pr_diff);
  EXPECT_EQ(r.git_range, first_parent);
  // Parents counted differently this time: the fresh form, as it is.
  r = recomputed_audit_range(request("/d/pr.diff"), AuditRange{true, ""}, 2);
  EXPECT_EQ(r.git_range, first_parent);
  // A given range (local delivery): the first-parent range next.
  r = recomputed_audit_range(request("", "a1..b2"), AuditRange{false, "a1..b2"}, 2);
  EXPECT_EQ(r.git_range, first_parent);
  EXPECT_FALSE(other_audit_range(request(), AuditRange{false, first_parent}, 2));
  EXPECT_FALSE(other_audit_range(request(), AuditRange{true, ""}, 0));
}

TEST(MergeAudit, DoneIsAuditedWithItsFindingsAndNeedsContextIsDispatchedAgainOnce) {
  auto done = judge_audit(completed(Json::parse(R"({"status": "DONE_WITH_CONCERNS",
      "summary": "one", "evidence": [], "findings": [
      {"severity": "Medium", "file": "a.c", "line": 3, "description": "leak"}]})")),
                          1);
  EXPECT_EQ(done.step, AuditStep::audited);
  ASSERT_EQ(done.findings.size(), 1u);
  EXPECT_EQ(done.findings[0].severity, Severity::medium);
  Json nc = Json::parse(R"({"status": "NEEDS_CONTEXT", "summary": "empty range",
      "evidence": [], "missing_context": ["the range is empty"]})");
  EXPECT_EQ(judge_audit(completed(nc), 1).step, AuditStep::dispatch_again);
  auto second = judge_audit(completed(nc), kMaxAuditDispatches);
  EXPECT_EQ(second.step, AuditStep::blocked);
  EXPECT_NE(second.reason.find("the range is empty"), std::string::npos) << second.reason;
}

TEST(MergeAudit, BlockedMalformedAndFailedRunsAreBlockedWithOneLineReasons) {
  auto blocked = judge_audit(completed(Json::parse(R"({"status": "BLOCKED", "summary": "s",
      "evidence": [], "blockers": ["cannot read\nthe diff"]})")),
                             1);
  EXPECT_EQ(blocked.step, AuditStep::blocked);
  EXPECT_EQ(blocked.reason, "the auditor is blocked: cannot read the diff");
  auto huge = judge_audit(completed(Json::parse(R"({"status": "DONE", "summary": "s",
      "evidence": [], "findings": [{"severity": "Huge", "file": "a", "description": "d"}]})")),
                          1);
  EXPECT_EQ(huge.step, AuditStep::blocked);
  EXPECT_NE(huge.reason.find("finding 1 has no severity"), std::string::npos) << huge.reason;
  EXPECT_TRUE(huge.findings.empty());
  auto malformed = judge_audit(
      completed(Json::object(), agents::Outcome::malformed_result, "no RESULT_JSON line"), 1);
  EXPECT_EQ(malformed.step, AuditStep::blocked);
  EXPECT_NE(malformed.reason.find("not a valid agent result: no RESULT_JSON line"),
            std::string::npos);
  auto timeout = judge_audit(completed(Json::object(), agents::Outcome::timeout, "30 min"), 1);
  EXPECT_EQ(timeout.step, AuditStep::blocked);
  EXPECT_NE(timeout.reason.find("timeout"), std::string::npos);
  auto handoff = judge_audit(
      completed(Json::parse(R"({"status": "HANDOFF", "summary": "s", "evidence": []})")), 1);
  EXPECT_EQ(handoff.step, AuditStep::blocked);
  std::string long_reason(2000, 'x');
  auto clipped = judge_audit(
      completed(Json{{"status", "BLOCKED"}, {"summary", long_reason}, {"evidence", Json::array()}}),
      1);
  EXPECT_LT(clipped.reason.size(), 500u);
}

TEST(MergeAudit, GapsAreTheCoverageConcernsAndAnAuditWithNothingSubstantiated) {
  Json r = Json::parse(R"({"status": "DONE", "summary": "s", "evidence": [],
      "concerns": ["Coverage: no OAuth credentials", "style nit", "coverage note: fuzzing"]})");
  auto gaps = audit_gaps(r, true, 0);
  ASSERT_EQ(gaps.size(), 3u);
  EXPECT_EQ(gaps[0], "Coverage: no OAuth credentials");
  EXPECT_EQ(gaps[1], "coverage note: fuzzing");
  EXPECT_EQ(gaps[2], kNothingSubstantiated);
  EXPECT_EQ(audit_gaps(r, true, 1).size(), 2u);   // a finding
  EXPECT_EQ(audit_gaps(r, false, 0).size(), 2u);  // not audited
  r["evidence"] = Json::array({"ran the tests: 12 passed"});
  EXPECT_EQ(audit_gaps(r, true, 0).size(), 2u);
  EXPECT_TRUE(audit_gaps(Json::object(), false, 0).empty());
}

TEST(MergeAudit, TheResultNamesEveryFieldAndAReasonOnlyWhenBlocked) {
  MergeAuditOutcome o;
  o.audited = true;
  o.range = "a^1..a";
  o.dispatches = 2;
  Finding f;
  f.severity = Severity::critical;
  f.file = "x.c";
  f.description = "overflow";
  o.findings.push_back(f);
  f.line = 9;
  f.rule = "bounds";
  f.evidence = "asan";
  o.findings.push_back(f);
  o.summary = "two";
  o.cost_usd = 0.5;
  o.persona_runs = 2;
  Json r = merge_audit_result_json(request(), o);
  EXPECT_EQ(dump_py(r),
            "{\"key\": \"pr-12\", \"pr\": 12, \"status\": \"audited\", \"range\": \"a^1..a\", "
            "\"dispatches\": 2, \"findings\": [{\"severity\": \"Critical\", \"file\": \"x.c\", "
            "\"description\": \"overflow\"}, {\"severity\": \"Critical\", \"file\": \"x.c\", "
            "\"line\": 9, \"description\": \"overflow\", \"rule\": \"bounds\", \"evidence\": "
            "\"asan\"}], \"gaps\": [], \"summary\": \"two\", \"cost_usd\": 0.5, "
            "\"persona_runs\": 2}");
  o.audited = false;
  o.reason = "why";
  r = merge_audit_result_json(request(), o);
  EXPECT_EQ(r["status"], "blocked");
  EXPECT_EQ(r["reason"], "why");
}

}  // namespace
}  // namespace devgraph::orchestrator
