// Build tool: writes a C++ source holding a GRAPH.yaml's bytes and the
// typed Graph they parse to, written as literals, for Graph::snapshot()
// (src/graph/graph.h; the declarations are in src/graph/graph_embedded.h).
//
//   embed_graph GRAPH.yaml OUT.cpp
//
// The file is parsed with Graph::parse, the loader itself, so the snapshot
// holds what parsing the file means and nothing else. Every field is
// written: the model's structs are taken apart with structured bindings, so
// a field added to one of them stops this tool from compiling until it is
// written too. Graph keeps private indexes and is no aggregate, so its own
// fields are listed by name; tests/unit/graph_test.cpp compares the
// snapshot with a fresh parse, and a field missed here fails that test.
//
// Exit codes: 0 written, 1 the graph cannot be read or parsed, or OUT.cpp
// cannot be written.
#include <cstdio>
#include <fstream>
#include <iostream>
#include <limits>
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

// Writes values of the model as C++ expressions that rebuild them. Strings
// become std::string literals ("..."s, which keep any byte, NUL included);
// containers go through make_vector/make_map (see kPrelude), which move
// their items in where a braced initializer list would copy each string.
class Literal {
 public:
  explicit Literal(std::ostream& out) : out_(out) {}

  void put(bool v) { out_ << (v ? "true" : "false"); }
  void put(int v) { integer(v, ""); }
  void put(long long v) { integer(v, "LL"); }

  void put(const std::string& s) { out_ << cpp_string_literal(s) << "s"; }

  template <class T>
  void put(const std::optional<T>& v) {
    if (v)
      put(*v);
    else
      out_ << "std::nullopt";
  }

  template <class A, class B>
  void put(const std::pair<A, B>& p) {
    out_ << "std::pair{";
    put(p.first);
    out_ << ", ";
    put(p.second);
    out_ << "}";
  }

  template <class T>
  void put(const std::vector<T>& items) {
    out_ << "make_vector<" << spelled(std::type_identity<T>()) << ">(";
    sequence(items);
    out_ << ")";
  }

  template <class K, class V>
  void put(const std::map<K, V>& items) {
    out_ << "make_map<" << spelled(std::type_identity<K>()) << ", "
         << spelled(std::type_identity<V>()) << ">(";
    sequence(items);
    out_ << ")";
  }

  void put(const GraphNode& n) {
    const auto& [name, type, owners, selector, dispatched_by, dispatches, next, routes, max_cycles,
                 max_retries, lane] = n;
    record("GraphNode", name, type, owners, selector, dispatched_by, dispatches, next, routes,
           max_cycles, max_retries, lane);
  }
  void put(const GraphLane& l) {
    const auto& [name, nodes, complete_at, complete_on] = l;
    record("GraphLane", name, nodes, complete_at, complete_on);
  }
  void put(const CapacityTier& t) {
    const auto& [name, limits] = t;
    record("CapacityTier", name, limits);
  }
  void put(const CapacityModel& c) {
    const auto& [signals, tiers, actions] = c;
    record("CapacityModel", signals, tiers, actions);
  }
  void put(const Concurrency& c) {
    const auto& [bundles, tasks_per_bundle, personas_per_tech_lead, personas] = c;
    record("Concurrency", bundles, tasks_per_bundle, personas_per_tech_lead, personas);
  }
  void put(const HeadlessSettings& h) {
    const auto& [enabled, permission_mode, max_turns, timeout, api_retry, model, allowed,
                 disallowed] = h;
    record("HeadlessSettings", enabled, permission_mode, max_turns, timeout, api_retry, model,
           allowed, disallowed);
  }
  void put(const GraphDefaults& d) {
    const auto& [max_retries, max_repair_cycles] = d;
    record("GraphDefaults", max_retries, max_repair_cycles);
  }

  // One statement of the generated function: `g.<field> = <value>;`.
  template <class T>
  void assign(const char* field, const T& value) {
    out_ << "  g." << field << " = ";
    put(value);
    out_ << ";\n";
  }

 private:
  // A braced aggregate initializer: the fields in declaration order, which
  // is also the order structured bindings give them in.
  template <class... Fields>
  void record(const char* type, const Fields&... fields) {
    out_ << type << "{";
    const char* separator = "";
    ((out_ << separator, put(fields), separator = ", "), ...);
    out_ << "}";
  }

  template <class Container>
  void sequence(const Container& items) {
    // One item a line, indented by nesting depth: the generated file stays
    // readable when a build or a test points into it.
    ++depth_;
    const char* separator = "";
    for (const auto& item : items) {
      out_ << separator << "\n" << std::string(2 + 4 * depth_, ' ');
      put(item);
      separator = ",";
    }
    --depth_;
  }

  template <class I>
  void integer(I v, const char* suffix) {
    // The lowest value has no literal of its own: its magnitude does not fit.
    if (v == std::numeric_limits<I>::min())
      out_ << "(" << v + 1 << suffix << " - 1)";
    else
      out_ << v << suffix;
  }

  static std::string spelled(std::type_identity<std::string>) { return "std::string"; }
  static std::string spelled(std::type_identity<long long>) { return "long long"; }
  static std::string spelled(std::type_identity<GraphNode>) { return "GraphNode"; }
  static std::string spelled(std::type_identity<GraphLane>) { return "GraphLane"; }
  static std::string spelled(std::type_identity<CapacityTier>) { return "CapacityTier"; }
  template <class A, class B>
  static std::string spelled(std::type_identity<std::pair<A, B>>) {
    return "std::pair<" + spelled(std::type_identity<A>()) + ", " +
           spelled(std::type_identity<B>()) + ">";
  }

  std::ostream& out_;
  int depth_ = 0;
};

// Helpers the generated function calls; one copy in the generated file.
constexpr const char* kPrelude = R"(namespace {

using namespace std::string_literals;

template <class T, class... Items>
std::vector<T> make_vector(Items&&... items) {
  std::vector<T> out;
  out.reserve(sizeof...(items));
  (out.emplace_back(std::forward<Items>(items)), ...);
  return out;
}

template <class K, class V, class... Items>
std::map<K, V> make_map(Items&&... items) {
  std::map<K, V> out;
  (out.emplace(std::forward<Items>(items)), ...);
  return out;
}

}  // namespace
)";

void write_graph(std::ostream& out, const Graph& g) {
  Literal lit(out);
  out << "Graph graph_fields() {\n  Graph g;\n";
  lit.assign("version", g.version);
  lit.assign("name", g.name);
  lit.assign("entrypoint", g.entrypoint);
  lit.assign("clean_entrypoint", g.clean_entrypoint);
  lit.assign("terminal_states", g.terminal_states);
  lit.assign("pause_states", g.pause_states);
  lit.assign("defaults", g.defaults);
  lit.assign("concurrency", g.concurrency);
  lit.assign("headless", g.headless);
  lit.assign("capacity", g.capacity);
  lit.assign("personas", g.personas);
  lit.assign("events", g.events);
  lit.assign("lanes", g.lanes);
  lit.assign("lane_owners", g.lane_owners);
  lit.assign("nodes", g.nodes);
  lit.assign("legacy_nodes", g.legacy_nodes);
  out << "  return g;\n}\n";
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
  out << "namespace devgraph::embedded {\n";
  out << kPrelude << "\n";
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
