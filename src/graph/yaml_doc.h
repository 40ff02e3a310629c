// GRAPH.yaml text -> a JSON document, the first half of Graph::parse.
//
// Parsing the shipped 26 KB file would cost more than the rest of a
// `checkpoint move`, so the shipped file is parsed at build time and a
// GRAPH.yaml with the same bytes never reaches this function (see
// Graph::snapshot in graph.h). It still parses every other graph: an edited
// or older one, and the shipped one in the build tool.
//
// The parser is libyaml (the C library under PyYAML's fast loader). Being
// C, it puts nothing before main; yaml-cpp, used before it, built the
// standard streams there in every devgraph command. This file depends on
// libyaml and nlohmann only: the build tool (tools/embed_graph.cpp) links
// it, with graph.cpp, before the library exists.
#pragma once

#include <string_view>

#include "util/expected.h"
#include "util/json.h"

namespace devgraph {

// The first document of `text`. Plain scalars become integers (whole
// decimal numbers), booleans (true/True, false/False) or null (empty, ~,
// null/Null/NULL) when they read as such; quoted and block scalars, and
// plain ones tagged "!", stay strings. Mapping keys are the key's text.
// Anchors and aliases are expanded; an alias must name a node that is
// complete. Errors name `origin` and the line.
Expected<Json> parse_yaml_document(std::string_view text, std::string_view origin);

}  // namespace devgraph
