// The skill's shipped assets, loaded for tests that run against the real
// graph and contracts; a failure to load them fails the test at once.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "bundle/crash_points.h"
#include "bundle/layout.h"
#include "contracts/schema.h"
#include "graph/graph.h"
#include "store/run_store.h"
#include "support/test_util.h"

namespace devgraph::test {

Graph shipped_graph();
Schema shipped_state_schema();

// Edits of the shipped GRAPH.yaml's text: each `from` must be there once.
using GraphEdits = std::vector<std::pair<std::string, std::string>>;
std::string edited_graph_text(const GraphEdits& edits);
// A second review: final_review's approval leads to `second_review`, a
// code reviewer's node with a review's routes, and from there to the
// documentation review.
GraphEdits second_review_edits();

// The conformance suite's edits of the shipped graph: each passes
// `validate graph` and must run to delivery (the bundle driver's
// Conformance/MutatedGraph in process, Autonomy's MutatedSkill through the
// binary with --skill).
struct GraphMutation {
  const char* name;
  GraphEdits edits;
};
namespace mutation {
inline constexpr std::string_view kToCreatePr = "final_review straight to create_pr";
inline constexpr std::string_view kSkipDocs = "skip documentation_review";
inline constexpr std::string_view kOneVerifier = "verify with one verifier";
inline constexpr std::string_view kSecondReview = "a second review node";
inline constexpr std::string_view kRecoveryBudget = "recovery budgets changed";
}  // namespace mutation
// In that order (a function, so that a test's static registration may
// take it).
const std::vector<GraphMutation>& graph_mutations();
// A mutation's name as a test name: letters and digits, others '_'.
std::string mutation_test_name(const GraphMutation& m);

// Crash points that only record the names reached ("commit:b1/T2").
class RecordingCrashPoints final : public bundle::CrashPoints {
 public:
  void reach(std::string_view label, std::string_view subject) override {
    names.push_back(std::string(label) + ":" + std::string(subject));
  }
  std::vector<std::string> names;
};

// A fresh run (RUN_DIR s/run) on the shipped graph and schema, for tests
// of the bundle's parts; bundle b1's layout, its worktree s/wt.
class RunFixture : public ::testing::Test {
 protected:
  Scratch s;
  Graph graph = shipped_graph();
  Schema schema = shipped_state_schema();
  RunStore store{s / "run", graph, schema};
  bundle::BundleLayout layout{s / "run", "b1", s / "wt"};
  RecordingCrashPoints crash;
  // The state of the run just created.
  Json initial;

  void SetUp() override {
    auto init = store.init({s / "repo", "main", Json()});
    ASSERT_TRUE(init.ok()) << init.error().message;
    initial = init->state;
  }
};

}  // namespace devgraph::test
