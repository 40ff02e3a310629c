// Every key a GRAPH.yaml may hold, and what becomes of it.
//
// A key is either read (Graph::from_document puts its value into the model
// and the engine acts on it) or fixed: it describes what devgraph always
// does, for the people reading the file, and no code reads another value.
// `devgraph validate graph` refuses a key that no row lists and a fixed key
// whose value is not the shipped graph's, so an edit either changes what
// devgraph does or is refused; none is accepted and ignored.
//
// Contract: graph_keys() lists one row per key path, a path being the
// key's names from the top joined by dots, with `*` for any one name (a
// node's, a route's, a tier's...) and `[]` for an item of a list of
// mappings. check_graph_keys() walks every leaf of a document (a scalar, a
// list of scalars, or an empty mapping or list) and reports, one line per
// key: a path no row matches, and a fixed key whose value differs from the
// shipped document's at the same path (or that the shipped document lacks).
// tests/unit/graph_keys_test.cpp changes each read key of the shipped graph
// and requires the model to change with it, and each fixed key and
// requires a refusal.
#pragma once

#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "util/json.h"

namespace devgraph {

enum class KeyUse {
  read,   // into the model (`reader` names the field and who acts on it)
  fixed,  // describes the engine; only the shipped value is accepted
};

struct GraphKey {
  std::string_view path;
  KeyUse use;
  std::string_view reader;  // read: the model field and its user; fixed: why
};

std::span<const GraphKey> graph_keys();

// The row whose path matches `path` (names from the top, an item of a list
// as "[N]"), or nullptr.
const GraphKey* graph_key_for(const std::vector<std::string>& path);

// A document's leaves as (path, value): names from the top, "[N]" for the
// N-th item of a list of mappings.
struct GraphLeaf {
  std::vector<std::string> path;
  const Json* value;
};
std::vector<GraphLeaf> graph_leaves(const Json& doc);

// The dotted form of a path ("discuss.perspectives.[0].name"), as error
// lines name it.
std::string dotted(const std::vector<std::string>& path);

// The problems of `doc`'s keys against the registry, `shipped` being the
// document of the graph this engine ships (a null `shipped` skips the fixed
// keys' comparison).
std::vector<std::string> check_graph_keys(const Json& doc, const Json& shipped);

// check_graph_keys() of <skill_dir>/GRAPH.yaml against the shipped graph
// compiled into the library (none for the shipped file itself). A file
// that cannot be read or parsed is one problem naming it.
std::vector<std::string> check_skill_graph_keys(const std::string& skill_dir);

}  // namespace devgraph
