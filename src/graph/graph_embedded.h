// What the build generates from the shipped GRAPH.yaml (tools/embed_graph.cpp
// writes it; see Graph::snapshot in graph.h). Only graph_embedded.cpp reads
// these, and the generated source defines them.
#pragma once

#include <cstddef>

#include "graph/graph.h"

namespace devgraph::embedded {

// The bytes of the GRAPH.yaml the library was built with.
extern const unsigned char kGraphYaml[];
extern const std::size_t kGraphYamlSize;

// Graph::parse() of those bytes, built from constant tables holding every
// field. The indexes are not built: Graph::snapshot() builds them.
Graph graph_fields();

}  // namespace devgraph::embedded
