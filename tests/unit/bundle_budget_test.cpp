// A bundle's lifetime budget as a run applies it: the rounds an entry
// allows, when a usage reaches them, and the answer that allows one more.
#include "bundle/budget.h"

#include <gtest/gtest.h>

namespace devgraph::bundle {
namespace {

TEST(BundleBudget, RoundsAreOneUnlessTheEntrySaysMore) {
  EXPECT_EQ(budget_rounds(Json::object()), 1);
  EXPECT_EQ(budget_rounds(Json{{"budget_rounds", 3}}), 3);
  EXPECT_EQ(budget_rounds(Json{{"budget_rounds", 0}}), 1);
  EXPECT_EQ(budget_rounds(Json{{"budget_rounds", "2"}}), 1);
  EXPECT_EQ(budget_rounds(Json()), 1);
}

TEST(BundleBudget, AnyLimitReachedIsSpentAndNullIsNoLimit) {
  BundleBudget b{60, 20.0, std::nullopt};
  EXPECT_EQ(bundle_budget_spent(b, LedgerTotals{19.99, 59, 1'000'000'000}, 1), std::nullopt)
      << "tokens have no limit";
  auto runs = bundle_budget_spent(b, LedgerTotals{1.0, 60, std::nullopt}, 1);
  ASSERT_TRUE(runs.has_value());
  EXPECT_EQ(runs->rfind(kBundleBudgetSpent, 0), 0u);
  EXPECT_NE(runs->find("60 persona runs of the 60 it may use"), std::string::npos) << *runs;
  EXPECT_NE(runs->find("devgraph inbox"), std::string::npos) << *runs;
  auto cost = bundle_budget_spent(b, LedgerTotals{20.0, 3, std::nullopt}, 1);
  ASSERT_TRUE(cost.has_value());
  EXPECT_NE(cost->find("$20.00 of the $20.00"), std::string::npos) << *cost;
  // Two rounds: twice the budget in all.
  EXPECT_EQ(bundle_budget_spent(b, LedgerTotals{39.0, 119, std::nullopt}, 2), std::nullopt);
  auto second = bundle_budget_spent(b, LedgerTotals{39.0, 120, std::nullopt}, 2);
  ASSERT_TRUE(second.has_value());
  EXPECT_NE(second->find("120 persona runs of the 120 it may use"), std::string::npos) << *second;
  EXPECT_NE(second->find("2 budgets allowed"), std::string::npos) << *second;
  BundleBudget tokens{std::nullopt, std::nullopt, 500};
  EXPECT_EQ(bundle_budget_spent(tokens, LedgerTotals{100.0, 1000, std::nullopt}, 1), std::nullopt)
      << "no tokens reported, none counted";
  EXPECT_TRUE(bundle_budget_spent(tokens, LedgerTotals{0, 1, 500}, 1).has_value());
}

TEST(BundleBudget, AnAnswerAllowsOneMoreBudgetOnlyToABundleParkedForItsBudget) {
  Json parked = {{"id", "b1"},
                 {"status", "parked"},
                 {"parked_reason", std::string(kBundleBudgetSpent) + "60 persona runs"}};
  EXPECT_TRUE(allow_another_budget(parked));
  EXPECT_EQ(parked[kBudgetRoundsKey], 2);
  EXPECT_TRUE(allow_another_budget(parked));
  EXPECT_EQ(parked[kBudgetRoundsKey], 3);
  Json other = {{"id", "b2"}, {"status", "parked"}, {"parked_reason", "tests fail"}};
  EXPECT_FALSE(allow_another_budget(other));
  EXPECT_FALSE(other.contains(kBudgetRoundsKey));
  Json run_budget = {{"id", "b3"},
                     {"status", "parked"},
                     {"parked_reason", std::string(kRunBudgetSpent) + "the run has spent $5"}};
  EXPECT_FALSE(allow_another_budget(run_budget)) << "the run's budget is the flag's";
  Json running = {{"id", "b4"},
                  {"status", "running"},
                  {"parked_reason", std::string(kBundleBudgetSpent) + "60 persona runs"}};
  EXPECT_FALSE(allow_another_budget(running));
}

}  // namespace
}  // namespace devgraph::bundle
