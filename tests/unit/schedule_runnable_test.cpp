// The runnable set and its routes, cursors from state.json, the critical
// path and the conflict listing.
#include <gtest/gtest.h>

#include "schedule/schedule.h"
#include "support/test_util.h"

namespace devgraph::schedule {
namespace {

Plan make_plan(const char* text) {
  auto p = plan_from_json(Json::parse(text));
  EXPECT_TRUE(p.ok()) << (p.ok() ? "" : p.error().message);
  return std::move(p).value();
}

// T1 -> T2; T3 conflicts with T1 (src/** is T1's parent); T4 and T5 are
// independent; T5 only looks like it shares T4's prefix.
const char* kPlan = R"({"bundle": "b1", "tasks": [
    {"id": "T1", "files": ["src/domain/**", "package.json"]},
    {"id": "T2", "depends_on": ["T1"], "files": ["src/ui/*.ts"]},
    {"id": "T3", "files": ["src/**"]},
    {"id": "T4", "files": ["e2e/**"]},
    {"id": "T5", "files": ["e2e-helpers/x"]}]})";

using Waits = std::vector<std::pair<std::string, std::vector<std::string>>>;
using Ids = std::vector<std::string>;

TEST(ScheduleRunnable, FreshPlanStartsEveryDisjointReadyTaskInPlanOrder) {
  Plan plan = make_plan(kPlan);
  auto r = compute_runnable(plan, {}, 6);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->route, "task_available");
  EXPECT_EQ(r->runnable, (Ids{"T1", "T4", "T5"}));
  EXPECT_EQ(r->waiting_on_deps, (Waits{{"T2", {"T1"}}}));
  EXPECT_EQ(r->waiting_on_footprint, (Waits{{"T3", {"T1"}}}));
  EXPECT_TRUE(r->waiting_on_capacity.empty());
  EXPECT_EQ(r->remaining, (Ids{"T1", "T2", "T3", "T4", "T5"}));
  EXPECT_FALSE(r->deadlock);
}

TEST(ScheduleRunnable, CapacityCountsInFlightTasks) {
  Plan plan = make_plan(kPlan);
  TaskCursors c;
  c.in_flight = {"T4"};
  auto r = compute_runnable(plan, c, 2);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->runnable, (Ids{"T1"}));
  EXPECT_EQ(r->waiting_on_capacity, (Ids{"T5"}));
  EXPECT_EQ(r->in_flight, (Ids{"T4"}));
  EXPECT_EQ(r->max_parallel, 2);
}

TEST(ScheduleRunnable, WaitingWhileSomethingIsInFlight) {
  Plan plan = make_plan(kPlan);
  TaskCursors c;
  c.in_flight = {"T1"};
  c.complete = {"T4", "T5"};
  auto r = compute_runnable(plan, c, 6);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->route, "waiting");
  EXPECT_TRUE(r->runnable.empty());
  EXPECT_EQ(r->waiting_on_footprint, (Waits{{"T3", {"T1"}}}));
  EXPECT_EQ(r->complete, (Ids{"T4", "T5"}));
  EXPECT_FALSE(r->deadlock);
}

TEST(ScheduleRunnable, DeadlockWhenNothingRunsAndNothingCanStart) {
  Plan plan = make_plan(kPlan);
  auto r = compute_runnable(plan, {}, 0);  // a ceiling of zero starves everything
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->route, "deadlock");
  EXPECT_TRUE(r->deadlock);
  EXPECT_EQ(r->waiting_on_capacity, (Ids{"T1", "T3", "T4", "T5"}));
  // With a ceiling, an acyclic plan always has a ready task when nothing
  // runs: the earliest incomplete task in dependency order.
  Plan chain = make_plan(R"({"bundle": "b1", "tasks": [
      {"id": "T1", "depends_on": ["T2"], "files": ["a"]},
      {"id": "T2", "files": ["a"]}]})");
  auto ok = compute_runnable(chain, {}, 1);
  ASSERT_TRUE(ok.ok());
  EXPECT_EQ(ok->route, "task_available");
  EXPECT_EQ(ok->runnable, Ids{"T2"});
}

TEST(ScheduleRunnable, AllCompleteRoutesToBundleVerify) {
  Plan plan = make_plan(kPlan);
  TaskCursors c;
  c.complete = {"T1", "T2", "T3", "T4", "T5", "OLD"};
  auto r = compute_runnable(plan, c, 6);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->route, "bundle_tasks_complete");
  EXPECT_TRUE(r->remaining.empty());
  EXPECT_EQ(r->complete.size(), 6u);  // as recorded, like the reference
}

TEST(ScheduleRunnable, InFlightTaskUnknownToThePlanIsAnError) {
  Plan plan = make_plan(kPlan);
  TaskCursors c;
  c.in_flight = {"GHOST"};
  auto r = compute_runnable(plan, c, 6);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().message,
            "state.json has task GHOST in flight, but tasks.json for bundle b1 does not list it");
}

TEST(ScheduleRunnable, JsonKeepsTheReferenceFieldOrder) {
  Plan plan = make_plan(kPlan);
  auto r = compute_runnable(plan, {}, 6);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(dump_py(r->to_json()),
            R"({"bundle": "b1", "route": "task_available", "runnable": ["T1", "T4", "T5"], )"
            R"("in_flight": [], "complete": [], "remaining": ["T1", "T2", "T3", "T4", "T5"], )"
            R"("max_parallel": 6, "waiting_on_deps": {"T2": ["T1"]}, )"
            R"("waiting_on_footprint": {"T3": ["T1"]}, "waiting_on_capacity": [], )"
            R"("deadlock": false})");
}

TEST(ScheduleRunnable, CursorsComeFromTasksRuntimeOfTheBundle) {
  Json state = Json::parse(R"({"tasks_runtime": {
      "b1/T1": {"bundle": "b1", "task": "T1", "node": null, "status": "complete"},
      "b1/T2": {"bundle": "b1", "task": "T2", "node": "verify", "status": "active"},
      "b1/T3": {"bundle": "b1", "task": "T3", "node": null, "status": "active"},
      "b1/T4": {"bundle": "b1", "node": "write_tdd", "status": "active"},
      "b1/T5": {"bundle": "b1", "task": "T5", "node": "x", "status": "waiting_human"},
      "b2/T1": {"bundle": "b2", "task": "T1", "node": "verify", "status": "active"},
      "junk": 7}})");
  TaskCursors c = cursors_from_state(state, "b1");
  EXPECT_EQ(c.complete, (std::set<std::string>{"T1"}));
  EXPECT_EQ(c.in_flight, (std::set<std::string>{"T2", "T4"}));
  EXPECT_TRUE(cursors_from_state(Json::parse("{}"), "b1").in_flight.empty());
}

TEST(ScheduleRunnable, ReadTaskCursorsFromAFile) {
  test::Scratch dir;
  test::write_text(
      dir / "state.json",
      R"({"tasks_runtime": {"b/T1": {"bundle": "b", "task": "T1", "status": "complete"}}})");
  auto c = read_task_cursors(dir / "state.json", "b");
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->complete.count("T1"), 1u);
  test::write_text(dir / "list.json", "[]");
  EXPECT_FALSE(read_task_cursors(dir / "list.json", "b").ok());
  EXPECT_FALSE(read_task_cursors(dir / "missing.json", "b").ok());
}

TEST(ScheduleCriticalPath, LongestChainAndDefaultCeiling) {
  Plan plan = make_plan(R"({"bundle": "b", "tasks": [
      {"id": "A", "files": ["a"]},
      {"id": "B", "depends_on": ["A"], "files": ["b"]},
      {"id": "C", "files": ["c"]},
      {"id": "D", "depends_on": ["C", "B"], "files": ["d"]},
      {"id": "E", "depends_on": ["A"], "files": ["e"]}]})");
  CriticalPath cp = critical_path(plan, std::nullopt);
  EXPECT_EQ(cp.path, (Ids{"A", "B", "D"}));
  EXPECT_EQ(cp.ceiling, 3);  // max(3, ceil(5 / 2))
  EXPECT_TRUE(cp.within_ceiling);
  EXPECT_EQ(cp.task_count, 5u);
  EXPECT_EQ(dump_py(cp.to_json()),
            R"({"critical_path": ["A", "B", "D"], "length": 3, "ceiling": 3, )"
            R"("within_ceiling": true, "task_count": 5})");
  CriticalPath tight = critical_path(plan, 2);
  EXPECT_EQ(tight.ceiling, 2);
  EXPECT_FALSE(tight.within_ceiling);  // a diagnostic, not a rejection
}

TEST(ScheduleCriticalPath, TiesGoToTheFirstInPlanOrder) {
  Plan plan = make_plan(R"({"bundle": "b", "tasks": [
      {"id": "X", "files": ["a"]}, {"id": "Y", "files": ["b"]},
      {"id": "Z", "depends_on": ["Y", "X"], "files": ["c"]}]})");
  EXPECT_EQ(critical_path(plan, std::nullopt).path, (Ids{"Y", "Z"}));
  EXPECT_EQ(default_chain_ceiling(0), 3);
  EXPECT_EQ(default_chain_ceiling(7), 4);
  EXPECT_EQ(default_chain_ceiling(8), 4);
  EXPECT_EQ(default_chain_ceiling(9), 5);
}

TEST(ScheduleCriticalPath, TailLengthsCountTheLongestChainFromEachTask) {
  // Listed dependents-first, so plan order is not dependency order.
  Plan plan = make_plan(R"({"bundle": "b", "tasks": [
      {"id": "D", "depends_on": ["C", "B"], "files": ["d"]},
      {"id": "B", "depends_on": ["A"], "files": ["b"]},
      {"id": "A", "files": ["a"]},
      {"id": "C", "files": ["c"]},
      {"id": "E", "depends_on": ["A"], "files": ["e"]},
      {"id": "F", "files": ["f"]}]})");
  EXPECT_EQ(tail_lengths(plan), (std::vector<int>{1, 2, 3, 2, 1, 1}));
}

TEST(ScheduleConflicts, EveryPairThatSerializesWithItsGlobs) {
  Plan plan = make_plan(kPlan);
  auto pairs = all_conflicts(plan);
  ASSERT_EQ(pairs.size(), 2u);
  EXPECT_EQ(pairs[0].a, "T1");
  EXPECT_EQ(pairs[0].b, "T3");
  EXPECT_EQ(pairs[0].globs, (std::vector<GlobPair>{{"src/domain/**", "src/**"}}));
  EXPECT_EQ(pairs[1].a, "T2");
  EXPECT_EQ(pairs[1].b, "T3");
  EXPECT_EQ(dump_py(conflicts_to_json(pairs)),
            R"([{"a": "T1", "b": "T3", "globs": [["src/domain/**", "src/**"]]}, )"
            R"({"a": "T2", "b": "T3", "globs": [["src/ui/*.ts", "src/**"]]}])");
}

}  // namespace
}  // namespace devgraph::schedule
