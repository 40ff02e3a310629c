// RunStore in-process: every operation, every refusal (with the run left
// byte-for-byte unchanged), the event-log repair, and many processes
// mutating one run at once.
#include "store/run_store.h"

#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <set>

#include "store/event_log.h"
#include "support/test_util.h"

namespace devgraph {
namespace {

class FixedClock final : public Clock {
 public:
  std::chrono::system_clock::time_point wall() const override {
    return std::chrono::system_clock::time_point(std::chrono::seconds(1'790'000'000));
  }
  std::chrono::steady_clock::time_point steady() const override { return {}; }
};

const Graph& graph() {
  static const Graph g = [] {
    auto loaded = Graph::load(test::source_dir() + "/skill");
    if (!loaded) throw std::runtime_error(loaded.error().message);
    return std::move(loaded).value();
  }();
  return g;
}

const Schema& schema() {
  static const Schema s = [] {
    auto loaded = Schema::load(state_schema_path(test::source_dir() + "/skill"));
    if (!loaded) throw std::runtime_error(loaded.error().message);
    return std::move(loaded).value();
  }();
  return s;
}

std::vector<Json> events_of(const std::string& dir) {
  return test::read_jsonl(join_path(dir, kEventsFile));
}

class StoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = scratch_ / "runs/r1";
    store_ = std::make_unique<RunStore>(dir_, graph(), schema(), clock_);
    auto done = store_->init({"/repo", "main", Json()});
    ASSERT_TRUE(done.ok()) << done.error().message;
  }
  Json state() { return Json::parse(test::slurp(join_path(dir_, kStateFile))); }
  // The run's files, to prove a refusal changed nothing.
  std::string snapshot() {
    return test::slurp(join_path(dir_, kStateFile)) + "\n--\n" +
           test::slurp(join_path(dir_, kEventsFile));
  }
  void expect_refused(const Error& e, const std::string& needle, const std::string& before) {
    EXPECT_NE(e.message.find(needle), std::string::npos) << e.message;
    EXPECT_EQ(e.message.find('\n'), std::string::npos) << "one line: " << e.message;
    EXPECT_EQ(snapshot(), before);
  }
  MoveRequest task_move(const std::string& task, const std::string& node,
                        const std::string& event) {
    MoveRequest m;
    m.bundle = "B1";
    m.task = task;
    m.node = node;
    m.event = event;
    return m;
  }

  test::Scratch scratch_;
  FixedClock clock_;
  std::string dir_;
  std::unique_ptr<RunStore> store_;
};

TEST_F(StoreTest, InitWritesTheReferenceShapeAndOneEvent) {
  Json s = state();
  EXPECT_EQ(s["run_id"], "r1");
  EXPECT_EQ(s["node"], graph().entrypoint);
  EXPECT_EQ(s["graph_version"], graph().version);
  EXPECT_EQ(s["event_seq"], 1);
  EXPECT_EQ(s["updated_at"], "2026-09-21T14:13:20+00:00");
  EXPECT_EQ(s.begin().key(), "run_id");
  EXPECT_EQ((--s.end()).key(), "updated_at");
  auto ev = events_of(dir_);
  ASSERT_EQ(ev.size(), 1u);
  EXPECT_EQ(test::slurp(join_path(dir_, kEventsFile)),
            "{\"ts\": \"2026-09-21T14:13:20+00:00\", \"seq\": 1, \"type\": \"RUN_STARTED\", "
            "\"node\": \"scan\", \"detail\": {\"run_id\": \"r1\"}}\n");
  EXPECT_EQ(test::slurp(scratch_ / "current-run"), absolute_path(dir_) + "\n");
  // Python's json.dumps(indent=2) plus a newline.
  EXPECT_EQ(test::slurp(join_path(dir_, kStateFile)), dump_py(s, 2) + "\n");
}

TEST_F(StoreTest, InitRefusesAnExistingRun) {
  std::string before = snapshot();
  auto again = store_->init({"/other", "dev", Json()});
  ASSERT_FALSE(again.ok());
  expect_refused(again.error(), "already exists", before);
}

TEST_F(StoreTest, GoMovesTheOrchestratorAndMarksTerminalStatus) {
  auto done = store_->go({"bundle", "SCAN_DONE", Json(), Json{{"found", 2}}});
  ASSERT_TRUE(done.ok()) << done.error().message;
  Json s = state();
  EXPECT_EQ(s["node"], "bundle");
  EXPECT_EQ(s["previous_node"], "scan");
  EXPECT_EQ(s["completed_nodes"], Json::array({"scan"}));
  EXPECT_EQ(s["metrics"]["transitions"], 1);
  EXPECT_EQ(done->events.back()["detail"],
            (Json{{"from", "scan"}, {"to", "bundle"}, {"found", 2}}));
  ASSERT_TRUE(store_->go({"complete", "RUN_COMPLETE", Json(), Json()}).ok());
  EXPECT_EQ(state()["status"], "complete");
}

TEST_F(StoreTest, GoRefusesNodesOutsideTheOrchestratorLanes) {
  std::string before = snapshot();
  auto unknown = store_->go({"nowhere", "NOTE", Json(), Json()});
  ASSERT_FALSE(unknown.ok());
  expect_refused(unknown.error(), "not a node of the graph", before);
  auto task_node = store_->go({"implement", "NOTE", Json(), Json()});
  ASSERT_FALSE(task_node.ok());
  expect_refused(task_node.error(), "lane 'task'", before);
  auto clean = store_->go({"clean_discover", "NOTE", Json(), Json()});
  ASSERT_FALSE(clean.ok());
  expect_refused(clean.error(), "lane 'clean'", before);
  auto legacy = store_->go({"reconcile", "NOTE", Json(), Json()});
  ASSERT_FALSE(legacy.ok());
  expect_refused(legacy.error(), "retired", before);
  // Shared nodes, the pause node and the clean lane of a clean run are fine.
  EXPECT_TRUE(store_->go({"awaiting_human", "AWAITING_HUMAN", Json(), Json()}).ok());
  EXPECT_TRUE(store_->go({"handoff", "NOTE", Json(), Json()}).ok());
  ASSERT_TRUE(store_->event({"NOTE", Json(), Json{{"mode", "clean"}}}).ok());
  EXPECT_TRUE(store_->go({"clean_discover", "CLEAN_DISCOVERED", Json(), Json()}).ok());
}

TEST_F(StoreTest, RefusedInputChangesNothing) {
  std::string before = snapshot();
  auto bad_event = store_->event({"NOT_AN_EVENT", Json(), Json()});
  ASSERT_FALSE(bad_event.ok());
  expect_refused(bad_event.error(), "not in the vocabulary", before);
  auto schema_break = store_->go({"bundle", "SCAN_DONE", Json{{"round", 0}}, Json()});
  ASSERT_FALSE(schema_break.ok());
  expect_refused(schema_break.error(), "schema", before);
  auto cursor_write = store_->event({"NOTE", Json(), Json{{"tasks_runtime", Json::object()}}});
  ASSERT_FALSE(cursor_write.ok());
  expect_refused(cursor_write.error(), "may not write tasks_runtime", before);
  auto append_bad = store_->event({"NOTE", Json(), Json{{"+audit", 1}}});
  ASSERT_FALSE(append_bad.ok());
  expect_refused(append_bad.error(), "non-list key 'audit'", before);
  auto bad_id = store_->move(task_move("T1 abc", "write_tdd", "TASK_STARTED"));
  ASSERT_FALSE(bad_id.ok());
  expect_refused(bad_id.error(), "--task 'T1 abc' is not a valid id", before);
  auto not_object = store_->go({"bundle", "SCAN_DONE", Json::array(), Json()});
  ASSERT_FALSE(not_object.ok());
  expect_refused(not_object.error(), "--merge must be a JSON object", before);
  auto bad_plan = [&] {
    MoveRequest m = task_move("T1", "write_tdd", "TASK_STARTED");
    m.task.reset();
    m.node = "plan_bundle";
    m.plan_path = scratch_ / "missing-tasks.json";
    return store_->move(m);
  }();
  ASSERT_FALSE(bad_plan.ok());
  expect_refused(bad_plan.error(), "--plan", before);
}

TEST_F(StoreTest, MoveKeepsCursorsInTheirLanesAndCompletesOnTheGraphRule) {
  std::string before = snapshot();
  auto wrong_lane = store_->move(task_move("T1", "plan_bundle", "TASK_STARTED"));
  ASSERT_FALSE(wrong_lane.ok());
  expect_refused(wrong_lane.error(), "lane 'bundle'", before);
  MoveRequest bundle_into_task = task_move("T1", "implement", "NOTE");
  bundle_into_task.task.reset();
  auto b = store_->move(bundle_into_task);
  ASSERT_FALSE(b.ok());
  expect_refused(b.error(), "lane 'task'", before);

  MoveRequest start = task_move("T1", "write_tdd", "TASK_STARTED");
  start.merge = Json{{"base_commit", "abc123"}};
  auto moved = store_->move(start);
  ASSERT_TRUE(moved.ok()) << moved.error().message;
  Json rec = state()["tasks_runtime"]["B1/T1"];
  EXPECT_EQ(rec["base_commit"], "abc123");
  EXPECT_EQ(rec["status"], "active");
  EXPECT_EQ(rec["moves"], 1);
  EXPECT_EQ(moved->events.back()["detail"]["cursor"], "B1/T1");

  // At complete_at with another event: not complete.
  ASSERT_TRUE(store_->move(task_move("T1", "commit_task", "NOTE")).ok());
  EXPECT_EQ(state()["tasks_runtime"]["B1/T1"]["status"], "active");
  auto done = store_->move(task_move("T1", "commit_task", "TASK_COMMITTED"));
  ASSERT_TRUE(done.ok());
  EXPECT_EQ(state()["tasks_runtime"]["B1/T1"]["status"], "complete");
  EXPECT_EQ(done->events.back()["detail"]["cursor_complete"], true);
  // The shared lane parks a cursor for a human.
  ASSERT_TRUE(store_->move(task_move("T2", "awaiting_human", "AWAITING_HUMAN")).ok());
  EXPECT_EQ(state()["tasks_runtime"]["B1/T2"]["status"], "waiting_human");
  EXPECT_EQ(state()["node"], "scan");  // the orchestrator did not move
}

TEST_F(StoreTest, PlanRegistrationAndBundleCompletion) {
  test::write_text(scratch_ / "tasks.json",
                   R"({"tasks": [{"id": "T1", "title": "one", "files": ["a.c"]}, {"id": "T2",
                   "depends_on": ["T1"]}, {"title": "no id"}, {"id": "", "title": "empty id"}]})");
  MoveRequest plan = task_move("", "plan_bundle", "PLAN_DONE");
  plan.task.reset();
  plan.plan_path = scratch_ / "tasks.json";
  auto done = store_->move(plan);
  ASSERT_TRUE(done.ok()) << done.error().message;
  EXPECT_EQ(done->events.back()["detail"]["plan_tasks"], 2);
  Json s = state();
  EXPECT_EQ(s["bundles"][0]["id"], "B1");
  EXPECT_EQ(s["bundles"][0]["tasks"][1],
            (Json{{"id", "T2"}, {"title", ""}, {"depends_on", {"T1"}}, {"files", Json::array()}}));
  EXPECT_EQ(s["bundles_runtime"]["B1"]["task_count"], 2);
  MoveRequest pr = plan;
  pr.plan_path.reset();
  pr.node = "create_pr";
  pr.event = "BRANCH_READY";
  ASSERT_TRUE(store_->move(pr).ok());
  EXPECT_EQ(state()["bundles_runtime"]["B1"]["status"], "complete");
}

TEST_F(StoreTest, DispatchRulesAndHandleAttachment) {
  MoveRequest b = task_move("", "plan_bundle", "BUNDLE_STARTED");
  b.task.reset();
  ASSERT_TRUE(store_->move(b).ok());
  ASSERT_TRUE(store_->move(task_move("T1", "implement", "TASK_STARTED")).ok());
  std::string before = snapshot();
  auto no_handle = store_->event(
      {"PERSONA_DISPATCHED", Json{{"persona", "developer"}, {"bundle", "B1"}}, Json()});
  ASSERT_FALSE(no_handle.ok());
  expect_refused(no_handle.error(), "agent_handle", before);
  auto variant = store_->event(
      {"PERSONA_DISPATCHED", Json{{"persona", "developer-repair"}, {"agent_handle", "h"}}, Json()});
  ASSERT_FALSE(variant.ok());
  expect_refused(variant.error(), "is not one of", before);
  auto two_words =
      store_->event({"PERSONA_DISPATCHED",
                     Json{{"persona", "tester"}, {"agent_handle", "h"}, {"task", "T1 x"}}, Json()});
  ASSERT_FALSE(two_words.ok());
  expect_refused(two_words.error(), "'task' 'T1 x' is not a valid id", before);

  ASSERT_TRUE(
      store_
          ->event({"PERSONA_DISPATCHED",
                   Json{{"persona", "tech-lead"}, {"agent_handle", "tl-1"}, {"bundle", "B1"}},
                   Json()})
          .ok());
  ASSERT_TRUE(store_
                  ->event({"PERSONA_DISPATCHED",
                           Json{{"persona", "developer"},
                                {"agent_handle", "dev-1"},
                                {"bundle", "B1"},
                                {"task", "T1"}},
                           Json()})
                  .ok());
  // An empty task names no task: the handle goes on the bundle cursor.
  ASSERT_TRUE(store_
                  ->event({"PERSONA_DISPATCHED",
                           Json{{"persona", "code-reviewer"},
                                {"agent_handle", "cr-1"},
                                {"bundle", "B1"},
                                {"task", ""}},
                           Json()})
                  .ok());
  Json s = state();
  EXPECT_EQ(s["bundles_runtime"]["B1"]["agent_handles"]["code-reviewer"], "cr-1");
  EXPECT_EQ(s["bundles_runtime"]["B1"]["tech_lead_handle"], "tl-1");
  EXPECT_EQ(s["bundles_runtime"]["B1"]["tech_lead_generation"], 1);
  EXPECT_EQ(s["tasks_runtime"]["B1/T1"]["agent_handles"]["developer"], "dev-1");
}

TEST_F(StoreTest, OlderRunsKeepTheirOwnVocabulary) {
  ASSERT_TRUE(store_->event({"NOTE", Json(), Json{{"graph_version", 3}}}).ok());
  EXPECT_TRUE(store_->event({"IMPROVISED_EVENT", Json(), Json()}).ok());
  EXPECT_TRUE(store_
                  ->event({"PERSONA_DISPATCHED",
                           Json{{"persona", "developer-repair"}, {"agent_handle", "h"}}, Json()})
                  .ok());
}

TEST_F(StoreTest, DeepMergeAppendsAndMergesNestedObjects) {
  ASSERT_TRUE(store_
                  ->event({"NOTE", Json(),
                           Json{{"+concerns", Json{{"task", "T1"}}},
                                {"audit", Json{{"marker", "abc"}}},
                                {"commands", Json{{"test", "make test"}}}}})
                  .ok());
  ASSERT_TRUE(store_
                  ->event({"NOTE", Json(),
                           Json{{"+concerns", Json::array({Json{{"task", "T2"}}})},
                                {"commands", Json{{"build", "make"}}}}})
                  .ok());
  Json s = state();
  EXPECT_EQ(s["concerns"].size(), 2u);
  EXPECT_EQ(s["concerns"][1]["task"], "T2");
  EXPECT_EQ(s["commands"], (Json{{"test", "make test"}, {"build", "make"}}));
  EXPECT_EQ(s["audit"]["marker"], "abc");
}

TEST_F(StoreTest, SignalTiersComeFromTheGraphAndOnlyChangesAreEvents) {
  const auto& red = graph().capacity.tiers.back();
  const long long yellow_results = graph().capacity.tiers.front().limits.at("result");
  auto first = store_->signal({"result", yellow_results - 1, std::nullopt, false});
  ASSERT_TRUE(first.ok());
  EXPECT_EQ(first->report["tier"], "green");
  EXPECT_TRUE(first->committed.events.empty());
  auto second = store_->signal({"result", 1, std::nullopt, false});
  ASSERT_TRUE(second.ok());
  EXPECT_EQ(second->report["tier"], graph().capacity.tiers.front().name);
  ASSERT_EQ(second->committed.events.size(), 1u);
  EXPECT_EQ(second->committed.events[0]["type"], "CAPACITY_TIER_CHANGED");
  EXPECT_EQ(second->report["action"], graph().capacity.actions.at(second->report["tier"]));
  auto to_red = store_->signal({"tool_call", red.limits.at("tool_call"), std::nullopt, false});
  ASSERT_TRUE(to_red.ok());
  EXPECT_EQ(to_red->report["tier"], red.name);
  auto reset = store_->signal({"turn", 0, std::nullopt, true});
  ASSERT_TRUE(reset.ok());
  EXPECT_EQ(reset->report["generation"], 2);
  EXPECT_EQ(reset->report["tier"], "green");

  std::string before = snapshot();
  auto no_cursor = store_->signal({"turn", 1, std::string("B9"), false});
  ASSERT_FALSE(no_cursor.ok());
  expect_refused(no_cursor.error(), "has no cursor yet", before);
  auto negative = store_->signal({"turn", -1, std::nullopt, false});
  ASSERT_FALSE(negative.ok());
  expect_refused(negative.error(), "--count", before);
  auto kind = store_->signal({"tokens", 1, std::nullopt, false});
  ASSERT_FALSE(kind.ok());
  expect_refused(kind.error(), "--type", before);

  MoveRequest b = task_move("", "plan_bundle", "BUNDLE_STARTED");
  b.task.reset();
  ASSERT_TRUE(store_->move(b).ok());
  auto lead = store_->signal({"turn", 3, std::string("B1"), false});
  ASSERT_TRUE(lead.ok());
  EXPECT_EQ(state()["bundles_runtime"]["B1"]["capacity"]["counters"]["turn"], 3);
}

TEST_F(StoreTest, HandoffAndResume) {
  ASSERT_TRUE(store_->go({"bundle_scheduler", "BUNDLES_FORMED", Json(), Json()}).ok());
  MoveRequest b = task_move("", "task_scheduler", "BUNDLE_STARTED");
  b.task.reset();
  ASSERT_TRUE(store_->move(b).ok());
  ASSERT_TRUE(store_->move(task_move("T1", "verify", "IMPLEMENT_DONE")).ok());
  auto h = store_->handoff("red tier");
  ASSERT_TRUE(h.ok()) << h.error().message;
  Json s = state();
  EXPECT_EQ(s["status"], "handoff");
  EXPECT_EQ(s["node"], "handoff");
  EXPECT_EQ(s["handoff"]["resume_node"], "bundle_scheduler");
  EXPECT_EQ(h->handoff_path, join_path(absolute_path(dir_), "HANDOFF.md"));
  std::string md = test::slurp(h->handoff_path);
  for (const char* part :
       {"## Done", "## In flight", "## Blocked", "## Next up", "## Pull requests",
        "devgraph checkpoint", "resume", "`B1` on `task_scheduler`", "T1"})
    EXPECT_NE(md.find(part), std::string::npos) << part;

  auto r = store_->resume();
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->summary["node"], "bundle_scheduler");
  EXPECT_EQ(r->summary["from_status"], "handoff");
  EXPECT_EQ(r->summary["generation"], 2);
  EXPECT_EQ(r->summary["in_flight"][0]["bundle"], "B1");
  s = state();
  EXPECT_EQ(s["status"], "running");
  EXPECT_TRUE(s["handoff"].is_null());
  EXPECT_EQ(s["last_handoff"]["reason"], "red tier");

  ASSERT_TRUE(store_->go({"complete", "RUN_COMPLETE", Json(), Json()}).ok());
  std::string before = snapshot();
  auto late = store_->handoff("again");
  ASSERT_FALSE(late.ok());
  expect_refused(late.error(), "already complete", before);
  auto late_resume = store_->resume();
  ASSERT_FALSE(late_resume.ok());
  expect_refused(late_resume.error(), "terminal run", before);
}

TEST_F(StoreTest, ResumeMovesARetiredNodeToItsSuccessor) {
  // A run written under an older graph may stand on a legacy node.
  ASSERT_TRUE(store_
                  ->transact([](Transaction& t) {
                    t.state()["node"] = "reconcile";
                    return t.append_event("NOTE", Json());
                  })
                  .ok());
  auto r = store_->resume();
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->summary["node"], *graph().legacy_target("reconcile"));
}

TEST_F(StoreTest, GhostEventsAndTornLinesAreCutOnTheNextTransaction) {
  ASSERT_TRUE(store_->go({"bundle", "SCAN_DONE", Json(), Json()}).ok());
  const std::string events = join_path(dir_, kEventsFile);
  std::string good = test::slurp(events);
  // A writer died after appending (seq 3 never reached state.json) and
  // another mid-line.
  test::write_text(events, good +
                               "{\"ts\": \"x\", \"seq\": 3, \"type\": \"NOTE\", \"node\": "
                               "\"bundle\", \"detail\": {}}\n{\"ts\": \"x\", \"se");
  ASSERT_TRUE(store_->event({"NOTE", Json{{"n", 1}}, Json()}).ok());
  auto ev = events_of(dir_);
  ASSERT_EQ(ev.size(), 3u);
  for (size_t i = 0; i < ev.size(); ++i) EXPECT_EQ(ev[i]["seq"], static_cast<long long>(i + 1));
  EXPECT_EQ(ev[2]["detail"]["n"], 1);
  EXPECT_EQ(state()["event_seq"], 3);
}

TEST(EventLog, RepairLooksPastManyGhostsAndKeepsAShortLog) {
  test::Scratch scratch;
  const std::string path = scratch / "events.jsonl";
  std::string text;
  for (int i = 1; i <= 400; ++i)
    text += event_line(make_event("t", i, "NOTE", "scan", Json{{"pad", std::string(40, 'x')}}));
  test::write_text(path, text);
  auto r = repair_event_log(path, 100);  // 300 ghosts: wider than one read window
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(r->truncated());
  std::string kept = test::slurp(path);
  EXPECT_EQ(std::count(kept.begin(), kept.end(), '\n'), 100);
  EXPECT_EQ(Json::parse(kept.substr(kept.rfind('\n', kept.size() - 2) + 1))["seq"], 100);
  // A log shorter than the state (another writer lost lines) is left alone.
  auto short_log = repair_event_log(path, 150);
  ASSERT_TRUE(short_log.ok());
  EXPECT_FALSE(short_log->truncated());
  // No event_seq (an old state): nothing to compare against.
  EXPECT_FALSE(repair_event_log(path, std::nullopt)->truncated());
  // State at seq 0: every line is a ghost.
  EXPECT_EQ(repair_event_log(path, 0)->size_after, 0u);
}

TEST_F(StoreTest, DamagedStateIsAnErrorNotACrash) {
  const std::string path = join_path(dir_, kStateFile);
  test::write_text(path, "{\"run_id\": ");
  auto r = store_->go({"bundle", "SCAN_DONE", Json(), Json()});
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("not valid JSON"), std::string::npos);
  test::write_text(path, "[1, 2]");
  EXPECT_FALSE(store_->event({"NOTE", Json(), Json()}).ok());
  Json s = Json::parse(R"({"run_id": "r1", "repo": "/r", "default_branch": "main", "node": 5,
                          "round": 1, "bundles": [], "prs": [], "event_seq": 1,
                          "completed_nodes": "oops", "tasks_runtime": []})");
  test::write_text(path, dump_py(s, 2));
  EXPECT_FALSE(store_->go({"bundle", "SCAN_DONE", Json(), Json()}).ok());
  EXPECT_FALSE(store_->move(task_move("T1", "implement", "NOTE")).ok());
  RunStore missing(scratch_ / "runs/none", graph(), schema(), clock_);
  auto m = missing.go({"bundle", "SCAN_DONE", Json(), Json()});
  ASSERT_FALSE(m.ok());
  EXPECT_NE(m.error().message.find("no such run"), std::string::npos);
  EXPECT_FALSE(path_exists(scratch_ / "runs/none"));
}

// Leaving the cursor maps unparsed (deferred_state.h) must not change a
// single byte of what any operation writes, nor any refusal.
TEST(StoreDeferred, EveryOperationWritesTheSameBytesWithAndWithoutDeferral) {
  test::Scratch scratch;
  FixedClock clock;
  const std::string full_dir = scratch / "full/runs/r1";
  const std::string lazy_dir = scratch / "lazy/runs/r1";
  RunStore full(full_dir, graph(), schema(), clock);
  RunStore lazy(lazy_dir, graph(), schema(), clock);
  lazy.defer_cursor_maps(true);
  ASSERT_TRUE(full.init({"/repo", "main", Json()}).ok());
  ASSERT_TRUE(lazy.init({"/repo", "main", Json()}).ok());
  test::write_text(scratch / "tasks.json",
                   R"({"tasks": [{"id": "T1", "files": ["a.c"]}, {"id": "T2"}]})");

  auto files = [](const std::string& dir) {
    return test::slurp(join_path(dir, kStateFile)) + "\n--\n" +
           test::slurp(join_path(dir, kEventsFile));
  };
  auto same = [&](const auto& op, const std::string& what) {
    auto a = op(full);
    auto b = op(lazy);
    ASSERT_EQ(a.ok(), b.ok()) << what;
    if (!a.ok()) {
      EXPECT_EQ(a.error().message, b.error().message) << what;
    }
    EXPECT_EQ(files(full_dir), files(lazy_dir)) << what;
  };
  auto move = [](std::string bundle, std::optional<std::string> task, std::string node,
                 std::string event, Json merge = Json(), Json detail = Json()) {
    return [=](RunStore& st) {
      MoveRequest m;
      m.bundle = bundle;
      m.task = task;
      m.node = node;
      m.event = event;
      m.merge = merge;
      m.detail = detail;
      return st.move(m);
    };
  };
  for (int b = 0; b < 3; ++b) {
    const std::string bundle = "B" + std::to_string(b);
    same(move(bundle, std::nullopt, "plan_bundle", "BUNDLE_STARTED"), "bundle start");
    for (int t = 0; t < 4; ++t)
      same(move(bundle, "T" + std::to_string(t), "write_tdd", "TASK_STARTED",
                Json{{"base_commit", "abc"}, {"+notes", Json::array({"n"})}}),
           "task start");
  }
  same(
      [&](RunStore& st) {
        MoveRequest m;
        m.bundle = "B1";
        m.node = "task_scheduler";
        m.event = "PLAN_DONE";
        m.plan_path = scratch / "tasks.json";
        return st.move(m);
      },
      "plan registration");
  same(move("B1", "T2", "implement", "TESTS_WRITTEN", Json{{"nested", Json{{"a", 1}}}}),
       "move with merge");
  same(move("B1", "T2", "implement", "NOT_AN_EVENT"), "refused event");
  same(move("B1", "T2", "final_review", "TESTS_WRITTEN"), "node outside the lane");
  same(move("B1", "T9", "write_tdd", "TASK_STARTED"), "new cursor among deferred ones");
  same(
      [](RunStore& st) {
        return st.event({"PERSONA_DISPATCHED",
                         Json{{"persona", "developer"},
                              {"agent_handle", "dev-1"},
                              {"bundle", "B2"},
                              {"task", "T3"}},
                         Json()});
      },
      "dispatch attaches a handle to a deferred record");
  same(
      [](RunStore& st) {
        return st.event({"PERSONA_DISPATCHED",
                         Json{{"persona", "tech-lead"}, {"agent_handle", "tl"}, {"bundle", "B0"}},
                         Json{{"+concerns", Json::array({"c"})}}});
      },
      "tech lead handle and a state merge");
  same([](RunStore& st) { return st.go({"discover", "SCAN_DONE", Json(), Json()}); }, "go");
  for (int i = 0; i < 3; ++i)
    same(
        [](RunStore& st) {
          SignalRequest sig;
          sig.type = "tool_call";
          sig.count = 400;
          sig.bundle = "B1";
          auto out = st.signal(sig);
          return out.ok() ? Expected<Committed>(out->committed) : Expected<Committed>(out.error());
        },
        "bundle signal");
  same(
      [](RunStore& st) {
        SignalRequest sig;
        sig.type = "tool_call";
        sig.bundle = "B7";
        auto out = st.signal(sig);
        return out.ok() ? Expected<Committed>(out->committed) : Expected<Committed>(out.error());
      },
      "signal for a bundle without a cursor");
  same(move("B0", "T0", "verify", "IMPLEMENT_DONE", Json{{"tasks_runtime", 1}}), "odd merge key");
}

// A one-shot command trusts only the state.json devgraph wrote itself (the
// note in .lock names it). A file anyone else changed is parsed and checked
// whole, so a damaged record the command does not touch is refused, as the
// reference refuses it, and nothing changes.
TEST(StoreDeferred, OnlyTheStateDevgraphWroteIsReadWithoutAFullCheck) {
  test::Scratch scratch;
  FixedClock clock;
  const std::string dir = scratch / "runs/r1";
  const std::string path = join_path(dir, kStateFile);
  const std::string lock = join_path(dir, kLockFile);
  RunStore lazy(dir, graph(), schema(), clock);
  lazy.defer_cursor_maps(true);
  ASSERT_TRUE(lazy.init({"/repo", "main", Json()}).ok());
  auto move = [&](const std::string& task, const std::string& node, const std::string& event) {
    MoveRequest m;
    m.bundle = "B1";
    m.task = task;
    m.node = node;
    m.event = event;
    return lazy.move(m);
  };
  ASSERT_TRUE(move("T1", "write_tdd", "TASK_STARTED").ok());
  ASSERT_TRUE(move("T2", "write_tdd", "TASK_STARTED").ok());
  auto id = file_identity(path);
  ASSERT_TRUE(id.ok());
  EXPECT_EQ(test::slurp(lock), written_state_note(*id, schema()));

  const std::string good = test::slurp(path);
  // `good` with `from` replaced by `to` inside T2's record.
  auto in_t2 = [&](const std::string& from, const std::string& to) {
    std::string text = good;
    const size_t at = text.find(from, text.find("\"B1/T2\": {"));
    EXPECT_NE(at, std::string::npos) << from;
    return text.replace(at, from.size(), to);
  };
  auto files = [&] {
    return test::slurp(path) + "\n--\n" + test::slurp(join_path(dir, kEventsFile));
  };

  // Not JSON in a record the move does not touch.
  test::write_text(path, in_t2("\"moves\": 1", "\"moves\": bogus"));
  std::string before = files();
  auto r = move("T1", "implement", "TDD_DONE");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("not valid JSON"), std::string::npos) << r.error().message;
  EXPECT_EQ(files(), before);

  // JSON, but against the schema.
  test::write_text(path, in_t2("\"status\": \"active\"", "\"status\": \"lost\""));
  before = files();
  r = move("T1", "implement", "TDD_DONE");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("schema"), std::string::npos) << r.error().message;
  EXPECT_EQ(files(), before);

  // Valid, in another layout (one line, an escaped key): the move writes
  // the whole file back in the canonical one, as the reference would.
  std::string other = good;
  const size_t start = other.find("\"B1/T2\": {");
  const size_t end = other.find("\n    }", start) + 6;
  Json t2 = Json::parse("{" + other.substr(start, end - start) + "}");
  other.replace(start, end - start, "\"B1\\/T2\": " + t2["B1/T2"].dump());
  test::write_text(path, other);
  ASSERT_TRUE(move("T1", "implement", "TDD_DONE").ok());
  const std::string after = test::slurp(path);
  EXPECT_EQ(after, dump_py(Json::parse(after), 2) + "\n");
  EXPECT_EQ(Json::parse(after)["tasks_runtime"]["B1/T2"], t2["B1/T2"]);
  id = file_identity(path);
  ASSERT_TRUE(id.ok());
  EXPECT_EQ(test::slurp(lock), written_state_note(*id, schema()));

  // The note alone grants the trust: a damaged record in the file it names
  // is not looked at (that is what keeps a move's cost flat), and is
  // copied as it is.
  test::write_text(path, in_t2("\"moves\": 1", "\"moves\": bogus"));
  id = file_identity(path);
  ASSERT_TRUE(id.ok());
  test::write_text(lock, written_state_note(*id, schema()));
  ASSERT_TRUE(move("T1", "implement", "TDD_DONE").ok());
  EXPECT_NE(test::slurp(path).find("\"moves\": bogus"), std::string::npos);

  // The same note means nothing to a store with another schema, even one
  // that differs from this one only in a space: it parses and checks the
  // file whole, finds the damaged record and changes nothing.
  std::string edited = test::slurp(state_schema_path(test::source_dir() + "/skill"));
  edited.insert(edited.rfind('}'), " ");
  ASSERT_TRUE(write_file_atomic(scratch / "edited.schema.json", edited).ok());
  auto spaced = Schema::load(scratch / "edited.schema.json");
  ASSERT_TRUE(spaced.ok());
  EXPECT_NE(spaced->fingerprint(), schema().fingerprint());
  RunStore strict(dir, graph(), *spaced, clock);
  strict.defer_cursor_maps(true);
  before = files();
  MoveRequest m;
  m.bundle = "B1";
  m.task = "T1";
  m.node = "verify";
  m.event = "IMPLEMENT_DONE";
  r = strict.move(m);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("not valid JSON"), std::string::npos) << r.error().message;
  EXPECT_EQ(files(), before);
}

TEST(StoreHelpers, IdsAndJsonFlags) {
  EXPECT_TRUE(is_valid_id("T1"));
  EXPECT_TRUE(is_valid_id("b-2.x_y"));
  EXPECT_FALSE(is_valid_id(""));
  EXPECT_FALSE(is_valid_id("-T1"));
  EXPECT_FALSE(is_valid_id("T2 a18a3a58"));
  EXPECT_FALSE(is_valid_id("B/T"));
  EXPECT_EQ(*parse_json_object("", "merge"), Json::object());
  EXPECT_FALSE(parse_json_object("[1]", "merge").ok());
  auto bad = parse_json_object("{oops", "detail");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().message.rfind("--detail is not valid JSON", 0), 0u);
}

// A directory on a RAM file system when the machine has one. The heavy
// tests run thousands of transactions; what they prove (the lock, the write
// order under SIGKILL) does not depend on the disk, and fsync there is free.
TempDir ram_dir() {
  const char* old = std::getenv("TMPDIR");
  const std::string saved = old ? old : "";
  if (is_directory("/dev/shm") && ::access("/dev/shm", W_OK) == 0)
    ::setenv("TMPDIR", "/dev/shm", 1);
  auto dir = TempDir::create("devgraph-store");
  if (saved.empty()) {
    ::unsetenv("TMPDIR");
  } else {
    ::setenv("TMPDIR", saved.c_str(), 1);
  }
  if (!dir) throw std::runtime_error(dir.error().message);
  return std::move(dir).value();
}

// Eight processes, each moving its own task cursor 200 times through the
// store at the same time: no update may be lost and the log stays
// contiguous.
TEST_F(StoreTest, ConcurrentWritersLoseNothing) {
  TempDir ram = ram_dir();
  dir_ = join_path(ram.path(), "r1");
  store_ = std::make_unique<RunStore>(dir_, graph(), schema(), clock_);
  ASSERT_TRUE(store_->init({"/repo", "main", Json()}).ok());
  constexpr int kProcs = 8;
  constexpr int kMoves = 200;
  std::vector<pid_t> pids;
  for (int p = 0; p < kProcs; ++p) {
    pid_t pid = ::fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      RunStore mine(dir_, graph(), schema(), clock_);
      for (int i = 0; i < kMoves; ++i) {
        MoveRequest m =
            task_move("T" + std::to_string(p), i % 2 ? "verify" : "implement", "IMPLEMENT_DONE");
        if (!mine.move(m).ok()) ::_exit(1);
      }
      ::_exit(0);
    }
    pids.push_back(pid);
  }
  for (pid_t pid : pids) {
    int status = 0;
    ASSERT_EQ(::waitpid(pid, &status, 0), pid);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  }
  Json s = state();
  for (int p = 0; p < kProcs; ++p)
    EXPECT_EQ(s["tasks_runtime"]["B1/T" + std::to_string(p)]["moves"], kMoves);
  EXPECT_EQ(s["metrics"]["transitions"], kProcs * kMoves);
  auto ev = events_of(dir_);
  ASSERT_EQ(ev.size(), static_cast<size_t>(kProcs * kMoves + 1));
  for (size_t i = 0; i < ev.size(); ++i) ASSERT_EQ(ev[i]["seq"], static_cast<long long>(i + 1));
  EXPECT_EQ(s["event_seq"], kProcs * kMoves + 1);
}

}  // namespace
}  // namespace devgraph
