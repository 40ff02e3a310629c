// The typed model of GRAPH.yaml: the one source of truth for lanes, nodes,
// routes, the event vocabulary, the persona list, capacity thresholds,
// concurrency ceilings and the headless settings. No other module keeps its
// own copy of any of these lists.
//
// Contract: Graph::parse() accepts any document whose fields have the right
// shapes and reports the first field with a wrong shape as an error naming
// it. Cross-references (a route to an unknown node, a node in no lane, ...)
// are not load errors; check_graph() lists them, so `devgraph validate
// graph` can report every problem at once.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "util/expected.h"

namespace devgraph {

// The GRAPH.yaml version this engine runs; `validate graph` rejects others.
inline constexpr int kGraphVersion = 4;

struct GraphNode {
  std::string name;
  std::string type;
  // Persona names or roles that own the node. A list owner (verify) has
  // several; `dynamic` owners keep the selector.
  std::vector<std::string> owners;
  std::string selector;
  std::string dispatched_by;
  std::string dispatches;
  std::string next;
  std::vector<std::pair<std::string, std::string>> routes;  // in file order
  int max_cycles = 0;
  int max_retries = 0;
  // context_recovery's budgets (guards): the pointers handed back at most,
  // and the researcher launches (its `dispatches`) per cursor; 0 when unset.
  int max_pointers = 0;
  int max_researcher_runs = 0;
  // The evidence code requires before the node's done route is taken:
  // "check_fails" (the test writer's check, run by devgraph, fails),
  // "check_passes" (it passes), or "" (none beyond the result).
  std::string evidence;
  std::string lane;  // filled from `lanes`; empty when the node is in none

  bool operator==(const GraphNode&) const = default;
};

struct GraphLane {
  std::string name;
  std::vector<std::string> nodes;
  std::string complete_at;               // empty: the lane has no completion
  std::vector<std::string> complete_on;  // events that complete a cursor at complete_at

  bool operator==(const GraphLane&) const = default;
};

struct CapacityTier {
  std::string name;                         // yellow, orange, red
  std::map<std::string, long long> limits;  // signal -> threshold

  bool operator==(const CapacityTier&) const = default;
};

struct CapacityModel {
  std::vector<std::string> signals;
  std::vector<CapacityTier> tiers;             // ascending: yellow, orange, red
  std::map<std::string, std::string> actions;  // tier -> what to do
  // The highest tier any counter reached; "green" when none.
  std::string tier_for(const std::map<std::string, long long>& counters) const;

  bool operator==(const CapacityModel&) const = default;
};

struct Concurrency {
  int max_parallel_bundles = 3;
  int max_parallel_tasks_per_bundle = 6;
  int max_live_personas_per_tech_lead = 12;
  int max_live_personas = 39;

  bool operator==(const Concurrency&) const = default;
};

// Personas always run headless (`headless.enabled` and `driver` describe
// that; graph/keys.h refuses other values).
struct HeadlessSettings {
  std::string permission_mode = "acceptEdits";
  int max_turns_per_persona = 80;
  int persona_timeout_minutes = 30;
  int api_retry_minutes = 60;
  std::optional<std::string> model;
  std::vector<std::string> allowed_tools;
  std::vector<std::string> disallowed_tools;
  // devgraph's commits run the repository's pre-commit and commit-msg
  // hooks (git/git.h GitOptions::run_hooks); false skips them.
  bool run_git_hooks = true;

  bool operator==(const HeadlessSettings&) const = default;
};

// Which issues are work and how they are grouped (GRAPH.yaml `intake` and
// `bundling`).
struct IntakeRules {
  std::string label = "devgraph";   // GitHub issues must carry it
  std::string epic_label = "epic";  // never bundled itself: its children are
  int max_issues_per_bundle = 5;
  bool p0_ships_alone = true;

  bool operator==(const IntakeRules&) const = default;
};

// What one bundle may spend over its whole life before a person decides
// whether it goes on (GRAPH.yaml `budgets.per_bundle`). Each limit is
// optional: nullopt (null in the file) is no limit. A bundle that reaches
// any of them parks; a person's answer allows it one more budget's worth.
struct BundleBudget {
  std::optional<int> persona_runs = 60;
  std::optional<double> cost_usd = 20.0;
  std::optional<long long> tokens;

  bool operator==(const BundleBudget&) const = default;
};

// GRAPH.yaml `budgets`.
struct Budgets {
  BundleBudget per_bundle;

  bool operator==(const Budgets&) const = default;
};

// What monitor_prs does about one kind of trouble on a delivered pull
// request (GRAPH.yaml `reactions`; orchestrator/reactions.h): "report", or
// "repair" with at most max_cycles repair cycles.
struct ReactionRule {
  std::string action = "report";
  int max_cycles = 2;

  bool operator==(const ReactionRule&) const = default;
};

struct Reactions {
  ReactionRule ci_failure;
  ReactionRule changes_requested;

  bool operator==(const Reactions&) const = default;
};

// Where a run can be looked at (GRAPH.yaml `observability`).
// snapshot_on_terminal: where a run that stops (at a terminal state or a
// handoff) leaves its board as one HTML file, a path in which `<run-dir>`
// stands for the run's directory; empty (absent or null): nowhere.
struct Observability {
  std::string snapshot_on_terminal;

  // The pattern with the run directory in (a relative result is taken
  // from the run directory); empty when there is no pattern.
  std::string snapshot_path(const std::string& run_dir) const;

  bool operator==(const Observability&) const = default;
};

// Branch clean-up (GRAPH.yaml `cleanup`): the strategies there are and the
// one used when neither the command line nor the repository names one.
struct CleanupRules {
  std::vector<std::string> strategies;
  std::string default_strategy;

  bool operator==(const CleanupRules&) const = default;
};

// How finished bundles leave the run (GRAPH.yaml `delivery`). The one
// setting is GitHub's merge policy: "never" leaves every pull request to a
// person, "auto_when_checks_pass" asks GitHub to merge once branch
// protection is satisfied (`gh pr merge --auto --merge`); devgraph itself
// never merges. `devgraph run --merge-policy` overrides it for a new run.
// merge_options lists the values `merge` may take ("a | b" in the file);
// check_graph() refuses a merge outside it or an option the engine lacks.
struct DeliveryRules {
  std::string merge = "never";
  std::vector<std::string> merge_options;

  bool operator==(const DeliveryRules&) const = default;
};

// The merge policies the engine carries out.
inline constexpr std::string_view kMergePolicies[] = {"never", "auto_when_checks_pass"};

// The multi-perspective critique (GRAPH.yaml `discuss`; src/discuss/).
// A perspective: who it speaks as, what it looks at, the backend that runs
// it, what its answer reports beyond the common fields (risk_level,
// missing_requirements), and whether it reads the requirements given as
// context.
struct DiscussPerspective {
  std::string name;
  std::string role;
  std::vector<std::string> focus;
  std::string backend;
  std::vector<std::string> reports;
  bool reads_context = false;

  bool operator==(const DiscussPerspective&) const = default;
};

// A critique round as a gate of the bundle lane: after one node or before
// another, by these perspectives; a HIGH verdict sends the work back at most
// `revisions` times before a person decides.
struct DiscussRound {
  std::string name;
  std::string after;
  std::string before;
  std::vector<std::string> perspectives;
  int revisions = 0;

  bool operator==(const DiscussRound&) const = default;
};

struct DiscussRules {
  std::string persona;
  std::string answer_schema;  // relative to the skill directory
  std::vector<std::string> fallback_backends;
  std::vector<DiscussPerspective> perspectives;  // in file order
  bool rounds_enabled = false;
  std::vector<DiscussRound> rounds;

  const DiscussPerspective* perspective(const std::string& name) const;
  bool operator==(const DiscussRules&) const = default;
};

// The fix and re-review loop (GRAPH.yaml `fix`; src/fix/).
struct FixRules {
  int max_loops = 2;
  int max_replans = 1;  // overdesigned-plan sends a bundle back to planning this often
  std::string fixer;    // "": no fix section (nothing can run the loop)
  std::string reviewer;
  std::string reviewer_backend;  // "": the fixer's backend
  std::string diagnosis_persona;
  bool final_gate = false;
  std::string final_gate_backend;

  bool operator==(const FixRules&) const = default;
};

// One backend's escalation ladder: which setting a raise changes ("model"
// or "effort") and its steps, weakest first.
struct EscalationLadder {
  std::string setting;
  std::vector<std::string> steps;

  bool operator==(const EscalationLadder&) const = default;
};

struct EscalationRules {
  int max_raises = 2;
  std::map<std::string, EscalationLadder> ladder;  // by backend name

  bool operator==(const EscalationRules&) const = default;
};

// Checkpointed debug sessions (GRAPH.yaml `debug`; src/debug/): who
// investigates, how many debugger calls run before a person is asked to
// go on, how often a malformed return is tried again, and which persona on
// which backend reviews a proposed fix direction for the debugger's hint.
struct DebugSpecialist {
  std::string persona;
  std::string backend;

  bool operator==(const DebugSpecialist&) const = default;
};

struct DebugRules {
  std::string debugger;  // "": no debug section (nothing can run a session)
  int max_cycles = 8;
  int malformed_resumes = 1;
  std::map<std::string, DebugSpecialist> specialists;  // by hint

  bool operator==(const DebugRules&) const = default;
};

struct GraphDefaults {
  int max_retries = 2;
  int max_repair_cycles = 3;

  bool operator==(const GraphDefaults&) const = default;
};

class Graph {
 public:
  // Reads <skill_dir>/GRAPH.yaml: snapshot() when its bytes are the shipped
  // file's (compared without copying the file), parse() otherwise.
  static Expected<Graph> load(const std::string& skill_dir);
  static Expected<Graph> parse(std::string_view yaml_text, std::string_view origin);
  // The shipped graph, compiled in: the build parses skill/GRAPH.yaml with
  // parse() (tools/embed_graph.cpp) and writes the result out as constant
  // tables, so taking it costs no YAML parse, only building the model from
  // those tables.
  // Returned when `yaml_text` is byte for byte the file the library was
  // built with, and then equal (operator==) to parse(yaml_text); nullopt
  // for any other text. The comparison covers every byte, so the shortcut
  // can never change what a graph means.
  static std::optional<Graph> snapshot(std::string_view yaml_text);
  // The bytes snapshot() takes: the shipped GRAPH.yaml the library was
  // built with (empty where there is no snapshot).
  static std::string_view snapshot_text();

  int version = 0;
  std::string entrypoint;
  std::string clean_entrypoint;
  std::vector<std::string> terminal_states;
  std::vector<std::string> pause_states;
  GraphDefaults defaults;
  Concurrency concurrency;
  IntakeRules intake;
  Budgets budgets;
  Reactions reactions;
  Observability observability;
  CleanupRules cleanup;
  DeliveryRules delivery;
  DiscussRules discuss;
  FixRules fix;
  EscalationRules escalation;
  DebugRules debug;
  HeadlessSettings headless;
  CapacityModel capacity;
  std::vector<std::string> personas;
  std::vector<std::string> events;
  std::vector<GraphLane> lanes;                                   // in file order
  std::vector<std::pair<std::string, std::string>> lane_owners;   // lane -> owner, in file order
  std::vector<GraphNode> nodes;                                   // in file order
  std::vector<std::pair<std::string, std::string>> legacy_nodes;  // old -> new

  const GraphNode* node(std::string_view name) const;
  const GraphLane* lane(std::string_view name) const;
  // The lane that lists `node`, or nullptr.
  const GraphLane* lane_of(std::string_view node) const;
  bool has_event(std::string_view event) const;
  bool has_persona(std::string_view persona) const;
  // Where a resumed cursor standing on a retired node continues.
  std::optional<std::string> legacy_target(std::string_view old_node) const;

  // Every field, the indexes included (they follow from the fields).
  bool operator==(const Graph&) const = default;

 private:
  void index();
  // (lane, position in that lane's `nodes`).
  using LaneEntry = std::pair<uint32_t, uint32_t>;
  // The node name a LaneEntry stands for.
  std::string_view lane_entry_node(const LaneEntry& entry) const;
  // Positions in `nodes` and `lanes`, sorted by name, one per name (the
  // last, as a later definition replaces an earlier one).
  std::vector<uint32_t> node_index_;
  std::vector<uint32_t> lane_index_;
  // Sorted by node name, one per name: the first lane that lists it.
  std::vector<LaneEntry> lane_of_node_;
};

// Every structural problem of the graph: unknown route targets, nodes in no
// lane or in two, completion nodes outside their lane, completion events
// outside the vocabulary, legacy nodes that are live or point nowhere,
// unknown node types, capacity tiers that are not ascending, agent nodes
// whose owner is not a persona; and the agreements with the engine: the
// graph version, the events devgraph writes itself, tier names the state
// contract knows, pause/terminal node types, retry_previous only on detour
// nodes, dispatchers that exist, cursor lanes that something routes into.
// Empty when the graph is sound.
std::vector<std::string> check_graph(const Graph& graph);

}  // namespace devgraph
