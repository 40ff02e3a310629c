#include "orchestrator/reactions.h"

#include <gtest/gtest.h>

namespace devgraph::orchestrator {
namespace {

PrSnapshot failing_at(const std::string& head) {
  return {head, "d-" + head, {"CI / test"}, false};
}

ReactionInput repairing(int spent, std::optional<PrSnapshot> before, PrSnapshot now,
                        std::optional<bool> reproduced = true) {
  ReactionInput in;
  in.policy = {ReactionMode::repair, 2};
  in.cycles_spent = spent;
  in.before_last_cycle = std::move(before);
  in.now = std::move(now);
  in.reproduced = reproduced;
  return in;
}

TEST(Reactions, ReportIsTheDefaultAndNeverRepairs) {
  ReactionInput in;
  in.now = failing_at("h1");
  in.reproduced = true;
  EXPECT_EQ(react(in), Reaction::report);
  EXPECT_EQ(ReactionPolicy{}.max_cycles, 2);
}

TEST(Reactions, AFailureTheBundleReproducesIsRepairedUpToTheCycles) {
  EXPECT_EQ(react(repairing(0, std::nullopt, failing_at("h1"))), Reaction::repair);
  EXPECT_EQ(react(repairing(1, failing_at("h1"), failing_at("h2"))), Reaction::repair);
  EXPECT_EQ(react(repairing(2, failing_at("h2"), failing_at("h3"))), Reaction::park_exhausted);
  EXPECT_EQ(reaction_name(Reaction::park_exhausted), "park_exhausted");
}

TEST(Reactions, ACycleThatChangedNothingParksAtOnce) {
  EXPECT_EQ(react(repairing(1, failing_at("h1"), failing_at("h1"))), Reaction::park_no_progress)
      << "no second cycle is spent on a repair that left the PR as it was";
  // A new head, a new diff or other failing checks is progress.
  PrSnapshot moved = failing_at("h1");
  moved.failing = {"CI / lint"};
  EXPECT_EQ(react(repairing(1, failing_at("h1"), moved)), Reaction::repair);
  PrSnapshot rediffed = failing_at("h1");
  rediffed.diff_digest = "other";
  EXPECT_EQ(react(repairing(1, failing_at("h1"), rediffed)), Reaction::repair);
}

TEST(Reactions, AFailureTheBundlesOwnCommandsDoNotReproduceIsReportedAsFlaky) {
  EXPECT_EQ(react(repairing(0, std::nullopt, failing_at("h1"), false)), Reaction::report_flaky);
  // A review asking for changes needs no reproduction.
  PrSnapshot review{"h1", "d", {}, true};
  EXPECT_EQ(react(repairing(0, std::nullopt, review, std::nullopt)), Reaction::repair);
  EXPECT_EQ(react(repairing(0, std::nullopt, review, false)), Reaction::repair);
}

}  // namespace
}  // namespace devgraph::orchestrator
