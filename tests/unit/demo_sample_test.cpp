// The demo's sample: its issues plan into independent bundles, and one
// scenario plays each bundle's planner, tdd-writer and developer with that
// bundle's files only.
#include <gtest/gtest.h>

#include <set>

#include "agents/sim.h"
#include "demo/sample.h"
#include "schedule/schedule.h"

namespace devgraph::demo {
namespace {

std::vector<std::string> ids(const std::vector<SampleTask>& tasks) {
  std::vector<std::string> out;
  for (const auto& t : tasks) out.push_back(t.id);
  return out;
}

TEST(DemoSample, IssuesAreAnEpicWithTwoChildrenAndTwoStandaloneIssues) {
  auto issues = sample_issues();
  ASSERT_EQ(issues.size(), 5u);
  EXPECT_TRUE(issues[0].epic);
  EXPECT_TRUE(issues[0].tasks.empty());
  EXPECT_EQ(issues[1].parent, issues[0].key);
  EXPECT_EQ(issues[2].parent, issues[0].key);
  EXPECT_EQ(issues[3].parent, "");
  EXPECT_EQ(issues[4].parent, "");
  for (size_t i = 1; i < issues.size(); ++i) {
    EXPECT_FALSE(issues[i].epic) << issues[i].title;
    EXPECT_EQ(issues[i].tasks.size(), 1u) << issues[i].title;
    EXPECT_NE(issues[i].body.find("Acceptance criteria:"), std::string::npos) << issues[i].title;
  }
}

TEST(DemoSample, EveryModuleAndTestIsNewAndTouchedByOneTaskOnly) {
  std::set<std::string> base, seen;
  for (const auto& f : sample_base_files()) base.insert(f.path);
  for (const auto& i : sample_issues())
    for (const auto& t : i.tasks)
      for (const auto* f : {&t.test, &t.impl}) {
        EXPECT_FALSE(base.count(f->path)) << f->path;
        EXPECT_TRUE(seen.insert(f->path).second) << f->path;
      }
  EXPECT_EQ(seen.size(), 8u);
}

TEST(DemoSample, APlanNumbersTasksInIssueOrderAndKeepsDependencies) {
  auto plan = sample_plan({"Normalize words", "Count words"});
  ASSERT_TRUE(plan) << plan.error().message;
  EXPECT_EQ(ids(*plan), (std::vector<std::string>{"T1", "T2"}));
  EXPECT_TRUE((*plan)[0].depends_on.empty());
  EXPECT_EQ((*plan)[1].depends_on, std::vector<std::string>{"T1"});
  auto three = sample_plan({"Normalize words", "Count words", "Line statistics"});
  ASSERT_TRUE(three);
  EXPECT_EQ((*three)[2].impl.path, "tally/lines.py");
  EXPECT_TRUE((*three)[2].depends_on.empty());
}

TEST(DemoSample, APlanRefusesATaskWithoutTheTaskItDependsOn) {
  auto plan = sample_plan({"Count words"});
  ASSERT_FALSE(plan);
  EXPECT_EQ(plan.error().kind, ErrorKind::usage);
  EXPECT_NE(plan.error().message.find("normalize"), std::string::npos) << plan.error().message;
  auto unknown = sample_plan({"No such issue"});
  ASSERT_FALSE(unknown);
  EXPECT_NE(unknown.error().message.find("No such issue"), std::string::npos);
}

class DemoScenario : public ::testing::Test {
 protected:
  void SetUp() override {
    auto b1 = sample_plan({"Normalize words", "Count words"});
    auto b2 = sample_plan({"Line statistics"});
    auto b3 = sample_plan({"Character classes"});
    ASSERT_TRUE(b1 && b2 && b3);
    bundles = {{"b1", *b1}, {"b2", *b2}, {"b3", *b3}};
    auto parsed = agents::SimScenario::parse(sample_scenario(bundles, 25), "demo");
    ASSERT_TRUE(parsed) << parsed.error().message;
    scenario = std::move(*parsed);
  }

  const agents::SimRule& rule(const std::string& bundle, const std::string& persona,
                              const std::string& task = "") {
    return scenario.match(bundle, persona, task, 1, "");
  }

  std::vector<SampleBundle> bundles;
  agents::SimScenario scenario;
};

TEST_F(DemoScenario, EachBundlesPlannerWritesAValidPlanOfItsOwnTasks) {
  for (const auto& b : bundles) {
    const auto& r = rule(b.id, "planner");
    ASSERT_EQ(r.files.size(), 2u) << b.id;
    EXPECT_EQ(r.files[1].path, "docs/develop/plans/{bundle}.tasks.json");
    auto doc = parse_json(r.files[1].content, "tasks.json");
    ASSERT_TRUE(doc) << b.id;
    EXPECT_EQ((*doc)["bundle"], b.id);
    EXPECT_EQ(schedule::check_plan(*doc), std::vector<std::string>{}) << b.id;
    ASSERT_EQ((*doc)["tasks"].size(), b.tasks.size()) << b.id;
    EXPECT_EQ(r.latency_ms, 25);
  }
}

TEST_F(DemoScenario, TestsAndModulesAreWrittenForTheirBundleAndTaskOnly) {
  EXPECT_EQ(rule("b1", "tdd-writer", "T2").files.at(0).path, "tests/test_counts.py");
  EXPECT_EQ(rule("b1", "developer", "T1").files.at(0).path, "tally/normalize.py");
  EXPECT_EQ(rule("b2", "developer", "T1").files.at(0).path, "tally/lines.py");
  EXPECT_EQ(rule("b3", "tdd-writer", "T1").files.at(0).path, "tests/test_chars.py");
  // b2 has no T2, and no bundle b4: the default, which writes nothing.
  EXPECT_TRUE(rule("b2", "developer", "T2").files.empty());
  EXPECT_TRUE(rule("b4", "planner").files.empty());
  EXPECT_EQ(&rule("b4", "planner"), &scenario.fallback);
  // Everyone else approves.
  EXPECT_EQ(&rule("b1", "code-reviewer"), &scenario.fallback);
  EXPECT_EQ(scenario.fallback.result["status"], "DONE");
  EXPECT_FALSE(scenario.counts_calls());
  EXPECT_FALSE(scenario.reads_prompt());
}

}  // namespace
}  // namespace devgraph::demo
