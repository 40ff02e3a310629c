#include "gh/pr_status.h"

#include <gtest/gtest.h>

#include "gh/gh.h"
#include "util/json.h"

namespace devgraph::gh {
namespace {

Json pr(Json checks, const char* state = "OPEN", Json merge = nullptr) {
  return {{"number", 7},
          {"state", state},
          {"headRefName", "develop/b1"},
          {"headRefOid", std::string(40, 'a')},
          {"mergeCommit", merge},
          {"reviewDecision", "REVIEW_REQUIRED"},
          {"statusCheckRollup", checks}};
}

Json run(const char* name, const char* status, const char* conclusion) {
  return {{"__typename", "CheckRun"}, {"name", name},
          {"workflowName", "CI"},     {"status", status},
          {"conclusion", conclusion}, {"detailsUrl", std::string("https://ci.invalid/") + name}};
}

Json context(const char* name, const char* state) {
  return {{"__typename", "StatusContext"},
          {"context", name},
          {"state", state},
          {"targetUrl", "https://status.invalid/x"}};
}

ChecksVerdict verdict_of(Json checks) {
  auto s = parse_pr_status(pr(std::move(checks)).dump());
  EXPECT_TRUE(s) << s.error().message;
  return s ? s->verdict : ChecksVerdict::none;
}

TEST(PrStatus, ChecksPendingThenFailingThenPassing) {
  EXPECT_EQ(verdict_of(Json::array()), ChecksVerdict::none);
  EXPECT_EQ(verdict_of({run("test", "IN_PROGRESS", ""), run("lint", "COMPLETED", "SUCCESS")}),
            ChecksVerdict::pending);
  EXPECT_EQ(verdict_of({run("test", "QUEUED", ""), run("lint", "COMPLETED", "FAILURE")}),
            ChecksVerdict::failing)
      << "a failure is known before the rest finish";
  EXPECT_EQ(verdict_of({run("test", "COMPLETED", "SUCCESS"), run("docs", "COMPLETED", "SKIPPED"),
                        run("n", "COMPLETED", "NEUTRAL"), context("ci/legacy", "SUCCESS")}),
            ChecksVerdict::passing);
  for (const char* bad : {"TIMED_OUT", "CANCELLED", "ACTION_REQUIRED", "STARTUP_FAILURE"})
    EXPECT_EQ(verdict_of({run("t", "COMPLETED", bad)}), ChecksVerdict::failing) << bad;
  EXPECT_EQ(verdict_of({run("t", "COMPLETED", "STALE")}), ChecksVerdict::pending);
  EXPECT_EQ(verdict_of({context("ci/legacy", "ERROR")}), ChecksVerdict::failing);
  EXPECT_EQ(verdict_of({context("ci/legacy", "EXPECTED")}), ChecksVerdict::pending);
}

TEST(PrStatus, TheFailingChecksAreNamedWithTheirLinks) {
  auto s = parse_pr_status(pr({run("test", "COMPLETED", "FAILURE"), context("ci/x", "FAILURE"),
                               run("lint", "COMPLETED", "SUCCESS")})
                               .dump());
  ASSERT_TRUE(s) << s.error().message;
  auto failing = s->failing();
  ASSERT_EQ(failing.size(), 2u);
  EXPECT_EQ(failing[0].name, "CI / test");
  EXPECT_EQ(failing[0].link, "https://ci.invalid/test");
  EXPECT_EQ(failing[1].name, "ci/x");
  EXPECT_EQ(s->number, 7);
  EXPECT_EQ(s->head, "develop/b1");
  EXPECT_EQ(s->review_decision, "REVIEW_REQUIRED");
  EXPECT_FALSE(s->merge_commit);
}

TEST(PrStatus, AMergedPrCarriesItsMergeCommit) {
  auto s = parse_pr_status(pr(Json::array(), "MERGED", {{"oid", std::string(40, 'b')}}).dump());
  ASSERT_TRUE(s) << s.error().message;
  EXPECT_EQ(s->state, "MERGED");
  EXPECT_EQ(s->merge_commit, std::string(40, 'b'));
}

TEST(PrStatus, AnAnswerNotAsAskedIsMalformedInOneLine) {
  auto without = [](const char* key) {
    Json j = pr(Json::array());
    j.erase(key);
    return j.dump();
  };
  Json bad_check = pr({{{"__typename", "Mystery"}}});
  Json bad_conclusion = pr({run("t", "COMPLETED", "EXPLODED")});
  Json merged_without = pr(Json::array(), "MERGED");
  Json odd_state = pr(Json::array(), "DRAFTY");
  const std::pair<std::string, const char*> cases[] = {
      {"not json", "not a JSON object"},
      {"[]", "not a JSON object"},
      {without("number"), "no number"},
      {without("headRefOid"), "without a string headRefOid"},
      {without("mergeCommit"), "without mergeCommit"},
      {without("statusCheckRollup"), "without a statusCheckRollup"},
      {bad_check.dump(), "check 1 of kind Mystery"},
      {bad_conclusion.dump(), "conclusion EXPLODED"},
      {merged_without.dump(), "merged PR without a merge commit"},
      {odd_state.dump(), "state DRAFTY"},
  };
  for (const auto& [answer, want] : cases) {
    auto s = parse_pr_status(answer);
    ASSERT_FALSE(s) << answer;
    EXPECT_EQ(s.error().kind, kMalformed);
    EXPECT_NE(s.error().message.find(want), std::string::npos) << s.error().message;
    EXPECT_EQ(s.error().message.find('\n'), std::string::npos);
  }
}

}  // namespace
}  // namespace devgraph::gh
