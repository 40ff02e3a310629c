// The orchestrator in process: a real RunStore in a temporary directory,
// initialised as `devgraph run` does, and fakes for everything else (the
// issue source, the primary clone's queries, git's worktree add, and a
// driver pool whose drivers answer at once as scripted). Each test walks
// the orchestrator lane from scan to its end and asserts on state.json,
// events.jsonl and the fakes' records; every run it leaves, finished or
// parked, replays against the graph without a problem (`validate run`).
#include "orchestrator/orchestrator.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <csignal>

#include "bundle/layout.h"
#include "inbox/inbox.h"
#include "lane/lane.h"
#include "replay/replay.h"
#include "support/fake_driver_pool.h"
#include "support/fake_git.h"
#include "support/fake_issue_source.h"
#include "support/fake_repo_queries.h"
#include "support/shipped.h"
#include "support/test_util.h"

namespace devgraph::orchestrator {
namespace {

using Answer = test::FakeDriverPool::Answer;

class OrchestratorRun : public ::testing::Test {
 protected:
  test::Scratch s;
  Graph graph = test::shipped_graph();
  Schema schema = test::shipped_state_schema();
  RunStore store{s / "run", graph, schema};
  git::FakeGit git{s / "repo"};
  test::FakeRepoQueries repo;
  test::FakeIssueSource source;
  test::FakeDriverPool pool{store, graph};
  test::RecordingCrashPoints crash;
  std::vector<std::string> lines;
  OrchestratorConfig cfg;
  // The wake-ups asked for sooner than intake's periodic one.
  static std::vector<SteadyTime> backoffs(const test::FakeDriverPool& p) {
    std::vector<SteadyTime> out;
    auto horizon = std::chrono::steady_clock::now() + std::chrono::hours(1);
    for (auto w : p.wakes)
      if (w < horizon) out.push_back(w);
    return out;
  }

  // The run as run_setup.cpp opens a fresh one for local issues.
  void SetUp() override {
    InitRequest init;
    init.repo = "owner/widgets";
    init.default_branch = "main";
    init.merge =
        Json{{"delivery", "local"},
             {"merge_policy", "never"},
             {"commands", {{"test", "make test"}, {"build", "make"}, {"source", "commands.json"}}},
             {"intake", {{"issues", "local"}, {"label", Json()}}}};
    auto c = store.init(init);
    ASSERT_TRUE(c.ok()) << c.error().message;
    cfg.delivery = "local";
    cfg.default_branch = "main";
    cfg.base = "main";
    cfg.policy.every_open_issue = true;
    cfg.policy.label = graph.intake.label;
    cfg.policy.epic_label = graph.intake.epic_label;
    cfg.max_bundles = 2;
    // Intake's own periodic look is a day away, so every wake-up asked for
    // sooner is a back-off or a watch period (backoffs()).
    cfg.intake_every = std::chrono::hours(24);
    cfg.worktree_for = [this](const std::string& branch) { return s / ("worktrees/" + branch); };
    cfg.driver_for = [this](const std::string& bundle) {
      DriverSpec d;
      d.bundle = bundle;
      d.argv = {"devgraph", "run-bundle", store.run_dir(), "--bundle", bundle};
      d.cwd = store.run_dir();
      return d;
    };
    cfg.on_line = [this](const std::string& l) { lines.push_back(l); };
  }

  Outcome run(test::FakeDriverPool& drivers) {
    OrchestratorParts parts{store, graph, git, repo, source, drivers, crash};
    Orchestrator o(cfg, parts);
    return o.run();
  }

  void file(long long number, const std::string& title, const std::string& body = "") {
    issues::Issue i;
    i.number = number;
    i.title = title;
    i.body = body.empty() ? "Do " + title + "." : body;
    source.issues.push_back(i);
  }

  Json state() {
    auto st = store.read();
    EXPECT_TRUE(st.ok()) << st.error().message;
    return st ? *st : Json::object();
  }

  Json entry(const std::string& bundle) {
    Json st = state();
    for (const auto& b : st["bundles"])
      if (json_str(b, "id") == bundle) return b;
    ADD_FAILURE() << "no bundle " << bundle;
    return Json::object();
  }

  Json cursor(const std::string& bundle) {
    Json st = state();
    if (!st.contains("bundles_runtime") || !st["bundles_runtime"].contains(bundle))
      return Json::object();
    return st["bundles_runtime"][bundle];
  }

  std::vector<Json> events() { return test::read_jsonl(store.run_dir() + "/" + kEventsFile); }

  std::vector<Json> events_of(const std::string& type) {
    std::vector<Json> out;
    for (const auto& e : events())
      if (json_str(e, "type") == type) out.push_back(e);
    return out;
  }

  // Where the event of `type` (about `bundle`, when given) stands in the log.
  long long seq_of(const std::string& type, const std::string& bundle = "") {
    for (const auto& e : events())
      if (json_str(e, "type") == type &&
          (bundle.empty() || json_str(e["detail"], "bundle") == bundle))
        return e["seq"].get<long long>();
    ADD_FAILURE() << "no " << type << " " << bundle << " in the log";
    return -1;
  }

  // The orchestrator's nodes in log order (each event names the node the
  // orchestrator stands on after it), repeats folded.
  std::vector<std::string> nodes() {
    std::vector<std::string> out;
    for (const auto& e : events()) {
      std::string n = json_str(e, "node");
      if (out.empty() || out.back() != n) out.push_back(n);
    }
    return out;
  }

  // The routes the orchestrator took, in order.
  std::vector<std::string> routes() {
    std::vector<std::string> out;
    for (const auto& e : events())
      if (e["detail"].is_object() && e["detail"].contains("route"))
        out.push_back(json_str(e["detail"], "route"));
    return out;
  }

  bool said(const std::string& part) {
    return std::any_of(lines.begin(), lines.end(),
                       [&](const std::string& l) { return l.find(part) != std::string::npos; });
  }

  void expect_delivered(const std::string& bundle) {
    Json e = entry(bundle);
    EXPECT_EQ(json_str(e, "status"), "delivered") << dump_py(e);
    Json c = cursor(bundle);
    EXPECT_EQ(json_str(c, "node"), graph.lane("bundle")->complete_at) << dump_py(c);
    EXPECT_EQ(json_str(c, "status"), "complete") << dump_py(c);
    EXPECT_EQ(json_str(e, "head"), json_str(c, "head"));
  }

  // `devgraph validate run`: the log replays against the graph and agrees
  // with state.json.
  void expect_replays_clean() {
    auto r = replay_run_dir(graph, store.run_dir());
    ASSERT_TRUE(r.ok()) << r.error().message;
    std::string all;
    for (const auto& p : r->problems) all += p + "\n";
    EXPECT_TRUE(r->problems.empty()) << all;
  }

  std::string scheduler() {
    return lane::Walker(graph).node_of_type("orchestrator", "scheduler").value_or("");
  }
};

TEST_F(OrchestratorRun, ThreeIssuesTwoAtATimeAreAllDeliveredAndTheRunCompletes) {
  file(1, "alpha");
  file(2, "beta");
  file(3, "gamma");
  Outcome o = run(pool);
  EXPECT_EQ(o.exit_code, kExitComplete) << dump_py(o.result);
  EXPECT_EQ(json_str(o.result, "status"), "COMPLETE");
  EXPECT_EQ(pool.max_live, 2u);
  ASSERT_EQ(pool.started.size(), 3u);
  EXPECT_EQ(pool.log, (std::vector<std::string>{"start b1", "start b2", "exit b1", "start b3",
                                                "exit b2", "exit b3"}));
  for (const char* b : {"b1", "b2", "b3"}) expect_delivered(b);
  Json st = state();
  EXPECT_EQ(json_str(st, "status"), "complete");
  EXPECT_EQ(json_str(st, "node"), "complete");
  // Each issue's ready branch is recorded on it.
  for (long long n : {1, 2, 3}) {
    std::string id = "b" + std::to_string(n);
    EXPECT_EQ(source.find(n)->branch.value_or(""), json_str(entry(id), "branch"));
  }
  EXPECT_EQ(source.count("record_delivery"), 3u);
  // Each worktree is added on its branch from the base.
  ASSERT_EQ(git.worktrees_added.size(), 3u);
  EXPECT_EQ(git.worktrees_added[0], s / "worktrees/develop/b1-alpha" + " develop/b1-alpha main");
  EXPECT_EQ(nodes(),
            (std::vector<std::string>{"scan", "bundle", "bundle_scheduler", "monitor_prs",
                                      "cleanup_merged", "audit_merged", "scan", "complete"}));
  EXPECT_EQ(routes(), (std::vector<std::string>{"actionable", "next", "all_bundles_complete",
                                                "next", "next", "no_findings", "empty"}));
  EXPECT_EQ(events_of("TECH_LEAD_DONE").size(), 3u);
  ASSERT_EQ(events_of("RUN_COMPLETE").size(), 1u);
  EXPECT_EQ(json_str(events().back(), "type"), "RUN_COMPLETE");
  ASSERT_EQ(o.result["bundles"].size(), 3u);
  for (const auto& b : o.result["bundles"]) EXPECT_EQ(json_str(b, "status"), "delivered");
  EXPECT_TRUE(pool.watching);
  for (const char* name : {"worktree:b1", "driver:b1", "result:b1", "driver:b3"})
    EXPECT_NE(std::find(crash.names.begin(), crash.names.end(), name), crash.names.end()) << name;
  expect_replays_clean();
}

// The store as run_setup.cpp opens it for the orchestrator: every decision
// reads the run through its cached view, so the whole-file parses of a run
// do not grow with its bundles (a decision that read state.json whole
// would add several per bundle).
TEST_F(OrchestratorRun, ARunsWholeStateParsesDoNotGrowWithItsBundles) {
  store.cache_reads(true);
  store.defer_cursor_maps(true);
  for (long long n = 1; n <= 12; ++n) file(n, "item " + std::to_string(n));
  const size_t before = store.whole_parses();
  Outcome o = run(pool);
  ASSERT_EQ(o.exit_code, kExitComplete) << dump_py(o.result);
  for (long long n = 1; n <= 12; ++n) expect_delivered("b" + std::to_string(n));
  // The first read, and the after-delivery round's one transaction that
  // takes the whole state.
  EXPECT_LE(store.whole_parses() - before, 4u);
  expect_replays_clean();
}

TEST_F(OrchestratorRun, ADriverThatDiesWithoutAResultIsRelaunchedWithinItsBudgetThenParked) {
  file(1, "alpha");
  file(2, "beta");
  file(3, "gamma");
  pool.script = [](const std::string& bundle, int) -> std::optional<Answer> {
    if (bundle == "b2") return Answer::killed(SIGKILL);
    return std::nullopt;
  };
  int budget = lane::Walker(graph).max_retries(scheduler());
  ASSERT_EQ(budget, graph.defaults.max_retries) << "bundle_scheduler sets no max_retries";
  ASSERT_GT(budget, 0);
  Outcome o = run(pool);
  EXPECT_EQ(o.exit_code, kExitHumanRequired) << dump_py(o.result);
  EXPECT_EQ(json_str(o.result, "status"), "HUMAN_REQUIRED");
  EXPECT_EQ(pool.launches("b2"), budget + 1);
  EXPECT_EQ(pool.launches("b1"), 1);
  EXPECT_EQ(pool.launches("b3"), 1);
  expect_delivered("b1");
  expect_delivered("b3");
  Json b2 = entry("b2");
  EXPECT_EQ(json_str(b2, "status"), "parked");
  std::string why = json_str(b2, "parked_reason");
  EXPECT_NE(why.find("killed by signal 9"), std::string::npos) << why;
  EXPECT_NE(why.find(std::to_string(budget + 1) + " times"), std::string::npos) << why;
  EXPECT_EQ(b2.value("driver_restarts", 0), budget + 1);
  ASSERT_EQ(o.result["human_required"].size(), 1u);
  EXPECT_EQ(json_str(o.result["human_required"][0], "bundle"), "b2");
  EXPECT_EQ(json_str(o.result["human_required"][0], "reason"), why);
  // Each relaunch is recorded with its count, then the park.
  std::vector<long long> restarts;
  for (const auto& e : events_of("NOTE"))
    if (json_str(e["detail"], "bundle") == "b2" && e["detail"].contains("restart"))
      restarts.push_back(e["detail"]["restart"].get<long long>());
  std::vector<long long> want;
  for (long long i = 1; i <= budget; ++i) want.push_back(i);
  EXPECT_EQ(restarts, want);
  EXPECT_GT(seq_of("TECH_LEAD_BLOCKED", "b2"), 0);
  Json st = state();
  EXPECT_EQ(json_str(st, "status"), "human_required");
  EXPECT_EQ(json_str(st, "node"), "human_required");
  EXPECT_EQ(json_str(events().back(), "type"), "HUMAN_REQUIRED");
  EXPECT_EQ(source.count("record_delivery 2"), 0u);
  expect_replays_clean();
}

TEST_F(OrchestratorRun, ARunReopenedByAnAnswerRecordsEachTimeItStopsForAPerson) {
  file(1, "alpha");
  pool.script = [](const std::string&, int) -> std::optional<Answer> {
    return Answer::killed(SIGKILL);
  };
  Outcome first = run(pool);
  ASSERT_EQ(first.exit_code, kExitHumanRequired) << dump_py(first.result);
  ASSERT_EQ(events_of("HUMAN_REQUIRED").size(), 1u);

  // A person answers the parked bundle: the run is reopened at its
  // scheduler and the bundle relaunched, which dies again.
  auto items = inbox::items_of_run(state(), store.run_dir());
  ASSERT_EQ(items.size(), 1u);
  auto answered = inbox::answer(store, graph, items[0], inbox::AnswerKind::text, "try again");
  ASSERT_TRUE(answered.ok()) << answered.error().message;
  ASSERT_TRUE(answered->reopened);
  test::FakeDriverPool again{store, graph, pool.script};
  Outcome second = run(again);
  EXPECT_EQ(second.exit_code, kExitHumanRequired) << dump_py(second.result);
  EXPECT_EQ(again.launches("b1"), 1);  // the answer bought one more attempt
  EXPECT_EQ(json_str(state(), "status"), "human_required");
  EXPECT_EQ(events_of("HUMAN_REQUIRED").size(), 2u);
  EXPECT_EQ(json_str(events().back(), "type"), "HUMAN_REQUIRED");
  expect_replays_clean();
}

TEST_F(OrchestratorRun, AParkedDriversReasonCarriesTheLastLineOfItsStderr) {
  file(1, "alpha");
  pool.script = [](const std::string&, int) -> std::optional<Answer> {
    return Answer::exited(1, "starting\nfatal: the worktree is gone\n");
  };
  Outcome o = run(pool);
  EXPECT_EQ(o.exit_code, kExitHumanRequired) << dump_py(o.result);
  std::string why = json_str(entry("b1"), "parked_reason");
  EXPECT_NE(why.find("exited 1 without a result"), std::string::npos) << why;
  EXPECT_NE(why.find("fatal: the worktree is gone"), std::string::npos) << why;
  EXPECT_EQ(why.find("starting"), std::string::npos) << why;
  expect_replays_clean();
}

TEST_F(OrchestratorRun, ABlockedDriverParksItsBundleWithItsSummary) {
  file(1, "alpha");
  file(2, "beta");
  pool.script = [](const std::string& bundle, int) -> std::optional<Answer> {
    if (bundle == "b1")
      return Answer::result(Json{{"status", "BLOCKED"}, {"summary", "the spec contradicts itself"}},
                            2);
    return std::nullopt;
  };
  Outcome o = run(pool);
  EXPECT_EQ(o.exit_code, kExitHumanRequired) << dump_py(o.result);
  EXPECT_EQ(pool.launches("b1"), 1);
  EXPECT_EQ(json_str(entry("b1"), "status"), "parked");
  EXPECT_EQ(json_str(entry("b1"), "parked_reason"), "the spec contradicts itself");
  expect_delivered("b2");
  expect_replays_clean();
}

TEST_F(OrchestratorRun, ADriverThatHandsOffIsRelaunchedAndResumes) {
  file(1, "alpha");
  pool.script = [](const std::string&, int launch) -> std::optional<Answer> {
    if (launch == 1)
      return Answer::result(Json{{"status", "HANDOFF"}, {"summary", "capacity: orange"}}, 0);
    return std::nullopt;
  };
  Outcome o = run(pool);
  EXPECT_EQ(o.exit_code, kExitComplete) << dump_py(o.result);
  EXPECT_EQ(pool.launches("b1"), 2);
  auto handoffs = events_of("TECH_LEAD_HANDOFF");
  ASSERT_EQ(handoffs.size(), 1u);
  EXPECT_EQ(handoffs[0]["detail"]["restart"], 1);
  expect_delivered("b1");
  expect_replays_clean();
}

TEST_F(OrchestratorRun, AnIssueClosedWhileItsBundleWaitsForASlotStopsItUnstarted) {
  cfg.max_bundles = 1;
  file(1, "alpha");
  file(2, "beta");
  pool.script = [this](const std::string& bundle, int) -> std::optional<Answer> {
    if (bundle != "b1") return std::nullopt;
    Answer a = Answer::done();
    a.during = [this] { source.find(2)->state = "closed"; };
    return a;
  };
  Outcome o = run(pool);
  EXPECT_EQ(o.exit_code, kExitComplete) << dump_py(o.result);
  EXPECT_EQ(pool.max_live, 1u);
  EXPECT_EQ(pool.launches("b2"), 0);
  EXPECT_TRUE(pool.stopped.empty());
  EXPECT_EQ(json_str(entry("b2"), "status"), "stopped");
  EXPECT_TRUE(cursor("b2").empty());
  expect_replays_clean();
}

TEST_F(OrchestratorRun, AScanClosesALocalIssueWhoseReadyBranchAPersonMerged) {
  file(1, "alpha");
  source.find(1)->branch = "develop/b1-alpha";
  source.find(1)->head = "abc123";
  repo.reachable.insert({"abc123", "main"});
  file(2, "beta");
  source.find(2)->branch = "develop/b2-beta";
  source.find(2)->head = "def456";  // not merged: waits for a person to merge it
  file(3, "gamma");
  Outcome o = run(pool);
  EXPECT_EQ(o.exit_code, kExitComplete) << dump_py(o.result);
  EXPECT_EQ(source.find(1)->state, "closed");
  EXPECT_EQ(source.find(1)->close_reason, "merged into main");
  EXPECT_EQ(source.find(2)->state, "open");
  // Neither delivered issue is work again; the new one is.
  Json st = state();
  ASSERT_EQ(st["bundles"].size(), 1u);
  EXPECT_EQ(st["bundles"][0]["issues"], Json::array({3}));
  expect_replays_clean();
}

TEST_F(OrchestratorRun, WithGithubDeliveryEachScanFetchesAndThePullRequestIsRecorded) {
  // A fresh run whose delivery is github.
  test::Scratch other;
  RunStore github{other / "run", graph, schema};
  InitRequest init;
  init.repo = "owner/widgets";
  init.default_branch = "main";
  init.merge = Json{{"delivery", "github"}, {"merge_policy", "never"}};
  ASSERT_TRUE(github.init(init).ok());
  cfg.delivery = "github";
  cfg.base = "origin/main";
  cfg.policy.every_open_issue = false;
  source.source_kind = "github";
  file(1, "alpha");
  source.find(1)->labels = {"devgraph"};
  repo.fetch_failures = {fail(ErrorKind::transient, "could not resolve host")};
  Json pr = {{"number", 7}, {"url", "https://github.invalid/owner/widgets/pull/7"}};
  test::FakeDriverPool drivers{
      github, graph, [&](const std::string&, int) {
        Answer a = Answer::result(Json{{"status", "DONE"}, {"head", "abc"}, {"pr", pr}}, 0);
        return std::optional<Answer>(a);
      }};
  OrchestratorParts parts{github, graph, git, repo, source, drivers, crash};
  Outcome o = Orchestrator(cfg, parts).run();
  EXPECT_EQ(o.exit_code, kExitComplete) << dump_py(o.result);
  EXPECT_EQ(repo.count("fetch_prune"), 3u);  // a retried failure, then one per scan
  EXPECT_EQ(backoffs(drivers).size(), 1u);
  auto st = github.read();
  ASSERT_TRUE(st.ok());
  const Json& b1 = (*st)["bundles"][0];
  EXPECT_EQ(json_str(b1, "status"), "delivered");
  EXPECT_EQ(b1["pr"]["number"], 7);
  EXPECT_EQ(json_str((*st)["bundles_runtime"]["b1"], "status"), "complete");
  EXPECT_EQ(source.count("record_delivery"), 1u);  // a no-op on GitHub, asked all the same
  EXPECT_NE(run_summary(o.result).find("pull/7"), std::string::npos) << run_summary(o.result);
  auto r = replay_run_dir(graph, github.run_dir());
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(r->problems.empty());
}

TEST_F(OrchestratorRun, AnIssueFiledWhileABundleRunsBecomesANewBundleBeforeCompletion) {
  file(1, "alpha");
  pool.script = [this](const std::string& bundle, int) -> std::optional<Answer> {
    if (bundle != "b1") return std::nullopt;
    Answer a = Answer::done();
    a.during = [this] { file(2, "beta"); };
    return a;
  };
  Outcome o = run(pool);
  EXPECT_EQ(o.exit_code, kExitComplete) << dump_py(o.result);
  expect_delivered("b1");
  expect_delivered("b2");
  EXPECT_EQ(entry("b2")["issues"], Json::array({2}));
  auto intake = events_of("INTAKE_DONE");
  ASSERT_EQ(intake.size(), 1u);
  EXPECT_EQ(json_str(intake[0]["detail"], "route"), "new_work");
  auto formed = events_of("BUNDLES_FORMED");
  ASSERT_EQ(formed.size(), 2u);
  EXPECT_EQ(formed[1]["detail"]["bundles"], Json::array({"b2"}));
  EXPECT_LT(seq_of("TECH_LEAD_DONE", "b1"), seq_of("INTAKE_DONE"));
  EXPECT_LT(seq_of("INTAKE_DONE"), formed[1]["seq"].get<long long>());
  EXPECT_LT(seq_of("TECH_LEAD_DONE", "b2"), seq_of("RUN_COMPLETE"));
  EXPECT_EQ(nodes(), (std::vector<std::string>{"scan", "bundle", "bundle_scheduler", "bundle",
                                               "bundle_scheduler", "monitor_prs", "cleanup_merged",
                                               "audit_merged", "scan", "complete"}));
  expect_replays_clean();
}

TEST_F(OrchestratorRun, AnIssueClosedMidRunStopsItsBundle) {
  file(1, "alpha");
  file(2, "beta");
  pool.script = [this](const std::string& bundle, int) -> std::optional<Answer> {
    if (bundle != "b1") return std::nullopt;
    Answer a = Answer::done();
    a.during = [this] { source.find(2)->state = "closed"; };
    return a;
  };
  Outcome o = run(pool);
  EXPECT_EQ(o.exit_code, kExitComplete) << dump_py(o.result);
  expect_delivered("b1");
  EXPECT_EQ(pool.stopped, std::vector<std::string>{"b2"});
  EXPECT_EQ(pool.launches("b2"), 1);
  Json b2 = entry("b2");
  EXPECT_EQ(json_str(b2, "status"), "stopped");
  EXPECT_NE(json_str(b2, "stopped_reason").find("#2"), std::string::npos) << dump_py(b2);
  EXPECT_NE(json_str(cursor("b2"), "status"), "complete");
  EXPECT_EQ(source.count("record_delivery 2"), 0u);
  EXPECT_EQ(events_of("TECH_LEAD_DONE").size(), 1u);
  for (const auto& b : o.result["bundles"])
    if (json_str(b, "id") == "b2") {
      EXPECT_EQ(json_str(b, "status"), "stopped");
    }
  expect_replays_clean();
}

TEST_F(OrchestratorRun, AnIssueThatLosesTheIntakeLabelStopsItsBundle) {
  cfg.policy.every_open_issue = false;
  file(1, "alpha");
  file(2, "beta");
  for (auto& i : source.issues) i.labels = {"DevGraph"};
  pool.script = [this](const std::string& bundle, int) -> std::optional<Answer> {
    if (bundle != "b1") return std::nullopt;
    Answer a = Answer::done();
    a.during = [this] { source.find(2)->labels = {"bug"}; };
    return a;
  };
  Outcome o = run(pool);
  EXPECT_EQ(o.exit_code, kExitComplete) << dump_py(o.result);
  EXPECT_EQ(pool.stopped, std::vector<std::string>{"b2"});
  EXPECT_EQ(json_str(entry("b2"), "status"), "stopped");
  expect_replays_clean();
}

TEST_F(OrchestratorRun, AnIssueEditedMidRunRewritesItsBundlesSpec) {
  file(1, "alpha");
  file(2, "beta", "Old text.");
  pool.script = [this](const std::string& bundle, int) -> std::optional<Answer> {
    if (bundle != "b1") return std::nullopt;
    Answer a = Answer::done();
    a.during = [this] { source.find(2)->body = "New text: export CSV as well."; };
    return a;
  };
  std::string spec = bundle::BundleLayout{store.run_dir(), "b2", ""}.spec();
  Outcome o = run(pool);
  EXPECT_EQ(o.exit_code, kExitComplete) << dump_py(o.result);
  std::string text = test::slurp(spec);
  EXPECT_NE(text.find("New text: export CSV as well."), std::string::npos) << text;
  EXPECT_EQ(text.find("Old text."), std::string::npos) << text;
  EXPECT_NE(text.find("DATA_START"), std::string::npos) << text;
  bool noted = false;
  for (const auto& e : events_of("NOTE"))
    if (json_str(e["detail"], "bundle") == "b2" && e["detail"].value("issue_edited", 0LL) == 2)
      noted = true;
  EXPECT_TRUE(noted);
  EXPECT_EQ(json_str(entry("b2")["issue_digests"], "2"), issue_digest(*source.find(2)));
  EXPECT_TRUE(said("issue #2 was edited"));
  // b1's spec, whose issue did not change, is as it was formed.
  EXPECT_EQ(test::slurp(bundle::BundleLayout{store.run_dir(), "b1", ""}.spec()).find("New text"),
            std::string::npos);
  expect_delivered("b2");
  expect_replays_clean();
}

TEST_F(OrchestratorRun, IssueSourceFailuresAreRetriedOnTheLoopAndTheRunCompletes) {
  file(1, "alpha");
  source.open_failures = {fail(ErrorKind::transient, "gh: connection reset"),
                          fail(ErrorKind::timeout, "gh: timed out")};
  Outcome o = run(pool);
  EXPECT_EQ(o.exit_code, kExitComplete) << dump_py(o.result);
  expect_delivered("b1");
  auto waits = backoffs(pool);
  ASSERT_EQ(waits.size(), 2u);
  // The back-off doubles: the second wait is asked for later and is longer.
  EXPECT_GE(waits[1] - waits[0], cfg.source_backoff);
  EXPECT_EQ(std::vector<std::string>(pool.log.begin(), pool.log.begin() + 2),
            (std::vector<std::string>{"wake", "wake"}));
  EXPECT_TRUE(said("listing issues failed (gh: connection reset)"));
  EXPECT_TRUE(said("listing issues failed (gh: timed out)"));
  expect_replays_clean();
}

TEST_F(OrchestratorRun, AnIssueSourceFailureThatDoesNotClearIsAnError) {
  file(1, "alpha");
  cfg.source_attempts = 3;
  for (int i = 0; i < 3; ++i)
    source.open_failures.push_back(fail(ErrorKind::transient, "gh: connection reset"));
  Outcome o = run(pool);
  EXPECT_EQ(o.exit_code, kExitError) << dump_py(o.result);
  EXPECT_EQ(json_str(o.result, "status"), "ERROR");
  EXPECT_NE(json_str(o.result, "summary").find("listing issues"), std::string::npos);
  EXPECT_EQ(backoffs(pool).size(), 2u);
  EXPECT_TRUE(pool.started.empty());
  EXPECT_EQ(json_str(state(), "node"), "scan");
  expect_replays_clean();
}

TEST_F(OrchestratorRun, AnIssueSourceFailureOfAKindNotRetriedIsAnErrorAtOnce) {
  file(1, "alpha");
  source.open_failures = {fail(ErrorKind::internal, "gh: unexpected output")};
  Outcome o = run(pool);
  EXPECT_EQ(o.exit_code, kExitError) << dump_py(o.result);
  EXPECT_TRUE(backoffs(pool).empty());
  EXPECT_EQ(source.count("open_issues"), 1u);
}

TEST_F(OrchestratorRun, AStopSignalStopsEveryDriverParksTheRunAndASuccessorResumesIt) {
  file(1, "alpha");
  file(2, "beta");
  pool.on_wait = [this](int call) {
    if (call != 1) return;
    EXPECT_EQ(pool.live(), 2u);
    pool.raise(SIGTERM);
  };
  Outcome o = run(pool);
  EXPECT_EQ(o.exit_code, kExitSignalBase + SIGTERM) << dump_py(o.result);
  EXPECT_EQ(json_str(o.result, "status"), "HANDOFF");
  EXPECT_EQ(pool.stopped, (std::vector<std::string>{"b1", "b2"}));
  EXPECT_EQ(pool.live(), 0u);
  Json st = state();
  EXPECT_EQ(json_str(st, "status"), "handoff");
  EXPECT_EQ(json_str(st, "node"), "handoff");
  EXPECT_EQ(events_of("TECH_LEAD_HANDOFF").size(), 2u);
  EXPECT_EQ(events_of("HANDOFF_WRITTEN").size(), 1u);
  std::string first = lane::Walker(graph).lane_nodes("bundle").front();
  for (const char* b : {"b1", "b2"}) {
    EXPECT_EQ(json_str(cursor(b), "node"), first) << b;
    EXPECT_EQ(json_str(entry(b), "status"), "pending") << b;  // unfinished; the cursor says running
  }
  EXPECT_EQ(source.count("record_delivery"), 0u);
  expect_replays_clean();

  // The next `devgraph run` resumes the run and relaunches both drivers.
  auto resumed = store.resume();
  ASSERT_TRUE(resumed.ok()) << resumed.error().message;
  test::FakeDriverPool successor{store, graph};
  Outcome again = run(successor);
  EXPECT_EQ(again.exit_code, kExitComplete) << dump_py(again.result);
  ASSERT_EQ(successor.started.size(), 2u);
  EXPECT_EQ(successor.started[0].bundle, "b1");
  EXPECT_EQ(successor.started[1].bundle, "b2");
  EXPECT_TRUE(said("driver relaunched for b1"));
  EXPECT_TRUE(said("driver relaunched for b2"));
  expect_delivered("b1");
  expect_delivered("b2");
  EXPECT_EQ(json_str(state(), "status"), "complete");
  expect_replays_clean();
}

TEST_F(OrchestratorRun, ADeliveryThatExitsAsTheStopIsSentIsStillRecorded) {
  file(1, "alpha");
  file(2, "beta");
  pool.script = [](const std::string& bundle, int) -> std::optional<Answer> {
    if (bundle != "b1") return std::nullopt;
    Answer a = Answer::done();
    a.finished_before_stop = true;
    return a;
  };
  pool.on_wait = [this](int call) {
    if (call == 1) pool.raise(SIGTERM);
  };
  Outcome o = run(pool);
  EXPECT_EQ(o.exit_code, kExitSignalBase + SIGTERM) << dump_py(o.result);
  EXPECT_EQ(pool.stopped, (std::vector<std::string>{"b1", "b2"}));
  expect_delivered("b1");
  EXPECT_EQ(source.count("record_delivery 1"), 1u);
  EXPECT_EQ(events_of("TECH_LEAD_HANDOFF").size(), 1u);  // b2's
  EXPECT_EQ(json_str(state(), "status"), "handoff");
  expect_replays_clean();
}

TEST_F(OrchestratorRun, AStopSignalDuringTheIssueSourcesBackOffStillStopsTheRunningDrivers) {
  file(1, "alpha");
  file(2, "beta");
  // b1 delivers; the look after it fails, and a stop arrives during the
  // back-off while b2 still runs.
  pool.script = [this](const std::string& bundle, int) -> std::optional<Answer> {
    if (bundle != "b1") return std::nullopt;
    Answer a = Answer::done();
    a.during = [this] {
      source.open_failures.push_back(fail(ErrorKind::transient, "gh: connection reset"));
    };
    return a;
  };
  pool.on_wait = [this](int) {
    if (backoffs(pool).size() == 1 && pool.log.back() == "exit b1") pool.raise(SIGINT);
  };
  Outcome o = run(pool);
  EXPECT_EQ(o.exit_code, kExitSignalBase + SIGINT) << dump_py(o.result);
  expect_delivered("b1");
  EXPECT_EQ(pool.stopped, std::vector<std::string>{"b2"});
  EXPECT_EQ(pool.live(), 0u);
  EXPECT_EQ(events_of("TECH_LEAD_HANDOFF").size(), 1u);
  Json st = state();
  EXPECT_EQ(json_str(st, "status"), "handoff");
  EXPECT_EQ(json_str(st, "node"), "handoff");
  expect_replays_clean();
}

TEST_F(OrchestratorRun, AnEmptyFirstScanCompletesAtOnce) {
  Outcome o = run(pool);
  EXPECT_EQ(o.exit_code, kExitComplete) << dump_py(o.result);
  EXPECT_EQ(json_str(o.result, "status"), "COMPLETE");
  EXPECT_TRUE(o.result["bundles"].empty());
  EXPECT_TRUE(pool.started.empty());
  EXPECT_EQ(pool.waits, 0);
  EXPECT_EQ(nodes(), (std::vector<std::string>{"scan", "complete"}));
  EXPECT_EQ(routes(), std::vector<std::string>{"empty"});
  auto scan = events_of("SCAN_DONE");
  ASSERT_EQ(scan.size(), 1u);
  EXPECT_TRUE(scan[0]["detail"]["work"].empty());
  EXPECT_EQ(json_str(state(), "status"), "complete");
  EXPECT_NE(run_summary(o.result).find("no work"), std::string::npos);
  expect_replays_clean();
}

TEST_F(OrchestratorRun, OnlyIneligibleIssuesCompleteAtOnceSayingWhy) {
  cfg.policy.every_open_issue = false;
  file(1, "unlabelled");
  Outcome o = run(pool);
  EXPECT_EQ(o.exit_code, kExitComplete) << dump_py(o.result);
  auto scan = events_of("SCAN_DONE");
  ASSERT_EQ(scan.size(), 1u);
  ASSERT_EQ(scan[0]["detail"]["excluded"].size(), 1u);
  EXPECT_EQ(scan[0]["detail"]["excluded"][0]["issue"], 1);
  expect_replays_clean();
}

TEST_F(OrchestratorRun, AFinishedRunAskedAgainAnswersItsEndAndRecordsNothingMore) {
  file(1, "alpha");
  ASSERT_EQ(run(pool).exit_code, kExitComplete);
  size_t before = events().size();
  test::FakeDriverPool again{store, graph};
  Outcome o = run(again);
  EXPECT_EQ(o.exit_code, kExitComplete) << dump_py(o.result);
  EXPECT_EQ(json_str(o.result, "status"), "COMPLETE");
  EXPECT_EQ(events().size(), before);
  EXPECT_TRUE(again.started.empty());
}

TEST_F(OrchestratorRun, WatchingAnEmptyScanWaitsScansAgainAndAStopDuringTheWaitEndsIt) {
  cfg.watch = std::chrono::minutes(5);
  pool.on_wait = [this](int call) {
    if (call == 2) pool.raise(SIGTERM);
  };
  Outcome o = run(pool);
  EXPECT_EQ(o.exit_code, kExitSignalBase + SIGTERM) << dump_py(o.result);
  EXPECT_EQ(source.count("open_issues"), 2u);
  EXPECT_EQ(backoffs(pool).size(), 2u);
  EXPECT_EQ(pool.log, (std::vector<std::string>{"wake", "signal 15"}));
  EXPECT_TRUE(pool.started.empty());
  EXPECT_TRUE(events_of("SCAN_DONE").empty());
  EXPECT_TRUE(events_of("RUN_COMPLETE").empty());
  Json st = state();
  EXPECT_EQ(json_str(st, "status"), "handoff");
  EXPECT_EQ(json_str(st, "node"), "handoff");
  EXPECT_EQ(json_str(st["handoff"], "resume_node"), "scan");
  EXPECT_TRUE(said("looking again in 300 s"));
  expect_replays_clean();
}

TEST_F(OrchestratorRun, WatchingPicksUpAnIssueFiledDuringTheWait) {
  cfg.watch = std::chrono::seconds(30);
  pool.on_wait = [this](int call) {
    if (call == 1) file(1, "alpha");
    if (call > 1 && pool.live() == 0) pool.raise(SIGTERM);
  };
  Outcome o = run(pool);
  EXPECT_EQ(o.exit_code, kExitSignalBase + SIGTERM) << dump_py(o.result);
  expect_delivered("b1");
  EXPECT_EQ(json_str(state(), "status"), "handoff");
  expect_replays_clean();
}

}  // namespace
}  // namespace devgraph::orchestrator
