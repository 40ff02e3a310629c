#include "board/view.h"

#include <gtest/gtest.h>

namespace devgraph::board {
namespace {

Json ev(int seq, const std::string& ts, const std::string& type, Json detail) {
  return Json{{"ts", "2026-12-01T10:00:" + ts + "+00:00"},
              {"seq", seq},
              {"type", type},
              {"node", "bundle_scheduler"},
              {"detail", std::move(detail)}};
}

Json sample_state() {
  return Json::parse(R"({
    "run_id": "r1", "node": "bundle_scheduler", "status": "running",
    "bundles": [{"id": "b1", "title": "Words <b>", "issues": [2], "status": "active",
                 "branch": "develop/b1-words", "pr": {"url": "https://example.com/pr/7"},
                 "tasks": [{"id": "T1", "title": "Normalize"}, {"id": "T2", "title": "Count"}]}],
    "bundles_runtime": {"b1": {"bundle": "b1", "node": "task_scheduler", "status": "active"}},
    "tasks_runtime": {
      "b1/T1": {"bundle": "b1", "task": "T1", "node": "commit_task", "status": "complete"},
      "b1/T2": {"bundle": "b1", "task": "T2", "node": "awaiting_human", "status": "waiting_human"},
      "b9/T1": {"bundle": "b9", "task": "T1", "node": "no_such_node", "status": "active"}}
  })");
}

std::vector<Json> sample_events() {
  return {
      ev(1, "00", "SCAN_DONE",
         {{"work", {2}},
          {"excluded", {{{"issue", 1}, {"why", "an epic"}}}},
          {"route", "actionable"}}),
      ev(2, "01", "BUNDLES_FORMED", {{"bundles", {"b1"}}, {"route", "next"}}),
      ev(3, "02", "BUNDLE_STARTED",
         {{"bundle", "b1"}, {"lane_to", "plan_bundle"}, {"cursor", "b1"}}),
      ev(4, "03", "TASK_STARTED",
         {{"bundle", "b1"}, {"task", "T1"}, {"lane_to", "write_tdd"}, {"cursor", "b1/T1"}}),
      ev(5, "03", "PERSONA_DISPATCHED",
         {{"persona", "tdd-writer"}, {"bundle", "b1"}, {"task", "T1"}, {"agent_handle", "h1"}}),
      ev(6, "05", "NOTE",
         {{"topic", "cli_error_backoff"},
          {"bundle", "b1"},
          {"task", "T1"},
          {"persona", "tdd-writer"},
          {"agent_handle", "h1"},
          {"delay_s", 4.0},
          {"error", "overloaded"}}),
      ev(7, "13", "TDD_DONE",
         {{"bundle", "b1"},
          {"task", "T1"},
          {"lane_from", "write_tdd"},
          {"lane_to", "implement"},
          {"cursor", "b1/T1"},
          {"agent_handle", "h1"},
          {"persona", "tdd-writer"},
          {"status", "DONE"},
          {"cost_usd", 0.25},
          {"tokens", 100}}),
      ev(8, "14", "PERSONA_DISPATCHED",
         {{"persona", "tester"}, {"bundle", "b1"}, {"task", "T1"}, {"agent_handle", "h2"}}),
      ev(9, "20", "VERIFY_DONE",
         {{"bundle", "b1"},
          {"task", "T1"},
          {"statuses", {{"tester", "DONE"}}},
          {"check", {{"passed", true}}}}),
      ev(10, "21", "TASK_COMMITTED",
         {{"bundle", "b1"},
          {"task", "T1"},
          {"lane_from", "verify"},
          {"lane_to", "commit_task"},
          {"cursor", "b1/T1"},
          {"cursor_complete", true}}),
      ev(11, "22", "AWAITING_HUMAN",
         {{"bundle", "b1"},
          {"task", "T2"},
          {"lane_from", "implement"},
          {"lane_to", "awaiting_human"},
          {"cursor", "b1/T2"},
          {"blocker", "two readings of the spec"}}),
      ev(12, "23", "PERSONA_DISPATCHED",
         {{"persona", "planner"}, {"bundle", "b1"}, {"agent_handle", "h3"}}),
  };
}

const Json* find_node(const Json& view, const std::string& lane, const std::string& node) {
  for (const auto& l : view["lanes"])
    if (l["name"] == lane)
      for (const auto& n : l["nodes"])
        if (n["name"] == node) return &n;
  return nullptr;
}

TEST(BoardView, EveryCursorStandsOnItsNodeInItsLaneAndAnUnknownNodeIsShownApart) {
  Json v = board_view(shipped_graph(), sample_state(), sample_events());
  const Json* orch = find_node(v, "orchestrator", "bundle_scheduler");
  ASSERT_NE(orch, nullptr);
  ASSERT_EQ((*orch)["tokens"].size(), 1u);
  EXPECT_EQ((*orch)["tokens"][0]["kind"], "orchestrator");
  EXPECT_EQ((*orch)["tokens"][0]["id"], "r1");
  const Json* sched = find_node(v, "bundle", "task_scheduler");
  ASSERT_NE(sched, nullptr);
  EXPECT_EQ((*sched)["tokens"][0]["id"], "b1");
  const Json* commit = find_node(v, "task", "commit_task");
  ASSERT_NE(commit, nullptr);
  EXPECT_EQ((*commit)["tokens"][0]["id"], "b1/T1");
  const Json* human = find_node(v, "shared", "awaiting_human");
  ASSERT_NE(human, nullptr);
  EXPECT_EQ((*human)["tokens"][0]["status"], "waiting_human");
  const Json* other = find_node(v, "other", "no_such_node");
  ASSERT_NE(other, nullptr);
  EXPECT_EQ((*other)["tokens"][0]["id"], "b9/T1");
}

TEST(BoardView, BundlesCarryTheirTasksTimesCostsAndLink) {
  Json v = board_view(shipped_graph(), sample_state(), sample_events());
  ASSERT_EQ(v["bundles"].size(), 1u);
  const Json& b = v["bundles"][0];
  EXPECT_EQ(b["title"], "Words <b>") << "kept as the text it is; the page sets it as text";
  EXPECT_EQ(b["pr_url"], "https://example.com/pr/7");
  EXPECT_EQ(b["node"], "task_scheduler");
  EXPECT_EQ(b["start"], "2026-12-01T10:00:02+00:00");
  EXPECT_EQ(b["cost"]["cost_usd"], 0.25);
  EXPECT_EQ(b["waiting"]["backoffs"], 1);
  ASSERT_EQ(b["tasks"].size(), 2u);
  const Json& t1 = b["tasks"][0];
  EXPECT_EQ(t1["title"], "Normalize");
  EXPECT_EQ(t1["start"], "2026-12-01T10:00:03+00:00");
  EXPECT_EQ(t1["end"], "2026-12-01T10:00:21+00:00");
  ASSERT_EQ(t1["personas"].size(), 2u);
  EXPECT_EQ(t1["personas"][0]["persona"], "tdd-writer");
  EXPECT_EQ(t1["personas"][0]["end"], "2026-12-01T10:00:13+00:00");
  EXPECT_EQ(t1["personas"][0]["status"], "DONE");
  EXPECT_EQ(t1["personas"][1]["end"], "2026-12-01T10:00:20+00:00")
      << "the tester ends at its cursor's verification";
  EXPECT_EQ(t1["personas"][1]["status"], "DONE");
  EXPECT_EQ(v["totals"]["tasks"], 2);
  EXPECT_EQ(v["totals"]["running_personas"], 1) << "the planner is still running";
}

TEST(BoardView, TheTimelineHoldsPersonaRunsBackOffsAndWaitsForAPerson) {
  Json v = board_view(shipped_graph(), sample_state(), sample_events());
  std::map<std::string, int> kinds;
  for (const auto& s : v["timeline"]) ++kinds[s["kind"].get<std::string>()];
  EXPECT_EQ(kinds["persona"], 3);
  EXPECT_EQ(kinds["backoff"], 1);
  EXPECT_EQ(kinds["human"], 1);
  for (const auto& s : v["timeline"]) {
    if (s["kind"] == "backoff") {
      EXPECT_EQ(s["seconds"], 4.0);
      EXPECT_EQ(s["reason"], "overloaded");
    }
    if (s["kind"] == "human") {
      EXPECT_TRUE(s["end"].is_null()) << "still waiting";
      EXPECT_NE(s["reason"].get<std::string>().find("two readings"), std::string::npos);
    }
  }
}

TEST(BoardView, TracesSayWhyABundleAndAnIssueMovedWithEvidence) {
  Json v = board_view(shipped_graph(), sample_state(), sample_events());
  const Json& t = v["traces"]["bundles"]["b1"];
  std::vector<std::string> kinds;
  for (const auto& e : t) kinds.push_back(e["kind"]);
  std::vector<std::string> want = {"bundled",      "started",  "task started", "backed off",
                                   "test written", "verified", "committed",    "parked"};
  EXPECT_EQ(kinds, want);
  for (const auto& e : t) {
    if (e["kind"] == "backed off") {
      EXPECT_NE(e["evidence"].get<std::string>().find("delay_s: 4.0"), std::string::npos)
          << e["evidence"];
    }
    if (e["kind"] == "verified") {
      EXPECT_NE(e["evidence"].get<std::string>().find("check passed: true"), std::string::npos);
    }
  }
  const Json& issues = v["traces"]["issues"];
  EXPECT_EQ(issues["2"]["bundle"], "b1");
  EXPECT_EQ(issues["2"]["entries"][0]["kind"], "found");
  EXPECT_EQ(issues["1"]["entries"][0]["kind"], "excluded");
  EXPECT_EQ(issues["1"]["entries"][0]["evidence"], "an epic");
}

TEST(BoardView, ACritiqueRoundIsADecisionWithItsVerdictAsEvidence) {
  auto events = sample_events();
  events.push_back(ev(13, "24", "DISCUSS_ROUND_DONE",
                      {{"bundle", "b1"},
                       {"round", "plan-1"},
                       {"verdict", "consensus_blocked"},
                       {"severity", "MEDIUM"},
                       {"route", "proceed"},
                       {"note", "critique plan-1 blocked at MEDIUM: <risk> high"}}));
  Json v = board_view(shipped_graph(), sample_state(), events);
  const Json& last = v["traces"]["bundles"]["b1"].back();
  EXPECT_EQ(last["kind"], "critiqued");
  EXPECT_EQ(last["what"], "DISCUSS_ROUND_DONE");
  EXPECT_EQ(last["evidence"],
            "round: plan-1; verdict: consensus_blocked; severity: MEDIUM; route: proceed; note: "
            "critique plan-1 blocked at MEDIUM: <risk> high");
}

TEST(BoardView, MalformedStateAndEventsGiveAnEmptyViewNeverAnException) {
  std::vector<Json> junk = {
      Json(1),
      Json::array(),
      Json{{"type", 3}},
      Json{{"ts", "x"}},
      Json{{"ts", "x"}, {"type", "PERSONA_DISPATCHED"}, {"detail", 5}},
      Json{{"ts", "x"}, {"type", "BUNDLES_FORMED"}, {"detail", {{"bundles", {1, nullptr}}}}}};
  Json bad_state = Json::parse(R"({"bundles": [1, {"id": 3, "tasks": [2, {"id": null}]}],
                                    "bundles_runtime": [], "tasks_runtime": {"x": 1}})");
  Json v;
  ASSERT_NO_THROW(v = board_view(shipped_graph(), bad_state, junk));
  EXPECT_EQ(v["bundles"].size(), 1u);
  ASSERT_NO_THROW(v = board_view(shipped_graph(), Json("not a state"), {}));
  EXPECT_EQ(v["totals"]["bundles"], 0);
}

}  // namespace
}  // namespace devgraph::board
