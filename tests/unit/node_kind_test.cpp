// A bundle node's kind comes from what GRAPH.yaml declares about it, never
// from its name.
#include "lane/node_kind.h"

#include <gtest/gtest.h>

#include "support/shipped.h"

namespace devgraph::lane {
namespace {

TEST(NodeKind, TheShippedBundleLaneIsReadFromTypeOwnerAndRoutes) {
  Graph g = test::shipped_graph();
  EXPECT_EQ(node_kind(g, "plan_bundle"), NodeKind::plan);
  EXPECT_EQ(node_kind(g, "task_scheduler"), NodeKind::schedule);
  EXPECT_EQ(node_kind(g, "bundle_verify"), NodeKind::verify);
  EXPECT_EQ(node_kind(g, "final_review"), NodeKind::review);
  EXPECT_EQ(node_kind(g, "repair_bundle"), NodeKind::repair);
  EXPECT_EQ(node_kind(g, "documentation_review"), NodeKind::docs);
  EXPECT_EQ(node_kind(g, "create_pr"), NodeKind::deliver);
  EXPECT_EQ(node_kind(g, "no_such_node"), NodeKind::unknown);
  // The task lane's developer node is no bundle repair.
  EXPECT_EQ(node_kind(g, "implement"), NodeKind::unknown);
}

TEST(NodeKind, ARenamedNodeOfAnotherPersonaWithAnApprovedRouteIsAReview) {
  std::string text(Graph::snapshot_text());
  const std::string from = "  final_review:\n    owner: code-reviewer\n";
  ASSERT_NE(text.find(from), std::string::npos);
  text.replace(text.find(from), from.size(), "  second_look:\n    owner: critic\n");
  const std::string listed = "      - final_review\n";
  ASSERT_NE(text.find(listed), std::string::npos);
  text.replace(text.find(listed), listed.size(), "      - second_look\n");
  auto g = Graph::parse(text, "GRAPH.yaml");
  ASSERT_TRUE(g.ok()) << g.error().message;
  EXPECT_EQ(node_kind(*g, "second_look"), NodeKind::review);
  EXPECT_EQ(node_kind(*g, "final_review"), NodeKind::unknown);
}

}  // namespace
}  // namespace devgraph::lane
