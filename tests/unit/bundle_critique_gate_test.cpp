// The discuss gate's pure parts: how a round's result routes the bundle,
// and which backend flags its critics get.
#include "bundle/critique_gate.h"

#include <gtest/gtest.h>

#include "graph/graph.h"
#include "support/test_util.h"

namespace devgraph::bundle {
namespace {

Json result(const std::string& verdict, Json severity, const std::string& recommendation) {
  return Json{{"round", "plan-1"},
              {"verdict", verdict},
              {"severity", std::move(severity)},
              {"recommendation", recommendation},
              {"divergences", Json::array({{{"kind", "coverage_gap"},
                                            {"severity", "high"},
                                            {"perspectives", {"coverage"}},
                                            {"description", "coverage misses the export"}}})},
              {"action_items", Json::array({"add the export"})}};
}

TEST(DecideRound, ReachedProceedsWithoutAWarning) {
  auto d = decide_round(result("consensus_reached", nullptr, "proceed"), false, 0, 1);
  EXPECT_EQ(d.route, RoundRoute::proceed);
  EXPECT_EQ(d.note, "");
}

TEST(DecideRound, MediumAndLowProceedWithAWarningNamingTheRound) {
  for (const char* sev : {"MEDIUM", "LOW"}) {
    auto d = decide_round(result("consensus_blocked", sev, "proceed-with-caution"), false, 0, 1);
    EXPECT_EQ(d.route, RoundRoute::proceed) << sev;
    EXPECT_EQ(d.note, std::string("critique plan-1 blocked at ") + sev +
                          " (proceed-with-caution): coverage misses the export");
    // At the sign-off too: only HIGH stops a branch.
    EXPECT_EQ(
        decide_round(result("consensus_blocked", sev, "proceed-with-caution"), true, 0, 0).route,
        RoundRoute::proceed);
  }
}

TEST(DecideRound, HighRevisesWhileRevisionsLastThenWaits) {
  Json high = result("consensus_blocked", "HIGH", "revise");
  EXPECT_EQ(decide_round(high, false, 0, 1).route, RoundRoute::revise);
  EXPECT_EQ(decide_round(high, false, 1, 1).route, RoundRoute::park);
  EXPECT_EQ(decide_round(high, false, 1, 2).route, RoundRoute::revise);
  EXPECT_EQ(decide_round(high, false, 0, 0).route, RoundRoute::park);
  EXPECT_EQ(decide_round(high, false, 0, 1).note,
            "critique plan-1 blocked at HIGH: coverage misses the export");
}

TEST(DecideRound, TheSignOffAtHighAlwaysWaits) {
  Json high = result("consensus_blocked", "HIGH", "escalate");
  EXPECT_EQ(decide_round(high, true, 0, 5).route, RoundRoute::park);
}

TEST(DecideRound, AResultThatIsNoVerdictWaitsNeverPasses) {
  for (const Json& odd : {Json::object(), Json{{"verdict", "consensus_blocked"}},
                          Json{{"verdict", "maybe"}, {"severity", "LOW"}}, Json("text")}) {
    auto d = decide_round(odd, false, 0, 1);
    EXPECT_EQ(d.route, RoundRoute::park) << odd.dump();
    EXPECT_NE(d.note.find("no verdict"), std::string::npos) << d.note;
  }
}

TEST(DecideRound, FallsBackToTheFirstActionItemWhenNothingDiverged) {
  Json r = result("consensus_blocked", "LOW", "proceed-with-caution");
  r["divergences"] = Json::array();
  EXPECT_NE(decide_round(r, false, 0, 1).note.find(": add the export"), std::string::npos);
}

const std::vector<std::string> kFallback = {"claude", "codex", "gemini"};

TEST(DiscussFlags, SimAndCommandPlayEveryPerspectiveWithoutFallback) {
  CritiqueSettings s;
  s.agent = "sim";
  s.sim_scenario = "/x/scenario.json";
  s.model = "m1";
  s.persona_timeout_seconds = 2.5;
  EXPECT_EQ(discuss_flags(s, kFallback),
            (std::vector<std::string>{"--agent", "sim", "--fallback", "none", "--model", "m1",
                                      "--sim-scenario", "/x/scenario.json",
                                      "--persona-timeout-seconds", "2.5"}));
  s = {};
  s.agent = "command";
  s.agent_command = "mycli {prompt_file}";
  EXPECT_EQ(discuss_flags(s, kFallback),
            (std::vector<std::string>{"--agent", "command", "--fallback", "none", "--agent-command",
                                      "mycli {prompt_file}"}));
}

TEST(DiscussFlags, ARealCliKeepsEachPerspectivesBackendAndFallsBackToTheRunsFirst) {
  CritiqueSettings s;
  s.agent = "codex";
  s.agent_bin = "/opt/codex";  // codex's binary: never handed to the claude backend
  s.model = "gpt-x";           // nor pinned on every critic
  EXPECT_EQ(discuss_flags(s, kFallback),
            (std::vector<std::string>{"--fallback", "codex,claude,gemini"}));
  s.agent = "claude";
  s.agent_bin = "/opt/claude";
  EXPECT_EQ(discuss_flags(s, kFallback),
            (std::vector<std::string>{"--fallback", "claude,codex,gemini", "--claude-bin",
                                      "/opt/claude"}));
}

TEST(GateRounds, TheShippedGraphCritiquesThePlanAndTheSignOff) {
  auto g = Graph::load(test::source_dir() + "/skill");
  ASSERT_TRUE(g.ok()) << g.error().message;
  const DiscussRound* plan = round_after(*g, "plan_bundle");
  ASSERT_NE(plan, nullptr);
  EXPECT_EQ(plan->revisions, 1);
  const DiscussRound* signoff = round_before(*g, "create_pr");
  ASSERT_NE(signoff, nullptr);
  EXPECT_EQ(signoff->revisions, 0);
  EXPECT_EQ(round_after(*g, "create_pr"), nullptr);
  EXPECT_EQ(round_before(*g, "plan_bundle"), nullptr);
  EXPECT_FALSE(g->discuss.rounds_enabled);
}

}  // namespace
}  // namespace devgraph::bundle
