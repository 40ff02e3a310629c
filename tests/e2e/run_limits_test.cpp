// `devgraph run`'s run-wide limits end to end: the real binary, local
// issues, the simulated agent playing one scenario for every bundle, and a
// copy of the skill whose GRAPH.yaml lowers the limits. What is measured
// comes from the run's own records: each bundle's run_bundle.log (the
// persona runtime's "launched" and "finished" records, ordered across
// bundles by their mono_us stamps), the ledgers, state.json and the
// RESULT_JSON line.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <set>

#include "support/run_scenario.h"
#include "support/test_util.h"
#include "util/fs.h"
#include "util/json.h"

namespace devgraph {
namespace {

using test::done;
using test::file;
using test::kRunTests;
using test::lines_of;
using test::result_of;

// One task per bundle (src/<bundle>.txt and its test); every persona call
// reports `cost` dollars. `first_planner` is played before the planner's
// normal rule (a provider limit for one bundle, say).
Json scenario(long long latency_ms, double cost, Json first_planner = Json()) {
  return test::one_task_scenario(
      test::OneTaskScenario{latency_ms, cost, std::move(first_planner), {}});
}

// One record of a persona's child starting (+1) or ending (-1).
struct Edge {
  long long at_us = 0;
  int delta = 0;
  std::string bundle;
  std::string event;
  Json record;
};

class RunLimits : public ::testing::Test {
 protected:
  void SetUp() override {
    repo = scratch / "widgets";
    ai_root = scratch / "ai";
    skill = scratch / "skill";
    test::write_widgets_files(repo);
    git({"init", "-q", "-b", "main"});
    git({"add", "-A"});
    git({"commit", "-q", "-m", "base"});
    auto cp = test::run_process({"cp", "-r", test::source_dir() + "/skill", skill});
    ASSERT_EQ(cp.exit_code, 0) << cp.err;
    scenario_path = scratch / "scenario.json";
    write_scenario(scenario(30, 0.0));
  }

  void write_scenario(const Json& s) { test::write_text(scenario_path, dump_py(s, 2)); }

  // Replaces one line of the copied GRAPH.yaml.
  void set_graph(const std::string& from, const std::string& to) {
    std::string path = skill + "/GRAPH.yaml";
    std::string text = test::slurp(path);
    auto at = text.find(from);
    ASSERT_NE(at, std::string::npos) << from;
    text.replace(at, from.size(), to);
    test::write_text(path, text);
  }

  void git(const std::vector<std::string>& args) {
    std::vector<std::string> argv = {"git"};
    argv.insert(argv.end(), args.begin(), args.end());
    auto r = test::run_process(argv, env(), repo);
    ASSERT_EQ(r.exit_code, 0) << r.err;
  }

  std::map<std::string, std::string> env() const {
    return {{"AI_ROOT", ai_root},
            {"GIT_AUTHOR_NAME", "t"},
            {"GIT_AUTHOR_EMAIL", "t@example.invalid"},
            {"GIT_COMMITTER_NAME", "t"},
            {"GIT_COMMITTER_EMAIL", "t@example.invalid"},
            {"NO_COLOR", "1"}};
  }

  void file_issue(const std::string& title) {
    auto r =
        test::run_devgraph({"issue", "new", title, "--body", "Do " + title + "."}, env(), repo);
    ASSERT_EQ(r.exit_code, 0) << r.err;
  }

  test::ProcessResult run(std::vector<std::string> extra = {}) {
    std::vector<std::string> args = {
        "run", "--agent", "sim", "--sim-scenario", scenario_path, "--api-backoff-seconds",
        "0",   "--skill", skill};
    args.insert(args.end(), extra.begin(), extra.end());
    return test::run_devgraph(args, env(), repo);
  }

  static std::vector<Json> log_of(const std::string& run_dir, const std::string& bundle) {
    return test::read_jsonl(run_dir + "/bundles/" + bundle + "/run_bundle.log");
  }

  // Every persona child of the run, as edges in time order (an end before
  // a start at the same microsecond: a slot is given back before the
  // next persona can have it).
  static std::vector<Edge> edges(const std::string& run_dir, const Json& bundles) {
    std::vector<Edge> out;
    for (const auto& b : bundles) {
      std::string id = json_str(b, "id");
      for (const auto& rec : log_of(run_dir, id)) {
        std::string ev = json_str(rec, "event");
        if (ev != "launched" && ev != "finished") continue;
        EXPECT_TRUE(rec.contains("mono_us")) << dump_py(rec);
        out.push_back({rec.value("mono_us", 0LL), ev == "launched" ? 1 : -1, id, ev, rec});
      }
    }
    std::stable_sort(out.begin(), out.end(), [](const Edge& a, const Edge& b) {
      return a.at_us != b.at_us ? a.at_us < b.at_us : a.delta < b.delta;
    });
    return out;
  }

  static int peak_live(const std::vector<Edge>& all) {
    int live = 0, peak = 0;
    for (const auto& e : all) peak = std::max(peak, live += e.delta);
    return peak;
  }

  test::Scratch scratch;
  std::string repo, ai_root, skill, scenario_path;
};

// Three bundles at once, two live personas for the whole run: counted from
// every bundle's runtime records, never a third, though each bundle alone
// runs its two verifiers at once.
TEST_F(RunLimits, TheRunWideCeilingOfLivePersonasHoldsAcrossEveryBundle) {
  set_graph("max_live_personas: 39", "max_live_personas: 2");
  for (const char* t : {"alpha", "beta", "gamma"}) file_issue(t);
  auto r = run({"--max-bundles", "3"});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  Json res = result_of(r);
  ASSERT_EQ(res["status"], "COMPLETE") << dump_py(res);
  ASSERT_EQ(res["bundles"].size(), 3u);
  std::string run_dir = json_str(res, "run_dir");
  // The three drivers ran at the same time: all were started before any
  // ended.
  int started = 0;
  for (const auto& e : test::read_jsonl(run_dir + "/events.jsonl")) {
    std::string type = json_str(e, "type");
    if (type == "BUNDLE_STARTED") ++started;
    if (type == "TECH_LEAD_DONE") break;
  }
  EXPECT_EQ(started, 3);
  auto all = edges(run_dir, res["bundles"]);
  ASSERT_GE(all.size(), 3u * 2 * 7) << "every bundle ran its seven personas";
  EXPECT_LE(peak_live(all), 2) << "the ceiling held";
  EXPECT_GE(peak_live(all), 1);
  for (const auto& b : res["bundles"]) EXPECT_EQ(b["status"], "delivered") << dump_py(b);
  EXPECT_FALSE(path_exists(run_dir + "/limits.sock")) << "the broker's socket goes with it";
}

// b1's first planner call meets a usage limit: the other bundles launch
// nothing until it resets, and the run records the pause.
TEST_F(RunLimits, AProviderLimitInOneBundlePausesLaunchesInTheOthers) {
  write_scenario(scenario(
      30, 0.0, Json{{"bundle", "b1"}, {"call", 1}, {"fail", "usage_limit"}, {"reset_after_s", 3}}));
  for (const char* t : {"alpha", "beta"}) file_issue(t);
  auto r = run({"--max-bundles", "2"});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  Json res = result_of(r);
  ASSERT_EQ(res["status"], "COMPLETE") << dump_py(res);
  std::string run_dir = json_str(res, "run_dir");
  // b1's own runtime paused on the limit it met.
  bool b1_paused = false;
  for (const auto& rec : log_of(run_dir, "b1"))
    if (json_str(rec, "event") == "paused" && !rec.value("run_wide", false)) b1_paused = true;
  EXPECT_TRUE(b1_paused);
  // b2 was told, and started nothing between the pause and its end.
  bool paused = false, unpaused = false;
  int launched_while_paused = 0, launched_after = 0;
  for (const auto& rec : log_of(run_dir, "b2")) {
    std::string ev = json_str(rec, "event");
    if (ev == "paused" && rec.value("run_wide", false)) {
      paused = true;
      EXPECT_NE(json_str(rec, "reason").find("b1 met a provider limit"), std::string::npos)
          << dump_py(rec);
    }
    if (ev == "unpaused" && paused) unpaused = true;
    if (ev == "launched" && paused && !unpaused) ++launched_while_paused;
    if (ev == "launched" && unpaused) ++launched_after;
  }
  EXPECT_TRUE(paused) << "b2 never heard of b1's limit";
  EXPECT_TRUE(unpaused);
  EXPECT_EQ(launched_while_paused, 0);
  EXPECT_GT(launched_after, 0) << "b2 went on after the reset";
  Json state = *parse_json(test::slurp(run_dir + "/state.json"), "state");
  EXPECT_TRUE(state["limits"]["paused_until_ms"].is_number_integer()) << dump_py(state["limits"]);
}

// Every persona costs $0.50 and the run may spend $1.00, one persona at a
// time: after the second persona nothing is launched anywhere, both
// bundles park saying why, and the run says so. An answer and a higher
// budget let the run go on, knowing what it spent.
TEST_F(RunLimits, ASpentBudgetStopsNewLaunchesEverywhereAndAHigherOneGoesOn) {
  set_graph("max_live_personas: 39", "max_live_personas: 1");
  write_scenario(scenario(20, 0.5));
  for (const char* t : {"alpha", "beta"}) file_issue(t);
  auto r = run({"--max-bundles", "2", "--budget-usd", "1"});
  ASSERT_EQ(r.exit_code, 2) << r.out << r.err;
  Json res = result_of(r);
  EXPECT_EQ(res["status"], "HUMAN_REQUIRED");
  EXPECT_DOUBLE_EQ(res.value("cost_usd", 0.0), 1.0);
  EXPECT_EQ(res["persona_runs"], 2);
  ASSERT_TRUE(res["limits"].is_object()) << dump_py(res);
  EXPECT_EQ(res["limits"]["budget_usd"], 1.0);
  EXPECT_EQ(res["limits"]["budget_spent"], true);
  EXPECT_NE(r.out.find("(--budget-usd) is spent"), std::string::npos) << r.out;
  std::string run_dir = json_str(res, "run_dir");
  auto all = edges(run_dir, res["bundles"]);
  EXPECT_EQ(std::count_if(all.begin(), all.end(), [](const Edge& e) { return e.delta > 0; }), 2)
      << "no persona launched once the budget was reached";
  ASSERT_EQ(res["human_required"].size(), 2u) << dump_py(res);
  for (const auto& w : res["human_required"])
    EXPECT_EQ(json_str(w, "reason").rfind("run budget spent: ", 0), 0u) << dump_py(w);
  auto inbox = test::run_devgraph({"inbox", "--json"}, env(), repo);
  ASSERT_EQ(inbox.exit_code, 0) << inbox.err;
  Json items = *parse_json(inbox.out, "inbox");
  ASSERT_EQ(items.size(), 2u) << inbox.out;
  EXPECT_NE(json_str(items[0], "reason").find("--budget-usd"), std::string::npos) << inbox.out;

  // One answer reopens the run; the higher budget sets both going.
  auto a = test::run_devgraph({"answer", "b1", "--approve"}, env(), repo);
  ASSERT_EQ(a.exit_code, 0) << a.out << a.err;
  r = run({"--max-bundles", "2", "--budget-usd", "100"});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  res = result_of(r);
  EXPECT_EQ(res["status"], "COMPLETE") << dump_py(res);
  EXPECT_EQ(json_str(res, "run_dir"), run_dir) << "the same run";
  for (const auto& b : res["bundles"]) EXPECT_EQ(b["status"], "delivered") << dump_py(b);
  EXPECT_GT(res.value("cost_usd", 0.0), 1.0) << "what the first part spent is counted";
  EXPECT_EQ(res["limits"]["budget_spent"], false);
}

// The merged work's auditors are the run's personas too: with one live
// persona allowed and a budget the first auditor spends, the second one
// waits for the slot, is withdrawn once the budget is spent, and its merge
// stays unaudited for the next window, with the budget named.
TEST_F(RunLimits, AuditorsWaitForTheRunsPersonaSlotsAndStopAtItsBudget) {
  set_graph("max_live_personas: 39", "max_live_personas: 1");
  for (const char* t : {"alpha", "beta"}) file_issue(t);
  auto r = run({"--max-bundles", "2"});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  Json first = *parse_json(test::slurp(json_str(result_of(r), "run_dir") + "/state.json"), "s");
  for (const auto& b : first["bundles"])
    git({"merge", "-q", "--no-ff", "--no-edit", json_str(b, "branch")});
  Json sc = scenario(30, 0.0);
  sc["personas"]["merge-auditor"] = Json::array(
      {{{"latency_ms", 30},
        {"cost_usd", 1.0},
        {"result", {{"status", "DONE"}, {"summary", "clean"}, {"evidence", Json::array()}}}}});
  write_scenario(sc);
  r = run({"--max-bundles", "2", "--budget-usd", "1"});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  Json res = result_of(r);
  const Json& window = res["audit"]["window"];
  ASSERT_EQ(window.size(), 2u) << dump_py(res["audit"]);
  std::map<std::string, int> statuses;
  for (const auto& w : window) ++statuses[json_str(w, "status")];
  EXPECT_EQ(statuses, (std::map<std::string, int>{{"audited", 1}, {"blocked", 1}}))
      << dump_py(window);
  for (const auto& w : window)
    if (json_str(w, "status") == "blocked") {
      EXPECT_NE(json_str(w, "reason").find("budget"), std::string::npos) << dump_py(w);
    }
  // One auditor ran: one persona, never two at once.
  std::string run_dir = json_str(res, "run_dir");
  int launched = 0;
  for (const auto& key : test::lines_of(test::entries(run_dir + "/audit")))
    for (const auto& rec : test::read_jsonl(run_dir + "/audit/" + key + "/audit.log"))
      launched += json_str(rec, "event") == "launched";
  EXPECT_EQ(launched, 1);
}

// A bundle may use four persona runs: the fourth (a verifier) ends while
// the other verifier still runs, which finishes too; the task is committed
// and the bundle parks before its next persona, the inbox says why, and an
// answer lets it use four more, enough to finish.
TEST_F(RunLimits, ABundleThatReachesItsBudgetParksUntilAPersonAllowsMore) {
  set_graph("    persona_runs: 60", "    persona_runs: 4");
  file_issue("alpha");
  auto r = run();
  ASSERT_EQ(r.exit_code, 2) << r.out << r.err;
  Json res = result_of(r);
  ASSERT_EQ(res["bundles"].size(), 1u);
  EXPECT_EQ(res["bundles"][0]["status"], "parked");
  EXPECT_EQ(res["bundles"][0]["persona_runs"], 5);
  // T1 is committed, and the bundle cursor waits before its next persona:
  // at the task scheduler when the broker's "closed" reached the driver
  // first, else at the final review, whose reviewer is the next persona
  // (the whole-bundle test and build in between runs no persona).
  const std::string waits = json_str(res["bundles"][0], "node");
  EXPECT_TRUE(waits == "task_scheduler" || waits == "final_review") << waits;
  ASSERT_EQ(res["human_required"].size(), 1u);
  EXPECT_EQ(json_str(res["human_required"][0], "reason")
                .rfind("bundle budget spent: 4 persona runs of the 4 it may use", 0),
            0u)
      << dump_py(res);
  auto inbox = test::run_devgraph({"inbox", "--json"}, env(), repo);
  ASSERT_EQ(inbox.exit_code, 0) << inbox.err;
  Json items = *parse_json(inbox.out, "inbox");
  ASSERT_EQ(items.size(), 1u) << inbox.out;
  EXPECT_EQ(items[0]["key"], "b1");
  auto a = test::run_devgraph({"answer", "b1", "--approve"}, env(), repo);
  ASSERT_EQ(a.exit_code, 0) << a.out << a.err;
  r = run();
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  res = result_of(r);
  EXPECT_EQ(res["status"], "COMPLETE") << dump_py(res);
  EXPECT_EQ(res["bundles"][0]["status"], "delivered");
  EXPECT_EQ(res["bundles"][0]["persona_runs"], 7) << "nothing ran twice";
  Json state = *parse_json(test::slurp(json_str(res, "run_dir") + "/state.json"), "state");
  EXPECT_EQ(state["bundles"][0]["budget_rounds"], 2);
}

}  // namespace
}  // namespace devgraph
