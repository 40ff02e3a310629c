// Build tool: writes a C++ source holding a GRAPH.yaml's bytes and the
// typed Graph they parse to, written as constant tables with the code that
// builds the Graph from them, for Graph::snapshot() (src/graph/graph.h; the
// declarations are in src/graph/graph_embedded.h).
//
//   embed_graph GRAPH.yaml OUT.cpp
//
// The file is parsed with Graph::parse, the loader itself, so the snapshot
// holds what parsing the file means and nothing else. Every field is
// written: the model's structs are taken apart with structured bindings, so
// a field added to one of them stops this tool from compiling until it is
// written too (the generated row struct and make() follow the bindings).
// Graph keeps private indexes and is no aggregate, so its own fields are
// listed by name; tests/unit/graph_test.cpp compares the snapshot with a
// fresh parse, and a field missed here fails that test.
//
// Exit codes: 0 written, 1 the graph cannot be read or parsed, or OUT.cpp
// cannot be written.
#include <cstdio>
#include <fstream>
#include <iostream>
#include <limits>
#include <set>
#include <sstream>
#include <string>
#include <type_traits>
#include <vector>

#include "graph/graph.h"
#include "util/cpp_literal.h"

namespace devgraph {

// The tool builds the snapshot, so it has none: Graph::load, linked from the
// same objects as the library, always parses here.
std::optional<Graph> Graph::snapshot(std::string_view) {
  return std::nullopt;
}
std::string_view Graph::snapshot_text() {
  return {};
}

namespace {

// Writes the model as constant tables and the few lines that build it from
// them. Every value becomes a constant of a "view" type: a string a
// string_view literal ("..."sv keeps any byte, NUL included), a list a span
// over a named constant array, a struct of the model a generated row struct
// of views (RowN, field by field in declaration order). At run time, one
// make() per row type and two loops (make_vector, make_map, see kPrelude)
// turn the tables into the model. Building the graph is then a short loop
// over data instead of tens of kilobytes of straight-line code, which a
// short command runs exactly once, from cold.
class Tables {
 public:
  // Arrays and row types go to `decls` as they are first needed, ahead of
  // the function that uses them.
  explicit Tables(std::ostream& decls) : decls_(decls) {}

  std::string view(bool v) { return v ? "true" : "false"; }
  std::string view(int v) { return integer(v, ""); }
  std::string view(long long v) { return integer(v, "LL"); }
  // A hexadecimal floating literal: every double, exactly.
  std::string view(double v) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%a", v);
    return buf;
  }
  std::string view(const std::string& s) { return cpp_string_literal(s) + "sv"; }

  template <class T>
  std::string view(const std::optional<T>& v) {
    return v ? view_type(std::type_identity<std::optional<T>>()) + "{" + view(*v) + "}"
             : "std::nullopt";
  }

  template <class A, class B>
  std::string view(const std::pair<A, B>& p) {
    // A map's items have a const key; the view of either is the same.
    return view_type(std::type_identity<std::pair<std::remove_const_t<A>, B>>()) + "{" +
           view(p.first) + ", " + view(p.second) + "}";
  }

  template <class T>
  std::string view(const std::vector<T>& items) {
    return array(view_type(std::type_identity<T>()), items);
  }

  template <class K, class V>
  std::string view(const std::map<K, V>& items) {
    return array(view_type(std::type_identity<std::pair<K, V>>()), items);
  }

  std::string view(const GraphNode& n) {
    const auto& [name, type, owners, selector, dispatched_by, dispatches, next, routes, max_cycles,
                 max_retries, max_pointers, max_researcher_runs, evidence, lane] = n;
    return record<GraphNode>(name, type, owners, selector, dispatched_by, dispatches, next, routes,
                             max_cycles, max_retries, max_pointers, max_researcher_runs, evidence,
                             lane);
  }
  std::string view(const GraphLane& l) {
    const auto& [name, nodes, complete_at, complete_on] = l;
    return record<GraphLane>(name, nodes, complete_at, complete_on);
  }
  std::string view(const CapacityTier& t) {
    const auto& [name, limits] = t;
    return record<CapacityTier>(name, limits);
  }
  std::string view(const CapacityModel& c) {
    const auto& [signals, tiers, actions] = c;
    return record<CapacityModel>(signals, tiers, actions);
  }
  std::string view(const Concurrency& c) {
    const auto& [bundles, tasks_per_bundle, personas_per_tech_lead, personas] = c;
    return record<Concurrency>(bundles, tasks_per_bundle, personas_per_tech_lead, personas);
  }
  std::string view(const IntakeRules& i) {
    const auto& [label, epic_label, max_issues, p0_alone] = i;
    return record<IntakeRules>(label, epic_label, max_issues, p0_alone);
  }
  std::string view(const HeadlessSettings& h) {
    const auto& [permission_mode, max_turns, timeout, api_retry, model, allowed,
                 disallowed, run_git_hooks] = h;
    return record<HeadlessSettings>(permission_mode, max_turns, timeout, api_retry, model,
                                    allowed, disallowed, run_git_hooks);
  }
  std::string view(const BundleBudget& b) {
    const auto& [persona_runs, cost_usd, tokens] = b;
    return record<BundleBudget>(persona_runs, cost_usd, tokens);
  }
  std::string view(const Budgets& b) {
    const auto& [per_bundle] = b;
    return record<Budgets>(per_bundle);
  }
  std::string view(const ReactionRule& r) {
    const auto& [action, max_cycles] = r;
    return record<ReactionRule>(action, max_cycles);
  }
  std::string view(const Reactions& r) {
    const auto& [ci_failure, changes_requested] = r;
    return record<Reactions>(ci_failure, changes_requested);
  }
  std::string view(const Observability& o) {
    const auto& [snapshot_on_terminal] = o;
    return record<Observability>(snapshot_on_terminal);
  }
  std::string view(const CleanupRules& c) {
    const auto& [strategies, default_strategy] = c;
    return record<CleanupRules>(strategies, default_strategy);
  }
  std::string view(const DeliveryRules& d) {
    const auto& [merge, merge_options] = d;
    return record<DeliveryRules>(merge, merge_options);
  }
  std::string view(const DiscussPerspective& p) {
    const auto& [name, role, focus, backend, reports, reads_context] = p;
    return record<DiscussPerspective>(name, role, focus, backend, reports, reads_context);
  }
  std::string view(const DiscussRound& d) {
    const auto& [name, after, before, perspectives, revisions] = d;
    return record<DiscussRound>(name, after, before, perspectives, revisions);
  }
  std::string view(const DiscussRules& d) {
    const auto& [persona, answer_schema, fallback, perspectives, rounds_enabled, rounds] = d;
    return record<DiscussRules>(persona, answer_schema, fallback, perspectives, rounds_enabled,
                                rounds);
  }
  std::string view(const FixRules& f) {
    const auto& [max_loops, max_replans, fixer, reviewer, reviewer_backend, diagnosis, gate,
                 gate_backend] = f;
    return record<FixRules>(max_loops, max_replans, fixer, reviewer, reviewer_backend, diagnosis,
                            gate, gate_backend);
  }
  std::string view(const EscalationLadder& l) {
    const auto& [setting, steps] = l;
    return record<EscalationLadder>(setting, steps);
  }
  std::string view(const EscalationRules& e) {
    const auto& [max_raises, ladder] = e;
    return record<EscalationRules>(max_raises, ladder);
  }
  std::string view(const DebugSpecialist& d) {
    const auto& [persona, backend] = d;
    return record<DebugSpecialist>(persona, backend);
  }
  std::string view(const DebugRules& d) {
    const auto& [debugger, max_cycles, malformed_resumes, specialists] = d;
    return record<DebugRules>(debugger, max_cycles, malformed_resumes, specialists);
  }
  std::string view(const GraphDefaults& d) {
    const auto& [max_retries, max_repair_cycles] = d;
    return record<GraphDefaults>(max_retries, max_repair_cycles);
  }

  // One statement of the generated function: `g.<field> = <value>;`, the
  // value built from a constant.
  template <class T>
  std::string assign(const char* field, const T& value) {
    return std::string("  g.") + field + " = " +
           convert(std::type_identity<T>(),
                   constant(view_type(std::type_identity<T>()), view(value))) +
           ";\n";
  }

 private:
  // The view type of each model type.
  static std::string view_type(std::type_identity<bool>) { return "bool"; }
  static std::string view_type(std::type_identity<int>) { return "int"; }
  static std::string view_type(std::type_identity<long long>) { return "long long"; }
  static std::string view_type(std::type_identity<double>) { return "double"; }
  static std::string view_type(std::type_identity<std::string>) { return "std::string_view"; }
  template <class T>
  static std::string view_type(std::type_identity<std::optional<T>>) {
    return "std::optional<" + view_type(std::type_identity<T>()) + ">";
  }
  template <class A, class B>
  static std::string view_type(std::type_identity<std::pair<A, B>>) {
    return "std::pair<" + view_type(std::type_identity<A>()) + ", " +
           view_type(std::type_identity<B>()) + ">";
  }
  template <class T>
  static std::string view_type(std::type_identity<std::vector<T>>) {
    return "std::span<const " + view_type(std::type_identity<T>()) + ">";
  }
  template <class K, class V>
  static std::string view_type(std::type_identity<std::map<K, V>>) {
    return "std::span<const " + view_type(std::type_identity<std::pair<K, V>>()) + ">";
  }
  template <class R>
  requires std::is_class_v<R> && std::is_aggregate_v<R>
  static std::string view_type(std::type_identity<R>) {
    return std::string(row_name(std::type_identity<R>())) + "Row";
  }

  // The C++ spelling of the model types a container holds.
  static std::string spelled(std::type_identity<std::string>) { return "std::string"; }
  static std::string spelled(std::type_identity<long long>) { return "long long"; }
  template <class A, class B>
  static std::string spelled(std::type_identity<std::pair<A, B>>) {
    return "std::pair<" + spelled(std::type_identity<A>()) + ", " +
           spelled(std::type_identity<B>()) + ">";
  }
  template <class R>
  requires std::is_class_v<R> && std::is_aggregate_v<R>
  static std::string spelled(std::type_identity<R>) { return row_name(std::type_identity<R>()); }

  static const char* row_name(std::type_identity<GraphNode>) { return "GraphNode"; }
  static const char* row_name(std::type_identity<GraphLane>) { return "GraphLane"; }
  static const char* row_name(std::type_identity<CapacityTier>) { return "CapacityTier"; }
  static const char* row_name(std::type_identity<CapacityModel>) { return "CapacityModel"; }
  static const char* row_name(std::type_identity<Concurrency>) { return "Concurrency"; }
  static const char* row_name(std::type_identity<HeadlessSettings>) { return "HeadlessSettings"; }
  static const char* row_name(std::type_identity<IntakeRules>) { return "IntakeRules"; }
  static const char* row_name(std::type_identity<GraphDefaults>) { return "GraphDefaults"; }
  static const char* row_name(std::type_identity<BundleBudget>) { return "BundleBudget"; }
  static const char* row_name(std::type_identity<Budgets>) { return "Budgets"; }
  static const char* row_name(std::type_identity<ReactionRule>) { return "ReactionRule"; }
  static const char* row_name(std::type_identity<Reactions>) { return "Reactions"; }
  static const char* row_name(std::type_identity<Observability>) { return "Observability"; }
  static const char* row_name(std::type_identity<CleanupRules>) { return "CleanupRules"; }
  static const char* row_name(std::type_identity<DiscussPerspective>) {
    return "DiscussPerspective";
  }
  static const char* row_name(std::type_identity<DiscussRound>) { return "DiscussRound"; }
  static const char* row_name(std::type_identity<DiscussRules>) { return "DiscussRules"; }
  static const char* row_name(std::type_identity<FixRules>) { return "FixRules"; }
  static const char* row_name(std::type_identity<EscalationLadder>) { return "EscalationLadder"; }
  static const char* row_name(std::type_identity<EscalationRules>) { return "EscalationRules"; }
  static const char* row_name(std::type_identity<DebugSpecialist>) { return "DebugSpecialist"; }
  static const char* row_name(std::type_identity<DebugRules>) { return "DebugRules"; }
  static const char* row_name(std::type_identity<DeliveryRules>) { return "DeliveryRules"; }

  // The expression that turns a view expression into the model type T.
  template <class T>
  static std::string convert(std::type_identity<std::vector<T>>, const std::string& expr) {
    return "make_vector<" + spelled(std::type_identity<T>()) + ">(" + expr + ")";
  }
  template <class K, class V>
  static std::string convert(std::type_identity<std::map<K, V>>, const std::string& expr) {
    return "make_map<" + spelled(std::type_identity<K>()) + ", " +
           spelled(std::type_identity<V>()) + ">(" + expr + ")";
  }
  template <class T>
  static std::string convert(std::type_identity<T>, const std::string& expr) {
    return "make(" + expr + ")";
  }

  // A row of the model struct R: its row type (written once, with the
  // make() that builds R from it) and the row's initializer.
  template <class R, class... Fields>
  std::string record(const Fields&... fields) {
    const std::string type = view_type(std::type_identity<R>());
    // The fields first: the row types and arrays they need must come
    // before this row type, which names them.
    std::string init = type + "{";
    const char* separator = "";
    ((init += separator + view(fields), separator = ", "), ...);
    init += "}";
    if (written_rows_.insert(type).second) {
      std::string members;
      std::string built;
      int k = 0;
      ((members +=
        "  " + view_type(std::type_identity<Fields>()) + " f" + std::to_string(k) + ";\n",
        built += std::string(k == 0 ? "" : ",\n      ") +
                 convert(std::type_identity<Fields>(), "r.f" + std::to_string(k)),
        ++k),
       ...);
      decls_ << "struct " << type << " {\n" << members << "};\n";
      decls_ << row_name(std::type_identity<R>()) << " make(const " << type << "& r) {\n"
             << "  return " << row_name(std::type_identity<R>()) << "{" << built << "};\n}\n\n";
    }
    return init;
  }

  // A named constant array of `element` holding the items' views; the
  // expression is a span over it (an empty span for no items).
  template <class Container>
  std::string array(const std::string& element, const Container& items) {
    if (items.empty()) return "std::span<const " + element + ">{}";
    std::vector<std::string> views;
    for (const auto& item : items) views.push_back(view(item));
    const std::string name = "kTable" + std::to_string(next_++);
    decls_ << "constexpr " << element << " " << name << "[] = {";
    for (const auto& v : views) decls_ << "\n    " << v << ",";
    decls_ << "\n};\n";
    return "std::span<const " + element + ">(" + name + ")";
  }

  // A named constant holding `value`, so the function reads it from the
  // tables instead of building it in code.
  std::string constant(const std::string& type, const std::string& value) {
    const std::string name = "kTable" + std::to_string(next_++);
    decls_ << "constexpr " << type << " " << name << " = " << value << ";\n";
    return name;
  }

  static std::string integer(long long v, const char* suffix) {
    // The lowest value has no literal of its own: its magnitude does not fit.
    if (v == std::numeric_limits<long long>::min())
      return "(" + std::to_string(v + 1) + suffix + " - 1)";
    return std::to_string(v) + suffix;
  }

  std::ostream& decls_;
  std::set<std::string> written_rows_;
  int next_ = 0;
};

// Helpers the generated function calls; one copy in the generated file.
// make() of a scalar view is the model value; containers are filled in
// order, one allocation each.
constexpr const char* kPrelude = R"(namespace {

using namespace std::string_view_literals;

bool make(bool v) { return v; }
int make(int v) { return v; }
long long make(long long v) { return v; }
double make(double v) { return v; }
std::string make(std::string_view s) { return std::string(s); }

template <class V>
auto make(const std::optional<V>& v) -> std::optional<decltype(make(*v))> {
  if (!v) return std::nullopt;
  return make(*v);
}

template <class A, class B>
auto make(const std::pair<A, B>& p) {
  return std::pair{make(p.first), make(p.second)};
}

template <class T, class V>
std::vector<T> make_vector(std::span<const V> items) {
  std::vector<T> out;
  out.reserve(items.size());
  for (const V& item : items) out.push_back(make(item));
  return out;
}

template <class K, class W, class V>
std::map<K, W> make_map(std::span<const V> items) {
  std::map<K, W> out;
  for (const V& item : items) out.emplace(make(item.first), make(item.second));
  return out;
}

)";

void write_graph(std::ostream& out, const Graph& g) {
  std::ostringstream decls;
  Tables tables(decls);
  std::string body;
  body += tables.assign("version", g.version);
  body += tables.assign("entrypoint", g.entrypoint);
  body += tables.assign("clean_entrypoint", g.clean_entrypoint);
  body += tables.assign("terminal_states", g.terminal_states);
  body += tables.assign("pause_states", g.pause_states);
  body += tables.assign("defaults", g.defaults);
  body += tables.assign("concurrency", g.concurrency);
  body += tables.assign("intake", g.intake);
  body += tables.assign("reactions", g.reactions);
  body += tables.assign("observability", g.observability);
  body += tables.assign("cleanup", g.cleanup);
  body += tables.assign("delivery", g.delivery);
  body += tables.assign("discuss", g.discuss);
  body += tables.assign("fix", g.fix);
  body += tables.assign("escalation", g.escalation);
  body += tables.assign("debug", g.debug);
  body += tables.assign("budgets", g.budgets);
  body += tables.assign("headless", g.headless);
  body += tables.assign("capacity", g.capacity);
  body += tables.assign("personas", g.personas);
  body += tables.assign("events", g.events);
  body += tables.assign("lanes", g.lanes);
  body += tables.assign("lane_owners", g.lane_owners);
  body += tables.assign("nodes", g.nodes);
  body += tables.assign("legacy_nodes", g.legacy_nodes);
  out << kPrelude << decls.str() << "}  // namespace\n\n";
  out << "Graph graph_fields() {\n  Graph g;\n" << body << "  return g;\n}\n";
}

void write_bytes(std::ostream& out, const char* name, std::string_view data) {
  out << cpp_byte_array(name, data);
  out << "const std::size_t " << name << "Size = " << data.size() << ";\n";
}

// The generated source: the bytes, the helpers, the graph.
std::string generated_source(std::string_view text, const Graph& graph) {
  std::ostringstream out;
  out << "// Generated by tools/embed_graph.cpp from GRAPH.yaml; do not edit.\n";
  out << "#include \"graph/graph_embedded.h\"\n\n";
  out << "#include <span>\n\n";
  out << "namespace devgraph::embedded {\n\n";
  write_bytes(out, "kGraphYaml", text);
  out << "\n";
  write_graph(out, graph);
  out << "\n}  // namespace devgraph::embedded\n";
  return out.str();
}

}  // namespace
}  // namespace devgraph

int main(int argc, char** argv) {
  if (argc != 3) {
    std::cerr << "usage: embed_graph GRAPH.yaml OUT.cpp\n";
    return 1;
  }
  std::ifstream in(argv[1], std::ios::binary);
  if (!in) {
    std::cerr << "embed_graph: cannot read " << argv[1] << "\n";
    return 1;
  }
  std::stringstream buffer;
  buffer << in.rdbuf();
  const std::string text = buffer.str();
  // A shipped graph that does not load fails the build, naming the field.
  auto graph = devgraph::Graph::parse(text, argv[1]);
  if (!graph) {
    std::cerr << "embed_graph: " << graph.error().message << "\n";
    return 1;
  }
  const std::string source = devgraph::generated_source(text, *graph);

  // Write beside and rename, so an interrupted build never leaves half a file.
  const std::string target = argv[2];
  const std::string temp = target + ".tmp";
  {
    std::ofstream file(temp, std::ios::binary | std::ios::trunc);
    file << source;
    if (!file.flush()) {
      std::cerr << "embed_graph: cannot write " << temp << "\n";
      return 1;
    }
  }
  if (std::rename(temp.c_str(), target.c_str()) != 0) {
    std::cerr << "embed_graph: cannot write " << target << "\n";
    return 1;
  }
  return 0;
}
