#include "clean/plan.h"

#include <gtest/gtest.h>

#include "support/shipped.h"

namespace devgraph::clean {
namespace {

BranchFacts plain(const std::string& name) {
  BranchFacts f;
  f.branch = name;
  f.tip = "abc";
  f.canonical = "/wt/o/r/" + name;
  return f;
}

TEST(CleanStrategy, TheFirstSourceThatNamesOneWinsAndABadNameIsRefusedNeverReplaced) {
  auto s = resolve_strategy(std::string("merge"), std::string("squash"), "rebase");
  ASSERT_TRUE(s);
  EXPECT_EQ(s->name, "merge");
  EXPECT_EQ(s->source, "cli");
  s = resolve_strategy(std::nullopt, std::string("squash"), "rebase");
  ASSERT_TRUE(s);
  EXPECT_EQ(s->name, "squash");
  EXPECT_EQ(s->source, "repository_config");
  s = resolve_strategy(std::nullopt, std::nullopt, "none");
  ASSERT_TRUE(s);
  EXPECT_EQ(s->source, "skill_config");
  s = resolve_strategy(std::nullopt, std::nullopt, "");
  ASSERT_TRUE(s);
  EXPECT_EQ(s->name, "rebase");
  EXPECT_EQ(s->source, "default");
  auto bad = resolve_strategy(std::string("octopus"), std::nullopt, "rebase");
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().kind, ErrorKind::usage);
  EXPECT_NE(bad.error().message.find("--strategy: 'octopus'"), std::string::npos);
  EXPECT_FALSE(resolve_strategy(std::nullopt, std::string("ff"), "rebase"));
}

TEST(CleanStrategy, ProjectYamlNamesOneOrNoneAndAnythingElseIsAnError) {
  EXPECT_EQ(*project_strategy("develop:\n  clean:\n    strategy: squash\n"),
            std::optional<std::string>("squash"));
  EXPECT_EQ(*project_strategy("name: x\n"), std::nullopt);
  EXPECT_EQ(*project_strategy("develop:\n  clean: {}\n"), std::nullopt);
  EXPECT_EQ(*project_strategy(""), std::nullopt);
  for (const char* bad : {"develop: {clean: {strategy: octopus}}\n",
                          "develop: {clean: {strategy: [rebase]}}\n", "develop: [\n"}) {
    auto r = project_strategy(bad);
    ASSERT_FALSE(r) << bad;
    EXPECT_EQ(r.error().kind, ErrorKind::usage);
    EXPECT_NE(r.error().message.find("project.yaml"), std::string::npos) << r.error().message;
  }
}

TEST(CleanClassify, EachBranchGetsTheFirstBucketThatApplies) {
  auto f = plain("feature/a");
  f.pr = 12;
  f.dirty = true;
  EXPECT_EQ(classify(f, "rebase").bucket, Bucket::protected_);
  EXPECT_EQ(classify(f, "rebase").reason, "open pull request #12");
  f = plain("main");
  f.merged = true;
  EXPECT_EQ(classify(f, "rebase").bucket, Bucket::protected_);
  EXPECT_EQ(classify(f, "rebase").reason, "named like a default branch");
  f = plain("develop/b3");
  f.unfinished_run = "20260101T000000Z";
  EXPECT_EQ(classify(f, "rebase").reason, "a bundle of unfinished run 20260101T000000Z");
  f = plain("feature/we'ird");
  f.merged = true;
  EXPECT_EQ(classify(f, "rebase").bucket, Bucket::human_review);
  f = plain("feature/a");
  f.worktree = "/elsewhere/a";
  f.merged = true;
  EXPECT_EQ(classify(f, "rebase").reason,
            "checked out at /elsewhere/a, not at the canonical worktree /wt/o/r/feature/a");
  f = plain("feature/a");
  f.worktree = f.canonical;
  f.conflicts = f.dirty = f.untracked = true;
  EXPECT_EQ(classify(f, "rebase").reason, "conflicts in its worktree");
  f.conflicts = false;
  EXPECT_EQ(classify(f, "rebase").reason, "uncommitted changes in its worktree");
  f.dirty = false;
  EXPECT_EQ(classify(f, "rebase").reason, "untracked files in its worktree");
  f.untracked = false;
  EXPECT_EQ(classify(f, "rebase").bucket, Bucket::eligible);
  EXPECT_EQ(classify(f, "none").bucket, Bucket::human_review);
  EXPECT_EQ(classify(f, "none").reason, "not integrated: strategy none");
  f.merged = true;
  EXPECT_EQ(classify(f, "none").bucket, Bucket::merged);
  EXPECT_EQ(classify(f, "none").reason, "");
}

TEST(CleanClassify, OnlyNamesThatMayBecomePathsAreSafe) {
  for (const char* ok : {"main2", "feature/a-b_c.d", "develop/b12", "A/B/C"})
    EXPECT_TRUE(safe_branch_name(ok)) << ok;
  for (const char* bad : {"", "feature/we'ird", "a b", "x/../y", "-x", "x/.hidden", "x//y", "x/",
                          "a$(id)", "a;b", "a\nb", "ümlaut"})
    EXPECT_FALSE(safe_branch_name(bad)) << bad;
  EXPECT_EQ(throwaway_branch("feature/a"), "develop/clean-integrated-feature-a");
}

TEST(CleanReport, IntegrationAndCleanUpApartEveryLeftBranchWithItsReasonAndSquashSaysSo) {
  Json clean = {{"strategy", "squash"},
                {"strategy_source", "cli"},
                {"branches", Json::array({Json{{"branch", "a"},
                                               {"bucket", "MERGED"},
                                               {"outcome", "cleaned"},
                                               {"before", "1111111111111111"},
                                               {"deleted", true},
                                               {"worktree_removed", false}},
                                          Json{{"branch", "b"},
                                               {"bucket", "ELIGIBLE"},
                                               {"outcome", "verified"},
                                               {"strategy", "squash"},
                                               {"before", "2222222222222222"},
                                               {"after", "3333333333333333"},
                                               {"commits", 2},
                                               {"subjects", Json::array({"one", "two"})},
                                               {"deleted", true}},
                                          Json{{"branch", "c"},
                                               {"bucket", "PROTECTED"},
                                               {"outcome", "kept"},
                                               {"reason", "open pull request #4"}}})}};
  std::string r = render_report(clean, false);
  EXPECT_NE(r.find("Integration strategy: squash (from cli)"), std::string::npos) << r;
  EXPECT_NE(r.find("Commit-history preservation: no"), std::string::npos) << r;
  EXPECT_NE(r.find("\"one\" \"two\""), std::string::npos) << r;
  EXPECT_LT(r.find("Integration:"), r.find("Clean-up:"));
  EXPECT_NE(r.find("deleted branch a (was 111111111111, merged already)"), std::string::npos) << r;
  EXPECT_NE(r.find("c [PROTECTED]: open pull request #4"), std::string::npos) << r;
}

// The strategies and the lane the code walks are GRAPH.yaml's.
TEST(CleanPlan, TheStrategiesAndTheLaneAreTheShippedGraphs) {
  const Graph g = test::shipped_graph();
  std::vector<std::string> ours(std::begin(kStrategies), std::end(kStrategies));
  EXPECT_EQ(g.cleanup.strategies, ours);
  EXPECT_TRUE(is_strategy(g.cleanup.default_strategy));
  EXPECT_EQ(g.clean_entrypoint, "clean_discover");
  const GraphLane* lane = g.lane_of("clean_discover");
  ASSERT_NE(lane, nullptr);
  EXPECT_EQ(lane->nodes, (std::vector<std::string>{"clean_discover", "clean_classify",
                                                   "clean_integrate", "clean_verify_integration",
                                                   "clean_cleanup", "clean_report"}));
}

}  // namespace
}  // namespace devgraph::clean
