#include "replay/replay.h"

#include <gtest/gtest.h>

#include "support/test_util.h"

namespace devgraph {
namespace {

const Graph& shipped() {
  static const Graph g = [] {
    auto loaded = Graph::load(test::source_dir() + "/skill");
    EXPECT_TRUE(loaded.ok());
    return std::move(loaded).value();
  }();
  return g;
}

// Writes a log and the matching state.json the way the checkpoint writers
// do, so each test states only the moves it cares about and then breaks
// one thing on purpose.
class RunWriter {
 public:
  explicit RunWriter(const std::string& start = "scan", int graph_version = 4) {
    state_ = {{"run_id", "r"},
              {"graph_version", graph_version},
              {"node", start},
              {"status", "running"},
              {"bundles_runtime", Json::object()},
              {"tasks_runtime", Json::object()},
              {"event_seq", 0}};
    append("RUN_STARTED", {{"run_id", "r"}});
  }

  RunWriter& go(const std::string& to, const std::string& type) {
    Json detail = {{"from", state_["node"]}, {"to", to}};
    state_["node"] = to;
    if (to == "complete" || to == "human_required")
      state_["status"] = to;
    else if (to == "handoff")
      state_["status"] = "handoff";
    else
      state_["status"] = "running";
    append(type, detail);
    return *this;
  }

  RunWriter& resume() {
    Json detail = {{"from", state_["node"]}, {"to", last_before_handoff_}};
    state_["node"] = last_before_handoff_;
    state_["status"] = "running";
    append("RUN_RESUMED", detail);
    return *this;
  }

  RunWriter& handoff() {
    last_before_handoff_ = state_["node"].get<std::string>();
    Json detail = {{"from", last_before_handoff_}, {"to", "handoff"}};
    state_["node"] = "handoff";
    state_["status"] = "handoff";
    append("HANDOFF_WRITTEN", detail);
    return *this;
  }

  RunWriter& move(const std::string& cursor, const std::string& to, const std::string& type) {
    bool task = cursor.find('/') != std::string::npos;
    Json& map = state_[task ? "tasks_runtime" : "bundles_runtime"];
    Json from = map.contains(cursor) ? map[cursor]["node"] : Json(nullptr);
    std::string status = "active";
    if (to == "awaiting_human") status = "waiting_human";
    if ((to == "commit_task" && type == "TASK_COMMITTED") ||
        (to == "create_pr" && (type == "PR_CREATED" || type == "BRANCH_READY")))
      status = "complete";
    map[cursor] = {
        {"bundle", cursor.substr(0, cursor.find('/'))}, {"node", to}, {"status", status}};
    Json detail = {{"bundle", cursor.substr(0, cursor.find('/'))},
                   {"lane_from", from},
                   {"lane_to", to},
                   {"cursor", cursor}};
    append(type, detail);
    return *this;
  }

  RunWriter& event(const std::string& type) {
    append(type, Json::object());
    return *this;
  }

  ReplayReport replay() const { return replay_run(shipped(), state_, log_); }

  Json state_;
  std::string log_;

 private:
  void append(const std::string& type, const Json& detail) {
    long long seq = state_["event_seq"].get<long long>() + 1;
    state_["event_seq"] = seq;
    Json ev = {{"ts", "2026-01-01T00:00:00+00:00"},
               {"seq", seq},
               {"type", type},
               {"node", state_["node"]},
               {"detail", detail}};
    log_ += dump_py(ev) + "\n";
  }
  std::string last_before_handoff_;
};

// A whole bundle with two tasks, a human detour, a footprint recovery, a
// bundle repair and a capacity handoff: every move the graph's writers make.
RunWriter full_run() {
  RunWriter w;
  w.go("bundle", "SCAN_DONE").go("bundle_scheduler", "BUNDLES_FORMED");
  w.move("B1", "plan_bundle", "BUNDLE_STARTED").move("B1", "task_scheduler", "PLAN_DONE");
  w.move("B1/T1", "write_tdd", "TASK_STARTED").move("B1/T2", "write_tdd", "TASK_STARTED");
  w.move("B1/T1", "implement", "TDD_DONE").move("B1/T2", "awaiting_human", "AWAITING_HUMAN");
  w.move("B1/T1", "verify", "IMPLEMENT_DONE");
  w.handoff().resume();
  w.move("B1/T2", "write_tdd", "RECOVERED");
  w.move("B1/T1", "blocker_recovery", "FOOTPRINT_VIOLATION").move("B1/T1", "verify", "RECOVERED");
  w.move("B1/T1", "commit_task", "TASK_COMMITTED");
  w.move("B1/T2", "implement", "TDD_DONE").move("B1/T2", "repair_task", "CONCERN_TRIAGED");
  w.move("B1/T2", "verify", "TASK_REPAIR_DONE").move("B1/T2", "commit_task", "TASK_COMMITTED");
  w.move("B1", "bundle_verify", "BUNDLE_TASKS_COMPLETE")
      .move("B1", "repair_bundle", "BUNDLE_VERIFY_FAILED");
  w.move("B1", "bundle_verify", "BUNDLE_REPAIR_COMMITTED")
      .move("B1", "final_review", "BUNDLE_VERIFY_PASSED");
  w.move("B1", "documentation_review", "REVIEW_APPROVED").move("B1", "create_pr", "PR_CREATED");
  w.event("TECH_LEAD_DONE");
  w.go("monitor_prs", "ALL_BUNDLES_COMPLETE").go("cleanup_merged", "PR_CHECKS_INSPECTED");
  w.go("audit_merged", "CLEANUP_DONE").go("scan", "AUDIT_DONE").go("complete", "RUN_COMPLETE");
  return w;
}

std::string all(const ReplayReport& r) {
  std::string out;
  for (const auto& p : r.problems) out += p + "\n";
  return out;
}

bool mentions(const ReplayReport& r, const std::string& text) {
  return all(r).find(text) != std::string::npos;
}

TEST(Replay, LegalRunReplaysCleanly) {
  RunWriter w = full_run();
  ReplayReport r = w.replay();
  EXPECT_TRUE(r.problems.empty()) << all(r);
  EXPECT_EQ(r.events, w.state_["event_seq"].get<long long>());
  EXPECT_EQ(r.orchestrator_node, "complete");
  ASSERT_EQ(r.cursors.size(), 3u);
  EXPECT_EQ(r.cursors["B1"].status, "complete");
  EXPECT_EQ(r.cursors["B1/T2"].node, "commit_task");
  EXPECT_EQ(r.cursors["B1/T2"].lane, "task");
}

TEST(Replay, SchedulersParkAndWaitingIsASelfMove) {
  RunWriter w;
  w.go("bundle", "SCAN_DONE").go("bundle_scheduler", "BUNDLES_FORMED");
  w.go("bundle_scheduler", "NOTE");  // waiting: bundle_scheduler
  w.move("B1", "plan_bundle", "BUNDLE_STARTED").move("B1", "task_scheduler", "PLAN_DONE");
  w.move("B1", "task_scheduler", "TASKS_SCHEDULED");
  w.go("handoff", "HANDOFF_WRITTEN");  // a handoff may happen at any node
  EXPECT_TRUE(w.replay().problems.empty()) << all(w.replay());
}

TEST(Replay, RecoveryReturnsOnlyToWhereTheCursorCameFrom) {
  RunWriter w;
  w.go("bundle", "SCAN_DONE").go("bundle_scheduler", "BUNDLES_FORMED");
  w.move("B1", "plan_bundle", "BUNDLE_STARTED").move("B1", "context_recovery", "NEEDS_CONTEXT");
  w.move("B1", "plan_bundle", "RECOVERED");  // retry_previous
  EXPECT_TRUE(w.replay().problems.empty()) << all(w.replay());
  w.move("B1", "blocker_recovery", "BLOCKED").move("B1", "awaiting_human", "AWAITING_HUMAN");
  w.move("B1", "plan_bundle", "RECOVERED");  // back through two detours
  EXPECT_TRUE(w.replay().problems.empty()) << all(w.replay());
  w.move("B1", "blocker_recovery", "BLOCKED").move("B1", "final_review", "RECOVERED");
  ReplayReport r = w.replay();
  ASSERT_EQ(r.problems.size(), 1u) << all(r);
  EXPECT_NE(r.problems[0].find("blocker_recovery -> final_review"), std::string::npos) << all(r);
  EXPECT_NE(r.problems[0].find("nor a return to plan_bundle"), std::string::npos) << all(r);
}

TEST(Replay, ARunThatEndedWaitsForAPersonAndIsReopenedAtItsSchedulerOnly) {
  // One of its pull requests needed a person after the run had ended: the
  // run goes from complete to human_required, and the answer reopens it at
  // the orchestrator lane's scheduler. Anywhere else is still reported.
  RunWriter w = full_run();
  w.go("human_required", "ORCHESTRATOR_CORRECTION").go("bundle_scheduler", "RUN_RESUMED");
  EXPECT_TRUE(w.replay().problems.empty()) << all(w.replay());
  RunWriter x = full_run();
  x.go("human_required", "ORCHESTRATOR_CORRECTION").go("cleanup_merged", "RUN_RESUMED");
  ReplayReport r = x.replay();
  ASSERT_EQ(r.problems.size(), 1u) << all(r);
  EXPECT_NE(r.problems[0].find("human_required -> cleanup_merged"), std::string::npos) << all(r);
}

TEST(Replay, IllegalRouteIsReported) {
  RunWriter w;
  w.go("bundle", "SCAN_DONE").go("bundle_scheduler", "BUNDLES_FORMED");
  w.move("B1", "plan_bundle", "BUNDLE_STARTED").move("B1", "task_scheduler", "PLAN_DONE");
  w.move("B1/T1", "write_tdd", "TASK_STARTED").move("B1/T1", "commit_task", "TASK_COMMITTED");
  ReplayReport r = w.replay();
  ASSERT_EQ(r.problems.size(), 1u) << all(r);
  EXPECT_EQ(r.problems[0],
            "seq 7 TASK_COMMITTED: task cursor B1/T1 moved write_tdd -> commit_task, which is not "
            "a route of write_tdd");
}

TEST(Replay, CursorOutsideItsLane) {
  RunWriter w;
  w.go("bundle", "SCAN_DONE").go("bundle_scheduler", "BUNDLES_FORMED");
  w.move("B1", "plan_bundle", "BUNDLE_STARTED").move("B1", "write_tdd", "TASK_STARTED");
  w.go("verify", "NOTE");
  ReplayReport r = w.replay();
  EXPECT_TRUE(mentions(r, "bundle cursor B1 moved to write_tdd, which is in the task lane"))
      << all(r);
  EXPECT_TRUE(mentions(r, "orchestrator moved to verify, which is in the task lane")) << all(r);
}

TEST(Replay, NewCursorMustStartAtItsLaneEntry) {
  RunWriter w;
  w.go("bundle", "SCAN_DONE").go("bundle_scheduler", "BUNDLES_FORMED");
  w.move("B1", "final_review", "BUNDLE_STARTED");
  ReplayReport r = w.replay();
  ASSERT_EQ(r.problems.size(), 1u) << all(r);
  EXPECT_TRUE(mentions(r, "starts at final_review; the bundle lane is entered at plan_bundle"))
      << all(r);
}

TEST(Replay, UnknownNodesAndEvents) {
  RunWriter w;
  w.go("bundle", "SCAN_DONE").event("MADE_UP");
  w.go("bundle_scheduler", "BUNDLES_FORMED").move("B1", "plan_bundle", "BUNDLE_STARTED");
  w.move("B1", "nowhere", "PLAN_DONE");
  ReplayReport r = w.replay();
  EXPECT_TRUE(mentions(r, "seq 3 MADE_UP: event type is not in GRAPH.yaml's vocabulary")) << all(r);
  EXPECT_TRUE(mentions(r, "bundle cursor B1 moved to unknown node nowhere")) << all(r);
  EXPECT_EQ(r.problems.size(), 2u) << all(r);
}

TEST(Replay, OlderGraphVersionsNameEventsFreelyAndSkipRouteChecks) {
  RunWriter w("scan", 3);
  w.event("SOMETHING_V3_SAID").go("reconcile", "RECONCILE_DONE").go("bundle", "NOTE");
  w.move("B1", "final_review", "REVIEW_STARTED");
  ReplayReport r = w.replay();
  EXPECT_TRUE(r.problems.empty()) << all(r);
  // An unknown node is still unknown: nothing could resume a cursor there.
  w.go("warp_zone", "NOTE").event("NOTE").event("NOTE");
  ReplayReport unknown = w.replay();
  ASSERT_EQ(unknown.problems.size(), 1u) << all(unknown);
  EXPECT_TRUE(mentions(unknown, "orchestrator is at unknown node warp_zone")) << all(unknown);
}

TEST(Replay, RetiredNodesAreKnown) {
  RunWriter w;
  w.go("bundle", "SCAN_DONE").go("bundle_scheduler", "BUNDLES_FORMED");
  w.move("B1", "plan_bundle", "BUNDLE_STARTED").move("B1", "task_scheduler", "PLAN_DONE");
  w.move("B1/T1", "write_tdd", "TASK_STARTED").move("B1/T1", "implement", "TDD_DONE");
  w.move("B1/T1", "adversarial_test", "IMPLEMENT_DONE").move("B1/T1", "verify", "NOTE");
  EXPECT_TRUE(w.replay().problems.empty()) << all(w.replay());
}

TEST(Replay, SeqGapsDuplicatesAndTornLines) {
  RunWriter w;
  w.go("bundle", "SCAN_DONE").go("bundle_scheduler", "BUNDLES_FORMED");
  std::string log = w.log_;
  // Lines: 1 RUN_STARTED, 2 SCAN_DONE, 3 BUNDLES_FORMED.
  size_t second = log.find('\n') + 1;
  size_t third = log.find('\n', second) + 1;
  std::string dup = log.substr(second, third - second);
  w.log_ = log.substr(0, second) + log.substr(third) + dup + "{\"seq\": 4, \"ty";
  ReplayReport r = w.replay();
  EXPECT_TRUE(mentions(r, "seq 3 follows seq 1: seq 2 is missing")) << all(r);
  EXPECT_TRUE(mentions(r, "seq 2 (line 3) follows seq 3: duplicate or out of order")) << all(r);
  EXPECT_TRUE(mentions(r, "events.jsonl line 4: not a JSON object")) << all(r);
  EXPECT_TRUE(mentions(r, "orchestrator recorded as leaving bundle, but the log has it at scan"))
      << all(r);
}

TEST(Replay, EventsPastStateSeqAndStateComparedAtItsSeq) {
  RunWriter w;
  w.go("bundle", "SCAN_DONE").go("bundle_scheduler", "BUNDLES_FORMED");
  Json saved = w.state_;  // the writer died after appending the next two events
  w.move("B1", "plan_bundle", "BUNDLE_STARTED").go("handoff", "HANDOFF_WRITTEN");
  w.state_ = saved;
  ReplayReport r = w.replay();
  ASSERT_EQ(r.problems.size(), 1u) << all(r);
  EXPECT_EQ(r.problems[0],
            "2 event(s) from seq 4 are past state.event_seq 3 (appended but state.json was not "
            "saved after them)");
  EXPECT_EQ(r.orchestrator_node, "bundle_scheduler");
  EXPECT_TRUE(r.cursors.empty());
}

TEST(Replay, LostTailAndStateThatDisagrees) {
  RunWriter w = full_run();
  long long last = w.state_["event_seq"].get<long long>();
  w.state_["event_seq"] = last + 2;
  w.state_["node"] = "scan";
  w.state_["status"] = "running";
  w.state_["tasks_runtime"]["B1/T1"]["node"] = "verify";
  w.state_["tasks_runtime"]["B1/T2"]["status"] = "active";
  w.state_["tasks_runtime"]["B1/T9"] = {{"bundle", "B1"}, {"node", "verify"}, {"status", "active"}};
  w.state_["bundles_runtime"].erase("B1");
  ReplayReport r = w.replay();
  EXPECT_TRUE(mentions(r, "state.event_seq is " + std::to_string(last + 2) +
                              " but events.jsonl ends at seq " + std::to_string(last)))
      << all(r);
  EXPECT_TRUE(
      mentions(r, "state.json has the orchestrator at scan but the log leaves it at complete"))
      << all(r);
  EXPECT_TRUE(mentions(r, "state.json status is running but the log leaves the run complete"))
      << all(r);
  EXPECT_TRUE(
      mentions(r, "cursor B1/T1: state.json has it at verify but the log leaves it at commit_task"))
      << all(r);
  EXPECT_TRUE(
      mentions(r, "cursor B1/T2: state.json status is active but the log makes it complete"))
      << all(r);
  EXPECT_TRUE(mentions(r, "state.json tasks_runtime has cursor B1/T9 that no event moved"))
      << all(r);
  EXPECT_TRUE(mentions(r, "cursor B1 is moved in the log but missing from state.json")) << all(r);
}

TEST(Replay, OrchestratorMovesWithoutARecordAndWrongStart) {
  RunWriter w("bundle_scheduler");
  w.go("monitor_prs", "ALL_BUNDLES_COMPLETE");
  w.log_ += R"({"seq": 3, "type": "NOTE", "node": "cleanup_merged", "detail": {}})"
            "\n";
  w.state_["event_seq"] = 3;
  w.state_["node"] = "cleanup_merged";
  ReplayReport r = w.replay();
  EXPECT_TRUE(mentions(
      r, "the run starts at bundle_scheduler, not at the entrypoint scan or clean_discover"))
      << all(r);
  EXPECT_TRUE(
      mentions(r, "orchestrator jumped from monitor_prs to cleanup_merged without a recorded move"))
      << all(r);
  EXPECT_EQ(r.problems.size(), 2u) << all(r);
}

TEST(Replay, CleanRunsStartAtTheCleanEntrypoint) {
  RunWriter w("clean_discover");
  w.go("clean_classify", "CLEAN_DISCOVERED").go("clean_cleanup", "CLEAN_CLASSIFIED");
  w.go("clean_report", "CLEAN_CLEANUP_DONE").go("complete", "CLEAN_REPORT_DONE");
  EXPECT_TRUE(w.replay().problems.empty()) << all(w.replay());
}

TEST(Replay, RunDirErrorsNameTheFile) {
  test::Scratch dir;
  auto missing = replay_run_dir(shipped(), dir / "nope");
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.error().message.find("not a run directory"), std::string::npos);
  auto no_state = replay_run_dir(shipped(), dir.path());
  ASSERT_FALSE(no_state.ok());
  EXPECT_NE(no_state.error().message.find("state.json"), std::string::npos);
  test::write_text(dir / "state.json", "[1, 2]");
  auto not_object = replay_run_dir(shipped(), dir.path());
  ASSERT_FALSE(not_object.ok());
  EXPECT_NE(not_object.error().message.find("not a JSON object"), std::string::npos);
  test::write_text(dir / "state.json", "{\"node\": \"scan\"}");
  auto no_events = replay_run_dir(shipped(), dir.path());
  ASSERT_FALSE(no_events.ok());
  EXPECT_NE(no_events.error().message.find("events.jsonl"), std::string::npos);
}

}  // namespace
}  // namespace devgraph
