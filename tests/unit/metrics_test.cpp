#include "metrics/metrics.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace devgraph::metrics {
namespace {

// "2026-01-01T00:MM:SS+00:00" for a number of seconds after midnight.
std::string at_second(int s) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "2026-01-01T%02d:%02d:%02d+00:00", s / 3600, s / 60 % 60, s % 60);
  return buf;
}

Json ev(int s, const std::string& type, Json detail = Json::object(),
        const std::string& node = "") {
  Json e = {{"ts", at_second(s)}, {"seq", s}, {"type", type}, {"node", node}, {"detail", detail}};
  return e;
}

const Json kState = {{"run_id", "r1"},
                     {"repo", "/src/widgets"},
                     {"graph_version", 4},
                     {"status", "complete"},
                     {"bundles", Json::array({{{"id", "b1"}, {"tasks", Json::array()}}})},
                     {"metrics", {{"repair_cycles", 2}, {"review_cycles", 1}}}};

// One task through two nodes with one persona: every figure below is
// counted by hand from these times.
std::vector<Json> one_task_run() {
  return {
      ev(0, "RUN_STARTED"),
      ev(10, "SCAN_DONE", {{"from", "scan"}, {"to", "bundle"}}),
      ev(20, "BUNDLES_FORMED", {{"from", "bundle"}, {"to", "bundle_scheduler"}}),
      ev(20, "TASK_STARTED",
         {{"bundle", "b1"}, {"task", "T1"}, {"cursor", "b1/T1"}, {"lane_to", "write_tdd"}}),
      ev(25, "PERSONA_DISPATCHED",
         {{"persona", "tdd-writer"}, {"bundle", "b1"}, {"task", "T1"}, {"agent_handle", "h1"}}),
      ev(40, "TDD_DONE",
         {{"bundle", "b1"},
          {"task", "T1"},
          {"cursor", "b1/T1"},
          {"lane_to", "implement"},
          {"agent_handle", "h1"},
          {"persona", "tdd-writer"},
          {"cost_usd", 0.25}}),
      ev(50, "TASK_COMMITTED",
         {{"bundle", "b1"},
          {"task", "T1"},
          {"cursor", "b1/T1"},
          {"lane_to", "commit_task"},
          {"cursor_complete", true}}),
      ev(60, "ALL_BUNDLES_COMPLETE", {{"from", "bundle_scheduler"}, {"to", "complete"}}),
  };
}

TEST(MetricsRounding, RoundsLikePythonOnTheExactBinaryValue) {
  EXPECT_EQ(py_round(0.25, 1), 0.2);  // a tie: to even
  EXPECT_EQ(py_round(0.35, 1), 0.3);  // 0.34999... in binary
  EXPECT_EQ(py_round(2.675, 2), 2.67);
  EXPECT_EQ(py_round(12.05, 1), 12.1);  // 12.050000000000000711
}

TEST(MetricsDurations, PrintSecondsMinutesOrHoursAsTheReferenceDoes) {
  EXPECT_EQ(hms(0), "0s");
  EXPECT_EQ(hms(2.5), "2s");  // round half to even
  EXPECT_EQ(hms(59.6), "1m00s");
  EXPECT_EQ(hms(3725), "1h02m");
}

TEST(MetricsTimestamps, OffsetsNameTheSameInstantAndCompactToUtc) {
  auto a = parse_timestamp("2026-01-01T01:00:00+01:00");
  auto b = parse_timestamp("2025-12-31T23:59:59.500Z");
  ASSERT_TRUE(a && b);
  EXPECT_EQ(a->micros - b->micros, 500000);
  EXPECT_FALSE(parse_timestamp("yesterday"));
  EXPECT_EQ(compact_timestamp("2026-01-01T01:00:00+01:00"), "20260101T000000Z");
}

TEST(MetricsTiming, CountsDwellTaskTimesPersonaLatencyAndConcurrency) {
  auto t = compute_timing(kState, one_task_run());
  ASSERT_TRUE(t) << t.error().message;
  EXPECT_EQ((*t)["wall_seconds"], 60.0);
  // Sorted by total time; ties keep the order first seen.
  std::vector<std::string> order;
  for (auto it = (*t)["node_dwell"].begin(); it != (*t)["node_dwell"].end(); ++it)
    order.push_back(it.key());
  EXPECT_EQ(order,
            (std::vector<std::string>{"bundle_scheduler", "write_tdd", "bundle", "implement"}));
  EXPECT_EQ((*t)["node_dwell"]["bundle_scheduler"]["total_seconds"], 40.0);
  const Json& task = (*t)["tasks"]["b1/T1"];
  EXPECT_EQ(task["seconds"], 30.0);
  EXPECT_EQ(task["completed_at"], at_second(50));
  EXPECT_EQ(task["dispatches"], 1);
  EXPECT_EQ(task["node_seconds"].dump(), R"({"write_tdd":20.0,"implement":10.0})");
  EXPECT_EQ((*t)["personas"]["tdd-writer"]["avg_seconds"], 15.0);
  EXPECT_EQ((*t)["concurrency"].dump(),
            R"({"max_active_tasks":1,"mean_active_tasks":0.5,"persona_busy_seconds":15.0,)"
            R"("orchestrator_only_seconds":45.0})");
  EXPECT_EQ((*t)["counts"]["transitions"], 6);
  EXPECT_EQ((*t)["counts"]["repair_cycles"], 2);
  EXPECT_EQ((*t)["counts"]["tasks_complete"], 1);
}

TEST(MetricsTiming, AnEventWithoutATimeIsAnErrorNamingIt) {
  auto events = one_task_run();
  events[3].erase("ts");
  auto t = compute_timing(kState, events);
  ASSERT_FALSE(t);
  EXPECT_EQ(t.error().message, "events.jsonl record 4: no 'ts' time stamp");
}

TEST(MetricsTiming, ALegacyRunMovesTasksByEventType) {
  Json state = {{"graph_version", 2}};
  std::vector<Json> events = {ev(0, "TASK_SCHEDULED", {{"tasks", {"T1"}}}),
                              ev(30, "TEST_DONE", {{"task", "T1"}}),
                              ev(45, "REVIEW_APPROVED", {{"task", "T1"}})};
  auto t = compute_timing(state, events);
  ASSERT_TRUE(t);
  EXPECT_EQ((*t)["tasks"]["T1"]["seconds"], 45.0);
  EXPECT_TRUE((*t)["node_dwell"].empty());  // legacy task time is per task only
}

TEST(MetricsCosts, SumOnePersonaResultPerHandleByPersonaBundleAndRun) {
  auto events = one_task_run();
  events.push_back(
      ev(61, "PERSONA_DISPATCHED",
         {{"persona", "developer (repair)"}, {"bundle", "b2"}, {"agent_handle", "h2"}}));
  events.push_back(
      ev(70, "IMPLEMENT_DONE", {{"agent_handle", "h2"}, {"cost_usd", 1.5}, {"tokens", 1200}}));
  events.push_back(ev(71, "NOTE", {{"agent_handle", "h2"}, {"cost_usd", 9.0}}));  // counted once
  Json c = compute_costs(events);
  Json run = c["run"];
  run.erase("usage");  // devgraph's breakdown, below; the keys before it stay as they were
  EXPECT_EQ(run.dump(), R"({"results":2,"cost_usd":1.75,"tokens":1200})");
  EXPECT_EQ(c["personas"]["developer"]["cost_usd"], 1.5);
  EXPECT_EQ(c["personas"]["tdd-writer"]["tokens"], nullptr);
  EXPECT_EQ(c["bundles"]["b2"]["results"], 1);
  EXPECT_EQ(c["bundles"]["b1"]["cost_usd"], 0.25);
}

TEST(MetricsCosts, AddTheTokensPartByPartWhereResultsReportThem) {
  auto events = one_task_run();  // h1: a tdd-writer result without tokens
  events.push_back(ev(61, "PERSONA_DISPATCHED",
                      {{"persona", "developer"}, {"bundle", "b2"}, {"agent_handle", "h2"}}));
  events.push_back(
      ev(70, "IMPLEMENT_DONE",
         {{"agent_handle", "h2"},
          {"cost_usd", 1.5},
          {"tokens", 1040},
          {"usage", {{"input", 10}, {"cache_read", 1000}, {"output", 30}, {"reasoning", 7}}}}));
  events.push_back(ev(71, "PERSONA_DISPATCHED",
                      {{"persona", "developer"}, {"bundle", "b1"}, {"agent_handle", "h3"}}));
  events.push_back(ev(80, "IMPLEMENT_DONE",
                      {{"agent_handle", "h3"},
                       {"cost_usd", 0.5},
                       {"tokens", 25},
                       {"usage",
                        {{"input", 5},
                         {"cache_read", nullptr},
                         {"cache_write", 8},
                         {"output", 12},
                         {"reasoning", nullptr}}}}));
  // Not what a usage should be: adds nothing, and is no error.
  events.push_back(ev(81, "PERSONA_DISPATCHED",
                      {{"persona", "tester"}, {"bundle", "b1"}, {"agent_handle", "h4"}}));
  events.push_back(ev(90, "VERIFY_DONE",
                      {{"agent_handle", "h4"},
                       {"cost_usd", 0.0},
                       {"tokens", "many"},
                       {"usage", {{"input", -3}, {"output", "x"}, {"cache_read", 1.5}}}}));
  Json c = compute_costs(events);
  EXPECT_EQ(c["run"]["usage"].dump(),
            R"({"input":15,"cache_read":1000,"cache_write":8,"output":42,"reasoning":7})");
  EXPECT_EQ(c["run"]["tokens"], 1065);
  EXPECT_EQ(c["personas"]["developer"]["usage"], c["run"]["usage"]);
  EXPECT_EQ(c["bundles"]["b1"]["usage"].dump(),
            R"({"input":5,"cache_read":null,"cache_write":8,"output":12,"reasoning":null})");
  EXPECT_EQ(
      c["personas"]["tdd-writer"]["usage"].dump(),
      R"({"input":null,"cache_read":null,"cache_write":null,"output":null,"reasoning":null})");
  EXPECT_EQ(c["personas"]["tester"]["tokens"], nullptr);
  EXPECT_EQ(c["personas"]["tester"]["results"], 1);
}

TEST(MetricsWaiting, AddsBackOffHumanWaitsAndProviderPauses) {
  std::vector<Json> events = {
      ev(0, "RUN_STARTED"),
      ev(5, "NOTE", {{"topic", "cli_error_backoff"}, {"bundle", "b1"}, {"delay_s", 2.5}}),
      ev(10, "AWAITING_HUMAN",
         {{"bundle", "b1"}, {"task", "T2"}, {"cursor", "b1/T2"}, {"lane_to", "awaiting_human"}}),
      ev(20, "NOTE", {{"topic", "limits"}, {"paused_until", at_second(50)}}),
      ev(40, "ANSWERED",
         {{"bundle", "b1"}, {"task", "T2"}, {"cursor", "b1/T2"}, {"lane_to", "implement"}}),
      ev(45, "AWAITING_HUMAN", {{"bundle", "b2"}, {"cursor", "b2"}, {"lane_to", "awaiting_human"}}),
      ev(100, "RUN_COMPLETE"),
  };
  auto w = compute_waiting(events);
  ASSERT_TRUE(w);
  EXPECT_EQ((*w)["provider_pause_seconds"], 30.0);
  EXPECT_EQ((*w)["bundles"]["b1"].dump(),
            R"({"backoff_seconds":2.5,"backoffs":1,"human_seconds":30.0})");
  EXPECT_EQ((*w)["bundles"]["b2"]["human_seconds"], 55.0);  // still waiting at the end
}

TEST(MetricsSession, IsNamedFromTheCanonicalRunPathElseTheRepository) {
  EXPECT_EQ(session_name("/h/.ai/develop/acme/widgets/runs/r1", kState), "acme-widgets");
  EXPECT_EQ(session_name("/tmp/r1", kState), "widgets");
  EXPECT_EQ(session_name("/tmp/r1", Json::object()), "unknown");
}

TEST(MetricsSession, RecordKeepsTheReferenceKeysThenDevgraphsBeforeTheReplay) {
  auto s = build_session("/h/acme/widgets/runs/r1", kState, one_task_run(), std::nullopt,
                         "2026-01-02T00:00:00+00:00");
  ASSERT_TRUE(s) << s.error().message;
  std::vector<std::string> keys;
  for (auto it = s->begin(); it != s->end(); ++it) keys.push_back(it.key());
  EXPECT_EQ(keys, (std::vector<std::string>{
                      "schema",     "recorded_at",    "run_id",   "name",          "run_dir",
                      "repo",       "default_branch", "delivery", "graph_version", "status",
                      "node",       "started_at",     "ended_at", "wall_seconds",  "counts",
                      "node_dwell", "personas",       "tasks",    "concurrency",   "capacity",
                      "handoffs",   "costs",          "waiting",  "replay"}));
  EXPECT_EQ((*s)["name"], "acme-widgets");
  EXPECT_EQ((*s)["replay"]["events"].size(), 8u);
  EXPECT_EQ(session_filename(*s).value(), "acme-widgets-20260101T000000Z.jsonl");
}

TEST(MetricsSession, ReRecordingReplacesTheRunsLineAndKeepsOthersByStart) {
  Json old_r1 = {{"run_id", "r1"}, {"started_at", "2026-01-01T00:00:00+00:00"}, {"v", 1}};
  Json r0 = {{"run_id", "r0"}, {"started_at", "2025-01-01T00:00:00+00:00"}};
  Json new_r1 = {{"run_id", "r1"}, {"started_at", "2026-01-01T00:00:00+00:00"}, {"v", 2}};
  EXPECT_EQ(merged_file({old_r1, r0}, new_r1),
            "{\"run_id\":\"r0\",\"started_at\":\"2025-01-01T00:00:00+00:00\"}\n"
            "{\"run_id\":\"r1\",\"started_at\":\"2026-01-01T00:00:00+00:00\",\"v\":2}\n");
}

TEST(MetricsReport, ShowsCostAndWaitingOnlyAfterTheReferenceTables) {
  auto s = build_session("/tmp/r1", kState, one_task_run(), std::nullopt, "now");
  ASSERT_TRUE(s);
  auto full = format_report(*s);
  Json reference_record = *s;
  reference_record.erase("costs");
  reference_record.erase("waiting");
  auto plain = format_report(reference_record);
  ASSERT_TRUE(full && plain);
  EXPECT_EQ(full->rfind(*plain, 0), 0u);  // the reference's text is the prefix
  EXPECT_NE(full->find("tdd-writer                            1    $0.2500"), std::string::npos)
      << *full;
  EXPECT_EQ(plain->find("cost"), std::string::npos);
  EXPECT_NE(plain->find("  b1/T1                       30s       0  write_tdd 20s"),
            std::string::npos)
      << *plain;
}

TEST(MetricsReport, ShowsTheTokensPartByPartLastAndOnlyWhenReported) {
  auto events = one_task_run();
  auto s = build_session("/tmp/r1", kState, events, std::nullopt, "now");
  ASSERT_TRUE(s);
  auto without = format_report(*s);
  ASSERT_TRUE(without);
  EXPECT_EQ(without->find("tokens by persona"), std::string::npos) << *without;

  events.push_back(
      ev(59, "IMPLEMENT_DONE",
         {{"agent_handle", "h9"},
          {"persona", "developer"},
          {"bundle", "b1"},
          {"cost_usd", 0.5},
          {"tokens", 1250},
          {"usage", {{"input", 200}, {"cache_read", 1000}, {"output", 50}, {"reasoning", 20}}}}));
  s = build_session("/tmp/r1", kState, events, std::nullopt, "now");
  ASSERT_TRUE(s);
  auto with = format_report(*s);
  ASSERT_TRUE(with);
  size_t table = with->find(
      "\n\n  tokens by persona            input  cache read cache write      output   reasoning\n");
  ASSERT_NE(table, std::string::npos) << *with;
  EXPECT_GT(table, with->find("  run cost ")) << "after everything else";
  EXPECT_NE(
      with->find(
          "\n  tdd-writer                       -           -           -           -           -\n"
          "  developer                      200        1000           -          50          20\n"
          "  run                            200        1000           -          50          20"),
      std::string::npos)
      << *with;
}

TEST(MetricsReport, ARecordWithoutTimingIsAnErrorNamingTheKey) {
  auto r = format_report(Json{{"run_id", "r1"}, {"name", "n"}});
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().message, "not a session record: no 'wall_seconds'");
}

TEST(MetricsPaths, AreSpelledAsPathlibSpellsThem) {
  EXPECT_EQ(py_path("./a//b/", false), "a/b");
  EXPECT_EQ(py_path("", false), ".");
  EXPECT_EQ(py_path("/x/./y", false), "/x/y");
}

}  // namespace
}  // namespace devgraph::metrics
