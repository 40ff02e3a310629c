// tasks.json validation: every rule, every problem reported, every cycle.
#include <gtest/gtest.h>

#include "schedule/schedule.h"
#include "support/test_util.h"

namespace devgraph::schedule {
namespace {

Json doc(const char* text) {
  return Json::parse(text);
}

TEST(SchedulePlan, ValidPlanLoadsInOrderWithCompiledFootprints) {
  auto plan = plan_from_json(doc(R"({"bundle": "b1", "tasks": [
      {"id": "T1", "title": "one", "depends_on": [], "files": ["src/a/**"], "kind": "code"},
      {"id": "T2", "depends_on": ["T1"], "files": ["docs/x.md"], "kind": "docs"},
      {"id": "T3", "files": ["infra/**"], "kind": "iac"}]})"));
  ASSERT_TRUE(plan.ok()) << plan.error().message;
  EXPECT_EQ(plan->bundle, "b1");
  ASSERT_EQ(plan->tasks.size(), 3u);
  EXPECT_EQ(plan->tasks[0].title, "one");
  EXPECT_EQ(plan->tasks[1].depends_on, std::vector<std::string>{"T1"});
  EXPECT_TRUE(plan->tasks[2].depends_on.empty());
  EXPECT_EQ(plan->find("T2")->kind, "docs");
  EXPECT_EQ(plan->find("T9"), nullptr);
  EXPECT_TRUE(plan->find("T1")->footprint.contains("src/a/b.ts"));
}

TEST(SchedulePlan, KindMayBeOmitted) {
  EXPECT_TRUE(
      check_plan(doc(R"({"bundle": "b", "tasks": [{"id": "T1", "files": ["a"]}]})")).empty());
}

TEST(SchedulePlan, EmptyBundleAndTasks) {
  EXPECT_EQ(check_plan(doc(R"({"bundle": "", "tasks": []})")),
            (std::vector<std::string>{"top-level 'bundle' must be a non-empty string",
                                      "'tasks' must be a non-empty list"}));
  EXPECT_EQ(check_plan(doc(R"({"bundle": "b"})")),
            std::vector<std::string>{"'tasks' must be a non-empty list"});
  EXPECT_EQ(check_plan(doc(R"([1, 2])")),
            std::vector<std::string>{"tasks.json must be a JSON object"});
}

TEST(SchedulePlan, EveryProblemIsReportedNotJustTheFirst) {
  auto p = check_plan(doc(R"({"bundle": "b", "tasks": [
      {"id": "T1", "depends_on": ["T9"], "files": ["src/[ab]/**"]},
      {"id": "T1", "depends_on": [], "files": []},
      {"id": "a/b", "files": ["x"]},
      {"id": "", "files": ["x"]},
      {"id": 5, "files": ["x"]},
      {"id": "T4", "depends_on": ["T4"], "files": ["y/{a,b}"]},
      {"id": "T5", "files": "x", "kind": "infra"},
      {"id": "T6", "files": ["", "x"], "depends_on": "T1"},
      "not an object"]})"));
  std::vector<std::string> want = {
      "tasks[8] must be an object",
      "task id 'a/b' must be a non-empty string without '/'",
      "task id '' must be a non-empty string without '/'",
      "task id 5 must be a non-empty string without '/'",
      "task id None must be a non-empty string without '/'",
      "duplicate task ids: ['T1']",
      "T1: depends_on must list known task ids, got ['T9']",
      "T1: files may use only *, **, and ? glob syntax (no bracket or brace expressions)",
      "T1: files must be a non-empty list of glob strings",
      "T4: depends on itself",
      "T4: files may use only *, **, and ? glob syntax (no bracket or brace expressions)",
      "T5: files must be a non-empty list of glob strings",
      "T5: kind must be one of 'code', 'iac', 'docs', got 'infra'",
      "T6: depends_on must list known task ids, got 'T1'",
      "T6: files must be a non-empty list of glob strings",
      "None: files must be a non-empty list of glob strings",
      "dependency cycle: T4 -> T4",
  };
  EXPECT_EQ(p, want);
}

TEST(SchedulePlan, CycleWithItsPath) {
  auto p = check_plan(doc(R"({"bundle": "b", "tasks": [
      {"id": "T1", "depends_on": ["T2"], "files": ["a"]},
      {"id": "T2", "depends_on": ["T3"], "files": ["b"]},
      {"id": "T3", "depends_on": ["T1"], "files": ["c"]}]})"));
  EXPECT_EQ(p, std::vector<std::string>{"dependency cycle: T1 -> T2 -> T3 -> T1"});
}

TEST(SchedulePlan, HiddenCycleBehindABadDependencyIsStillFound) {
  // T1's unknown dependency must not stop the search from finding T2 <-> T3,
  // nor T1's own cycle through the known edge.
  auto p = check_plan(doc(R"({"bundle": "b", "tasks": [
      {"id": "T1", "depends_on": ["GHOST", "T4"], "files": ["a"]},
      {"id": "T2", "depends_on": ["T3"], "files": ["b"]},
      {"id": "T3", "depends_on": ["T2"], "files": ["c"]},
      {"id": "T4", "depends_on": ["T1"], "files": ["d"]}]})"));
  std::vector<std::string> want = {
      "T1: depends_on must list known task ids, got ['GHOST', 'T4']",
      "dependency cycle: T1 -> T4 -> T1",
      "dependency cycle: T2 -> T3 -> T2",
  };
  EXPECT_EQ(p, want);
}

TEST(SchedulePlan, EveryCycleIsReported) {
  auto p = check_plan(doc(R"({"bundle": "b", "tasks": [
      {"id": "A", "depends_on": ["B"], "files": ["a"]},
      {"id": "B", "depends_on": ["A", "C"], "files": ["b"]},
      {"id": "C", "depends_on": ["B"], "files": ["c"]},
      {"id": "D", "depends_on": ["E"], "files": ["d"]},
      {"id": "E", "depends_on": ["D"], "files": ["e"]}]})"));
  std::vector<std::string> want = {
      "dependency cycle: A -> B -> A",
      "dependency cycle: B -> C -> B",
      "dependency cycle: D -> E -> D",
  };
  EXPECT_EQ(p, want);
}

TEST(SchedulePlan, LongChainDoesNotExhaustTheStack) {
  Json d = {{"bundle", "b"}, {"tasks", Json::array()}};
  const int n = 20000;
  for (int i = 0; i < n; ++i) {
    // Declared dependent-first, so a recursive search would nest n deep.
    Json deps = i + 1 < n ? Json::array({"T" + std::to_string(i + 1)}) : Json::array();
    d["tasks"].push_back({{"id", "T" + std::to_string(i)}, {"depends_on", deps}, {"files", {"f"}}});
  }
  EXPECT_TRUE(check_plan(d).empty());
  auto plan = plan_from_json(d);
  ASSERT_TRUE(plan.ok());
  EXPECT_EQ(critical_path(*plan, std::nullopt).path.size(), static_cast<size_t>(n));
}

TEST(SchedulePlan, LoadPlanNamesTheFile) {
  test::Scratch dir;
  auto missing = load_plan(dir / "nope.json");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().message,
            "cannot read tasks.json at " + (dir / "nope.json") + ": No such file or directory");
  test::write_text(dir / "bad.json", "{not json");
  auto bad = load_plan(dir / "bad.json");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().message.rfind("cannot read tasks.json: ", 0), 0u) << bad.error().message;
  test::write_text(dir / "invalid.json",
                   R"({"bundle": "b", "tasks": [{"id": "T1", "files": []}]})");
  auto invalid = load_plan(dir / "invalid.json");
  ASSERT_FALSE(invalid.ok());
  EXPECT_EQ(invalid.error().message,
            "tasks.json is invalid:\n  T1: files must be a non-empty list of glob strings");
  EXPECT_EQ(invalid.error().exit_code, 1);
}

}  // namespace
}  // namespace devgraph::schedule
