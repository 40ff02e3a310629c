#include "graph/graph.h"

#include <algorithm>
#include <charconv>
#include <limits>
#include <set>

#include "graph/yaml_doc.h"
#include "util/fs.h"

namespace devgraph {
namespace {

struct Reader {
  std::string origin;

  Error bad(const std::string& field, const std::string& want) const {
    return fail(origin + ": " + field + " must be " + want);
  }
  Expected<std::string> str(const Json& j, const std::string& field, bool required) const {
    if (!j.is_null() && j.is_string()) return j.get<std::string>();
    if (j.is_null() && !required) return std::string();
    return bad(field, "a string");
  }
  Expected<int> integer(const Json& j, const std::string& field, int fallback) const {
    if (j.is_null()) return fallback;
    if (!j.is_number_integer()) return bad(field, "an integer");
    return j.get<int>();
  }
  // A limit: absent is `fallback`, null is no limit, else a whole number
  // at least 1.
  Expected<std::optional<long long>> limit(const Json& parent, const char* key,
                                           const std::string& field,
                                           std::optional<long long> fallback) const {
    if (!parent.is_object() || !parent.contains(key)) return fallback;
    const Json& j = parent[key];
    if (j.is_null()) return std::optional<long long>();
    if (!j.is_number_integer() || j.get<long long>() < 1)
      return bad(field, "a whole number of at least 1, or null");
    return std::optional<long long>(j.get<long long>());
  }
  // An amount of money: absent is `fallback`, null is no limit, else a
  // positive decimal number (YAML reads 20 as an integer, 2.5 as text).
  Expected<std::optional<double>> money(const Json& parent, const char* key,
                                        const std::string& field,
                                        std::optional<double> fallback) const {
    if (!parent.is_object() || !parent.contains(key)) return fallback;
    const Json& j = parent[key];
    if (j.is_null()) return std::optional<double>();
    double v = 0;
    if (j.is_number_integer()) {
      v = static_cast<double>(j.get<long long>());
    } else if (j.is_string()) {
      const std::string& t = j.get_ref<const std::string&>();
      bool digits = !t.empty() && t.find_first_not_of("0123456789.") == std::string::npos;
      auto [end, ec] = std::from_chars(t.data(), t.data() + t.size(), v);
      if (!digits || ec != std::errc() || end != t.data() + t.size())
        return bad(field, "a positive amount, or null");
    } else {
      return bad(field, "a positive amount, or null");
    }
    if (!(v > 0)) return bad(field, "a positive amount, or null");
    return std::optional<double>(v);
  }
  Expected<std::vector<std::string>> strings(const Json& j, const std::string& field) const {
    std::vector<std::string> out;
    if (j.is_null()) return out;
    if (!j.is_array()) return bad(field, "a list of strings");
    for (const auto& item : j) {
      if (!item.is_string()) return bad(field, "a list of strings");
      out.push_back(item.get<std::string>());
    }
    return out;
  }
};

const Json& at(const Json& obj, const char* key) {
  static const Json null_json;
  if (!obj.is_object()) return null_json;
  auto it = obj.find(key);
  return it == obj.end() ? null_json : *it;
}

// GRAPH.yaml `fix`: absent keeps the defaults; the loop runs at least once.
Status read_fix(const Reader& r, const Json& f, FixRules& out) {
  if (f.is_null()) return {};
  if (!f.is_object()) return r.bad("fix", "a mapping");
  DG_TRY(out.max_loops, r.integer(at(f, "max_loops"), "fix.max_loops", out.max_loops));
  if (out.max_loops < 1) return r.bad("fix.max_loops", "1 or more");
  DG_TRY(out.max_replans, r.integer(at(f, "max_replans"), "fix.max_replans", out.max_replans));
  if (out.max_replans < 0) return r.bad("fix.max_replans", "0 or more");
  DG_TRY(out.fixer, r.str(at(f, "fixer"), "fix.fixer", true));
  DG_TRY(out.reviewer, r.str(at(f, "reviewer"), "fix.reviewer", true));
  DG_TRY(out.reviewer_backend, r.str(at(f, "reviewer_backend"), "fix.reviewer_backend", false));
  DG_TRY(out.diagnosis_persona, r.str(at(f, "diagnosis_persona"), "fix.diagnosis_persona", true));
  const Json& gate = at(f, "final_gate");
  if (!gate.is_null() && !gate.is_boolean()) return r.bad("fix.final_gate", "true or false");
  out.final_gate = gate.is_boolean() && gate.get<bool>();
  DG_TRY(out.final_gate_backend,
         r.str(at(f, "final_gate_backend"), "fix.final_gate_backend", false));
  return {};
}

// GRAPH.yaml `escalation`: each backend's ladder names the setting it
// raises and at least one step, each once.
Status read_escalation(const Reader& r, const Json& e, EscalationRules& out) {
  if (e.is_null()) return {};
  if (!e.is_object()) return r.bad("escalation", "a mapping");
  DG_TRY(out.max_raises, r.integer(at(e, "max_raises"), "escalation.max_raises", out.max_raises));
  if (out.max_raises < 0) return r.bad("escalation.max_raises", "0 or more");
  const Json& ladder = at(e, "ladder");
  if (ladder.is_null()) return {};
  if (!ladder.is_object()) return r.bad("escalation.ladder", "a mapping of backends");
  for (auto it = ladder.begin(); it != ladder.end(); ++it) {
    std::string field = "escalation.ladder." + it.key();
    if (!it->is_object()) return r.bad(field, "a mapping");
    EscalationLadder l;
    DG_TRY(l.setting, r.str(at(*it, "setting"), field + ".setting", true));
    if (l.setting != "model" && l.setting != "effort")
      return r.bad(field + ".setting", "model or effort, not " + l.setting);
    DG_TRY(l.steps, r.strings(at(*it, "steps"), field + ".steps"));
    std::set<std::string> seen(l.steps.begin(), l.steps.end());
    if (l.steps.empty() || seen.size() != l.steps.size())
      return r.bad(field + ".steps", "a list of distinct settings, weakest first");
    out.ladder.emplace(it.key(), std::move(l));
  }
  return {};
}

// GRAPH.yaml `debug`: absent is no debug session; present, it names the
// debugger, and each specialist names a persona and a backend.
Status read_debug(const Reader& r, const Json& d, DebugRules& out) {
  if (d.is_null()) return {};
  if (!d.is_object()) return r.bad("debug", "a mapping");
  DG_TRY(out.debugger, r.str(at(d, "debugger"), "debug.debugger", true));
  DG_TRY(out.max_cycles, r.integer(at(d, "max_cycles"), "debug.max_cycles", out.max_cycles));
  if (out.max_cycles < 1) return r.bad("debug.max_cycles", "1 or more");
  DG_TRY(out.malformed_resumes,
         r.integer(at(d, "malformed_resumes"), "debug.malformed_resumes", out.malformed_resumes));
  if (out.malformed_resumes < 0) return r.bad("debug.malformed_resumes", "0 or more");
  const Json& sp = at(d, "specialists");
  if (sp.is_null()) return {};
  if (!sp.is_object()) return r.bad("debug.specialists", "a mapping of hints");
  for (auto it = sp.begin(); it != sp.end(); ++it) {
    std::string field = "debug.specialists." + it.key();
    if (!it->is_object()) return r.bad(field, "a mapping");
    DebugSpecialist s;
    DG_TRY(s.persona, r.str(at(*it, "persona"), field + ".persona", true));
    DG_TRY(s.backend, r.str(at(*it, "backend"), field + ".backend", true));
    if (s.persona.empty() || s.backend.empty()) return r.bad(field, "a persona and a backend");
    out.specialists.emplace(it.key(), std::move(s));
  }
  return {};
}

// GRAPH.yaml `discuss`: absent is no critique at all; present, every
// perspective is named once and says whom it speaks as and which backend
// runs it, and every round names perspectives there are.
Status read_discuss(const Reader& r, const Json& d, DiscussRules& out) {
  if (d.is_null()) return {};
  if (!d.is_object()) return r.bad("discuss", "a mapping");
  DG_TRY(out.persona, r.str(at(d, "persona"), "discuss.persona", true));
  DG_TRY(out.answer_schema, r.str(at(d, "answer_schema"), "discuss.answer_schema", true));
  DG_TRY(out.fallback_backends, r.strings(at(d, "fallback_backends"), "discuss.fallback_backends"));
  const Json& ps = at(d, "perspectives");
  if (!ps.is_array() || ps.empty()) return r.bad("discuss.perspectives", "a list of perspectives");
  std::set<std::string> names;
  for (size_t i = 0; i < ps.size(); ++i) {
    const Json& p = ps[i];
    std::string field = "discuss.perspectives[" + std::to_string(i) + "]";
    if (!p.is_object()) return r.bad(field, "a mapping");
    DiscussPerspective v;
    DG_TRY(v.name, r.str(at(p, "name"), field + ".name", true));
    if (v.name.empty() || !names.insert(v.name).second)
      return r.bad(field + ".name", "a name no other perspective has");
    field = "discuss.perspectives." + v.name;
    DG_TRY(v.role, r.str(at(p, "role"), field + ".role", true));
    DG_TRY(v.focus, r.strings(at(p, "focus"), field + ".focus"));
    DG_TRY(v.backend, r.str(at(p, "backend"), field + ".backend", true));
    if (v.role.empty() || v.backend.empty()) return r.bad(field, "given a role and a backend");
    DG_TRY(v.reports, r.strings(at(p, "reports"), field + ".reports"));
    for (const auto& k : v.reports)
      if (k != "risk_level" && k != "missing_requirements")
        return r.bad(field + ".reports", "risk_level or missing_requirements, not " + k);
    const Json& reads = at(p, "reads_context");
    if (!reads.is_null() && !reads.is_boolean())
      return r.bad(field + ".reads_context", "true or false");
    v.reads_context = reads.is_boolean() && reads.get<bool>();
    out.perspectives.push_back(std::move(v));
  }
  const Json& enabled = at(d, "rounds_enabled");
  if (!enabled.is_null() && !enabled.is_boolean())
    return r.bad("discuss.rounds_enabled", "true or false");
  out.rounds_enabled = enabled.is_boolean() && enabled.get<bool>();
  const Json& rounds = at(d, "rounds");
  if (!rounds.is_null() && !rounds.is_array()) return r.bad("discuss.rounds", "a list of rounds");
  std::set<std::string> round_names;
  for (size_t i = 0; rounds.is_array() && i < rounds.size(); ++i) {
    const Json& j = rounds[i];
    std::string field = "discuss.rounds[" + std::to_string(i) + "]";
    if (!j.is_object()) return r.bad(field, "a mapping");
    DiscussRound round;
    DG_TRY(round.name, r.str(at(j, "name"), field + ".name", true));
    if (round.name.empty() || !round_names.insert(round.name).second)
      return r.bad(field + ".name", "a name no other round has");
    field = "discuss.rounds." + round.name;
    DG_TRY(round.after, r.str(at(j, "after"), field + ".after", false));
    DG_TRY(round.before, r.str(at(j, "before"), field + ".before", false));
    if (round.after.empty() == round.before.empty())
      return r.bad(field, "given one of after and before");
    DG_TRY(round.perspectives, r.strings(at(j, "perspectives"), field + ".perspectives"));
    if (round.perspectives.empty()) return r.bad(field + ".perspectives", "a list of perspectives");
    for (const auto& n : round.perspectives)
      if (!names.count(n))
        return r.bad(field + ".perspectives", "perspectives there are, not " + n);
    DG_TRY(round.revisions, r.integer(at(j, "revisions"), field + ".revisions", 0));
    if (round.revisions < 0) return r.bad(field + ".revisions", "0 or more");
    out.rounds.push_back(std::move(round));
  }
  return {};
}

const std::set<std::string>& node_types() {
  static const std::set<std::string> types = {
      "deterministic", "agent",    "agent_parallel",     "hybrid",
      "scheduler",     "recovery", "human_interrupt",    "cursor_interrupt",
      "notification",  "terminal", "terminal_interrupt", "handoff"};
  return types;
}

// Route targets that are not nodes: "go back to where the cursor came from".
bool pseudo_target(const std::string& t) {
  return t == "retry_previous" || t == "resume_previous_successor";
}

// Agreements between the graph and what the engine itself writes or
// relies on: the reference kept these facts twice (in GRAPH.yaml and in its
// scripts) and checked that the copies agreed; devgraph reads them from the
// graph alone, so what is left to check is that the graph can carry them.
std::vector<std::string> cross_checks(const Graph& g) {
  std::vector<std::string> errors;
  if (g.version != kGraphVersion)
    errors.push_back("version " + std::to_string(g.version) +
                     " is not the graph version devgraph runs (" + std::to_string(kGraphVersion) +
                     ")");
  // Events the engine records on its own, whatever the graph's routes say.
  for (const char* e : {"RUN_STARTED", "RUN_RESUMED", "HANDOFF_WRITTEN", "CAPACITY_TIER_CHANGED",
                        "PERSONA_DISPATCHED"})
    if (!g.events.empty() && !g.has_event(e))
      errors.push_back(std::string("events: ") + e +
                       " is written by devgraph itself but not listed");
  // The run-state contract only knows these tier names.
  for (const auto& tier : g.capacity.tiers)
    if (tier.name != "yellow" && tier.name != "orange" && tier.name != "red")
      errors.push_back("capacity.thresholds." + tier.name +
                       ": tiers are yellow, orange and red (run-state.schema.json)");
  for (const auto& p : g.pause_states)
    if (const GraphNode* n = g.node(p); n && n->type != "handoff")
      errors.push_back("pause state '" + p + "' is a " + n->type + " node, not a handoff node");
  for (const auto& t : g.terminal_states)
    if (const GraphNode* n = g.node(t);
        n && n->type != "terminal" && n->type != "terminal_interrupt")
      errors.push_back("terminal state '" + t + "' is a " + n->type + " node, not a terminal one");
  for (const auto& n : g.nodes) {
    // "Go back where you came from" needs somewhere the cursor came from:
    // only a detour (a shared node or an interrupt) has one.
    bool detour = n.lane == "shared" || n.type == "cursor_interrupt" ||
                  n.type == "human_interrupt" || n.type == "recovery";
    for (const auto& [route, target] : n.routes)
      if (pseudo_target(target) && !detour)
        errors.push_back(n.name + ": route " + route + " -> " + target +
                         " only makes sense on a shared or interrupt node");
    if (!n.dispatched_by.empty() && n.dispatched_by != "orchestrator" &&
        !g.has_persona(n.dispatched_by))
      errors.push_back(n.name + ": dispatched_by '" + n.dispatched_by +
                       "' is neither orchestrator nor a persona");
  }
  // A bundle or task cursor is born where a node of another lane routes
  // into its lane (a scheduler's spawn edge); a lane without one can never
  // start a cursor.
  for (const char* cursor_lane : {"bundle", "task"}) {
    const GraphLane* lane = g.lane(cursor_lane);
    if (!lane) continue;
    bool entered = false;
    for (const auto& n : g.nodes) {
      if (n.lane == cursor_lane || n.lane == "shared") continue;
      std::vector<std::string> targets;
      if (!n.next.empty()) targets.push_back(n.next);
      for (const auto& [route, target] : n.routes) targets.push_back(target);
      for (const auto& t : targets)
        if (std::find(lane->nodes.begin(), lane->nodes.end(), t) != lane->nodes.end())
          entered = true;
    }
    if (!entered)
      errors.push_back(std::string("lanes.") + cursor_lane +
                       ": no node of another lane routes into it, so no cursor can start there");
  }
  return errors;
}

}  // namespace

std::string CapacityModel::tier_for(const std::map<std::string, long long>& counters) const {
  for (auto it = tiers.rbegin(); it != tiers.rend(); ++it) {
    for (const auto& [signal, limit] : it->limits) {
      auto c = counters.find(signal);
      if (c != counters.end() && c->second >= limit) return it->name;
    }
  }
  return "green";
}

std::string Observability::snapshot_path(const std::string& run_dir) const {
  if (snapshot_on_terminal.empty()) return {};
  static constexpr std::string_view kRunDir = "<run-dir>";
  std::string path;
  for (size_t at = 0; at < snapshot_on_terminal.size();) {
    if (snapshot_on_terminal.compare(at, kRunDir.size(), kRunDir) == 0) {
      path += run_dir;
      at += kRunDir.size();
    } else {
      path += snapshot_on_terminal[at++];
    }
  }
  return path[0] == '/' ? path : join_path(run_dir, path);
}

Expected<Graph> Graph::load(const std::string& skill_dir) {
  std::string path = join_path(skill_dir, "GRAPH.yaml");
  if (const std::string_view shipped = snapshot_text(); !shipped.empty()) {
    DG_TRY(bool same, file_has_bytes(path, shipped));
    if (same) return std::move(*snapshot(shipped));
  }
  DG_TRY(std::string text, read_file(path));
  return parse(text, path);
}

Expected<Graph> Graph::parse(std::string_view yaml_text, std::string_view origin) {
  Reader r{std::string(origin)};
  DG_TRY(Json doc, parse_yaml_document(yaml_text, origin));
  if (!doc.is_object()) return r.bad("the document", "a mapping");

  Graph g;
  if (!at(doc, "version").is_number_integer()) return r.bad("version", "an integer");
  g.version = at(doc, "version").get<int>();
  DG_TRY(g.entrypoint, r.str(at(doc, "entrypoint"), "entrypoint", true));
  DG_TRY(g.clean_entrypoint, r.str(at(doc, "clean_entrypoint"), "clean_entrypoint", false));
  DG_TRY(g.terminal_states, r.strings(at(doc, "terminal_states"), "terminal_states"));
  DG_TRY(g.pause_states, r.strings(at(doc, "pause_states"), "pause_states"));
  DG_TRY(g.personas, r.strings(at(doc, "personas"), "personas"));
  DG_TRY(g.events, r.strings(at(doc, "events"), "events"));

  const Json& defaults = at(doc, "defaults");
  DG_TRY(g.defaults.max_retries, r.integer(at(defaults, "max_retries"), "defaults.max_retries", 2));
  DG_TRY(g.defaults.max_repair_cycles,
         r.integer(at(defaults, "max_repair_cycles"), "defaults.max_repair_cycles", 3));

  const Json& conc = at(doc, "concurrency");
  DG_TRY(g.concurrency.max_parallel_bundles,
         r.integer(at(conc, "max_parallel_bundles"), "concurrency.max_parallel_bundles", 3));
  DG_TRY(g.concurrency.max_parallel_tasks_per_bundle,
         r.integer(at(conc, "max_parallel_tasks_per_bundle"),
                   "concurrency.max_parallel_tasks_per_bundle", 6));
  DG_TRY(g.concurrency.max_live_personas_per_tech_lead,
         r.integer(at(conc, "max_live_personas_per_tech_lead"),
                   "concurrency.max_live_personas_per_tech_lead", 12));
  DG_TRY(g.concurrency.max_live_personas,
         r.integer(at(conc, "max_live_personas"), "concurrency.max_live_personas", 39));

  const Json& intake = at(doc, "intake");
  DG_TRY(std::string label, r.str(at(intake, "label"), "intake.label", false));
  if (!label.empty()) g.intake.label = label;
  DG_TRY(std::string epic, r.str(at(intake, "epic_label"), "intake.epic_label", false));
  if (!epic.empty()) g.intake.epic_label = epic;
  const Json& bundling = at(doc, "bundling");
  DG_TRY(g.intake.max_issues_per_bundle,
         r.integer(at(bundling, "max_issues_per_bundle"), "bundling.max_issues_per_bundle", 5));
  if (!at(bundling, "p0_ships_alone").is_null()) {
    if (!at(bundling, "p0_ships_alone").is_boolean())
      return r.bad("bundling.p0_ships_alone", "true or false");
    g.intake.p0_ships_alone = at(bundling, "p0_ships_alone").get<bool>();
  }

  // reactions: optional; each rule's action is report or repair.
  const Json& reactions = at(doc, "reactions");
  for (auto [key, rule] :
       {std::pair<const char*, ReactionRule*>{"ci_failure", &g.reactions.ci_failure},
        {"changes_requested", &g.reactions.changes_requested}}) {
    const Json& entry = at(reactions, key);
    std::string field = std::string("reactions.") + key;
    if (entry.is_null()) continue;
    if (!entry.is_object()) return r.bad(field, "a mapping with action and max_cycles");
    DG_TRY(std::string action, r.str(at(entry, "action"), field + ".action", false));
    if (!action.empty()) rule->action = action;
    if (rule->action != "report" && rule->action != "repair")
      return r.bad(field + ".action", "report or repair");
    DG_TRY(rule->max_cycles, r.integer(at(entry, "max_cycles"), field + ".max_cycles", 2));
    if (rule->max_cycles < 1) return r.bad(field + ".max_cycles", "at least 1");
  }

  const Json& observability = at(doc, "observability");
  if (!observability.is_null() && !observability.is_object())
    return r.bad("observability", "a mapping");
  DG_TRY(g.observability.snapshot_on_terminal, r.str(at(observability, "snapshot_on_terminal"),
                                                     "observability.snapshot_on_terminal", false));

  const Json& cleanup = at(doc, "cleanup");
  if (!cleanup.is_null() && !cleanup.is_object()) return r.bad("cleanup", "a mapping");
  if (!at(cleanup, "strategies").is_null()) {
    DG_TRY(g.cleanup.strategies, r.strings(at(cleanup, "strategies"), "cleanup.strategies"));
  }
  DG_TRY(g.cleanup.default_strategy,
         r.str(at(cleanup, "default_strategy"), "cleanup.default_strategy", false));

  const Json& delivery = at(doc, "delivery");
  if (!delivery.is_null() && !delivery.is_object()) return r.bad("delivery", "a mapping");
  const Json& github = at(delivery, "github");
  if (!github.is_null() && !github.is_object()) return r.bad("delivery.github", "a mapping");
  DG_TRY(std::string merge, r.str(at(github, "merge"), "delivery.github.merge", false));
  if (!merge.empty()) g.delivery.merge = merge;
  const Json& options = at(github, "merge_options");
  if (options.is_string()) {
    // "never | auto_when_checks_pass", as the file writes it.
    std::string_view rest = options.get_ref<const std::string&>();
    while (!rest.empty()) {
      size_t bar = rest.find('|');
      std::string_view item = rest.substr(0, bar);
      while (!item.empty() && item.front() == ' ') item.remove_prefix(1);
      while (!item.empty() && item.back() == ' ') item.remove_suffix(1);
      if (item.empty()) return r.bad("delivery.github.merge_options", "values separated by |");
      g.delivery.merge_options.emplace_back(item);
      rest = bar == std::string_view::npos ? std::string_view() : rest.substr(bar + 1);
    }
  } else if (!options.is_null()) {
    DG_TRY(g.delivery.merge_options, r.strings(options, "delivery.github.merge_options"));
  }

  DG_CHECK(read_discuss(r, at(doc, "discuss"), g.discuss));
  DG_CHECK(read_fix(r, at(doc, "fix"), g.fix));
  DG_CHECK(read_escalation(r, at(doc, "escalation"), g.escalation));
  DG_CHECK(read_debug(r, at(doc, "debug"), g.debug));

  const Json& per_bundle = at(at(doc, "budgets"), "per_bundle");
  {
    BundleBudget& b = g.budgets.per_bundle;
    DG_TRY(auto runs,
           r.limit(per_bundle, "persona_runs", "budgets.per_bundle.persona_runs", b.persona_runs));
    if (runs && *runs > std::numeric_limits<int>::max())
      return r.bad("budgets.per_bundle.persona_runs",
                   "at most " + std::to_string(std::numeric_limits<int>::max()));
    b.persona_runs = runs ? std::optional<int>(static_cast<int>(*runs)) : std::nullopt;
    DG_TRY(b.cost_usd, r.money(per_bundle, "cost_usd", "budgets.per_bundle.cost_usd", b.cost_usd));
    DG_TRY(b.tokens, r.limit(per_bundle, "tokens", "budgets.per_bundle.tokens", b.tokens));
  }

  const Json& hl = at(doc, "headless");
  DG_TRY(std::string pm, r.str(at(hl, "permission_mode"), "headless.permission_mode", false));
  if (!pm.empty()) g.headless.permission_mode = pm;
  DG_TRY(g.headless.max_turns_per_persona,
         r.integer(at(hl, "max_turns_per_persona"), "headless.max_turns_per_persona", 80));
  DG_TRY(g.headless.persona_timeout_minutes,
         r.integer(at(hl, "persona_timeout_minutes"), "headless.persona_timeout_minutes", 30));
  DG_TRY(g.headless.api_retry_minutes,
         r.integer(at(hl, "api_retry_minutes"), "headless.api_retry_minutes", 60));
  DG_TRY(std::string model, r.str(at(hl, "model"), "headless.model", false));
  if (!model.empty()) g.headless.model = model;
  DG_TRY(g.headless.allowed_tools, r.strings(at(hl, "allowed_tools"), "headless.allowed_tools"));
  DG_TRY(g.headless.disallowed_tools,
         r.strings(at(hl, "disallowed_tools"), "headless.disallowed_tools"));
  if (!at(hl, "run_git_hooks").is_null()) {
    if (!at(hl, "run_git_hooks").is_boolean())
      return r.bad("headless.run_git_hooks", "true or false");
    g.headless.run_git_hooks = at(hl, "run_git_hooks").get<bool>();
  }

  const Json& cap = at(doc, "capacity");
  DG_TRY(g.capacity.signals, r.strings(at(cap, "signals"), "capacity.signals"));
  const Json& thresholds = at(cap, "thresholds");
  if (!thresholds.is_null() && !thresholds.is_object())
    return r.bad("capacity.thresholds", "a mapping of tiers");
  if (thresholds.is_object()) {
    for (auto it = thresholds.begin(); it != thresholds.end(); ++it) {
      CapacityTier tier{it.key(), {}};
      if (!it->is_object()) return r.bad("capacity.thresholds." + it.key(), "a mapping of signals");
      for (auto s = it->begin(); s != it->end(); ++s) {
        if (!s->is_number_integer())
          return r.bad("capacity.thresholds." + it.key() + "." + s.key(), "an integer");
        tier.limits[s.key()] = s->get<long long>();
      }
      g.capacity.tiers.push_back(std::move(tier));
    }
  }
  const Json& actions = at(cap, "actions");
  if (actions.is_object())
    for (auto it = actions.begin(); it != actions.end(); ++it)
      if (it->is_string()) g.capacity.actions[it.key()] = it->get<std::string>();

  const Json& lanes = at(doc, "lanes");
  if (!lanes.is_object()) return r.bad("lanes", "a mapping of lanes");
  for (auto it = lanes.begin(); it != lanes.end(); ++it) {
    GraphLane lane;
    lane.name = it.key();
    std::string field = "lanes." + lane.name;
    DG_TRY(lane.nodes, r.strings(at(*it, "nodes"), field + ".nodes"));
    DG_TRY(lane.complete_at, r.str(at(*it, "complete_at"), field + ".complete_at", false));
    DG_TRY(lane.complete_on, r.strings(at(*it, "complete_on"), field + ".complete_on"));
    g.lanes.push_back(std::move(lane));
  }
  // Read by the run store (the lane any cursor may enter is the one owned
  // by "cursor-owner"), never a load error: an owner that is not a string
  // is left out, as the store always treated it.
  const Json& lane_owner = at(doc, "lane_owner");
  if (lane_owner.is_object())
    for (auto it = lane_owner.begin(); it != lane_owner.end(); ++it)
      if (it->is_string()) g.lane_owners.emplace_back(it.key(), it->get<std::string>());

  const Json& nodes = at(doc, "nodes");
  if (!nodes.is_object()) return r.bad("nodes", "a mapping of nodes");
  for (auto it = nodes.begin(); it != nodes.end(); ++it) {
    GraphNode n;
    n.name = it.key();
    std::string field = "nodes." + n.name;
    if (!it->is_object()) return r.bad(field, "a mapping");
    DG_TRY(n.type, r.str(at(*it, "type"), field + ".type", false));
    const Json& owner = at(*it, "owner");
    if (owner.is_string()) {
      n.owners.push_back(owner.get<std::string>());
    } else if (owner.is_array()) {
      DG_TRY(n.owners, r.strings(owner, field + ".owner"));
    } else if (!owner.is_null()) {
      return r.bad(field + ".owner", "a string or a list of strings");
    }
    DG_TRY(n.selector, r.str(at(*it, "selector"), field + ".selector", false));
    DG_TRY(n.dispatched_by, r.str(at(*it, "dispatched_by"), field + ".dispatched_by", false));
    DG_TRY(n.dispatches, r.str(at(*it, "dispatches"), field + ".dispatches", false));
    DG_TRY(n.next, r.str(at(*it, "next"), field + ".next", false));
    DG_TRY(n.evidence, r.str(at(*it, "evidence"), field + ".evidence", false));
    if (!n.evidence.empty() && n.evidence != "check_fails" && n.evidence != "check_passes")
      return r.bad(field + ".evidence", "check_fails or check_passes");
    const Json& routes = at(*it, "routes");
    if (!routes.is_null() && !routes.is_object()) return r.bad(field + ".routes", "a mapping");
    if (routes.is_object()) {
      for (auto rt = routes.begin(); rt != routes.end(); ++rt) {
        if (!rt->is_string()) return r.bad(field + ".routes." + rt.key(), "a node name");
        n.routes.emplace_back(rt.key(), rt->get<std::string>());
      }
    }
    const Json& guards = at(*it, "guards");
    DG_TRY(n.max_cycles, r.integer(at(guards, "max_cycles"), field + ".guards.max_cycles", 0));
    DG_TRY(n.max_retries, r.integer(at(guards, "max_retries"), field + ".guards.max_retries", 0));
    DG_TRY(n.max_pointers,
           r.integer(at(guards, "max_pointers"), field + ".guards.max_pointers", 0));
    DG_TRY(n.max_researcher_runs,
           r.integer(at(guards, "max_researcher_runs"), field + ".guards.max_researcher_runs", 0));
    for (auto [key, value] : {std::pair<const char*, int>{"max_pointers", n.max_pointers},
                              {"max_researcher_runs", n.max_researcher_runs}})
      if (value < 0) return r.bad(field + ".guards." + key, "0 or more");
    g.nodes.push_back(std::move(n));
  }

  const Json& legacy = at(doc, "legacy_nodes");
  if (!legacy.is_null() && !legacy.is_object()) return r.bad("legacy_nodes", "a mapping");
  if (legacy.is_object()) {
    for (auto it = legacy.begin(); it != legacy.end(); ++it) {
      if (!it->is_string()) return r.bad("legacy_nodes." + it.key(), "a node name");
      g.legacy_nodes.emplace_back(it.key(), it->get<std::string>());
    }
  }

  g.index();
  for (const auto& [field, name] :
       {std::pair<const char*, const std::string&>{"fix.fixer", g.fix.fixer},
        {"fix.reviewer", g.fix.reviewer},
        {"fix.diagnosis_persona", g.fix.diagnosis_persona}})
    if (!name.empty() && !g.has_persona(name)) return r.bad(field, "one of personas, not " + name);
  if (!g.discuss.persona.empty() && !g.has_persona(g.discuss.persona))
    return r.bad("discuss.persona", "one of personas, not " + g.discuss.persona);
  if (!g.debug.debugger.empty() && !g.has_persona(g.debug.debugger))
    return r.bad("debug.debugger", "one of personas, not " + g.debug.debugger);
  for (const auto& [hint, s] : g.debug.specialists)
    if (!g.has_persona(s.persona))
      return r.bad("debug.specialists." + hint + ".persona", "one of personas, not " + s.persona);
  for (const auto& round : g.discuss.rounds)
    for (const std::string* n : {&round.after, &round.before})
      if (!n->empty() && !g.node(*n))
        return r.bad("discuss.rounds." + round.name, "placed at a node there is, not " + *n);
  return g;
}

const DiscussPerspective* DiscussRules::perspective(const std::string& name) const {
  for (const auto& p : perspectives)
    if (p.name == name) return &p;
  return nullptr;
}

namespace {

// `items` sorted by name(item), keeping one per name: the last when
// `keep_last`, else the first (a stable sort keeps their given order among
// equal names).
template <typename T, typename Name>
std::vector<T> sort_unique(std::vector<T> items, Name name, bool keep_last) {
  std::stable_sort(items.begin(), items.end(),
                   [&](const T& a, const T& b) { return name(a) < name(b); });
  std::vector<T> out;
  out.reserve(items.size());
  for (const T& item : items) {
    if (!out.empty() && name(out.back()) == name(item)) {
      if (keep_last) out.back() = item;
      continue;
    }
    out.push_back(item);
  }
  return out;
}

// 0 .. n-1.
std::vector<uint32_t> positions(size_t n) {
  std::vector<uint32_t> out(n);
  for (size_t i = 0; i < n; ++i) out[i] = static_cast<uint32_t>(i);
  return out;
}

// The entry of `index` (sorted by name(entry)) named `key`, or nullptr.
template <typename T, typename Name>
const T* find_sorted(const std::vector<T>& index, std::string_view key, Name name) {
  auto it = std::lower_bound(index.begin(), index.end(), key,
                             [&](const T& e, std::string_view k) { return name(e) < k; });
  if (it == index.end() || name(*it) != key) return nullptr;
  return &*it;
}

}  // namespace

std::string_view Graph::lane_entry_node(const LaneEntry& entry) const {
  return lanes[entry.first].nodes[entry.second];
}

void Graph::index() {
  // Sorted lists rather than maps: a short command builds these once and
  // looks up a handful of names, and a sorted vector costs one allocation
  // where a map costs one per name.
  node_index_ = sort_unique(
      positions(nodes.size()), [&](uint32_t i) -> std::string_view { return nodes[i].name; }, true);
  lane_index_ = sort_unique(
      positions(lanes.size()), [&](uint32_t i) -> std::string_view { return lanes[i].name; }, true);
  // In file order, so the first lane listing a node wins (check_graph
  // reports doubles).
  std::vector<LaneEntry> entries;
  for (size_t i = 0; i < lanes.size(); ++i)
    for (size_t k = 0; k < lanes[i].nodes.size(); ++k)
      entries.emplace_back(static_cast<uint32_t>(i), static_cast<uint32_t>(k));
  lane_of_node_ = sort_unique(
      std::move(entries), [&](const LaneEntry& e) { return lane_entry_node(e); }, false);
  for (auto& n : nodes) {
    if (const GraphLane* l = lane_of(n.name)) n.lane = l->name;
  }
}

const GraphNode* Graph::node(std::string_view n) const {
  const uint32_t* at =
      find_sorted(node_index_, n, [&](uint32_t i) -> std::string_view { return nodes[i].name; });
  return at ? &nodes[*at] : nullptr;
}

const GraphLane* Graph::lane(std::string_view n) const {
  const uint32_t* at =
      find_sorted(lane_index_, n, [&](uint32_t i) -> std::string_view { return lanes[i].name; });
  return at ? &lanes[*at] : nullptr;
}

const GraphLane* Graph::lane_of(std::string_view n) const {
  const LaneEntry* at =
      find_sorted(lane_of_node_, n, [&](const LaneEntry& e) { return lane_entry_node(e); });
  return at ? &lanes[at->first] : nullptr;
}

bool Graph::has_event(std::string_view e) const {
  return std::find(events.begin(), events.end(), e) != events.end();
}

bool Graph::has_persona(std::string_view p) const {
  return std::find(personas.begin(), personas.end(), p) != personas.end();
}

std::optional<std::string> Graph::legacy_target(std::string_view old_node) const {
  for (const auto& [from, to] : legacy_nodes)
    if (from == old_node) return to;
  return std::nullopt;
}

std::vector<std::string> check_graph(const Graph& g) {
  std::vector<std::string> errors;
  auto is_node = [&](const std::string& n) { return g.node(n) != nullptr; };
  if (!is_node(g.entrypoint)) errors.push_back("entrypoint '" + g.entrypoint + "' is not a node");
  if (!g.clean_entrypoint.empty() && !is_node(g.clean_entrypoint))
    errors.push_back("clean_entrypoint '" + g.clean_entrypoint + "' is not a node");
  for (const auto& t : g.terminal_states)
    if (!is_node(t)) errors.push_back("terminal state '" + t + "' is not a node");
  for (const auto& t : g.pause_states)
    if (!is_node(t)) errors.push_back("pause state '" + t + "' is not a node");

  for (const auto& n : g.nodes) {
    if (!node_types().count(n.type))
      errors.push_back(n.name + ": unknown node type '" + n.type + "'");
    if (!n.next.empty() && !is_node(n.next))
      errors.push_back(n.name + ": next -> unknown node " + n.next);
    for (const auto& [route, target] : n.routes)
      if (!pseudo_target(target) && !is_node(target))
        errors.push_back(n.name + ": route " + route + " -> unknown node " + target);
    if (n.type == "agent" || n.type == "agent_parallel") {
      for (const auto& o : n.owners)
        if (o != "dynamic" && !g.has_persona(o))
          errors.push_back(n.name + ": owner '" + o + "' is not in personas");
    }
    if (!n.dispatches.empty() && !g.has_persona(n.dispatches))
      errors.push_back(n.name + ": dispatches '" + n.dispatches + "' is not in personas");
  }

  for (const char* required : {"orchestrator", "bundle", "task", "shared"})
    if (!g.lane(required)) errors.push_back(std::string("lanes: missing lane '") + required + "'");
  std::map<std::string, std::string> seen;
  for (const auto& lane : g.lanes) {
    for (const auto& n : lane.nodes) {
      if (!is_node(n)) errors.push_back("lanes." + lane.name + ": unknown node " + n);
      auto [it, inserted] = seen.emplace(n, lane.name);
      if (!inserted)
        errors.push_back("lanes: node " + n + " is in both " + it->second + " and " + lane.name);
    }
    if (!lane.complete_at.empty() &&
        std::find(lane.nodes.begin(), lane.nodes.end(), lane.complete_at) == lane.nodes.end())
      errors.push_back("lanes." + lane.name + ": complete_at " + lane.complete_at +
                       " is not in the lane");
    if (!lane.complete_at.empty() && lane.complete_on.empty())
      errors.push_back("lanes." + lane.name + ": complete_at without complete_on events");
    for (const auto& e : lane.complete_on)
      if (!g.has_event(e))
        errors.push_back("lanes." + lane.name + ".complete_on event " + e +
                         " is not in the vocabulary");
  }
  for (const auto& n : g.nodes)
    if (!seen.count(n.name)) errors.push_back("lanes: node " + n.name + " is in no lane");
  for (const char* cursor_lane : {"bundle", "task"})
    if (const GraphLane* l = g.lane(cursor_lane); l && l->complete_at.empty())
      errors.push_back(std::string("lanes.") + cursor_lane + ": needs complete_at and complete_on");

  for (const auto& [from, to] : g.legacy_nodes) {
    if (is_node(from)) errors.push_back("legacy_nodes: " + from + " is still a live node");
    if (!is_node(to)) errors.push_back("legacy_nodes: " + from + " maps to unknown node " + to);
  }

  if (g.events.empty()) errors.push_back("events: GRAPH.yaml lists no events");
  std::set<std::string> ev;
  for (const auto& e : g.events)
    if (!ev.insert(e).second) errors.push_back("events: " + e + " is listed twice");
  if (g.personas.empty()) errors.push_back("personas: GRAPH.yaml lists no personas");

  if (g.capacity.signals.empty()) errors.push_back("capacity.signals: none listed");
  const CapacityTier* prev = nullptr;
  for (const auto& tier : g.capacity.tiers) {
    for (const auto& s : g.capacity.signals)
      if (!tier.limits.count(s))
        errors.push_back("capacity.thresholds." + tier.name + "." + s + ": missing");
    for (const auto& [s, v] : tier.limits) {
      if (std::find(g.capacity.signals.begin(), g.capacity.signals.end(), s) ==
          g.capacity.signals.end())
        errors.push_back("capacity.thresholds." + tier.name + "." + s + ": not a listed signal");
      if (prev && prev->limits.count(s) && prev->limits.at(s) > v)
        errors.push_back("capacity.thresholds." + tier.name + "." + s + ": below the " +
                         prev->name + " tier");
    }
    if (!g.capacity.actions.count(tier.name))
      errors.push_back("capacity.actions: no action for tier " + tier.name);
    prev = &tier;
  }
  // The merge policy: one the engine carries out, and one of the options
  // the file lists beside it (when it lists any).
  const std::vector<std::string> engine(std::begin(kMergePolicies), std::end(kMergePolicies));
  const auto& options = g.delivery.merge_options.empty() ? engine : g.delivery.merge_options;
  auto listed = [](const std::vector<std::string>& in, const std::string& v) {
    return std::find(in.begin(), in.end(), v) != in.end();
  };
  auto joined = [](const std::vector<std::string>& in) {
    std::string all;
    for (const auto& v : in) all += (all.empty() ? "" : ", ") + v;
    return all;
  };
  for (const auto& o : options)
    if (!listed(engine, o))
      errors.push_back("delivery.github.merge_options: " + o +
                       " is no merge policy this engine carries out (" + joined(engine) + ")");
  if (!listed(options, g.delivery.merge) || !listed(engine, g.delivery.merge))
    errors.push_back("delivery.github.merge: " + g.delivery.merge + " is not one of " +
                     joined(options));
  for (const auto& e : cross_checks(g)) errors.push_back(e);
  return errors;
}

}  // namespace devgraph
