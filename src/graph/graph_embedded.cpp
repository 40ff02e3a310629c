// The run-time half of the compiled-in graph (see Graph::snapshot in
// graph.h). The data comes from a source the build generates with
// tools/embed_graph.cpp; that tool links its own Graph::snapshot, which
// finds nothing, since it runs before the data exists.
#include "graph/graph_embedded.h"

#include <cstring>

namespace devgraph {

std::string_view Graph::snapshot_text() {
  return {reinterpret_cast<const char*>(embedded::kGraphYaml), embedded::kGraphYamlSize};
}

std::optional<Graph> Graph::snapshot(std::string_view yaml_text) {
  const std::string_view shipped = snapshot_text();
  if (yaml_text.size() != shipped.size() ||
      (yaml_text.data() != shipped.data() &&
       std::memcmp(yaml_text.data(), shipped.data(), shipped.size()) != 0))
    return std::nullopt;
  Graph g = embedded::graph_fields();
  g.index();
  return g;
}

}  // namespace devgraph
