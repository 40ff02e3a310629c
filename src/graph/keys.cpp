#include "graph/keys.h"

#include <algorithm>

#include "graph/graph.h"
#include "graph/yaml_doc.h"
#include "util/fs.h"

namespace devgraph {
namespace {

using enum KeyUse;

// In the file's order. A read row names the model field and what acts on
// it; a fixed row says what the engine does instead of reading the key.
constexpr GraphKey kKeys[] = {
    {"version", read, "Graph.version: validate graph refuses a version other than 4"},
    {"name", fixed, "the graph's name, for people: this engine runs develop-v4"},
    {"entrypoint", read, "Graph.entrypoint: where a new run's orchestrator cursor starts"},
    {"clean_entrypoint", read, "Graph.clean_entrypoint: where `devgraph clean` starts"},
    {"terminal_states", read, "Graph.terminal_states: where a run ends"},
    {"pause_states", read, "Graph.pause_states: where a run waits for a person"},
    {"defaults.max_retries", read, "Graph.defaults: a node's retries when its guards name none"},
    {"defaults.max_repair_cycles", read,
     "Graph.defaults: a node's repair cycles when its guards name none"},
    {"defaults.checkpoint_after_each_node", fixed,
     "every move is a transaction of the run store, always"},
    {"defaults.fail_closed", fixed, "an unknown or malformed answer never advances a cursor"},
    {"personas", read, "Graph.personas: the persona files `validate graph` requires"},
    {"lane_owner.*", read, "Graph.lane_owners: who moves each lane's cursors"},
    {"concurrency.max_parallel_bundles", read, "Graph.concurrency: the bundle scheduler"},
    {"concurrency.max_parallel_tasks_per_bundle", read, "Graph.concurrency: the task scheduler"},
    {"concurrency.max_live_personas_per_tech_lead", read,
     "Graph.concurrency: a bundle driver's persona slots"},
    {"concurrency.max_live_personas", read, "Graph.concurrency: the run's persona slots"},
    {"budgets.per_bundle.persona_runs", read, "Graph.budgets: bundle/budget.h parks a bundle"},
    {"budgets.per_bundle.cost_usd", read, "Graph.budgets: bundle/budget.h parks a bundle"},
    {"budgets.per_bundle.tokens", read, "Graph.budgets: bundle/budget.h parks a bundle"},
    {"reactions.*.action", read, "Graph.reactions: orchestrator/reactions.h, report or repair"},
    {"reactions.*.max_cycles", read, "Graph.reactions: the repair cycles a pull request gets"},
    {"capacity.signals", read, "Graph.capacity: the counters `checkpoint signal` takes"},
    {"capacity.thresholds.*.*", read, "Graph.capacity: the tier a counter reaches"},
    {"capacity.actions.*", read, "Graph.capacity: what each tier asks for"},
    {"capacity.tool", fixed, "the counters are taken by `devgraph checkpoint signal`"},
    {"capacity.handoff_tool", fixed, "a hand-off is written by `devgraph checkpoint handoff`"},
    {"capacity.handoff_file", fixed, "the hand-off is always <run-dir>/HANDOFF.md"},
    {"headless.enabled", fixed, "personas always run as headless agent CLIs"},
    {"headless.driver", fixed, "a bundle is always driven by `devgraph run-bundle`"},
    {"headless.permission_mode", read, "Graph.headless: the claude backend's permission mode"},
    {"headless.max_turns_per_persona", read, "Graph.headless: the claude backend's turn limit"},
    {"headless.persona_timeout_minutes", read, "Graph.headless: each persona launch's timeout"},
    {"headless.api_retry_minutes", read, "Graph.headless: how long an API error is retried"},
    {"headless.model", read, "Graph.headless: the model every backend is asked for"},
    {"headless.allowed_tools", read, "Graph.headless: the claude backend's allowed tools"},
    {"headless.disallowed_tools", read, "Graph.headless: the claude backend's refused tools"},
    {"headless.run_git_hooks", read, "Graph.headless: devgraph's commits run the hooks"},
    {"intake.label", read, "Graph.intake: the label a GitHub issue needs to be work"},
    {"intake.epic_label", read, "Graph.intake: the label of issues never bundled themselves"},
    {"bundling.max_issues_per_bundle", read, "Graph.intake: orchestrator/bundling.h"},
    {"bundling.p0_ships_alone", read, "Graph.intake: orchestrator/bundling.h"},
    {"bundling.default", fixed, "orchestrator/bundling.h: one issue per bundle unless clustered"},
    {"bundling.cluster_when", fixed,
     "orchestrator/bundling.h: overlapping footprints or one parent's sub-issues"},
    {"bundling.never_bundle", fixed, "orchestrator/bundling.h: an epic's children, not the epic"},
    {"lanes.*.nodes", read, "Graph.lanes: which lane a node's cursor is in"},
    {"lanes.*.complete_at", read, "Graph.lanes: the node that completes a cursor"},
    {"lanes.*.complete_on", read, "Graph.lanes: the events that complete it there"},
    {"legacy_nodes.*", read, "Graph.legacy_nodes: where a resumed retired node continues"},
    {"events", read, "Graph.events: the vocabulary `checkpoint event` accepts"},
    {"placement.develop_home", fixed, "store/placement.h lays out the develop home"},
    {"placement.run_state", fixed, "store/placement.h: runs/<run-id> under the develop home"},
    {"placement.worktree", fixed, "store/placement.h: one worktree per branch slug"},
    {"placement.worktree_base_github", fixed, "worktrees start at origin/<default> after a fetch"},
    {"placement.worktree_base_local", fixed, "worktrees start at the default branch"},
    {"placement.worktree_removal", fixed, "only `devgraph clean` removes a worktree"},
    {"placement.primary_clone", fixed, "the guard keeps the user's checkout read-only"},
    {"placement.guard", fixed, "the placement guard is `devgraph guard`"},
    {"placement.guard_self_check_before", fixed, "the guard checks itself before the scan"},
    {"placement.identity_without_origin", fixed, "local/<directory name> without an origin"},
    {"placement.audit_marker", fixed, "the audit marker is <develop_home>/last-audit"},
    {"placement.clean_integration_branch", fixed, "clean's throwaway branch is named so"},
    {"placement.clean_integration_worktree", fixed, "clean's throwaway worktree is placed so"},
    {"cleanup.strategies", read, "Graph.cleanup: the strategies `devgraph clean` accepts"},
    {"cleanup.default_strategy", read, "Graph.cleanup: the strategy when none is named"},
    {"cleanup.strategy_precedence", fixed, "clean/plan.h: the flag, then project.yaml, then this"},
    {"cleanup.repository_config_key", fixed, "clean/plan.h reads develop.clean.strategy"},
    {"cleanup.eligible_when", fixed, "clean/plan.h decides which branches are eligible"},
    {"cleanup.ineligible_routes_to", fixed, "an ineligible branch is reported for a person"},
    {"cleanup.semantics.*.*", fixed, "clean/strategies.h carries each strategy out"},
    {"cleanup.landing.*", fixed, "clean/strategies.h lands on GitHub or locally"},
    {"cleanup.deletion_requires", fixed, "a branch goes only after INTEGRATION_VERIFIED"},
    {"cleanup.squash_deletion_note", fixed, "the squash strategy's `git branch -D`, explained"},
    {"delivery.github.merge", read, "Graph.delivery: the merge policy of a new run"},
    {"delivery.github.merge_options", read,
     "Graph.delivery: the values validate graph accepts for merge"},
    {"delivery.*.when", fixed, "github delivery when there is an origin remote, else local"},
    {"delivery.*.create_pr", fixed, "bundle/delivery.h opens the pull request or readies the branch"},
    {"delivery.*.monitor_prs", fixed, "orchestrator/after_delivery.h watches what was delivered"},
    {"delivery.*.merged_means", fixed, "orchestrator/after_delivery.h decides what is merged"},
    {"delivery.*.audit_issues", fixed, "orchestrator/merge_audit.h files the findings"},
    {"observability.dashboard", fixed, "the board is `devgraph board`"},
    {"observability.current_run_pointer", fixed, "store/placement.h writes current-run"},
    {"observability.snapshot_on_terminal", read, "Graph.observability: the board's snapshot"},
    {"observability.session_metrics", fixed, "metrics/ writes one record per run there"},
    {"observability.session_metrics_tool", fixed, "the records are read by `devgraph metrics`"},
    {"discuss.persona", read, "Graph.discuss: the persona every perspective runs as"},
    {"discuss.answer_schema", read, "Graph.discuss: the schema a perspective's answer meets"},
    {"discuss.fallback_backends", read, "Graph.discuss: backends tried when one fails"},
    {"discuss.perspectives.[].name", read, "Graph.discuss: discuss/panel.h"},
    {"discuss.perspectives.[].role", read, "Graph.discuss: the perspective's prompt"},
    {"discuss.perspectives.[].focus", read, "Graph.discuss: the perspective's prompt"},
    {"discuss.perspectives.[].backend", read, "Graph.discuss: the backend that runs it"},
    {"discuss.perspectives.[].reports", read, "Graph.discuss: its answer's extra fields"},
    {"discuss.perspectives.[].reads_context", read, "Graph.discuss: whether it gets --context"},
    {"discuss.rounds_enabled", read, "Graph.discuss: critique rounds as bundle gates"},
    {"discuss.rounds.[].name", read, "Graph.discuss: bundle/critique_gate.h"},
    {"discuss.rounds.[].after", read, "Graph.discuss: the node a round follows"},
    {"discuss.rounds.[].before", read, "Graph.discuss: the node a round precedes"},
    {"discuss.rounds.[].perspectives", read, "Graph.discuss: who critiques in the round"},
    {"discuss.rounds.[].revisions", read, "Graph.discuss: send-backs before a person decides"},
    {"fix.max_loops", read, "Graph.fix: fix/loop.h"},
    {"fix.max_replans", read, "Graph.fix: send-backs of an overdesigned plan"},
    {"fix.fixer", read, "Graph.fix: the fixing persona"},
    {"fix.reviewer", read, "Graph.fix: the re-reviewing persona"},
    {"fix.reviewer_backend", read, "Graph.fix: the re-reviewer's backend"},
    {"fix.diagnosis_persona", read, "Graph.fix: who diagnoses a stuck loop"},
    {"fix.final_gate", read, "Graph.fix: the last review before SHIP"},
    {"fix.final_gate_backend", read, "Graph.fix: its backend"},
    {"escalation.max_raises", read, "Graph.escalation: fix/ raises a backend at most so often"},
    {"escalation.ladder.*.setting", read, "Graph.escalation: model or effort"},
    {"escalation.ladder.*.steps", read, "Graph.escalation: the steps, weakest first"},
    {"debug.debugger", read, "Graph.debug: debug/ sessions' persona"},
    {"debug.max_cycles", read, "Graph.debug: debugger calls before a person is asked"},
    {"debug.malformed_resumes", read, "Graph.debug: retries of a malformed return"},
    {"debug.specialists.*.persona", read, "Graph.debug: the reviewer of a fix direction"},
    {"debug.specialists.*.backend", read, "Graph.debug: its backend"},
    {"state.schema", fixed, "the state contract is contracts/run-state.schema.json"},
    {"nodes.*.type", read, "GraphNode.type: lane/node_kind.h, the walker"},
    {"nodes.*.owner", read, "GraphNode.owners: the persona or role launched there"},
    {"nodes.*.selector", read, "GraphNode.selector: a dynamic owner's choice"},
    {"nodes.*.dispatched_by", read, "GraphNode.dispatched_by: who launches its personas"},
    {"nodes.*.dispatches", read, "GraphNode.dispatches: the persona it launches"},
    {"nodes.*.next", read, "GraphNode.next: where a deterministic node goes"},
    {"nodes.*.routes.*", read, "GraphNode.routes: lane/routes.h, where each outcome goes"},
    {"nodes.*.guards.max_cycles", read, "GraphNode.max_cycles: repair cycles at the node"},
    {"nodes.*.guards.max_retries", read, "GraphNode.max_retries: retries at the node"},
    {"nodes.*.guards.max_pointers", read, "GraphNode.max_pointers: context recovery's pointers"},
    {"nodes.*.guards.max_researcher_runs", read,
     "GraphNode.max_researcher_runs: context recovery's researcher launches"},
    {"nodes.*.evidence", read, "GraphNode.evidence: the check devgraph runs itself"},
    {"nodes.*.semantics", fixed, "the schedulers' code (schedule/) does what this says"},
    {"nodes.*.concurrency", fixed, "the concurrency section's ceilings apply"},
    {"nodes.*.capacity_gate", fixed, "the schedulers consult the capacity tier"},
    {"nodes.*.runnable_set", fixed, "the runnable set is `devgraph schedule`'s"},
    {"nodes.*.resumes_at", fixed, "a hand-off resumes where its cursor stood"},
    {"nodes.*.auto_merge", fixed, "the merge policy is delivery.github.merge"},
    {"nodes.*.join", fixed, "parallel personas join when every one has answered"},
    {"nodes.*.accept_when", fixed, "a plan is accepted when `schedule check` passes"},
    {"nodes.*.footprint_check", fixed, "bundle/task_lane.h checks every commit's footprint"},
    {"nodes.*.policy", fixed, "bundle/recovery.h carries the recovery order out"},
};

bool matches(std::string_view pattern, const std::vector<std::string>& path) {
  size_t i = 0;
  while (true) {
    size_t dot = pattern.find('.');
    std::string_view part = pattern.substr(0, dot);
    if (i == path.size()) return false;
    const std::string& name = path[i];
    bool item = name.size() > 2 && name.front() == '[' && name.back() == ']';
    bool ok = part == "[]" ? item : !item && (part == "*" || part == name);
    if (!ok) return false;
    ++i;
    if (dot == std::string_view::npos) return i == path.size();
    pattern.remove_prefix(dot + 1);
  }
}

// Whether some row's path starts with `path` (an empty mapping where
// keys may go).
bool prefix_of_a_row(const std::vector<std::string>& path) {
  for (const auto& row : kKeys) {
    std::string_view pattern = row.path;
    size_t i = 0;
    bool ok = true;
    while (ok && i < path.size()) {
      size_t dot = pattern.find('.');
      if (dot == std::string_view::npos) {
        ok = false;
        break;
      }
      std::vector<std::string> one{path[i]};
      ok = matches(pattern.substr(0, dot), one);
      pattern.remove_prefix(dot + 1);
      ++i;
    }
    if (ok) return true;
  }
  return false;
}

void walk(const Json& v, std::vector<std::string>& path, std::vector<GraphLeaf>& out) {
  bool branch = (v.is_object() && !v.empty()) ||
                (v.is_array() && std::any_of(v.begin(), v.end(), [](const Json& item) {
                   return item.is_object() || item.is_array();
                 }));
  if (!branch) {
    out.push_back({path, &v});
    return;
  }
  if (v.is_object()) {
    for (auto it = v.begin(); it != v.end(); ++it) {
      path.push_back(it.key());
      walk(*it, path, out);
      path.pop_back();
    }
    return;
  }
  for (size_t i = 0; i < v.size(); ++i) {
    path.push_back("[" + std::to_string(i) + "]");
    walk(v[i], path, out);
    path.pop_back();
  }
}

const Json* value_at(const Json& doc, const std::vector<std::string>& path) {
  const Json* cur = &doc;
  for (const auto& name : path) {
    if (name.size() > 2 && name.front() == '[' && name.back() == ']') {
      size_t i = std::stoul(name.substr(1, name.size() - 2));
      if (!cur->is_array() || i >= cur->size()) return nullptr;
      cur = &(*cur)[i];
    } else {
      if (!cur->is_object()) return nullptr;
      auto it = cur->find(name);
      if (it == cur->end()) return nullptr;
      cur = &*it;
    }
  }
  return cur;
}

}  // namespace

std::span<const GraphKey> graph_keys() {
  return kKeys;
}

const GraphKey* graph_key_for(const std::vector<std::string>& path) {
  for (const auto& row : kKeys)
    if (matches(row.path, path)) return &row;
  return nullptr;
}

std::vector<GraphLeaf> graph_leaves(const Json& doc) {
  std::vector<GraphLeaf> out;
  std::vector<std::string> path;
  if (doc.is_object()) walk(doc, path, out);
  return out;
}

std::string dotted(const std::vector<std::string>& path) {
  std::string out;
  for (const auto& name : path) out += (out.empty() ? "" : ".") + name;
  return out;
}

std::vector<std::string> check_graph_keys(const Json& doc, const Json& shipped) {
  std::vector<std::string> errors;
  for (const auto& leaf : graph_leaves(doc)) {
    const GraphKey* row = graph_key_for(leaf.path);
    bool empty_branch = (leaf.value->is_object() || leaf.value->is_array()) &&
                        leaf.value->empty() && prefix_of_a_row(leaf.path);
    if (!row && !empty_branch) {
      errors.push_back(dotted(leaf.path) + ": no code reads this key (a misspelt name, or a " +
                       "setting this engine lacks)");
      continue;
    }
    if (!row || row->use != KeyUse::fixed || shipped.is_null()) continue;
    const Json* theirs = value_at(shipped, leaf.path);
    if (!theirs || *theirs != *leaf.value)
      errors.push_back(dotted(leaf.path) + ": describes what devgraph always does (" +
                       std::string(row->reader) + "); no code reads " +
                       (theirs ? "another value than " + theirs->dump()
                               : std::string("it where the shipped graph has no such key")));
  }
  return errors;
}

std::vector<std::string> check_skill_graph_keys(const std::string& skill_dir) {
  const std::string path = join_path(skill_dir, "GRAPH.yaml");
  auto text = read_file(path);
  if (!text) return {text.error().message};
  const std::string_view shipped_text = Graph::snapshot_text();
  if (!shipped_text.empty() && *text == shipped_text) return {};
  auto doc = parse_yaml_document(*text, path);
  if (!doc) return {doc.error().message};
  Json shipped;
  if (!shipped_text.empty()) {
    auto theirs = parse_yaml_document(shipped_text, "the shipped GRAPH.yaml");
    if (!theirs) return {theirs.error().message};
    shipped = std::move(*theirs);
  }
  return check_graph_keys(*doc, shipped);
}

}  // namespace devgraph
