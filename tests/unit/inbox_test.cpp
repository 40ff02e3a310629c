// The inbox (src/inbox/inbox.h): which cursors and bundles wait for a
// person, read from hand-built states; and the answer, on a real RunStore
// with the shipped graph, replayed afterwards by `validate run`'s replay.
#include "inbox/inbox.h"

#include <fcntl.h>
#include <sys/stat.h>

#include <gtest/gtest.h>

#include "bundle/answer.h"
#include "bundle/budget.h"
#include "replay/replay.h"
#include "support/shipped.h"
#include "support/test_util.h"

namespace devgraph::inbox {
namespace {

Json waiting_cursor(const std::string& bundle, const std::optional<std::string>& task,
                    const std::string& why, const std::string& at) {
  return Json{{"bundle", bundle},          {"task", task ? Json(*task) : Json()},
              {"node", "awaiting_human"},  {"previous_node", "blocker_recovery"},
              {"status", "waiting_human"}, {"moves", 4},
              {"updated_at", at},          {"recovery_why", why}};
}

Json state_with(Json bundles, Json bundles_runtime, Json tasks_runtime) {
  return Json{{"run_id", "r1"},
              {"status", "running"},
              {"node", "bundle_scheduler"},
              {"bundles", std::move(bundles)},
              {"bundles_runtime", std::move(bundles_runtime)},
              {"tasks_runtime", std::move(tasks_runtime)}};
}

void set_mtime(const std::string& path, long seconds) {
  struct timespec times[2] = {{seconds, 0}, {seconds, 0}};
  ASSERT_EQ(::utimensat(AT_FDCWD, path.c_str(), times, 0), 0) << path;
}

std::vector<std::string> keys(const std::vector<Item>& items) {
  std::vector<std::string> out;
  for (const auto& i : items) out.push_back(i.key);
  return out;
}

TEST(InboxItems, WaitingTaskAndBundleCursorsAreItemsWithTheirReasonsSortedByKey) {
  test::Scratch s;
  Json state = state_with(
      Json::array({{{"id", "b1"}, {"status", "running"}}, {{"id", "b2"}, {"status", "running"}}}),
      Json{{"b1", {{"bundle", "b1"}, {"node", "task_scheduler"}, {"status", "active"}}},
           {"b2", waiting_cursor("b2", std::nullopt, "code-reviewer: cannot read the diff",
                                 "2026-01-02T00:00:00+00:00")}},
      Json{{"b1/T2",
            waiting_cursor("b1", "T2", "developer: flaky tool", "2026-01-01T00:00:00+00:00")},
           {"b1/T1",
            {{"bundle", "b1"}, {"task", "T1"}, {"node", "implement"}, {"status", "active"}}}});
  auto items = items_of_run(state, s / "run");
  ASSERT_EQ(keys(items), (std::vector<std::string>{"b1/T2", "b2"}));
  EXPECT_EQ(items[0].run_id, "r1");
  EXPECT_EQ(items[0].run_dir, s / "run");
  EXPECT_EQ(items[0].bundle, "b1");
  EXPECT_EQ(items[0].task, "T2");
  EXPECT_EQ(items[0].reason, "developer: flaky tool");
  EXPECT_EQ(items[0].since, "2026-01-01T00:00:00+00:00");
  EXPECT_NE(items[0].question.find("b1/T2"), std::string::npos) << items[0].question;
  EXPECT_EQ(items[0].evidence, "");  // nothing on disk yet
  EXPECT_EQ(items[1].task, std::nullopt);
  EXPECT_EQ(items[1].reason, "code-reviewer: cannot read the diff");
}

TEST(InboxItems, EvidenceIsTheNewestTellingFileAndTheQuestionIsWhatItsPersonaAsked) {
  test::Scratch s;
  bundle::BundleLayout layout{s / "run", "b1", ""};
  ASSERT_TRUE(make_directories(layout.task_dir("T1")).ok());
  test::write_text(layout.log(), "{}\n");
  test::write_text(layout.task_findings("T1"), "off by one\n");
  set_mtime(layout.task_findings("T1"), 1000);
  test::write_text(layout.result("tdd-writer", "T1"),
                   dump_py(Json{{"node", "write_tdd"},
                                {"result",
                                 {{"status", "NEEDS_CONTEXT"},
                                  {"missing_context", Json::array({"the colour of the moon"})}}}}));
  set_mtime(layout.result("tdd-writer", "T1"), 2000);
  Json state =
      state_with(Json::array(), Json::object(),
                 Json{{"b1/T1", waiting_cursor("b1", "T1", "tdd-writer: which moon?", "t")}});
  auto items = items_of_run(state, s / "run");
  ASSERT_EQ(items.size(), 1u);
  EXPECT_EQ(items[0].evidence, layout.result("tdd-writer", "T1"));
  EXPECT_EQ(items[0].question, "tdd-writer asks for: the colour of the moon");
  // Findings written after the last result are the more telling file.
  set_mtime(layout.task_findings("T1"), 3000);
  items = items_of_run(state, s / "run");
  EXPECT_EQ(items[0].evidence, layout.task_findings("T1"));
  // A task with nothing of its own points at the bundle's log.
  ASSERT_TRUE(remove_tree(layout.task_dir("T1")).ok());
  items = items_of_run(state, s / "run");
  EXPECT_EQ(items[0].evidence, layout.log());
}

TEST(InboxItems, AParkedBundleWhoseCursorsDoNotWaitIsAnItemWithItsParkedReason) {
  test::Scratch s;
  Json state =
      state_with(Json::array({{{"id", "b1"},
                               {"status", "parked"},
                               {"parked_reason", "the driver died 3 times"},
                               {"parked_at", "2026-01-03T00:00:00+00:00"}},
                              {{"id", "b2"}, {"status", "parked"}, {"parked_reason", "BLOCKED"}}}),
                 Json{{"b1", {{"bundle", "b1"}, {"node", "final_review"}, {"status", "active"}}}},
                 Json{{"b2/T1", waiting_cursor("b2", "T1", "developer: flaky tool", "t")}});
  auto items = items_of_run(state, s / "run");
  // b2's waiting task is the item; the parked entry does not repeat it.
  ASSERT_EQ(keys(items), (std::vector<std::string>{"b1", "b2/T1"}));
  EXPECT_EQ(items[0].reason, "the driver died 3 times");
  EXPECT_EQ(items[0].since, "2026-01-03T00:00:00+00:00");
}

TEST(InboxItems, RejectedDeliveredAndStoppedBundlesHaveNoItems) {
  test::Scratch s;
  Json tasks = Json::object();
  Json entries = Json::array();
  for (const char* status : {"rejected", "delivered", "stopped"}) {
    std::string b = std::string("b_") + status;
    entries.push_back({{"id", b}, {"status", status}});
    tasks[b + "/T1"] = waiting_cursor(b, "T1", "why", "t");
  }
  EXPECT_TRUE(items_of_run(state_with(entries, Json::object(), tasks), s / "run").empty());
}

TEST(InboxItems, CursorKeysThatAreNotIdsAreNoItems) {
  test::Scratch s;
  Json tasks = {{"b1/../../x", waiting_cursor("b1", "../../x", "why", "t")}};
  EXPECT_TRUE(items_of_run(state_with(Json::array(), Json::object(), tasks), s / "run").empty());
}

TEST(InboxList, LiveRunsNewestFirstAndNoOthers) {
  test::Scratch s;
  auto write_run = [&](const std::string& id, const std::string& status,
                       const std::string& started) {
    Json st = state_with(Json::array(), Json::object(),
                         Json{{"b1/T1", waiting_cursor("b1", "T1", "why " + id, "t")}});
    st["run_id"] = id;
    st["status"] = status;
    st["started_at"] = started;
    ASSERT_TRUE(make_directories(s / ("home/runs/" + id)).ok());
    test::write_text(s / ("home/runs/" + id + "/state.json"), dump_py(st, 2));
  };
  write_run("old", "human_required", "2026-01-01T00:00:00+00:00");
  write_run("new", "running", "2026-02-01T00:00:00+00:00");
  write_run("paused", "handoff", "2026-01-15T00:00:00+00:00");
  write_run("done", "complete", "2026-03-01T00:00:00+00:00");
  ASSERT_TRUE(make_directories(s / "home/runs/empty").ok());
  auto items = list_items(s / "home");
  ASSERT_TRUE(items.ok()) << items.error().message;
  std::vector<std::string> runs;
  for (const auto& i : *items) runs.push_back(i.run_id);
  EXPECT_EQ(runs, (std::vector<std::string>{"new", "paused", "old"}));
  auto none = list_items(s / "nowhere");
  ASSERT_TRUE(none.ok());
  EXPECT_TRUE(none->empty());
}

TEST(InboxKey, BundleOrBundleAndTaskAndNothingElse) {
  auto k = parse_key("b1/T2");
  ASSERT_TRUE(k.ok());
  EXPECT_EQ(k->bundle, "b1");
  EXPECT_EQ(k->task, "T2");
  EXPECT_EQ(parse_key("b1")->task, std::nullopt);
  for (const char* bad : {"", "/T1", "b1/", "b1/T1/x", "../b1", "b 1"}) {
    auto r = parse_key(bad);
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_EQ(r.error().kind, ErrorKind::usage) << bad;
  }
}

// A run with bundle b1 whose cursors are walked through the store as the
// driver walks them, then answered.
class InboxAnswer : public test::RunFixture {
 protected:
  void SetUp() override {
    RunFixture::SetUp();
    auto c = store.transact([](Transaction& tx) -> Status {
      tx.state()["bundles"] =
          Json::array({{{"id", "b1"}, {"title", "words"}, {"status", "running"}}});
      return {};
    });
    ASSERT_TRUE(c.ok()) << c.error().message;
  }

  void move(const std::optional<std::string>& task, const std::string& node,
            const std::string& event, Json merge = Json::object(), Json detail = Json::object()) {
    MoveRequest r;
    r.bundle = "b1";
    r.task = task;
    r.node = node;
    r.event = event;
    r.merge = std::move(merge);
    r.detail = std::move(detail);
    auto m = store.move(r);
    ASSERT_TRUE(m.ok()) << m.error().message;
  }

  void go(const std::string& node, const std::string& event) {
    auto g = store.go({node, event, Json(), Json()});
    ASSERT_TRUE(g.ok()) << g.error().message;
  }

  void entry_status(const std::string& status) {
    auto c = store.transact([&](Transaction& tx) -> Status {
      tx.state()["bundles"][0]["status"] = status;
      if (status == "parked") tx.state()["bundles"][0]["parked_reason"] = "BLOCKED: T1 waits";
      return {};
    });
    ASSERT_TRUE(c.ok()) << c.error().message;
  }

  // The orchestrator started b1; its planner planned; T1's developer
  // blocked past blocker_recovery's budget and T1 waits for a person.
  void park_task() {
    go("bundle", "SCAN_DONE");
    go("bundle_scheduler", "BUNDLES_FORMED");
    move(std::nullopt, "plan_bundle", "BUNDLE_STARTED");
    move(std::nullopt, "task_scheduler", "PLAN_DONE");
    move("T1", "write_tdd", "TASK_STARTED");
    move("T1", "implement", "TDD_DONE");
    move("T1", "blocker_recovery", "BLOCKED", {{"recovery", "human"}, {"recovery_why", "flaky"}});
    move("T1", "awaiting_human", "AWAITING_HUMAN", {{"recovery_why", "developer: flaky tool"}},
         {{"blocker", "developer: flaky tool"}});
  }

  Json state() { return std::move(store.read()).value(); }
  std::vector<Json> events() { return test::read_jsonl(s / "run/events.jsonl"); }

  Item item(const std::string& key) {
    for (auto& i : items_of_run(state(), store.run_dir()))
      if (i.key == key) return i;
    ADD_FAILURE() << key << " is not waiting";
    return Item{};
  }

  void expect_replays_cleanly() {
    auto report = replay_run_dir(graph, store.run_dir());
    ASSERT_TRUE(report.ok()) << report.error().message;
    EXPECT_TRUE(report->problems.empty()) << testing::PrintToString(report->problems);
  }
};

TEST_F(InboxAnswer, ATaskGoesBackToTheNodeBeforeItsDetourWithTheAnswerRecorded) {
  park_task();
  auto done = answer(store, graph, item("b1/T1"), AnswerKind::text, "use the stable tool");
  ASSERT_TRUE(done.ok()) << done.error().message;
  EXPECT_EQ(done->continues_at, "implement");
  EXPECT_FALSE(done->reopened);
  EXPECT_EQ(done->answer_path, layout.answer("T1"));
  EXPECT_EQ(test::slurp(layout.answer("T1")), "use the stable tool\n");
  Json c = state()["tasks_runtime"]["b1/T1"];
  EXPECT_EQ(c["node"], "implement");
  EXPECT_EQ(c["previous_node"], "awaiting_human");
  EXPECT_EQ(c["status"], "active");
  EXPECT_EQ(c["answer"]["kind"], "supplied");
  EXPECT_EQ(c["answer"]["moves"], c["moves"]);
  Json last = events().back();
  EXPECT_EQ(last["type"], "AWAITING_HUMAN");
  EXPECT_EQ(last["detail"]["cursor"], "b1/T1");
  EXPECT_EQ(last["detail"]["lane_from"], "awaiting_human");
  EXPECT_EQ(last["detail"]["lane_to"], "implement");
  EXPECT_EQ(last["detail"]["answer"], "supplied");
  EXPECT_EQ(last["detail"]["answer_path"], layout.answer("T1"));
  EXPECT_EQ(state()["bundles"][0]["status"], "running");
  // The driver gives the answer to implement's next dispatch.
  std::string extra = bundle::answer_for_dispatch(layout, "T1", c);
  EXPECT_NE(extra.find("use the stable tool"), std::string::npos) << extra;
  EXPECT_TRUE(items_of_run(state(), store.run_dir()).empty());
  expect_replays_cleanly();
}

TEST_F(InboxAnswer, ABundleCursorParkedThroughRecoveryIsApprovedBackToItsNode) {
  go("bundle", "SCAN_DONE");
  go("bundle_scheduler", "BUNDLES_FORMED");
  move(std::nullopt, "plan_bundle", "BUNDLE_STARTED");
  move(std::nullopt, "blocker_recovery", "BLOCKED", {{"recovery", "human"}});
  move(std::nullopt, "awaiting_human", "AWAITING_HUMAN", {{"recovery_why", "planner: no spec"}},
       {{"blocker", "planner: no spec"}});
  Item b1 = item("b1");
  EXPECT_EQ(b1.reason, "planner: no spec");
  auto done = answer(store, graph, b1, AnswerKind::approve, "");
  ASSERT_TRUE(done.ok()) << done.error().message;
  EXPECT_EQ(done->continues_at, "plan_bundle");
  Json c = state()["bundles_runtime"]["b1"];
  EXPECT_EQ(c["node"], "plan_bundle");
  EXPECT_EQ(c["status"], "active");
  EXPECT_EQ(c["answer"]["kind"], "approved");
  EXPECT_EQ(events().back()["detail"]["answer"], "approved");
  EXPECT_NE(test::slurp(layout.answer(std::nullopt)).find("Approved"), std::string::npos);
  expect_replays_cleanly();
}

TEST_F(InboxAnswer, ARunAtHumanRequiredIsReopenedWhereItsOrchestratorLeft) {
  park_task();
  entry_status("parked");
  go("human_required", "HUMAN_REQUIRED");
  ASSERT_EQ(state()["status"], "human_required");
  auto done = answer(store, graph, item("b1/T1"), AnswerKind::text, "go on");
  ASSERT_TRUE(done.ok()) << done.error().message;
  EXPECT_TRUE(done->reopened);
  Json st = state();
  EXPECT_EQ(st["status"], "running");
  EXPECT_EQ(st["node"], "bundle_scheduler");
  EXPECT_EQ(st["previous_node"], "human_required");
  EXPECT_EQ(st["bundles"][0]["status"], "running");
  auto evs = events();
  ASSERT_GE(evs.size(), 2u);
  EXPECT_EQ(evs[evs.size() - 2]["type"], "AWAITING_HUMAN");
  EXPECT_EQ(evs[evs.size() - 2]["node"], "human_required");
  Json resumed = evs.back();
  EXPECT_EQ(resumed["type"], "RUN_RESUMED");
  EXPECT_EQ(resumed["node"], "bundle_scheduler");
  EXPECT_EQ(resumed["detail"]["from"], "human_required");
  EXPECT_EQ(resumed["detail"]["to"], "bundle_scheduler");
  EXPECT_EQ(resumed["detail"]["answered"], "b1/T1");
  expect_replays_cleanly();
}

TEST_F(InboxAnswer, ARejectionClosesTheBundleLeavesTheCursorAndTheRunWhereTheyAre) {
  park_task();
  entry_status("parked");
  // b2 waits too, so the run stays where it is.
  auto parked = store.transact([](Transaction& tx) -> Status {
    tx.state()["bundles"].push_back(
        {{"id", "b2"}, {"title", "more"}, {"status", "parked"}, {"parked_reason", "died"}});
    return {};
  });
  ASSERT_TRUE(parked.ok()) << parked.error().message;
  go("human_required", "HUMAN_REQUIRED");
  auto done = answer(store, graph, item("b1/T1"), AnswerKind::reject, "not worth it");
  ASSERT_TRUE(done.ok()) << done.error().message;
  EXPECT_EQ(done->continues_at, std::nullopt);
  EXPECT_FALSE(done->reopened);
  Json st = state();
  EXPECT_EQ(st["status"], "human_required");
  EXPECT_EQ(st["bundles"][0]["status"], "rejected");
  EXPECT_EQ(st["bundles"][0]["rejected_reason"], "not worth it");
  EXPECT_EQ(st["tasks_runtime"]["b1/T1"]["node"], "awaiting_human");
  EXPECT_EQ(st["tasks_runtime"]["b1/T1"]["status"], "waiting_human");
  Json last = events().back();
  EXPECT_EQ(last["type"], "AWAITING_HUMAN");
  EXPECT_EQ(last["detail"]["answer"], "rejected");
  EXPECT_EQ(last["detail"]["reason"], "not worth it");
  EXPECT_FALSE(last["detail"].contains("lane_to"));
  EXPECT_EQ(test::slurp(layout.answer("T1")), "not worth it\n");
  auto left = items_of_run(st, store.run_dir());
  ASSERT_EQ(left.size(), 1u);
  EXPECT_EQ(left[0].key, "b2");
  expect_replays_cleanly();
}

TEST_F(InboxAnswer, RejectingTheLastThingARunWaitsForReopensItForItsOrchestratorToFinish) {
  park_task();
  entry_status("parked");
  go("human_required", "HUMAN_REQUIRED");
  auto done = answer(store, graph, item("b1/T1"), AnswerKind::reject, "");
  ASSERT_TRUE(done.ok()) << done.error().message;
  EXPECT_EQ(done->continues_at, std::nullopt);
  EXPECT_TRUE(done->reopened);
  Json st = state();
  EXPECT_EQ(st["status"], "running");
  EXPECT_EQ(st["node"], "bundle_scheduler");
  EXPECT_EQ(st["bundles"][0]["status"], "rejected");
  EXPECT_EQ(st["tasks_runtime"]["b1/T1"]["node"], "awaiting_human");
  auto evs = events();
  ASSERT_GE(evs.size(), 2u);
  EXPECT_EQ(evs[evs.size() - 2]["type"], "AWAITING_HUMAN");
  EXPECT_EQ(evs[evs.size() - 2]["detail"]["answer"], "rejected");
  EXPECT_EQ(evs.back()["type"], "RUN_RESUMED");
  EXPECT_EQ(evs.back()["detail"]["answered"], "b1/T1");
  EXPECT_TRUE(items_of_run(st, store.run_dir()).empty());
  expect_replays_cleanly();
}

TEST_F(InboxAnswer, AParkedBundleIsSetRunningWithoutMovingACursor) {
  go("bundle", "SCAN_DONE");
  go("bundle_scheduler", "BUNDLES_FORMED");
  move(std::nullopt, "plan_bundle", "BUNDLE_STARTED");
  entry_status("parked");
  auto done = answer(store, graph, item("b1"), AnswerKind::text, "the spec is in docs/");
  ASSERT_TRUE(done.ok()) << done.error().message;
  EXPECT_EQ(done->continues_at, std::nullopt);
  Json st = state();
  EXPECT_EQ(st["bundles"][0]["status"], "running");
  Json c = st["bundles_runtime"]["b1"];
  EXPECT_EQ(c["node"], "plan_bundle");
  EXPECT_EQ(c["answer"]["moves"], c["moves"]);
  EXPECT_NE(bundle::answer_for_dispatch(layout, std::nullopt, c).find("the spec is in docs/"),
            std::string::npos);
  EXPECT_FALSE(events().back()["detail"].contains("lane_to"));
  expect_replays_cleanly();
}

TEST_F(InboxAnswer, ABundleParkedForItsBudgetIsAllowedOneMoreBudgetsWorth) {
  go("bundle", "SCAN_DONE");
  go("bundle_scheduler", "BUNDLES_FORMED");
  move(std::nullopt, "plan_bundle", "BUNDLE_STARTED");
  auto c = store.transact([&](Transaction& tx) -> Status {
    tx.state()["bundles"][0]["status"] = "parked";
    tx.state()["bundles"][0]["parked_reason"] =
        std::string(bundle::kBundleBudgetSpent) + "60 persona runs of the 60 it may use";
    return {};
  });
  ASSERT_TRUE(c.ok()) << c.error().message;
  EXPECT_EQ(item("b1").reason.rfind(bundle::kBundleBudgetSpent, 0), 0u) << "the inbox says why";
  auto done = answer(store, graph, item("b1"), AnswerKind::approve, "");
  ASSERT_TRUE(done.ok()) << done.error().message;
  Json st = state();
  EXPECT_EQ(st["bundles"][0]["status"], "running");
  EXPECT_EQ(st["bundles"][0][bundle::kBudgetRoundsKey], 2);
  EXPECT_EQ(events().back()["detail"][bundle::kBudgetRoundsKey], 2);
  expect_replays_cleanly();
}

TEST_F(InboxAnswer, AnsweringTwiceOrAStaleKeyIsRefusedAndWritesNothing) {
  park_task();
  Item t1 = item("b1/T1");
  ASSERT_TRUE(answer(store, graph, t1, AnswerKind::text, "first").ok());
  std::string state_before = test::slurp(s / "run/state.json");
  std::string events_before = test::slurp(s / "run/events.jsonl");
  auto again = answer(store, graph, t1, AnswerKind::text, "second");
  ASSERT_FALSE(again.ok());
  EXPECT_EQ(again.error().kind, ErrorKind::refused);
  EXPECT_EQ(again.error().message.find('\n'), std::string::npos);
  EXPECT_NE(again.error().message.find("active at implement"), std::string::npos)
      << again.error().message;
  Item stale = t1;
  stale.task = "T9";
  stale.key = "b1/T9";
  auto unknown = answer(store, graph, stale, AnswerKind::reject, "");
  ASSERT_FALSE(unknown.ok());
  EXPECT_EQ(unknown.error().kind, ErrorKind::refused);
  EXPECT_EQ(test::slurp(s / "run/state.json"), state_before);
  EXPECT_EQ(test::slurp(s / "run/events.jsonl"), events_before);
  EXPECT_EQ(test::slurp(layout.answer("T1")), "first\n");
  EXPECT_FALSE(path_exists(layout.answer("T9")));
}

}  // namespace
}  // namespace devgraph::inbox
