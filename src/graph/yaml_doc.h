// GRAPH.yaml text -> a JSON document, the first half of Graph::parse.
//
// yaml-cpp needs about 30 million instructions for the shipped 26 KB file,
// most of a `checkpoint move`; so the shipped file is parsed at build time
// and a GRAPH.yaml with the same bytes never reaches this function (see
// Graph::snapshot in graph.h). It still parses every other graph: an edited
// or older one, and the shipped one in the build tool.
//
// This file depends on yaml-cpp and nlohmann only: the build tool
// (tools/embed_graph.cpp) links it, with graph.cpp, before the library
// exists.
#pragma once

#include <string_view>

#include "util/expected.h"
#include "util/json.h"

namespace devgraph {

// Plain scalars become integers, booleans or null when they read as such;
// quoted scalars stay strings. Errors name `origin`.
Expected<Json> parse_yaml_document(std::string_view text, std::string_view origin);

}  // namespace devgraph
