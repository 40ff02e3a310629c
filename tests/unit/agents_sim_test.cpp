// The simulated agent: scenario parsing, rule matching, and whole launches
// through the persona runtime with the real devgraph binary as the child.
#include "support/build_paths.h"
#include "agents/sim.h"

#include <gtest/gtest.h>

#include "agents/runtime.h"
#include "contracts/schema.h"
#include "support/test_util.h"

namespace devgraph::agents {
namespace {

using namespace std::chrono_literals;

Json doc(const char* text) {
  return Json::parse(text);
}

TEST(SimScenario, RulesMatchInOrderWithTheDefaultLast) {
  auto s = SimScenario::parse(doc(R"({
    "default": {"latency_ms": 5},
    "personas": {
      "code-reviewer": [
        {"call": 1, "result": {"status": "DONE_WITH_CONCERNS", "summary": "fix", "evidence": []}},
        {"result": {"status": "DONE", "summary": "ok", "evidence": []}}
      ],
      "developer": [
        {"task": "T2", "latency_ms": 1},
        {"dispatch_contains": "repair", "latency_ms": 2},
        {"after_call": 1, "latency_ms": 3}
      ]
    }})"),
                              "s.json");
  ASSERT_TRUE(s.ok()) << s.error().message;
  EXPECT_EQ(s->match("b1", "code-reviewer", "", 1, "").result["summary"], "fix");
  EXPECT_EQ(s->match("b1", "code-reviewer", "", 2, "").result["summary"], "ok");
  EXPECT_EQ(s->match("b1", "developer", "T2", 1, "").latency_ms, 1);
  EXPECT_EQ(s->match("b1", "developer", "T1", 1, "a repair dispatch").latency_ms, 2);
  EXPECT_EQ(s->match("b1", "developer", "T1", 2, "").latency_ms, 3);
  EXPECT_EQ(s->match("b1", "developer", "T1", 1, "").latency_ms, 5);
  EXPECT_EQ(s->match("b1", "planner", "", 1, "").latency_ms, 5);
}

TEST(SimScenario, ABundleRuleMatchesThatBundleOnly) {
  auto s = SimScenario::parse(doc(R"({
    "default": {"latency_ms": 5},
    "personas": {
      "planner": [
        {"bundle": "b2", "latency_ms": 2},
        {"bundle": "b1", "task": "", "latency_ms": 1}
      ]
    }})"),
                              "s.json");
  ASSERT_TRUE(s.ok()) << s.error().message;
  EXPECT_EQ(s->match("b1", "planner", "", 1, "").latency_ms, 1);
  EXPECT_EQ(s->match("b2", "planner", "", 1, "").latency_ms, 2);
  EXPECT_EQ(s->match("b1", "planner", "T1", 1, "").latency_ms, 5);
  EXPECT_EQ(s->match("b3", "planner", "", 1, "").latency_ms, 5);
  EXPECT_EQ(s->match("", "planner", "", 1, "").latency_ms, 5) << "no bundle matches no rule";
}

TEST(SimScenario, BadScenariosNameTheField) {
  struct Case {
    const char* text;
    const char* says;
  } cases[] = {
      {R"([])", "JSON object"},
      {R"({"personaz": {}})", "personaz"},
      {R"({"personas": {"dev": [{"latency": 5}]}})", "personas.dev[0].latency: unknown field"},
      {R"({"personas": {"dev": {"fail": "explode"}}})", "explode"},
      {R"({"personas": {"dev": {"files": [{"path": "../x", "content": ""}]}}})",
       "inside the worktree"},
      {R"({"personas": {"dev": {"files": [{"path": "/etc/x", "content": ""}]}}})",
       "inside the worktree"},
      {R"({"personas": {"dev": {"call": 0}}})", "call"},
      {R"({"default": {"result": "DONE"}})", "default.result"},
      {R"({"personas": {"planner": {"bundle": 2}}})", "personas.planner.bundle: expected a string"},
      {R"({"personas": {"dev": {"cost_usd": -1}}})", "personas.dev.cost_usd"},
      {R"({"personas": {"dev": {"cost_usd": "1"}}})", "personas.dev.cost_usd"},
      {R"({"personas": {"dev": {"tokens": 1.5}}})", "personas.dev.tokens"},
  };
  for (const auto& c : cases) {
    auto s = SimScenario::parse(doc(c.text), "s.json");
    ASSERT_FALSE(s.ok()) << c.text;
    EXPECT_NE(s.error().message.find(c.says), std::string::npos) << s.error().message;
  }
}

class SimRuntime : public ::testing::Test {
 protected:
  void SetUp() override {
    worktree = scratch / "wt";
    ASSERT_TRUE(make_directories(worktree).ok());
    cfg.backend.kind = BackendKind::sim;
    cfg.backend.binary = DEVGRAPH_BIN;
    cfg.backend.sim_scenario = scratch / "scenario.json";
    cfg.bundle = "b1";
    cfg.log_path = scratch / "run/bundles/b1/run_bundle.log";
    cfg.result_schema = result_schema_path(test::source_dir() + "/skill");
    cfg.backoff_base = 10ms;
    cfg.backoff_cap = 10ms;
    cfg.retry_budget = 1s;
  }
  std::unique_ptr<PersonaRuntime> make(const std::string& scenario) {
    test::write_text(cfg.backend.sim_scenario, scenario);
    auto rt = PersonaRuntime::create(cfg);
    if (!rt) ADD_FAILURE() << rt.error().message;
    return rt ? std::move(rt).value() : nullptr;
  }
  LaunchRequest req(const std::string& persona, std::optional<std::string> task,
                    const std::string& dispatch = "") {
    return {persona,  std::move(task), dispatch,
            worktree, scratch / "run", test::source_dir() + "/skill"};
  }
  Completion run_one(PersonaRuntime& rt, LaunchRequest r) {
    EXPECT_TRUE(rt.launch(std::move(r)).ok());
    Completion last;
    while (auto ev = rt.next_event())
      if (ev->completion) last = *ev->completion;
    return last;
  }

  test::Scratch scratch;
  std::string worktree;
  RuntimeConfig cfg;
};

TEST_F(SimRuntime, WritesFilesAndAnswersPerCall) {
  auto rt = make(R"({
    "personas": {
      "tdd-writer": {"latency_ms": 20, "files": [{"path": "tests/test_{task}.py", "content": "assert add(1, 2) == 3  # {task}\n"}],
                     "result": {"status": "DONE", "summary": "RED for {task}", "evidence": ["1 failing"], "artifacts": ["tests/test_{task}.py"]}},
      "code-reviewer": [
        {"call": 1, "result": {"status": "DONE_WITH_CONCERNS", "summary": "one finding", "evidence": [], "findings": [{"file": "add.py", "issue": "no docstring"}]}},
        {"result": {"status": "DONE", "summary": "approved", "evidence": []}}
      ]
    }})");
  ASSERT_TRUE(rt);
  Completion c = run_one(*rt, req("tdd-writer", "T1"));
  ASSERT_EQ(c.outcome, Outcome::result) << c.error;
  EXPECT_EQ(c.result["summary"], "RED for T1");
  EXPECT_EQ(c.result["artifacts"], Json::array({"tests/test_T1.py"}));
  EXPECT_EQ(test::slurp(worktree + "/tests/test_T1.py"), "assert add(1, 2) == 3  # T1\n");
  EXPECT_EQ(c.session_id, "sim-tdd-writer-T1-1");
  EXPECT_GE(c.elapsed, 20ms);

  c = run_one(*rt, req("code-reviewer", std::nullopt));
  EXPECT_EQ(c.result["status"], "DONE_WITH_CONCERNS");
  EXPECT_EQ(c.result["findings"].size(), 1u);
  c = run_one(*rt, req("code-reviewer", std::nullopt));
  EXPECT_EQ(c.result["status"], "DONE");
  EXPECT_EQ(c.result["summary"], "approved");
}

TEST_F(SimRuntime, OneScenarioServesEveryBundleThroughItsId) {
  const char* scenario = R"({
    "personas": {
      "planner": [
        {"bundle": "b2", "result": {"status": "BLOCKED", "summary": "not {bundle}", "evidence": []}},
        {"files": [{"path": "docs/develop/plans/{bundle}.tasks.json",
                    "content": "{\"bundle\": \"{bundle}\", \"by\": \"{persona}{task}\"}\n"}],
         "result": {"status": "DONE", "summary": "planned {bundle}", "evidence": [],
                    "artifacts": ["docs/develop/plans/{bundle}.tasks.json"]}}
      ]
    }})";
  auto rt = make(scenario);
  ASSERT_TRUE(rt);
  Completion c = run_one(*rt, req("planner", std::nullopt));
  ASSERT_EQ(c.outcome, Outcome::result) << c.error;
  EXPECT_EQ(c.result["summary"], "planned b1");
  EXPECT_EQ(c.result["artifacts"], Json::array({"docs/develop/plans/b1.tasks.json"}));
  EXPECT_EQ(test::slurp(worktree + "/docs/develop/plans/b1.tasks.json"),
            "{\"bundle\": \"b1\", \"by\": \"planner\"}\n");

  rt.reset();
  cfg.bundle = "b2";
  cfg.log_path = scratch / "run/bundles/b2/run_bundle.log";
  rt = make(scenario);
  ASSERT_TRUE(rt);
  c = run_one(*rt, req("planner", std::nullopt));
  ASSERT_EQ(c.outcome, Outcome::result) << c.error;
  EXPECT_EQ(c.result["status"], "BLOCKED");
  EXPECT_EQ(c.result["summary"], "not b2");
  EXPECT_FALSE(path_exists(worktree + "/docs/develop/plans/b2.tasks.json"));
}

TEST(SimAgentVerb, APlaceholderInAnIdIsNotReplacedAgain) {
  test::Scratch s;
  const std::string scenario = s / "scenario.json";
  test::write_text(scenario, R"({"default": {
    "result": {"status": "DONE", "summary": "{bundle}|{task}|{persona}", "evidence": []}}})");
  auto r = test::run_devgraph({"sim-agent", "--scenario", scenario, "--persona", "p{task}",
                               "--bundle", "b{persona}", "--task", "T1"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("b{persona}|T1|p{task}"), std::string::npos) << r.out;
}

TEST(SimAgentVerb, TheToolCallsReportedAreAsPlayedOrAsTheRuleSays) {
  test::Scratch s;
  const std::string scenario = s / "scenario.json";
  test::write_text(scenario, R"({"personas": {
    "developer": {"files": [{"path": "a.txt", "content": "a"}, {"path": "b.txt", "content": "b"}]},
    "tester": {"tool_calls": 0}}})");
  auto turns = [&](const char* persona) {
    auto r = test::run_devgraph({"sim-agent", "--scenario", scenario, "--persona", persona,
                                 "--bundle", "b1", "--task", "T1"},
                                {}, s.path());
    EXPECT_EQ(r.exit_code, 0) << r.err;
    auto doc = parse_json(r.out, "sim output");
    return doc ? doc->value("num_turns", -1) : -1;
  };
  EXPECT_EQ(turns("developer"), 4) << "the answer, a read and two writes";
  EXPECT_EQ(turns("tester"), 1) << "a persona that did nothing";
  EXPECT_EQ(turns("planner"), 2) << "the default: a read";
}

TEST(SimAgentVerb, AnIdThatLeadsAFileOutOfTheWorktreeIsRefused) {
  test::Scratch s;
  const std::string scenario = s / "scenario.json";
  test::write_text(scenario, R"({"default": {"files": [{"path": "{bundle}/x", "content": "x"}]}})");
  ASSERT_TRUE(make_directories(s / "wt").ok());
  auto r = test::run_devgraph(
      {"sim-agent", "--scenario", scenario, "--persona", "developer", "--bundle", ".."}, {},
      s / "wt");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("inside the worktree"), std::string::npos) << r.err;
  EXPECT_FALSE(path_exists(s / "x"));
}

TEST_F(SimRuntime, AnAnswerReportsTheCostAndTokensItsRuleGives) {
  auto rt = make(R"({
    "default": {"cost_usd": 0.75, "tokens": 1200},
    "personas": {"tester": {"result": {"status": "DONE", "summary": "free", "evidence": []}}}
  })");
  ASSERT_TRUE(rt);
  Completion c = run_one(*rt, req("developer", "T1"));
  ASSERT_EQ(c.outcome, Outcome::result) << c.error;
  EXPECT_DOUBLE_EQ(c.cost_usd, 0.75);
  EXPECT_EQ(c.tokens, 1200);
  c = run_one(*rt, req("tester", "T1"));
  EXPECT_DOUBLE_EQ(c.cost_usd, 0.0);
  EXPECT_EQ(c.tokens, 0) << "the simulated CLI always reports its usage";
}

TEST_F(SimRuntime, AResumedAnswerReportsTheSessionsCostAsClaudeDoes) {
  auto rt = make(R"({"default": {"fail": "malformed", "cost_usd": 0.5, "tokens": 100,
    "resume_result": {"status": "DONE", "summary": "late", "evidence": []}}})");
  ASSERT_TRUE(rt);
  Completion c = run_one(*rt, req("developer", "T1"));
  ASSERT_EQ(c.outcome, Outcome::result) << c.error;
  EXPECT_TRUE(c.resumed);
  EXPECT_DOUBLE_EQ(c.cost_usd, 1.0) << "two calls of $0.50, each counted once";
  EXPECT_EQ(c.tokens, 200) << "each call's own tokens";
  std::vector<Json> finished;
  for (const Json& rec : test::read_jsonl(cfg.log_path))
    if (rec["event"] == "finished") finished.push_back(rec);
  ASSERT_EQ(finished.size(), 2u);
  EXPECT_EQ(finished[1]["cost_usd"], 1.0) << "the session's cost so far, as claude prints it";
}

// Files in `dir` whose names end with `suffix` (none when `dir` is absent).
size_t files_ending(const std::string& dir, const std::string& suffix) {
  auto r = test::run_process({"find", dir, "-type", "f", "-name", "*" + suffix});
  size_t n = 0;
  for (char ch : r.out) n += ch == '\n';
  return n;
}

TEST_F(SimRuntime, CountersAndPromptFilesOnlyWhenTheScenarioNeedsThem) {
  std::string prompts = scratch / "run/bundles/b1/prompts";
  auto plain =
      make(R"({"default": {"result": {"status": "DONE", "summary": "s", "evidence": []}}})");
  ASSERT_TRUE(plain);
  Completion c = run_one(*plain, req("tester", "T1"));
  ASSERT_EQ(c.outcome, Outcome::result) << c.error;
  c = run_one(*plain, req("tester", "T1"));
  EXPECT_EQ(c.session_id, "sim-tester-T1-1");  // no counting: every launch is call 1
  EXPECT_EQ(files_ending(prompts, ".prompt.md"), 0u);
  EXPECT_EQ(files_ending(prompts + "/sim-state", ".count"), 0u);
  EXPECT_EQ(files_ending(prompts, ""), 0u);

  auto picky = make(R"({"personas": {"tester": [
      {"dispatch_contains": "Task T2", "result": {"status": "DONE", "summary": "saw T2", "evidence": []}},
      {"call": 2, "result": {"status": "DONE", "summary": "second", "evidence": []}},
      {"result": {"status": "DONE", "summary": "first", "evidence": []}}]}})");
  ASSERT_TRUE(picky);
  EXPECT_EQ(run_one(*picky, req("tester", "T1")).result["summary"], "first");
  EXPECT_EQ(run_one(*picky, req("tester", "T1")).result["summary"], "second");
  EXPECT_EQ(run_one(*picky, req("tester", "T2", "Task T2 of bundle b1")).result["summary"],
            "saw T2");
  EXPECT_EQ(files_ending(prompts, ".prompt.md"), 3u);
  EXPECT_GE(files_ending(prompts + "/sim-state", ""), 2u);  // counters for T1 and T2
}

TEST_F(SimRuntime, FailureModesTakeTheRealPaths) {
  auto rt = make(R"({
    "personas": {
      "developer": [
        {"task": "T1", "call": 1, "fail": "cli_error"},
        {"task": "T2", "fail": "malformed", "resume_result": {"status": "DONE", "summary": "late line", "evidence": []}},
        {"task": "T3", "fail": "junk"},
        {"task": "T4", "fail": "hang"},
        {"task": "T5", "call": 1, "fail": "flood", "flood_bytes": 4000000}
      ]
    }})");
  ASSERT_TRUE(rt);
  Completion c = run_one(*rt, req("developer", "T1"));
  EXPECT_EQ(c.outcome, Outcome::result) << c.error;
  EXPECT_EQ(c.attempts, 2);
  c = run_one(*rt, req("developer", "T2"));
  EXPECT_EQ(c.outcome, Outcome::result) << c.error;
  EXPECT_TRUE(c.resumed);
  EXPECT_EQ(c.result["summary"], "late line");
  c = run_one(*rt, req("developer", "T3"));
  EXPECT_EQ(c.outcome, Outcome::malformed_result);
  c = run_one(*rt, req("developer", "T5"));
  EXPECT_EQ(c.outcome, Outcome::result) << c.error;
  rt.reset();
  cfg.persona_timeout = 300ms;
  cfg.kill_grace = 100ms;
  rt = make(test::slurp(cfg.backend.sim_scenario));
  c = run_one(*rt, req("developer", "T4"));
  EXPECT_EQ(c.outcome, Outcome::timeout);
}

TEST_F(SimRuntime, UsageLimitFromTheSimPausesTheBackend) {
  cfg.max_pause = 1h;
  auto rt =
      make(R"({"personas": {"tester": [{"call": 1, "fail": "usage_limit", "reset_after_s": 1}]}})");
  ASSERT_TRUE(rt);
  ASSERT_TRUE(rt->launch(req("tester", "T1")).ok());
  bool paused = false;
  Completion last;
  while (auto ev = rt->next_event()) {
    if (ev->kind == RuntimeEvent::Kind::paused) paused = true;
    if (ev->completion) last = *ev->completion;
  }
  EXPECT_TRUE(paused);
  EXPECT_EQ(last.outcome, Outcome::result);
  EXPECT_EQ(last.attempts, 1);
}

TEST_F(SimRuntime, ABadScenarioIsRefusedUpFront) {
  test::write_text(cfg.backend.sim_scenario, R"({"personas": {"dev": {"fail": "explode"}}})");
  auto rt = PersonaRuntime::create(cfg);
  ASSERT_FALSE(rt.ok());
  EXPECT_NE(rt.error().message.find("explode"), std::string::npos);
}

TEST(SimAgentVerb, UsageErrorsExitTwo) {
  auto r = test::run_devgraph({"sim-agent", "--persona", "developer"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--scenario"), std::string::npos);
}

TEST(SimAgentVerb, TheLatencyCountsFromTheLaunchInstant) {
  test::Scratch s;
  const std::string scenario = s / "scenario.json";
  test::write_text(scenario, R"({"default": {"latency_ms": 3000,
    "result": {"status": "DONE", "summary": "s", "evidence": []}}})");
  timespec now{};
  ::clock_gettime(CLOCK_MONOTONIC, &now);
  const long long ns = static_cast<long long>(now.tv_sec) * 1000000000LL + now.tv_nsec;
  // Launched 2.9 s ago with 3 s of latency: about 0.1 s are left, far
  // below the 3 s a wait from the process's own start would take.
  const auto start = std::chrono::steady_clock::now();
  auto r = test::run_devgraph({"sim-agent", "--scenario", scenario, "--persona", "developer",
                               "--launched-at", std::to_string(ns - 2900000000LL)});
  const auto took = std::chrono::steady_clock::now() - start;
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("RESULT_JSON:"), std::string::npos);
  EXPECT_LT(took, 2s);
}

TEST(SimAgentVerb, ALaunchInstantThatIsNotANumberIsAUsageError) {
  test::Scratch s;
  const std::string scenario = s / "scenario.json";
  test::write_text(scenario, R"({"default": {"latency_ms": 1}})");
  for (const char* bad : {"soon", "-5", "12x", ""}) {
    auto r = test::run_devgraph(
        {"sim-agent", "--scenario", scenario, "--persona", "developer", "--launched-at", bad});
    EXPECT_EQ(r.exit_code, 2) << bad;
    EXPECT_NE(r.err.find("--launched-at"), std::string::npos) << r.err;
    EXPECT_EQ(r.out, "") << bad;
  }
}

}  // namespace
}  // namespace devgraph::agents
