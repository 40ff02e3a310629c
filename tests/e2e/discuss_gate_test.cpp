// The discuss rounds as gates of the bundle lane, end to end: the real
// binary drives one bundle (`devgraph run-bundle --discuss-rounds`) with the
// simulated agent playing every persona and every critic, in a real git
// worktree under the repository's develop home, so that `devgraph answer`
// can answer the wait a round causes. A plan blocked at HIGH is planned
// again once and then waits; a person's approval sends it on without
// another round; the sign-off at HIGH waits; a MEDIUM block goes on with
// its warning on the run; the critics' spend is on the bundle's ledger.
#include <unistd.h>

#include <gtest/gtest.h>

#include "support/develop_home_bundle.h"
#include "support/run_scenario.h"
#include "support/test_util.h"
#include "util/fs.h"
#include "util/json.h"

namespace devgraph {
namespace {

using test::done;
using test::file;

const std::vector<std::string> kPerspectives = {"product", "technical", "quality", "risk",
                                                "coverage"};

// One perspective's critique; `risk` and `missing` where the perspective
// reports them.
Json critique(const std::string& perspective, int rating, const std::string& risk = "low",
              Json missing = Json::array()) {
  Json c = {{"perspective", perspective},
            {"strengths", {"one task, one file, one test"}},
            {"weaknesses", {"the word is not checked for a trailing space"}},
            {"suggestions", {"check the exact bytes of the word file"}},
            {"rating", rating}};
  if (perspective == "risk") c["risk_level"] = risk;
  if (perspective == "coverage") c["missing_requirements"] = std::move(missing);
  return c;
}

class DiscussGate : public ::testing::Test, protected test::DevelopHomeBundle {
 protected:
  test::Scratch s;
  std::string scenario_path = s / "scenario.json";
  Json scenario;

  void SetUp() override {
    set_up(s, "a word", "# b1\n\n- src/T1.txt holds hello\n");
    scenario = base_scenario();
  }

  // One task; every critic of every round rates the work 4 unless a test
  // puts a rule of its own first (critic_rule).
  static Json base_scenario() {
    Json tasks = {{"bundle", "b1"},
                  {"tasks", Json::array({{{"id", "T1"},
                                          {"title", "greeting"},
                                          {"depends_on", Json::array()},
                                          {"files", {"src/T1.txt", "tests/T1.sh"}}}})}};
    auto plan = [&](const std::string& note) {
      return Json::array(
          {file("docs/develop/plans/b1.md",
                "# Plan b1\n\n## Task T1: greeting\n\nWrite hello to src/T1.txt." + note + "\n"),
           file("docs/develop/plans/b1.tasks.json", dump_py(tasks, 2))});
    };
    Json personas = Json::object();
    // A planner sent back by a round names it in its new plan.
    personas["planner"] = Json::array({{{"dispatch_contains", "critique action items"},
                                        {"files", plan(" Revised after the critique.")},
                                        {"result", done("planned again")}},
                                       {{"files", plan("")}, {"result", done("planned")}}});
    Json red = done("red test for T1");
    red["commands"] = Json::array({"sh tests/T1.sh"});
    personas["tdd-writer"] =
        Json::array({{{"task", "T1"},
                      {"files", Json::array({file("tests/T1.sh", "grep -qx hello src/T1.txt\n")})},
                      {"result", red}}});
    personas["developer"] = Json::array({{{"task", "T1"},
                                          {"files", Json::array({file("src/T1.txt", "hello\n")})},
                                          {"result", done("wrote T1")}}});
    personas["critic"] = Json::array();
    for (const auto& p : kPerspectives) personas["critic"].push_back(rule(p, critique(p, 4)));
    return Json{{"default", {{"result", done("{persona} approves")}}}, {"personas", personas}};
  }

  static Json rule(const std::string& perspective, const Json& c, const std::string& round = "",
                   double cost = 0) {
    Json r = done("rated");
    r["critique"] = c;
    Json rl = {{"bundle", perspective}, {"result", r}};
    if (!round.empty()) rl["dispatch_contains"] = "Critique round " + round;
    if (cost > 0) rl["cost_usd"] = cost;
    return rl;
  }

  // Puts a critic's rule before the others (the first match wins).
  void critic_rule(Json r) {
    auto& list = scenario["personas"]["critic"];
    list.insert(list.begin(), std::move(r));
  }

  test::ProcessResult run_bundle(bool rounds = true) {
    test::write_text(scenario_path, dump_py(scenario, 2));
    std::vector<std::string> args = {"run-bundle", run_dir, "--bundle",       "b1",
                                     "--agent",    "sim",   "--sim-scenario", scenario_path,
                                     "--no-live"};
    if (rounds) args.push_back("--discuss-rounds");
    return test::run_devgraph(args, env);
  }

  static Json result_of(const test::ProcessResult& r) {
    auto pos = r.out.rfind("RESULT_JSON: ");
    if (pos == std::string::npos) return Json();
    return Json::parse(r.out.substr(pos + 13, r.out.find('\n', pos) - pos - 13));
  }

  Json cursor() const { return state()["bundles_runtime"]["b1"]; }
  std::vector<Json> events(const std::string& type) const {
    std::vector<Json> out;
    for (const auto& e : test::read_jsonl(run_dir + "/events.jsonl"))
      if (e["type"] == type) out.push_back(e);
    return out;
  }
  std::string record(const std::string& round) const {
    return bundle_dir + "/discussions/" + round + "-discussion.md";
  }
  std::string git(const std::vector<std::string>& args) const {
    std::vector<std::string> argv = {"git", "-C", worktree};
    argv.insert(argv.end(), args.begin(), args.end());
    return test::run_process(argv).out;
  }

  void expect_replays_cleanly() {
    auto v = test::run_devgraph({"validate", "run", run_dir}, env);
    EXPECT_EQ(v.exit_code, 0) << v.out << v.err;
  }
};

TEST_F(DiscussGate, APlanBlockedAtHighIsPlannedAgainOnceThenWaitsAndAnApprovalSendsItOn) {
  critic_rule(rule("coverage", critique("coverage", 4, "low", {"the farewell word"}), "plan-"));
  auto r = run_bundle();
  ASSERT_EQ(r.exit_code, 2) << r.out << r.err;
  Json res = result_of(r);
  EXPECT_EQ(res["status"], "BLOCKED");
  EXPECT_NE(res["blockers"][0].get<std::string>().find("plan-2 blocked at HIGH"), std::string::npos)
      << res.dump();
  // Two rounds: the first sent the plan back, the second made it wait.
  auto rounds = events("DISCUSS_ROUND_DONE");
  ASSERT_EQ(rounds.size(), 2u);
  EXPECT_EQ(rounds[0]["detail"]["round"], "plan-1");
  EXPECT_EQ(rounds[0]["detail"]["route"], "revise");
  EXPECT_EQ(rounds[0]["detail"]["severity"], "HIGH");
  EXPECT_EQ(rounds[0]["detail"]["lane_to"], "plan_bundle");
  EXPECT_EQ(rounds[1]["detail"]["round"], "plan-2");
  EXPECT_EQ(rounds[1]["detail"]["route"], "wait_for_person");
  EXPECT_TRUE(path_exists(record("plan-1")));
  EXPECT_TRUE(path_exists(record("plan-2")));
  EXPECT_NE(test::slurp(record("plan-1")).find("the farewell word"), std::string::npos);
  // The planner was sent back with the action items and planned again.
  EXPECT_NE(test::slurp(worktree + "/docs/develop/plans/b1.md").find("Revised after"),
            std::string::npos);
  EXPECT_EQ(events("PLAN_DONE").size(), 0u);
  Json c = cursor();
  EXPECT_EQ(c["node"], "awaiting_human");
  EXPECT_EQ(c["status"], "waiting_human");
  EXPECT_EQ(c["discuss"]["plan"]["revisions"], 1);
  EXPECT_FALSE(state()["tasks_runtime"].contains("b1/T1"));
  // Two plan commits, the revised one on top; no task started.
  EXPECT_EQ(git({"log", "--format=%s", "main..HEAD"}),
            "docs(b1): plan (revised)\ndocs(b1): plan\n");

  // The inbox names the wait; a person approves the plan as it is.
  auto inbox = test::run_devgraph({"inbox", "--repo", repo}, env);
  EXPECT_NE(inbox.out.find("plan-2 blocked at HIGH"), std::string::npos) << inbox.out;
  auto a = test::run_devgraph({"answer", "b1", "--approve", "--repo", repo}, env);
  ASSERT_EQ(a.exit_code, 0) << a.err;
  r = run_bundle();
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  // Neither planned nor critiqued again: the next round is the sign-off.
  rounds = events("DISCUSS_ROUND_DONE");
  ASSERT_EQ(rounds.size(), 3u);
  EXPECT_EQ(rounds[2]["detail"]["round"], "signoff-1");
  EXPECT_EQ(rounds[2]["detail"]["verdict"], "consensus_reached");
  auto plan_done = events("PLAN_DONE");
  ASSERT_EQ(plan_done.size(), 1u);
  EXPECT_EQ(plan_done[0]["detail"]["approved_by_person"], true);
  EXPECT_EQ(events("BRANCH_READY").size(), 1u);
  EXPECT_EQ(cursor()["status"], "complete");
  expect_replays_cleanly();
}

TEST_F(DiscussGate, TheSignOffBlockedAtHighWaitsForAPersonAtOnce) {
  critic_rule(rule("risk", critique("risk", 4, "critical"), "signoff-"));
  auto r = run_bundle();
  ASSERT_EQ(r.exit_code, 2) << r.out << r.err;
  auto rounds = events("DISCUSS_ROUND_DONE");
  ASSERT_EQ(rounds.size(), 2u);
  EXPECT_EQ(rounds[0]["detail"]["round"], "plan-1");
  EXPECT_EQ(rounds[0]["detail"]["verdict"], "consensus_reached");
  EXPECT_EQ(rounds[1]["detail"]["round"], "signoff-1");
  EXPECT_EQ(rounds[1]["detail"]["severity"], "HIGH");
  EXPECT_EQ(rounds[1]["detail"]["recommendation"], "escalate");
  EXPECT_EQ(rounds[1]["detail"]["route"], "wait_for_person");
  Json c = cursor();
  EXPECT_EQ(c["node"], "awaiting_human");
  EXPECT_EQ(c["previous_node"], "documentation_review");
  EXPECT_EQ(events("BRANCH_READY").size(), 0u);
  // The task is committed; nothing was delivered.
  EXPECT_NE(git({"log", "--format=%B", "main..HEAD"}).find("Devgraph-Task: b1/T1"),
            std::string::npos);
  EXPECT_TRUE(path_exists(record("signoff-1")));

  auto a = test::run_devgraph({"answer", "b1", "--approve", "--repo", repo}, env);
  ASSERT_EQ(a.exit_code, 0) << a.err;
  r = run_bundle();
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_EQ(events("DISCUSS_ROUND_DONE").size(), 2u);  // no second sign-off
  EXPECT_EQ(events("BRANCH_READY").size(), 1u);
  expect_replays_cleanly();
}

TEST_F(DiscussGate, APersonsTextAfterTheSignOffGoesToARepairWithTheActionItems) {
  // The sign-off blocks until the branch holds the fix the person asked for.
  critic_rule(rule("risk", critique("risk", 4, "critical"), "signoff-1"));
  auto r = run_bundle();
  ASSERT_EQ(r.exit_code, 2) << r.out << r.err;
  auto a = test::run_devgraph(
      {"answer", "b1", "--text", "Add a NOTES file saying why. PERSON-WORDS", "--repo", repo}, env);
  ASSERT_EQ(a.exit_code, 0) << a.err;
  auto& dev = scenario["personas"]["developer"];
  dev.insert(dev.begin(), Json{{"dispatch_contains", "PERSON-WORDS"},
                               {"files", Json::array({file("NOTES", "why\n")})},
                               {"result", [] {
                                  Json d = done("added NOTES");
                                  d["artifacts"] = Json::array({"NOTES"});
                                  return d;
                                }()}});
  r = run_bundle();
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  std::string findings = test::slurp(bundle_dir + "/repair-findings.md");
  EXPECT_NE(findings.find("PERSON-WORDS"), std::string::npos) << findings;
  EXPECT_NE(findings.find("check the exact bytes"), std::string::npos) << findings;
  auto rounds = events("DISCUSS_ROUND_DONE");
  ASSERT_EQ(rounds.size(), 4u);  // plan-1, signoff-1, the repair move, signoff-2
  EXPECT_EQ(rounds[2]["detail"]["route"], "repair");
  EXPECT_EQ(rounds[2]["detail"]["lane_to"], "repair_bundle");
  EXPECT_EQ(rounds[3]["detail"]["round"], "signoff-2");
  EXPECT_EQ(rounds[3]["detail"]["verdict"], "consensus_reached");
  EXPECT_EQ(test::slurp(worktree + "/NOTES"), "why\n");
  EXPECT_EQ(events("BRANCH_READY").size(), 1u);
  expect_replays_cleanly();
}

TEST_F(DiscussGate, AMediumBlockGoesOnWithItsWarningOnTheRunAndTheCriticsSpendIsCounted) {
  // A high (not critical) risk blocks at MEDIUM; every critic costs a quarter.
  for (const auto& p : kPerspectives)
    critic_rule(rule(p, critique(p, 4, p == "risk" ? "high" : "low"), "", 0.25));
  auto r = run_bundle();
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  Json res = result_of(r);
  EXPECT_EQ(res["status"], "DONE_WITH_CONCERNS");
  ASSERT_FALSE(res["concerns"].empty());
  EXPECT_NE(res["concerns"][0].get<std::string>().find("plan-1 blocked at MEDIUM"),
            std::string::npos)
      << res.dump();
  auto rounds = events("DISCUSS_ROUND_DONE");
  ASSERT_EQ(rounds.size(), 2u);
  EXPECT_EQ(rounds[0]["detail"]["severity"], "MEDIUM");
  EXPECT_EQ(rounds[0]["detail"]["route"], "proceed");
  EXPECT_NE(cursor()["discuss"]["plan"]["warning"].get<std::string>().find("MEDIUM"),
            std::string::npos);
  EXPECT_EQ(events("BRANCH_READY").size(), 1u);
  // Four critics of the plan and five of the sign-off, at $0.25 each.
  EXPECT_DOUBLE_EQ(res["cost_usd"].get<double>(), 2.25) << res.dump();
  expect_replays_cleanly();
}

TEST_F(DiscussGate, ADriverKilledAfterARoundReadsItBackInsteadOfRunningItAgain) {
  env["DEVGRAPH_BUNDLE_CRASH_AT"] = "critiqued:b1/plan-1";
  auto r = run_bundle();
  ASSERT_EQ(r.exit_code, -1) << r.out << r.err;  // SIGKILLed itself
  ASSERT_TRUE(path_exists(bundle_dir + "/discussions/plan-1.result.json"));
  env.erase("DEVGRAPH_BUNDLE_CRASH_AT");
  r = run_bundle();
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  auto rounds = events("DISCUSS_ROUND_DONE");
  ASSERT_EQ(rounds.size(), 2u);
  EXPECT_EQ(rounds[0]["detail"]["round"], "plan-1");
  EXPECT_EQ(rounds[1]["detail"]["round"], "signoff-1");
  // One line per critic: four of the plan, five of the sign-off, none twice.
  size_t critics = 0;
  for (const auto& l : test::read_jsonl(bundle_dir + "/ledger.jsonl"))
    critics += l["persona"] == "critic";
  EXPECT_EQ(critics, 9u);
  bool reused = false;
  for (const auto& l : test::read_jsonl(bundle_dir + "/run_bundle.log"))
    reused |= l.value("event", "") == "reused_discussion";
  EXPECT_TRUE(reused);
  expect_replays_cleanly();
}

// Critics that cannot answer (here: the answer schema is missing) are never
// a pass: nobody answered is HIGH, the plan goes back once, then the bundle
// waits for a person, and no task starts.
TEST_F(DiscussGate, CriticsThatCannotAnswerNeverPassTheGate) {
  std::string skill = s / "skill";
  auto cp = test::run_process({"cp", "-r", test::source_dir() + "/skill", skill});
  ASSERT_EQ(cp.exit_code, 0) << cp.err;
  ASSERT_EQ(::unlink((skill + "/contracts/discuss-answer.schema.json").c_str()), 0);
  test::write_text(scenario_path, dump_py(scenario, 2));
  auto r = test::run_devgraph(
      {"run-bundle", run_dir, "--bundle", "b1", "--agent", "sim", "--sim-scenario", scenario_path,
       "--no-live", "--discuss-rounds", "--skill", skill},
      env);
  ASSERT_EQ(r.exit_code, 2) << r.out << r.err;
  Json res = result_of(r);
  std::string why = res["blockers"][0];
  EXPECT_NE(why.find("critique plan-2 blocked at HIGH"), std::string::npos) << why;
  EXPECT_EQ(why.find('\n'), std::string::npos) << why;
  EXPECT_EQ(cursor()["node"], "awaiting_human");
  EXPECT_FALSE(state()["tasks_runtime"].contains("b1/T1"));
  auto rounds = events("DISCUSS_ROUND_DONE");
  ASSERT_EQ(rounds.size(), 2u);
  for (const auto& e : rounds) {
    EXPECT_EQ(e["detail"]["verdict"], "consensus_blocked") << e.dump();
    EXPECT_EQ(e["detail"]["severity"], "HIGH") << e.dump();
  }
  EXPECT_EQ(rounds[1]["detail"]["route"], "wait_for_person");
}

TEST_F(DiscussGate, TheRoundsAreOffUnlessARunTurnsThemOn) {
  auto r = run_bundle(false);
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_TRUE(events("DISCUSS_ROUND_DONE").empty());
  EXPECT_FALSE(path_exists(bundle_dir + "/discussions"));
}

}  // namespace
}  // namespace devgraph
