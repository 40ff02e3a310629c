// A JSON schema turned into a small tree of checks, for the keywords
// devgraph's own contracts use.
//
// Every state change in `devgraph checkpoint` is checked against the run
// state schema, and a checkpoint process lives for a few milliseconds:
// building valijson's model of the schema cost more than half a
// millisecond of each, the check itself a tenth of that. This compiler
// builds its tree in a few microseconds and checks ordered_json values as
// they are, without a conversion.
//
// Contracts:
// - compile() takes a schema whose every keyword is one of: type (a name
//   or a list of names), enum, minimum, required, properties,
//   additionalProperties (a schema or a boolean), items (one schema), $ref
//   to a JSON pointer inside the same document ("#/..."), and the
//   annotations ($schema, $id, $comment, $defs, definitions, title,
//   description, default, examples). Anything else, a keyword with a value
//   of the wrong shape, or a $ref beside other constraints (draft 7 would
//   ignore them) gives nullopt: the caller then uses the general validator,
//   which also words the error of a broken schema.
// - validate() accepts and rejects exactly what valijson does with strict
//   types (draft 7 semantics for these keywords: "integer" is an integer
//   token, 1.0 is not; minimum ignores non-numbers; properties,
//   additionalProperties and required ignore non-objects, items
//   non-arrays). Each violation is "<path>: <what is wrong>", with the path
//   written as valijson writes it ("[tasks_runtime][B1/T1][status]";
//   "<root>" for the document itself).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "util/json.h"

namespace devgraph {

class CompiledSchema {
 public:
  static std::optional<CompiledSchema> compile(const Json& schema);

  std::vector<std::string> validate(const Json& value) const;

  // The compiled tree as C++: a definition of `CompiledSchema <name>()`
  // (in namespace devgraph::embedded) that rebuilds this schema without
  // reading or compiling anything. The build writes one for each shipped
  // contract (tools/embed_schemas.cpp).
  std::string to_cpp(const std::string& name) const;

  // One schema. A node is either a reference to another node, the schema
  // `false`, or a set of checks that all apply.
  struct Node {
    enum Type : unsigned {
      kNull = 1,
      kBoolean = 2,
      kInteger = 4,
      kNumber = 8,
      kString = 16,
      kArray = 32,
      kObject = 64,
    };
    static constexpr int kAny = -1;            // child schema: anything goes
    static constexpr int kNone = -2;           // child schema: `false`
    int ref = kAny;                            // >= 0: this node is that node
    bool never = false;                        // the schema `false`
    unsigned types = 0;                        // 0: any type
    std::optional<std::vector<Json>> allowed;  // enum
    std::optional<Json> minimum;               // a number, kept as written for messages
    std::vector<std::string> required;
    std::vector<std::pair<std::string, int>> properties;  // sorted by name
    int additional = kAny;
    int items = kAny;
    bool operator==(const Node&) const = default;
  };
  // What to_cpp() writes calls this.
  static CompiledSchema from_nodes(std::vector<Node> nodes);
  bool operator==(const CompiledSchema&) const = default;

 private:
  class Compiler;
  void check(int node, const Json& value, std::string& path, std::vector<std::string>& out) const;

  std::vector<Node> nodes_;  // nodes_[0] is the root
};

}  // namespace devgraph
