// The recovery decisions, pure: where a stopped persona's cursor goes and
// what context recovery finds.
#include "bundle/recovery.h"

#include <gtest/gtest.h>

#include "support/shipped.h"
#include "support/test_util.h"

namespace devgraph::bundle {
namespace {

PersonaResult result(const std::string& status, std::vector<std::string> blockers = {},
                     std::vector<std::string> missing = {}) {
  PersonaResult r;
  r.persona = "developer";
  r.status = status;
  r.summary = "stuck";
  r.blockers = std::move(blockers);
  r.missing_context = std::move(missing);
  return r;
}

TEST(Recovery, BlockedIsRetriedWhileBlockerRecoveryAllows) {
  Graph g = test::shipped_graph();
  lane::Walker w(g);
  int budget = w.max_retries("blocker_recovery");
  for (int spent = 0; spent <= budget; ++spent) {
    auto d = decide(w, "implement", result("BLOCKED", {"tool crashed"}), {spent, 0}, {});
    EXPECT_EQ(d.route, "blocked");
    EXPECT_EQ(d.event, "BLOCKED");
    EXPECT_TRUE(d.spends_retry);
    EXPECT_EQ(d.retry, spent < budget) << spent;
  }
}

TEST(Recovery, CapacityIsFreeAndAProviderLimitGoesToAPerson) {
  Graph g = test::shipped_graph();
  lane::Walker w(g);
  auto cap = decide(w, "implement", result("BLOCKED", {"capacity"}), {99, 0}, {});
  EXPECT_TRUE(cap.retry);
  EXPECT_FALSE(cap.spends_retry);
  auto limit = decide(w, "implement", result("BLOCKED", {"provider_limit"}), {0, 0}, {});
  EXPECT_FALSE(limit.retry);
}

TEST(Recovery, NeedsContextIsRecoveredOnlyWhenSomethingWasFound) {
  Graph g = test::shipped_graph();
  lane::Walker w(g);
  auto found = decide(w, "write_tdd", result("NEEDS_CONTEXT", {}, {"x"}), {0, 0}, {"- x: plan"});
  EXPECT_EQ(found.route, "needs_context");
  EXPECT_TRUE(found.retry);
  auto nothing = decide(w, "write_tdd", result("NEEDS_CONTEXT", {}, {"x"}), {0, 0}, {});
  EXPECT_FALSE(nothing.retry);
  auto again = decide(w, "write_tdd", result("NEEDS_CONTEXT", {}, {"x"}),
                      {0, w.max_retries("context_recovery")}, {"- x: plan"});
  EXPECT_FALSE(again.retry);
  // verify has no needs_context route: its blocked route is taken.
  auto verifier = decide(w, "verify", result("NEEDS_CONTEXT", {}, {"x"}), {0, 0}, {"- x: plan"});
  EXPECT_EQ(verifier.route, "blocked");
  EXPECT_EQ(verifier.event, "NEEDS_CONTEXT");
}

TEST(Recovery, ContextIsLookedForInThePlanSpecRepositoryHistoryAndOtherResults) {
  ContextSources src;
  src.plan = "# Plan\n\n## Task T2: farewell\nSay Goodbye.\n";
  src.spec = "Words: hello, goodbye.\n";
  src.existing_paths = {"docs/words.md"};
  src.branch_commits = {"abc123 feat(b1): goodbye helper"};
  src.sibling_results = {{"T1/developer", "used the goodbye helper"}};
  auto p = find_context({"goodbye", "docs/words.md", "nowhere"}, src);
  auto has = [&](const std::string& text) {
    return std::any_of(p.begin(), p.end(),
                       [&](const std::string& l) { return l.find(text) != std::string::npos; });
  };
  EXPECT_TRUE(has("goodbye: the plan, line 4"));
  EXPECT_TRUE(has("goodbye: the bundle's spec, line 1"));
  EXPECT_TRUE(has("goodbye: commit abc123"));
  EXPECT_TRUE(has("goodbye: the saved result of T1/developer"));
  EXPECT_TRUE(has("docs/words.md: exists in the repository"));
  EXPECT_FALSE(has("nowhere"));
  EXPECT_TRUE(find_context({""}, src).empty());
}

TEST(Recovery, SpentBudgetsAreReadFromTheCursor) {
  auto b = spent_budgets(Json{{"recovery_retries", 2}, {"context_recoveries", 1}});
  EXPECT_EQ(b.retries, 2);
  EXPECT_EQ(b.context, 1);
  EXPECT_EQ(spent_budgets(Json::object()).retries, 0);
}

}  // namespace
}  // namespace devgraph::bundle
