// The recovery decisions, pure: where a stopped persona's cursor goes and
// what context recovery finds.
#include "bundle/recovery.h"

#include <gtest/gtest.h>

#include "support/shipped.h"
#include "support/test_util.h"

namespace devgraph::bundle {
namespace {

PersonaResult result(const std::string& status, std::vector<std::string> blockers = {},
                     std::vector<std::string> missing = {}) {
  PersonaResult r;
  r.persona = "developer";
  r.status = status;
  r.summary = "stuck";
  r.blockers = std::move(blockers);
  r.missing_context = std::move(missing);
  return r;
}

TEST(Recovery, BlockedIsRetriedWhileBlockerRecoveryAllows) {
  Graph g = test::shipped_graph();
  lane::Walker w(g);
  int budget = w.max_retries("blocker_recovery");
  for (int spent = 0; spent <= budget; ++spent) {
    auto d = decide(w, "implement", result("BLOCKED", {"tool crashed"}), {spent, 0}, {});
    EXPECT_EQ(d.route, "blocked");
    EXPECT_EQ(d.event, "BLOCKED");
    EXPECT_TRUE(d.spends_retry);
    EXPECT_EQ(d.retry, spent < budget) << spent;
  }
}

TEST(Recovery, CapacityIsFreeAndAProviderLimitGoesToAPerson) {
  Graph g = test::shipped_graph();
  lane::Walker w(g);
  auto cap = decide(w, "implement", result("BLOCKED", {"capacity"}), {99, 0}, {});
  EXPECT_TRUE(cap.retry);
  EXPECT_FALSE(cap.spends_retry);
  auto limit = decide(w, "implement", result("BLOCKED", {"provider_limit"}), {0, 0}, {});
  EXPECT_FALSE(limit.retry);
}

TEST(Recovery, NeedsContextIsRecoveredOnlyWhenSomethingWasFound) {
  Graph g = test::shipped_graph();
  lane::Walker w(g);
  auto found = decide(w, "write_tdd", result("NEEDS_CONTEXT", {}, {"x"}), {0, 0}, {"- x: plan"});
  EXPECT_EQ(found.route, "needs_context");
  EXPECT_TRUE(found.retry);
  auto nothing = decide(w, "write_tdd", result("NEEDS_CONTEXT", {}, {"x"}), {0, 0}, {});
  EXPECT_FALSE(nothing.retry);
  auto again = decide(w, "write_tdd", result("NEEDS_CONTEXT", {}, {"x"}),
                      {0, w.max_retries("context_recovery")}, {"- x: plan"});
  EXPECT_FALSE(again.retry);
  // verify has no needs_context route: its blocked route is taken.
  auto verifier = decide(w, "verify", result("NEEDS_CONTEXT", {}, {"x"}), {0, 0}, {"- x: plan"});
  EXPECT_EQ(verifier.route, "blocked");
  EXPECT_EQ(verifier.event, "NEEDS_CONTEXT");
}

TEST(Recovery, ContextIsLookedForInThePlanSpecRepositoryHistoryAndOtherResults) {
  ContextSources src;
  src.plan_path = "docs/develop/plans/b1.md";
  src.plan = "# Plan\n\n## Task T2: farewell\nSay Goodbye.\n";
  src.spec_path = "spec.md";
  src.spec = "Words: hello, goodbye.\n";
  src.existing_paths = {"docs/words.md"};
  src.repository = {{Source::repository, "src/words.py", 12, "GOODBYE = 'goodbye'"}};
  src.branch_commits = {"abc123 feat(b1): goodbye helper"};
  src.sibling_results = {{"tasks/T1/developer.result.json", "used the goodbye helper"}};
  auto p = find_context({"goodbye", "docs/words.md", "nowhere"}, src);
  auto has = [&](const std::string& text) {
    return std::any_of(p.begin(), p.end(),
                       [&](const std::string& l) { return l.find(text) != std::string::npos; });
  };
  EXPECT_TRUE(has("- docs/develop/plans/b1.md:4: Say Goodbye."));
  EXPECT_TRUE(has("- spec.md:1: Words: hello, goodbye."));
  EXPECT_TRUE(has("- src/words.py:12: GOODBYE"));
  EXPECT_TRUE(has("- commit abc123: feat(b1): goodbye helper"));
  EXPECT_TRUE(has("- tasks/T1/developer.result.json:1: used the goodbye helper"));
  EXPECT_TRUE(has("- docs/words.md: exists in the repository"));
  EXPECT_FALSE(has("nowhere"));
  EXPECT_TRUE(find_context({""}, src).empty());
  EXPECT_EQ(find_context({"goodbye"}, src, 2).size(), 2u);
}

TEST(Recovery, AQuestionInAPersonasOwnWordsFindsTheLineThatAnswersIt) {
  ContextSources src;
  src.repository = {{Source::repository, "README.md", 3, "Conventions: see docs/conventions.md."},
                    {Source::repository, "docs/conventions.md", 5,
                     "Dates in reports use ISO 8601 (YYYY-MM-DD)."}};
  auto p = find_context({"Which date format should the report use?"}, src);
  ASSERT_EQ(p.size(), 1u);
  EXPECT_EQ(p[0], "- docs/conventions.md:5: Dates in reports use ISO 8601 (YYYY-MM-DD).");
}

TEST(Recovery, AQuestionAnIssueCommentAnswersPointsAtTheComment) {
  ContextSources src;
  src.issue_comments = lines_of(Source::issue, "issue #7, comment 2 by @alice",
                                "Thanks!\nThe report's dates: ISO 8601, please (YYYY-MM-DD).\n");
  auto p = find_context({"Which date format should the report use?"}, src);
  ASSERT_EQ(p.size(), 1u);
  EXPECT_EQ(p[0],
            "- issue #7, comment 2 by @alice:2: The report's dates: ISO 8601, please "
            "(YYYY-MM-DD).");
}

TEST(Recovery, AResearchersPointersCountOnlyWhereTheFileHasTheLine) {
  test::Scratch s;
  test::write_text(s / "docs/brand.md", "# Brand\n\nPrimary: #ff0000\n");
  auto schema = Schema::load(test::source_dir() + "/skill/contracts/research-answer.schema.json");
  ASSERT_TRUE(schema.ok()) << schema.error().message;
  Json answer = {{"status", "DONE"},
                 {"research",
                  {{"found", true},
                   {"answer", "red"},
                   {"pointers", Json::array({{{"path", "docs/brand.md"}, {"line", 3}},
                                             {{"path", "docs/brand.md"}, {"line", 9}},
                                             {{"path", "docs/none.md"}, {"line", 1}},
                                             {{"path", "../outside.md"}, {"line", 1}}})}}}};
  auto p = checked_research(answer, s.path(), &*schema);
  ASSERT_EQ(p.size(), 1u);
  EXPECT_EQ(p[0], "- docs/brand.md:3: Primary: #ff0000");
  // Not found, or an answer the schema refuses: nothing.
  answer["research"]["found"] = false;
  EXPECT_TRUE(checked_research(answer, s.path(), &*schema).empty());
  answer["research"] = {{"found", true}, {"pointers", "docs/brand.md:3"}};
  EXPECT_TRUE(checked_research(answer, s.path(), &*schema).empty());
  EXPECT_TRUE(checked_research(Json{{"status", "DONE"}}, s.path(), &*schema).empty());
}

TEST(Recovery, WhatWasSearchedIsInTheReasonAPersonReads) {
  Graph g = test::shipped_graph();
  lane::Walker w(g);
  auto nothing = decide(w, "write_tdd", result("NEEDS_CONTEXT", {}, {"the moon"}), {0, 0, 0}, {},
                        "brief; tracked files (git grep: moon; 0 lines)");
  EXPECT_FALSE(nothing.retry);
  EXPECT_NE(nothing.why.find("asked: the moon"), std::string::npos) << nothing.why;
  EXPECT_NE(nothing.why.find("git grep: moon"), std::string::npos) << nothing.why;
}

TEST(Recovery, ContextRecoveryBudgetsComeFromTheGraph) {
  Graph g = test::shipped_graph();
  const GraphNode* n = g.node("context_recovery");
  ASSERT_NE(n, nullptr);
  EXPECT_EQ(n->dispatches, "researcher");
  EXPECT_TRUE(g.has_persona("researcher"));
  EXPECT_GT(n->max_pointers, 0);
  EXPECT_EQ(n->max_researcher_runs, 1);
  EXPECT_EQ(n->max_retries, 2);
}

TEST(Recovery, ANegativeContextRecoveryBudgetIsRefusedNamingTheField) {
  for (const char* key : {"max_pointers", "max_researcher_runs"}) {
    auto g = Graph::parse(std::string("version: 4\nentrypoint: scan\nlanes: {}\nnodes:\n"
                                      "  context_recovery:\n    type: recovery\n    guards: {") +
                              key + ": -1}\n",
                          "G.yaml");
    ASSERT_FALSE(g) << key;
    EXPECT_NE(g.error().message.find(std::string("nodes.context_recovery.guards.") + key +
                                     " must be 0 or more"),
              std::string::npos)
        << g.error().message;
  }
}

TEST(Recovery, SpentBudgetsAreReadFromTheCursor) {
  auto b = spent_budgets(Json{{"recovery_retries", 2}, {"context_recoveries", 1}});
  EXPECT_EQ(b.retries, 2);
  EXPECT_EQ(b.context, 1);
  EXPECT_EQ(spent_budgets(Json::object()).retries, 0);
  EXPECT_EQ(spent_budgets(Json{{"researcher_runs", 1}}).researcher, 1);
}

}  // namespace
}  // namespace devgraph::bundle
