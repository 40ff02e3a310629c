// The shipped assets (GRAPH.yaml, contracts) against the develop-v4
// reference they are compatible with, and the graph cross-checks.
#include <gtest/gtest.h>

#include <algorithm>
#include <sstream>

#include "graph/graph.h"
#include "graph/yaml_doc.h"
#include "support/test_util.h"

namespace devgraph {
namespace {

std::string skill_dir() {
  return test::source_dir() + "/skill";
}

Graph load_graph(const std::string& dir) {
  auto g = Graph::load(dir);
  EXPECT_TRUE(g.ok()) << (g.ok() ? "" : g.error().message);
  return std::move(g).value();
}

// The whole document, every key, not only those the typed model keeps.
Json graph_document(const std::string& dir) {
  const std::string path = dir + "/GRAPH.yaml";
  auto doc = parse_yaml_document(test::slurp(path), path);
  EXPECT_TRUE(doc.ok()) << (doc.ok() ? "" : doc.error().message);
  return doc.ok() ? std::move(doc).value() : Json();
}

// Removes the value at a dotted path ("nodes.plan_bundle.accept_when").
void erase_path(Json& doc, const std::string& dotted) {
  Json* cur = &doc;
  std::string key;
  std::stringstream in(dotted);
  std::vector<std::string> parts;
  while (std::getline(in, key, '.')) parts.push_back(key);
  for (size_t i = 0; i + 1 < parts.size(); ++i) {
    ASSERT_TRUE(cur->contains(parts[i])) << dotted;
    cur = &(*cur)[parts[i]];
  }
  ASSERT_TRUE(cur->contains(parts.back())) << dotted;
  cur->erase(parts.back());
}

TEST(ShippedGraph, SameDataAsTheReferenceExceptDevgraphsOwnKeys) {
  if (test::reference_dir().empty()) GTEST_SKIP() << "reference runtime not available";
  Json ours = graph_document(skill_dir());
  Json theirs = graph_document(test::reference_dir());
  // devgraph lists its personas in the graph (the reference kept them in a
  // script) and names its own commands where the reference named scripts.
  const std::vector<std::string> tool_keys = {"capacity.tool",
                                              "capacity.handoff_tool",
                                              "headless.driver",
                                              "placement.guard",
                                              "observability.dashboard",
                                              "observability.session_metrics_tool",
                                              "nodes.plan_bundle.accept_when",
                                              "nodes.task_scheduler.runnable_set",
                                              "nodes.commit_task.footprint_check"};
  for (const auto& k : tool_keys) {
    erase_path(ours, k);
    erase_path(theirs, k);
  }
  erase_path(ours, "personas");
  // Which issues are work is devgraph's own section (the reference left
  // intake to its model).
  erase_path(ours, "intake");
  // So are the budgets `devgraph run` holds each bundle to.
  erase_path(ours, "budgets");
  // And what monitoring does about failing checks and reviews (the
  // reference only reported them).
  erase_path(ours, "reactions");
  // And the multi-perspective critique, a workflow beside the reference's
  // develop skill.
  erase_path(ours, "discuss");
  // And the fix loop with its escalation ladder (the reference's develop
  // skill repairs without either).
  erase_path(ours, "fix");
  erase_path(ours, "escalation");
  // And the checkpointed debug sessions (the reference's debug manager is a
  // model reading its own file).
  erase_path(ours, "debug");
  // With the routes and the event its rounds take as gates of the bundle
  // lane.
  for (const char* k :
       {"nodes.plan_bundle.routes.discuss_revise", "nodes.plan_bundle.routes.discuss_blocked",
        "nodes.documentation_review.routes.discuss_revise",
        "nodes.documentation_review.routes.discuss_blocked",
        // And the fix loop's way back to planning.
        "nodes.repair_bundle.routes.replan",
        // And context recovery's researcher and its budgets (the
        // reference's recovery is its model's reading).
        "nodes.context_recovery.dispatches", "nodes.context_recovery.guards",
        // And the repository's git hooks at every commit, with the route
        // and the event of a refusal (the reference says nothing of hooks).
        "headless.run_git_hooks", "nodes.commit_task.routes.hook_rejected",
        // And the stray a task's writer is sent back for once.
        "nodes.commit_task.routes.stray_written"})
    erase_path(ours, k);
  auto& events = ours["events"];
  for (const char* type :
       {"DISCUSS_ROUND_DONE", "FIX_DIAGNOSED", "BUNDLE_REPLANNED", "COMMIT_HOOK_REJECTED",
        "STRAY_SENT_BACK"}) {
    auto own = std::find(events.begin(), events.end(), Json(type));
    ASSERT_NE(own, events.end()) << type;
    events.erase(own);
  }
  // And the evidence devgraph takes itself (the reference's model was told
  // to check it).
  erase_path(ours, "nodes.write_tdd.evidence");
  erase_path(ours, "nodes.verify.evidence");
  EXPECT_EQ(ours, theirs) << "diff: " << Json::diff(theirs, ours).dump();
}

TEST(ShippedGraph, EveryTopLevelSectionIsExplained) {
  std::string text = test::slurp(skill_dir() + "/GRAPH.yaml");
  std::stringstream in(text);
  std::string line, previous;
  int sections = 0;
  while (std::getline(in, line)) {
    bool top_level_key = !line.empty() && line[0] != ' ' && line[0] != '#' && line[0] != '-' &&
                         line.find(':') != std::string::npos;
    if (top_level_key) {
      ++sections;
      std::string key = line.substr(0, line.find(':'));
      bool scalar_header = key == "version" || key == "name";
      if (!scalar_header) {
        EXPECT_EQ(previous.rfind("#", 0), 0u) << "no comment above " << key;
      }
    }
    if (!line.empty()) previous = line;
  }
  EXPECT_GT(sections, 15);
}

TEST(ShippedGraph, NodesWithAnUnobviousJobAreExplained) {
  std::string text = test::slurp(skill_dir() + "/GRAPH.yaml");
  for (const char* node :
       {"bundle_scheduler", "task_scheduler", "handoff", "commit_task", "verify",
        "context_recovery", "awaiting_human", "audit_triage", "create_pr", "clean_integrate"}) {
    std::string header = std::string("\n  ") + node + ":\n";
    size_t at = text.find(header);
    ASSERT_NE(at, std::string::npos) << node;
    size_t line_start = text.rfind('\n', at - 1);
    std::string line_above = text.substr(line_start + 1, at - line_start - 1);
    EXPECT_NE(line_above.find('#'), std::string::npos) << "no comment above node " << node;
  }
}

Json without_descriptions(Json v) {
  if (v.is_object()) {
    v.erase("description");
    for (auto& item : v) item = without_descriptions(item);
  } else if (v.is_array()) {
    for (auto& item : v) item = without_descriptions(item);
  }
  return v;
}

void collect_descriptions(const Json& v, const std::string& at,
                          std::map<std::string, std::string>& out) {
  if (v.is_object()) {
    for (auto it = v.begin(); it != v.end(); ++it) {
      if (it.key() == "description" && it->is_string())
        out[at] = it->get<std::string>();
      else
        collect_descriptions(*it, at + "/" + it.key(), out);
    }
  } else if (v.is_array()) {
    for (size_t i = 0; i < v.size(); ++i)
      collect_descriptions(v[i], at + "/" + std::to_string(i), out);
  }
}

TEST(ShippedContracts, SameSchemasInDevgraphsOwnWords) {
  if (test::reference_dir().empty()) GTEST_SKIP() << "reference runtime not available";
  for (const char* name : {"run-state.schema.json", "agent-result.schema.json"}) {
    auto ours = load_json_file(skill_dir() + "/contracts/" + name);
    auto theirs = load_json_file(test::reference_dir() + "/contracts/" + name);
    ASSERT_TRUE(ours.ok() && theirs.ok()) << name;
    EXPECT_EQ(without_descriptions(*ours), without_descriptions(*theirs)) << name;
    std::map<std::string, std::string> our_text, their_text;
    collect_descriptions(*ours, "", our_text);
    collect_descriptions(*theirs, "", their_text);
    EXPECT_EQ(our_text.size(), their_text.size()) << name;
    for (const auto& [where, text] : our_text) {
      auto ref = their_text.find(where);
      if (ref != their_text.end()) {
        EXPECT_NE(text, ref->second) << name << " " << where;
      }
      EXPECT_EQ(text.find("checkpoint.py"), std::string::npos) << name << " " << where;
    }
  }
}

std::string errors_of(const std::string& yaml) {
  auto g = Graph::parse(yaml, "G.yaml");
  EXPECT_TRUE(g.ok()) << (g.ok() ? "" : g.error().message);
  std::string out;
  for (const auto& e : check_graph(*g)) out += e + "\n";
  return out;
}

TEST(GraphCrossChecks, ShippedGraphPassesThem) {
  EXPECT_TRUE(check_graph(load_graph(skill_dir())).empty());
}

TEST(GraphCrossChecks, EngineAgreements) {
  std::string errors = errors_of(R"(
version: 3
entrypoint: start
terminal_states: [wait]
pause_states: [start]
personas: [planner]
events: [DONE]
capacity: {signals: [turn], thresholds: {amber: {turn: 5}}, actions: {amber: go}}
lanes:
  orchestrator: {nodes: [start, wait]}
  bundle: {complete_at: plan, complete_on: [DONE], nodes: [plan]}
  task: {complete_at: work, complete_on: [DONE], nodes: [work]}
  shared: {nodes: [fix]}
nodes:
  start: {type: deterministic, routes: {again: retry_previous}}
  wait: {type: scheduler}
  plan: {type: agent, owner: planner, dispatched_by: wizard, next: plan}
  work: {type: deterministic}
  fix: {type: recovery, routes: {recovered: retry_previous}}
)");
  for (const char* want :
       {"version 3 is not the graph version devgraph runs (4)",
        "events: RUN_STARTED is written by devgraph itself but not listed",
        "events: PERSONA_DISPATCHED is written by devgraph itself but not listed",
        "capacity.thresholds.amber: tiers are yellow, orange and red",
        "pause state 'start' is a deterministic node, not a handoff node",
        "terminal state 'wait' is a scheduler node, not a terminal one",
        "start: route again -> retry_previous only makes sense on a shared or interrupt node",
        "plan: dispatched_by 'wizard' is neither orchestrator nor a persona",
        "lanes.bundle: no node of another lane routes into it",
        "lanes.task: no node of another lane routes into it"})
    EXPECT_NE(errors.find(want), std::string::npos) << want << "\nin:\n" << errors;
  EXPECT_EQ(errors.find("fix: route"), std::string::npos) << errors;
}

}  // namespace
}  // namespace devgraph
