#include "support/shipped.h"

#include <gtest/gtest.h>

#include <cctype>
#include <cstdlib>

#include "skill/skill.h"
#include "support/test_util.h"

namespace devgraph::test {
namespace {

template <class T>
T must(Expected<T> e, const char* what) {
  if (!e) {
    ADD_FAILURE() << what << ": " << e.error().message;
    std::abort();  // every later line of the test would read a broken asset
  }
  return std::move(e).value();
}

}  // namespace

Graph shipped_graph() {
  return must(Graph::load(source_dir() + "/skill"), "the shipped GRAPH.yaml");
}

Schema shipped_state_schema() {
  return must(Schema::load(state_schema_path(source_dir() + "/skill")), "the state schema");
}

std::string edited_graph_text(const GraphEdits& edits) {
  std::string text(Graph::snapshot_text());
  for (const auto& [from, to] : edits) {
    auto at = text.find(from);
    EXPECT_NE(at, std::string::npos) << from;
    if (at == std::string::npos) continue;
    EXPECT_EQ(text.find(from, at + 1), std::string::npos) << "ambiguous: " << from;
    text.replace(at, from.size(), to);
  }
  return text;
}

GraphEdits second_review_edits() {
  return {{"      approved: documentation_review\n", "      approved: second_review\n"},
          {"      - documentation_review\n", "      - second_review\n      - documentation_review\n"},
          {"  documentation_review:\n    owner: documentation-reviewer\n",
           "  second_review:\n    owner: code-reviewer\n    type: agent\n"
           "    dispatched_by: tech-lead\n    routes:\n      approved: documentation_review\n"
           "      findings: repair_bundle\n      blocked: blocker_recovery\n\n"
           "  documentation_review:\n    owner: documentation-reviewer\n"}};
}

const std::vector<GraphMutation>& graph_mutations() {
  static const std::vector<GraphMutation> all = {
      {mutation::kToCreatePr.data(),
       {{"      approved: documentation_review\n", "      approved: create_pr\n"}}},
      {mutation::kSkipDocs.data(),
       {{"      approved: documentation_review\n", "      approved: create_pr\n"},
        {"      - documentation_review\n", ""},
        {"  documentation_review:\n    owner: documentation-reviewer\n",
         "  unused_docs:\n    owner: documentation-reviewer\n"},
        {"      - create_pr\n", "      - unused_docs\n      - create_pr\n"}}},
      {mutation::kOneVerifier.data(),
       {{"owner: [tester, adversarial-tester]", "owner: [tester]"}}},
      {mutation::kSecondReview.data(), second_review_edits()},
      {mutation::kRecoveryBudget.data(),
       {{"    policy: retry_safe_transient_failures_then_human\n    guards:\n      max_retries: 2\n",
         "    policy: retry_safe_transient_failures_then_human\n    guards:\n      max_retries: 1\n"},
        {"  max_repair_cycles: 3\n", "  max_repair_cycles: 1\n"}}},
  };
  return all;
}

std::string mutation_test_name(const GraphMutation& m) {
  std::string n;
  for (char c : std::string(m.name)) n += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
  return n;
}

}  // namespace devgraph::test
