#include "lane/lane.h"

#include <gtest/gtest.h>

#include <string>

#include "lane/routes.h"
#include "support/shipped.h"
#include "support/test_util.h"
#include "util/fs.h"

namespace devgraph {
namespace {

// The graph with one line of its text replaced (it must be there once).
Graph edited_graph(const std::string& from, const std::string& to) {
  auto text = read_file(test::source_dir() + "/skill/GRAPH.yaml");
  EXPECT_TRUE(text.ok());
  std::string t = *text;
  auto at = t.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  EXPECT_EQ(t.find(from, at + 1), std::string::npos) << "ambiguous: " << from;
  t.replace(at, from.size(), to);
  auto g = Graph::parse(t, "edited GRAPH.yaml");
  EXPECT_TRUE(g.ok()) << (g.ok() ? "" : g.error().message);
  return std::move(g).value();
}

TEST(LaneConformance, EveryRouteTheEngineTakesIsARouteOfThatNodeInTheGraph) {
  Graph g = test::shipped_graph();
  for (const auto& use : lane::kRoutesTaken) {
    const GraphNode* n = g.node(use.node);
    ASSERT_NE(n, nullptr) << use.node;
    bool found = false;
    for (const auto& [name, target] : n->routes) found |= name == use.route;
    if (use.route == lane::route::kNext) found = !n->next.empty();
    EXPECT_TRUE(found) << use.node << " has no route " << use.route;
  }
}

TEST(LaneConformance, EveryRouteTheBundleLaneTakesByKindIsARouteOfANodeOfThatKind) {
  Graph g = test::shipped_graph();
  for (const auto& use : lane::kBundleRoutesTaken) {
    bool found = false;
    for (const auto& name : g.lane("bundle")->nodes) {
      if (lane::node_kind(g, name) != use.kind) continue;
      for (const auto& [route, target] : g.node(name)->routes) found |= route == use.route;
    }
    EXPECT_TRUE(found) << lane::node_kind_name(use.kind) << " has no route " << use.route;
  }
}

// A second review node, with the code reviewer, takes a review's routes.
TEST(LaneConformance, ASecondReviewNodeTakesTheRoutesOfAReview) {
  auto g = Graph::parse(test::edited_graph_text(test::second_review_edits()), "GRAPH.yaml");
  ASSERT_TRUE(g) << g.error().message;
  EXPECT_EQ(check_graph(*g), std::vector<std::string>{});
  lane::Walker w(*g);
  auto after_first = w.next("final_review", lane::route::kApproved);
  ASSERT_TRUE(after_first) << after_first.error().message;
  EXPECT_EQ(*after_first, "second_review");
  auto after_second = w.next("second_review", lane::route::kApproved);
  ASSERT_TRUE(after_second) << after_second.error().message;
  EXPECT_EQ(*after_second, "documentation_review");
  EXPECT_EQ(*w.next("second_review", lane::route::kFindings), "repair_bundle");
  // A route the engine takes at no review stays refused there.
  auto passed = w.next("second_review", lane::route::kPassed);
  ASSERT_FALSE(passed);
  EXPECT_EQ(passed.error().message,
            "the engine does not take route passed at second_review (lane/routes.h)");
}

TEST(LaneConformance, EveryEventTheEngineWritesIsInTheVocabulary) {
  Graph g = test::shipped_graph();
  for (auto e : lane::kEventsWritten) EXPECT_TRUE(g.has_event(e)) << e;
  for (const auto& ne : lane::kNodeDoneEvents) {
    EXPECT_NE(g.node(ne.node), nullptr) << ne.node;
    EXPECT_TRUE(g.has_event(ne.event)) << ne.event;
  }
}

TEST(LaneConformance, TheCompletionEventsTheEngineWritesCompleteTheirLanes) {
  Graph g = test::shipped_graph();
  auto completes = [&](const char* lane, std::string_view event) {
    const auto& on = g.lane(lane)->complete_on;
    return std::find(on.begin(), on.end(), event) != on.end();
  };
  EXPECT_TRUE(completes("task", lane::event::kTaskCommitted));
  EXPECT_TRUE(completes("bundle", lane::event::kPrCreated));
  EXPECT_TRUE(completes("bundle", lane::event::kBranchReady));
}

TEST(LaneConformance, EveryAgentNodeOfTheBundleAndTaskLanesNamesPersonasTheEngineCanRun) {
  Graph g = test::shipped_graph();
  lane::Walker w(g);
  for (const char* name : {"bundle", "task"})
    for (const auto& node : g.lane(name)->nodes) {
      const GraphNode* n = g.node(node);
      if (n->type != "agent" && n->type != "agent_parallel") continue;
      auto p = w.personas(node, {false, "developer"});
      ASSERT_TRUE(p.ok()) << node << ": " << p.error().message;
      EXPECT_FALSE(p->empty()) << node;
    }
}

TEST(Walker, NextIsTheRouteInTheGraph) {
  Graph g = test::shipped_graph();
  lane::Walker w(g);
  EXPECT_EQ(*w.next("write_tdd", "done"), "implement");
  EXPECT_EQ(*w.next("implement", "concerns_actionable"), "repair_task");
  EXPECT_EQ(*w.next("verify", "done"), "commit_task");
  EXPECT_EQ(*w.next("bundle_verify", "failed"), "repair_bundle");
  EXPECT_EQ(*w.next("create_pr", "next"), "bundle_scheduler");
}

TEST(Walker, ARouteTheEngineDoesNotDeclareIsRefused) {
  Graph g = test::shipped_graph();
  lane::Walker w(g);
  auto r = w.next("bundle_scheduler", "handoff");  // in GRAPH.yaml, not taken by the engine
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("lane/routes.h"), std::string::npos);
  EXPECT_FALSE(w.next("nowhere", "done").ok());
}

TEST(Walker, ARouteMissingFromTheGraphIsAnErrorNamingIt) {
  Graph g = edited_graph("      concerns_observational: commit_task\n", "");
  lane::Walker w(g);
  auto r = w.next("verify", "concerns_observational");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("verify has no route concerns_observational"), std::string::npos)
      << r.error().message;
}

TEST(Walker, FollowsAnEditedRoute) {
  Graph g =
      edited_graph("    routes:\n      done: verify\n      concerns_actionable: repair_task",
                   "    routes:\n      done: commit_task\n      concerns_actionable: repair_task");
  lane::Walker w(g);
  EXPECT_EQ(*w.follow("task", "implement", "done", "write_tdd"), "commit_task");
}

TEST(Walker, RetryPreviousGoesBackWhereTheCursorCameFrom) {
  Graph g = test::shipped_graph();
  lane::Walker w(g);
  EXPECT_EQ(*w.follow("task", "blocker_recovery", "recovered", "implement"), "implement");
  EXPECT_EQ(*w.follow("bundle", "context_recovery", "recovered", "plan_bundle"), "plan_bundle");
  EXPECT_FALSE(w.follow("task", "blocker_recovery", "recovered", "").ok());
}

TEST(Walker, TheRunsHumanStopParksABundleOrTaskCursorAtTheCursorInterrupt) {
  Graph g = test::shipped_graph();
  lane::Walker w(g);
  EXPECT_EQ(*w.next("blocker_recovery", "exhausted"), "human_required");
  EXPECT_EQ(*w.follow("task", "blocker_recovery", "exhausted", "implement"), "awaiting_human");
  EXPECT_EQ(*w.follow("bundle", "context_recovery", "unresolved", "plan_bundle"), "awaiting_human");
  EXPECT_EQ(*w.follow("task", "repair_task", "exhausted", "verify"), "awaiting_human");
  EXPECT_EQ(*w.follow("task", "write_tdd", "blocked", ""), "blocker_recovery");
}

TEST(Walker, ARouteIntoAnotherLaneIsRefused) {
  Graph g = edited_graph("      passed: final_review\n", "      passed: write_tdd\n");
  lane::Walker w(g);
  auto r = w.follow("bundle", "bundle_verify", "passed", "");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("outside lane bundle"), std::string::npos);
}

TEST(Walker, PersonasComeFromOwnersAndSelectors) {
  Graph g = test::shipped_graph();
  lane::Walker w(g);
  EXPECT_EQ(*w.personas("write_tdd"), std::vector<std::string>{"tdd-writer"});
  EXPECT_EQ(*w.personas("verify"), (std::vector<std::string>{"tester", "adversarial-tester"}));
  EXPECT_EQ(*w.personas("implement", {false, ""}), std::vector<std::string>{"developer"});
  EXPECT_EQ(*w.personas("implement", {true, ""}), std::vector<std::string>{"iac-developer"});
  EXPECT_EQ(*w.personas("repair_task", {false, "tdd-writer"}),
            std::vector<std::string>{"tdd-writer"});
  EXPECT_FALSE(w.personas("repair_task", {false, ""}).ok());
  EXPECT_TRUE(w.personas("commit_task")->empty());  // code, no persona
  EXPECT_TRUE(w.personas("bundle_verify")->empty());
}

TEST(Walker, AnEditedOwnerChangesThePersona) {
  Graph g = edited_graph("  final_review:\n    owner: code-reviewer",
                         "  final_review:\n    owner: tester");
  lane::Walker w(g);
  EXPECT_EQ(*w.personas("final_review"), std::vector<std::string>{"tester"});
}

TEST(Walker, LimitsComeFromGuardsElseDefaults) {
  Graph g = test::shipped_graph();
  lane::Walker w(g);
  EXPECT_EQ(w.max_cycles("repair_task"), 3);
  EXPECT_EQ(w.max_retries("blocker_recovery"), 2);
  EXPECT_EQ(w.max_retries("context_recovery"), g.defaults.max_retries);
  Graph edited =
      edited_graph("    guards:\n      max_retries: 2\n", "    guards:\n      max_retries: 5\n");
  EXPECT_EQ(lane::Walker(edited).max_retries("blocker_recovery"), 5);
}

TEST(Walker, SchedulersAndGivingUpRoutesComeFromTheGraph) {
  Graph g = test::shipped_graph();
  lane::Walker w(g);
  EXPECT_EQ(w.node_of_type("bundle", "scheduler"), "task_scheduler");
  EXPECT_EQ(w.node_of_type("nowhere", "scheduler"), std::nullopt);
  EXPECT_EQ(w.giving_up_route("context_recovery"), "unresolved");
  EXPECT_EQ(w.giving_up_route("blocker_recovery"), "exhausted");
}

TEST(Walker, LaneNodesAreTheGraphsOrder) {
  Graph g = test::shipped_graph();
  lane::Walker w(g);
  EXPECT_EQ(w.lane_nodes("task"), g.lane("task")->nodes);
  EXPECT_EQ(w.shared_node_of_type("cursor_interrupt"), "awaiting_human");
  EXPECT_EQ(w.shared_node_of_type("no_such_type"), std::nullopt);
}

TEST(FindingOwner, TheTestWriterOwnsFindingsAboutItsOwnFilesOnly) {
  std::vector<std::string> tests = {"tests/test_counts.py"};
  EXPECT_EQ(lane::finding_owner({"tests/test_counts.py:12"}, tests, "tdd-writer", "developer"),
            "tdd-writer");
  EXPECT_EQ(lane::finding_owner({"/wt/tests/test_counts.py"}, tests, "tdd-writer", "developer"),
            "tdd-writer");
  EXPECT_EQ(lane::finding_owner({"tests/test_counts.py", "tally/counts.py"}, tests, "tdd-writer",
                                "developer"),
            "developer");
  EXPECT_EQ(lane::finding_owner({""}, tests, "tdd-writer", "iac-developer"), "iac-developer");
  EXPECT_EQ(lane::finding_owner({}, tests, "tdd-writer", "developer"), "developer");
  EXPECT_EQ(
      lane::finding_owner({"x_test_counts.py"}, {"test_counts.py"}, "tdd-writer", "developer"),
      "developer");
}

}  // namespace
}  // namespace devgraph
