// GRAPH.yaml text -> a JSON document, and the compiled-in copy of the
// shipped GRAPH.yaml.
//
// Every verb loads the graph, and yaml-cpp needs about 30 million
// instructions for the shipped 26 KB file: most of a `checkpoint move`.
// The build therefore converts the shipped GRAPH.yaml once (tool
// embed_graph, same conversion as here) and compiles the YAML text and the
// resulting document (MessagePack) into the library. At run time a
// GRAPH.yaml whose bytes equal the embedded text takes the embedded
// document; any other text (an edited or older graph) is parsed. The byte
// comparison is exact, so the shortcut can never change what a graph
// means.
//
// This file depends on yaml-cpp and nlohmann only: the build tool compiles
// it on its own, before the library exists.
#pragma once

#include <optional>
#include <string_view>

#include "util/expected.h"
#include "util/json.h"

namespace devgraph {

// Plain scalars become integers, booleans or null when they read as such;
// quoted scalars stay strings. Errors name `origin`.
Expected<Json> parse_yaml_document(std::string_view text, std::string_view origin);

// The embedded document when `text` is byte-for-byte the GRAPH.yaml the
// library was built with; nullopt otherwise.
std::optional<Json> embedded_graph_document(std::string_view text);

}  // namespace devgraph
