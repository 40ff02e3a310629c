#include "graph/graph.h"

#include <gtest/gtest.h>

#include <optional>

#include "support/test_util.h"
#include "util/fs.h"

namespace devgraph {
namespace {

Graph shipped_graph() {
  auto g = Graph::load(test::source_dir() + "/skill");
  EXPECT_TRUE(g.ok()) << (g.ok() ? "" : g.error().message);
  return std::move(g).value();
}

TEST(Graph, ShippedGraphLoadsAndIsSound) {
  Graph g = shipped_graph();
  EXPECT_EQ(g.version, 4);
  EXPECT_EQ(g.entrypoint, "scan");
  EXPECT_TRUE(check_graph(g).empty());
}

TEST(Graph, LanesAndCompletionComeFromTheFile) {
  Graph g = shipped_graph();
  ASSERT_NE(g.lane("task"), nullptr);
  EXPECT_EQ(g.lane("task")->complete_at, "commit_task");
  EXPECT_EQ(g.lane("task")->complete_on, std::vector<std::string>{"TASK_COMMITTED"});
  EXPECT_EQ(g.lane("bundle")->complete_at, "create_pr");
  EXPECT_EQ(g.lane_of("verify")->name, "task");
  EXPECT_EQ(g.lane_of("awaiting_human")->name, "shared");
  EXPECT_EQ(g.lane_of("nope"), nullptr);
  EXPECT_EQ(g.node("verify")->owners, (std::vector<std::string>{"tester", "adversarial-tester"}));
  EXPECT_EQ(g.node("verify")->lane, "task");
}

TEST(Graph, LaneOwnersInFileOrder) {
  using Owners = std::vector<std::pair<std::string, std::string>>;
  EXPECT_EQ(shipped_graph().lane_owners, (Owners{{"orchestrator", "orchestrator"},
                                                 {"bundle", "tech-lead"},
                                                 {"task", "tech-lead"},
                                                 {"shared", "cursor-owner"}}));
  // An owner that is not a string is left out; it is not a load error.
  auto g = Graph::parse(
      "version: 4\nentrypoint: a\nlanes: {}\nnodes: {}\n"
      "lane_owner: {b: [x], a: cursor-owner, c: 3}\n",
      "G.yaml");
  ASSERT_TRUE(g) << g.error().message;
  EXPECT_EQ(g->lane_owners, (Owners{{"a", "cursor-owner"}}));
  auto none =
      Graph::parse("version: 4\nentrypoint: a\nlanes: {}\nnodes: {}\nlane_owner: [a]\n", "G.yaml");
  ASSERT_TRUE(none) << none.error().message;
  EXPECT_TRUE(none->lane_owners.empty());
}

TEST(Graph, VocabularyPersonasAndLegacyNodes) {
  Graph g = shipped_graph();
  EXPECT_TRUE(g.has_event("TASK_COMMITTED"));
  EXPECT_FALSE(g.has_event("TASK_DONE"));
  EXPECT_TRUE(g.has_persona("iac-developer"));
  EXPECT_FALSE(g.has_persona("developer-repair"));
  EXPECT_EQ(g.legacy_target("adversarial_test"), "verify");
  EXPECT_EQ(g.legacy_target("verify"), std::nullopt);
  EXPECT_TRUE(g.has_event("COMMIT_HOOK_REJECTED"));
  EXPECT_TRUE(g.has_event("STRAY_SENT_BACK"));
  EXPECT_EQ(g.events.size(), 73u);
}

TEST(Graph, CapacityTiers) {
  Graph g = shipped_graph();
  EXPECT_EQ(g.capacity.tier_for({{"tool_call", 0}}), "green");
  EXPECT_EQ(g.capacity.tier_for({{"tool_call", 60}}), "yellow");
  EXPECT_EQ(g.capacity.tier_for({{"turn", 122}}), "orange");
  EXPECT_EQ(g.capacity.tier_for({{"tool_call", 1}, {"result", 40}}), "red");
  EXPECT_EQ(g.headless.max_turns_per_persona, 80);
  EXPECT_EQ(g.concurrency.max_parallel_tasks_per_bundle, 6);
}

TEST(Graph, ReactionsAreReportByDefaultAndRepairIsBounded) {
  Graph g = shipped_graph();
  EXPECT_EQ(g.reactions.ci_failure.action, "report");
  EXPECT_EQ(g.reactions.changes_requested.max_cycles, 2);
  auto edited = Graph::parse(
      "version: 4\nentrypoint: scan\nlanes: {}\nnodes: {}\n"
      "reactions: {ci_failure: {action: repair, max_cycles: 3}}\n",
      "G.yaml");
  ASSERT_TRUE(edited) << edited.error().message;
  EXPECT_EQ(edited->reactions.ci_failure.action, "repair");
  EXPECT_EQ(edited->reactions.ci_failure.max_cycles, 3);
  EXPECT_TRUE(edited->reactions.changes_requested == ReactionRule{});
  auto bare = Graph::parse("version: 4\nentrypoint: scan\nlanes: {}\nnodes: {}\n", "G.yaml");
  ASSERT_TRUE(bare) << bare.error().message;
  EXPECT_TRUE(bare->reactions == Reactions{});
  const std::pair<const char*, const char*> bad[] = {
      {"{ci_failure: {action: fix}}", "reactions.ci_failure.action must be report or repair"},
      {"{changes_requested: {max_cycles: 0}}",
       "reactions.changes_requested.max_cycles must be at least 1"},
      {"{ci_failure: {max_cycles: many}}", "reactions.ci_failure.max_cycles must be an integer"},
      {"{ci_failure: repair}", "reactions.ci_failure must be a mapping"},
  };
  for (const auto& [yaml, want] : bad) {
    auto r = Graph::parse(
        std::string("version: 4\nentrypoint: scan\nlanes: {}\nnodes: {}\nreactions: ") + yaml +
            "\n",
        "G.yaml");
    ASSERT_FALSE(r) << yaml;
    EXPECT_NE(r.error().message.find(want), std::string::npos) << r.error().message;
  }
}

TEST(Graph, TheCritiqueNamesItsPerspectivesAndPutsItsRoundsAtNodesThereAre) {
  Graph g = shipped_graph();
  ASSERT_EQ(g.discuss.perspectives.size(), 5u);
  EXPECT_EQ(g.discuss.persona, "critic");
  EXPECT_TRUE(g.has_persona("critic"));
  const DiscussPerspective* coverage = g.discuss.perspective("coverage");
  ASSERT_NE(coverage, nullptr);
  EXPECT_TRUE(coverage->reads_context);
  EXPECT_EQ(coverage->reports, std::vector<std::string>{"missing_requirements"});
  EXPECT_EQ(g.discuss.perspective("risk")->reports, std::vector<std::string>{"risk_level"});
  EXPECT_EQ(g.discuss.perspective("nobody"), nullptr);
  EXPECT_FALSE(g.discuss.rounds_enabled);
  ASSERT_EQ(g.discuss.rounds.size(), 2u);
  EXPECT_EQ(g.discuss.rounds[0].after, "plan_bundle");
  EXPECT_EQ(g.discuss.rounds[0].revisions, 1);
  EXPECT_EQ(g.discuss.rounds[1].before, "create_pr");
  EXPECT_EQ(g.discuss.rounds[1].revisions, 0);
  auto bare = Graph::parse("version: 4\nentrypoint: scan\nlanes: {}\nnodes: {}\n", "G.yaml");
  ASSERT_TRUE(bare) << bare.error().message;
  EXPECT_TRUE(bare->discuss == DiscussRules{});

  const std::string head =
      "version: 4\nentrypoint: scan\npersonas: [critic]\nlanes: {}\nnodes: {plan: {}}\n";
  const std::string one = "{name: a, role: R, backend: claude}";
  auto with = [&](const std::string& discuss) {
    return Graph::parse(head + "discuss: " + discuss + "\n", "G.yaml");
  };
  auto ok = with("{persona: critic, answer_schema: s.json, perspectives: [" + one +
                 "], rounds: [{name: r, after: plan, perspectives: [a]}]}");
  ASSERT_TRUE(ok) << ok.error().message;
  EXPECT_EQ(ok->discuss.rounds[0].revisions, 0);
  const std::pair<std::string, const char*> bad[] = {
      {"[]", "discuss must be a mapping"},
      {"{persona: critic, answer_schema: s.json}", "discuss.perspectives must be a list"},
      {"{persona: critic, answer_schema: s.json, perspectives: [" + one + ", " + one + "]}",
       "discuss.perspectives[1].name must be a name no other perspective has"},
      {"{persona: critic, answer_schema: s.json, perspectives: [{name: a, role: R}]}",
       "discuss.perspectives.a.backend must be a string"},
      {"{persona: critic, answer_schema: s.json, perspectives: [{name: a, role: R, backend: x, "
       "reports: [mood]}]}",
       "discuss.perspectives.a.reports must be risk_level or missing_requirements, not mood"},
      {"{persona: nobody, answer_schema: s.json, perspectives: [" + one + "]}",
       "discuss.persona must be one of personas, not nobody"},
      {"{persona: critic, answer_schema: s.json, perspectives: [" + one +
           "], rounds: [{name: r, after: plan, perspectives: [b]}]}",
       "discuss.rounds.r.perspectives must be perspectives there are, not b"},
      {"{persona: critic, answer_schema: s.json, perspectives: [" + one +
           "], rounds: [{name: r, after: nowhere, perspectives: [a]}]}",
       "discuss.rounds.r must be placed at a node there is, not nowhere"},
      {"{persona: critic, answer_schema: s.json, perspectives: [" + one +
           "], rounds: [{name: r, after: plan, before: plan, perspectives: [a]}]}",
       "discuss.rounds.r must be given one of after and before"},
      {"{persona: critic, answer_schema: s.json, perspectives: [" + one +
           "], rounds: [{name: r, after: plan, perspectives: [a], revisions: -1}]}",
       "discuss.rounds.r.revisions must be 0 or more"},
  };
  for (const auto& [yaml, want] : bad) {
    auto r = with(yaml);
    ASSERT_FALSE(r) << yaml;
    EXPECT_NE(r.error().message.find(want), std::string::npos) << r.error().message;
  }
}

TEST(Graph, ThePerBundleBudgetIsReadAndNullIsNoLimit) {
  Graph g = shipped_graph();
  EXPECT_EQ(g.budgets.per_bundle.persona_runs, 60);
  EXPECT_EQ(g.budgets.per_bundle.cost_usd, 20.0);
  EXPECT_EQ(g.budgets.per_bundle.tokens, std::nullopt);

  auto edited = Graph::parse(
      "version: 4\nentrypoint: scan\nlanes: {}\nnodes: {}\n"
      "budgets: {per_bundle: {persona_runs: null, cost_usd: 2.5, tokens: 90000}}\n",
      "G.yaml");
  ASSERT_TRUE(edited) << edited.error().message;
  EXPECT_EQ(edited->budgets.per_bundle.persona_runs, std::nullopt);
  EXPECT_EQ(edited->budgets.per_bundle.cost_usd, 2.5);
  EXPECT_EQ(edited->budgets.per_bundle.tokens, 90000);

  // A graph without the section keeps the defaults.
  auto bare = Graph::parse("version: 4\nentrypoint: scan\nlanes: {}\nnodes: {}\n", "G.yaml");
  ASSERT_TRUE(bare) << bare.error().message;
  EXPECT_TRUE(bare->budgets == Budgets{});

  for (const char* bad : {"{per_bundle: {cost_usd: -1}}", "{per_bundle: {cost_usd: lots}}",
                          "{per_bundle: {persona_runs: 0}}", "{per_bundle: {tokens: 1.5}}"}) {
    auto g2 = Graph::parse(
        std::string("version: 4\nentrypoint: scan\nlanes: {}\nnodes: {}\nbudgets: ") + bad + "\n",
        "G.yaml");
    ASSERT_FALSE(g2.ok()) << bad;
    EXPECT_NE(g2.error().message.find("G.yaml: budgets.per_bundle."), std::string::npos)
        << g2.error().message;
  }
}

TEST(Graph, TheBoardSnapshotPathIsAPatternOfTheRunDirectory) {
  Graph g = shipped_graph();
  EXPECT_EQ(g.observability.snapshot_on_terminal, "<run-dir>/run-board.html");
  EXPECT_EQ(g.observability.snapshot_path("/runs/r1"), "/runs/r1/run-board.html");
  auto edited = Graph::parse(
      "version: 4\nentrypoint: scan\nlanes: {}\nnodes: {}\n"
      "observability: {snapshot_on_terminal: \"<run-dir>/../boards/<run-dir>.html\"}\n",
      "G.yaml");
  ASSERT_TRUE(edited) << edited.error().message;
  EXPECT_EQ(edited->observability.snapshot_path("/r"), "/r/../boards//r.html");
  Observability relative{"board.html"};
  EXPECT_EQ(relative.snapshot_path("/runs/r1"), "/runs/r1/board.html");
  // No pattern, no snapshot.
  auto bare = Graph::parse("version: 4\nentrypoint: scan\nlanes: {}\nnodes: {}\n", "G.yaml");
  ASSERT_TRUE(bare) << bare.error().message;
  EXPECT_EQ(bare->observability.snapshot_path("/runs/r1"), "");
  for (const char* bad : {"observability: [x]", "observability: {snapshot_on_terminal: [x]}"}) {
    auto r = Graph::parse(
        std::string("version: 4\nentrypoint: scan\nlanes: {}\nnodes: {}\n") + bad + "\n", "G.yaml");
    ASSERT_FALSE(r) << bad;
    EXPECT_NE(r.error().message.find("G.yaml: observability"), std::string::npos)
        << r.error().message;
  }
}

TEST(Graph, CommitsRunTheRepositorysHooksUnlessTheSwitchTurnsThemOff) {
  EXPECT_TRUE(shipped_graph().headless.run_git_hooks);
  auto bare = Graph::parse("version: 4\nentrypoint: scan\nlanes: {}\nnodes: {}\n", "G.yaml");
  ASSERT_TRUE(bare) << bare.error().message;
  EXPECT_TRUE(bare->headless.run_git_hooks);
  auto off = Graph::parse(
      "version: 4\nentrypoint: scan\nlanes: {}\nnodes: {}\nheadless: {run_git_hooks: false}\n",
      "G.yaml");
  ASSERT_TRUE(off) << off.error().message;
  EXPECT_FALSE(off->headless.run_git_hooks);
  auto bad = Graph::parse(
      "version: 4\nentrypoint: scan\nlanes: {}\nnodes: {}\nheadless: {run_git_hooks: sometimes}\n",
      "G.yaml");
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().message, "G.yaml: headless.run_git_hooks must be true or false");

  // The shipped file's switch, turned off, is the only thing that changes.
  auto text = read_file(test::source_dir() + "/skill/GRAPH.yaml");
  ASSERT_TRUE(text);
  std::string edited = *text;
  const std::string from = "\n  run_git_hooks: true\n";
  auto at = edited.find(from);
  ASSERT_NE(at, std::string::npos);
  edited.replace(at, from.size(), "\n  run_git_hooks: false\n");
  test::Scratch skill;
  test::write_text(skill / "GRAPH.yaml", edited);
  auto g = Graph::load(skill.path());
  ASSERT_TRUE(g) << g.error().message;
  Graph expected = shipped_graph();
  expected.headless.run_git_hooks = false;
  EXPECT_TRUE(*g == expected);
}

TEST(Graph, TheMergePolicyIsReadAndMustBeOneTheEngineCarriesOut) {
  Graph shipped = shipped_graph();
  EXPECT_EQ(shipped.delivery.merge, "never");
  EXPECT_EQ(shipped.delivery.merge_options,
            (std::vector<std::string>{"never", "auto_when_checks_pass"}));
  auto with = [](const std::string& github) {
    auto g = Graph::parse("version: 4\nentrypoint: scan\nlanes: {}\nnodes: {}\n"
                          "delivery: {github: " + github + "}\n",
                          "G.yaml");
    EXPECT_TRUE(g) << g.error().message;
    return std::move(g).value();
  };
  auto merge_errors = [](const Graph& g) {
    std::vector<std::string> out;
    for (const auto& e : check_graph(g))
      if (e.rfind("delivery.", 0) == 0) out.push_back(e);
    return out;
  };
  Graph automatic = with("{merge: auto_when_checks_pass, merge_options: 'never | auto_when_checks_pass'}");
  EXPECT_EQ(automatic.delivery.merge, "auto_when_checks_pass");
  EXPECT_TRUE(merge_errors(automatic).empty());
  // Absent: never, and no options listed means the engine's.
  Graph bare = with("{}");
  EXPECT_EQ(bare.delivery.merge, "never");
  EXPECT_TRUE(merge_errors(bare).empty());

  EXPECT_EQ(merge_errors(with("{merge: squash_when_green}")),
            std::vector<std::string>{
                "delivery.github.merge: squash_when_green is not one of never, "
                "auto_when_checks_pass"});
  EXPECT_EQ(merge_errors(with("{merge: auto_when_checks_pass, merge_options: never}")),
            std::vector<std::string>{"delivery.github.merge: auto_when_checks_pass is not one of never"});
  EXPECT_EQ(merge_errors(with("{merge: never, merge_options: 'never | rebase_now'}")),
            std::vector<std::string>{
                "delivery.github.merge_options: rebase_now is no merge policy this engine "
                "carries out (never, auto_when_checks_pass)"});
  auto bad = Graph::parse(
      "version: 4\nentrypoint: scan\nlanes: {}\nnodes: {}\ndelivery: {github: {merge: [a]}}\n",
      "G.yaml");
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().message, "G.yaml: delivery.github.merge must be a string");
  auto empty_option = Graph::parse(
      "version: 4\nentrypoint: scan\nlanes: {}\nnodes: {}\n"
      "delivery: {github: {merge_options: 'never || x'}}\n",
      "G.yaml");
  ASSERT_FALSE(empty_option);
  EXPECT_EQ(empty_option.error().message,
            "G.yaml: delivery.github.merge_options must be values separated by |");
}

TEST(Graph, WrongShapeNamesTheField) {
  auto g = Graph::parse("version: four\nentrypoint: scan\n", "G.yaml");
  ASSERT_FALSE(g.ok());
  EXPECT_EQ(g.error().message, "G.yaml: version must be an integer");
  auto g2 = Graph::parse("version: 4\nentrypoint: scan\nlanes: {}\nnodes: {scan: {routes: [a]}}\n",
                         "G.yaml");
  ASSERT_FALSE(g2.ok());
  EXPECT_EQ(g2.error().message, "G.yaml: nodes.scan.routes must be a mapping");
  auto g3 = Graph::parse("version: [\n", "G.yaml");
  ASSERT_FALSE(g3.ok());
  EXPECT_NE(g3.error().message.find("not valid YAML"), std::string::npos);
}

TEST(Graph, CheckFindsBrokenReferences) {
  auto g = Graph::parse(R"(
version: 4
entrypoint: start
personas: [planner]
events: [DONE]
capacity: {signals: [turn], thresholds: {yellow: {turn: 5}, red: {turn: 3}}, actions: {yellow: go}}
lanes:
  orchestrator: {nodes: [start, start]}
  task: {complete_at: elsewhere, complete_on: [NOPE], nodes: [work]}
nodes:
  start: {type: deterministic, next: missing}
  work: {type: agent, owner: ghost, routes: {done: start, bad: nowhere}}
  stray: {type: weird}
legacy_nodes: {work: start, old: gone}
)",
                        "G.yaml");
  ASSERT_TRUE(g.ok()) << g.error().message;
  auto errors = check_graph(*g);
  auto has = [&](const std::string& text) {
    for (const auto& e : errors)
      if (e == text) return true;
    return false;
  };
  EXPECT_TRUE(has("start: next -> unknown node missing"));
  EXPECT_TRUE(has("work: route bad -> unknown node nowhere"));
  EXPECT_TRUE(has("work: owner 'ghost' is not in personas"));
  EXPECT_TRUE(has("stray: unknown node type 'weird'"));
  EXPECT_TRUE(has("lanes: node stray is in no lane"));
  EXPECT_TRUE(has("lanes: node start is in both orchestrator and orchestrator"));
  EXPECT_TRUE(has("lanes.task: complete_at elsewhere is not in the lane"));
  EXPECT_TRUE(has("lanes.task.complete_on event NOPE is not in the vocabulary"));
  EXPECT_TRUE(has("lanes: missing lane 'shared'"));
  EXPECT_TRUE(has("legacy_nodes: work is still a live node"));
  EXPECT_TRUE(has("legacy_nodes: old maps to unknown node gone"));
  EXPECT_TRUE(has("capacity.thresholds.red.turn: below the yellow tier"));
  EXPECT_TRUE(has("capacity.actions: no action for tier red"));
}

// node(), lane() and lane_of() find every name and nothing else; a node
// listed by two lanes belongs to the first (check_graph reports it).
TEST(Graph, LookupsFindEveryNameAndTheFirstLaneWins) {
  Graph g = shipped_graph();
  for (const GraphNode& n : g.nodes) {
    ASSERT_NE(g.node(n.name), nullptr) << n.name;
    EXPECT_EQ(g.node(n.name)->name, n.name);
  }
  for (const GraphLane& l : g.lanes) {
    ASSERT_NE(g.lane(l.name), nullptr) << l.name;
    EXPECT_EQ(g.lane(l.name)->name, l.name);
    for (const std::string& n : l.nodes) EXPECT_NE(g.lane_of(n), nullptr) << n;
  }
  for (const char* absent : {"", "a", "zzz", "verif", "verifyy", "task_"}) {
    EXPECT_EQ(g.node(absent), nullptr) << absent;
    EXPECT_EQ(g.lane(absent), nullptr) << absent;
    EXPECT_EQ(g.lane_of(absent), nullptr) << absent;
  }
  auto two = Graph::parse(R"(
version: 4
entrypoint: ab
lanes:
  second: {nodes: [b, ab]}
  first: {nodes: [a, ab, a]}
nodes:
  a: {type: deterministic}
  ab: {type: deterministic}
  b: {type: deterministic}
)",
                          "G.yaml");
  ASSERT_TRUE(two.ok()) << two.error().message;
  EXPECT_EQ(two->lane_of("ab")->name, "second");
  EXPECT_EQ(two->lane_of("a")->name, "first");
  EXPECT_EQ(two->node("ab")->lane, "second");
  EXPECT_EQ(two->node("a")->name, "a");
  EXPECT_EQ(two->node("abc"), nullptr);
}

// The compiled-in snapshot (Graph::snapshot) must be exactly what parsing
// the shipped file gives, and must never stand in for any other text.
TEST(Graph, SnapshotIsWhatParsingTheShippedGraphGives) {
  auto text = read_file(test::source_dir() + "/skill/GRAPH.yaml");
  ASSERT_TRUE(text) << text.error().message;
  std::optional<Graph> snapshot = Graph::snapshot(*text);
  ASSERT_TRUE(snapshot.has_value()) << "the build did not embed skill/GRAPH.yaml";
  auto parsed = Graph::parse(*text, "GRAPH.yaml");
  ASSERT_TRUE(parsed) << parsed.error().message;
  const Graph& s = *snapshot;
  const Graph& p = *parsed;
  // Part by part, so that a failure names what differs...
  EXPECT_EQ(s.version, p.version);
  EXPECT_EQ(s.entrypoint, p.entrypoint);
  EXPECT_EQ(s.clean_entrypoint, p.clean_entrypoint);
  EXPECT_EQ(s.terminal_states, p.terminal_states);
  EXPECT_EQ(s.pause_states, p.pause_states);
  EXPECT_TRUE(s.defaults == p.defaults) << "defaults";
  EXPECT_TRUE(s.concurrency == p.concurrency) << "concurrency";
  EXPECT_TRUE(s.budgets == p.budgets) << "budgets";
  EXPECT_TRUE(s.headless == p.headless) << "headless";
  EXPECT_TRUE(s.capacity == p.capacity) << "capacity";
  EXPECT_EQ(s.personas, p.personas);
  EXPECT_EQ(s.events, p.events);
  EXPECT_EQ(s.lane_owners, p.lane_owners);
  EXPECT_EQ(s.legacy_nodes, p.legacy_nodes);
  ASSERT_EQ(s.lanes.size(), p.lanes.size());
  for (size_t i = 0; i < p.lanes.size(); ++i)
    EXPECT_TRUE(s.lanes[i] == p.lanes[i]) << "lanes." << p.lanes[i].name;
  ASSERT_EQ(s.nodes.size(), p.nodes.size());
  for (size_t i = 0; i < p.nodes.size(); ++i)
    EXPECT_TRUE(s.nodes[i] == p.nodes[i]) << "nodes." << p.nodes[i].name;
  // ...and whole: the defaulted operator== compares every field, those
  // added after this test was written and the indexes included.
  EXPECT_TRUE(s == p) << "the snapshot is not what parsing gives";

  std::string edited = *text + "\n# one more comment\n";
  EXPECT_FALSE(Graph::snapshot(edited).has_value());
  std::string same_size = *text;
  same_size[same_size.size() - 2] ^= 1;
  EXPECT_FALSE(Graph::snapshot(same_size).has_value());
  EXPECT_FALSE(Graph::snapshot("").has_value());
}

// Graph::load takes the snapshot only for the shipped bytes: a file that
// differs in one byte is parsed, and what it says is what loads.
TEST(Graph, AnEditedGraphIsParsedNotTakenFromTheSnapshot) {
  auto text = read_file(test::source_dir() + "/skill/GRAPH.yaml");
  ASSERT_TRUE(text);
  std::string edited = *text;
  const std::string from = "max_parallel_bundles: 3";
  auto at = edited.find(from);
  ASSERT_NE(at, std::string::npos);
  edited[at + from.size() - 1] = '5';
  ASSERT_EQ(edited.size(), text->size());

  test::Scratch skill;
  test::write_text(skill / "GRAPH.yaml", edited);
  auto g = Graph::load(skill.path());
  ASSERT_TRUE(g) << g.error().message;
  EXPECT_EQ(g->concurrency.max_parallel_bundles, 5);

  auto shipped = Graph::load(test::source_dir() + "/skill");
  ASSERT_TRUE(shipped) << shipped.error().message;
  EXPECT_EQ(shipped->concurrency.max_parallel_bundles, 3);
  Graph expected = *shipped;
  expected.concurrency.max_parallel_bundles = 5;
  EXPECT_TRUE(*g == expected) << "only the edited value may differ";
}

}  // namespace
}  // namespace devgraph

namespace devgraph {
namespace {

TEST(Graph, TheDebugSectionNamesItsDebuggerAndASpecialistPerHint) {
  Graph g = shipped_graph();
  EXPECT_EQ(g.debug.debugger, "debugger");
  EXPECT_TRUE(g.has_persona("debugger"));
  EXPECT_GE(g.debug.max_cycles, 1);
  EXPECT_EQ(g.debug.malformed_resumes, 1);
  ASSERT_TRUE(g.debug.specialists.count("python"));
  EXPECT_EQ(g.debug.specialists.at("python").persona, "specialist");
  EXPECT_TRUE(g.debug.specialists.count("general"));
  auto bare = Graph::parse("version: 4\nentrypoint: scan\nlanes: {}\nnodes: {}\n", "G.yaml");
  ASSERT_TRUE(bare) << bare.error().message;
  EXPECT_TRUE(bare->debug == DebugRules{});
  for (const auto& [yaml, want] : std::vector<std::pair<std::string, std::string>>{
           {"debug: {debugger: nobody}", "debug.debugger must be one of personas"},
           {"debug: {debugger: planner, max_cycles: 0}", "debug.max_cycles must be 1 or more"},
           {"debug: {debugger: planner, specialists: {go: {persona: planner}}}",
            "debug.specialists.go.backend must be a string"},
           {"debug: {debugger: planner, specialists: {go: {persona: ghost, backend: codex}}}",
            "debug.specialists.go.persona must be one of personas"}}) {
    auto r = Graph::parse(
        "version: 4\nentrypoint: scan\npersonas: [planner]\nlanes: {}\nnodes: {}\n" + yaml + "\n",
        "G.yaml");
    ASSERT_FALSE(r) << yaml;
    EXPECT_NE(r.error().message.find(want), std::string::npos) << r.error().message;
  }
}

}  // namespace
}  // namespace devgraph
