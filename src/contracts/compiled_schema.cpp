#include "contracts/compiled_schema.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <string_view>

#include "util/cpp_literal.h"

namespace devgraph {
namespace {

// Keywords that carry no constraint. $defs and definitions only hold
// schemas that $ref reaches; they are compiled when reached.
bool is_annotation(std::string_view key) {
  for (std::string_view a : {"$schema", "$id", "$comment", "$defs", "definitions", "title",
                             "description", "default", "examples"})
    if (key == a) return true;
  return false;
}

std::optional<unsigned> type_bit(const Json& name) {
  using Node = CompiledSchema::Node;
  if (!name.is_string()) return std::nullopt;
  const std::string& n = name.get_ref<const std::string&>();
  if (n == "null") return Node::kNull;
  if (n == "boolean") return Node::kBoolean;
  if (n == "integer") return Node::kInteger;
  if (n == "number") return Node::kNumber;
  if (n == "string") return Node::kString;
  if (n == "array") return Node::kArray;
  if (n == "object") return Node::kObject;
  return std::nullopt;
}

const char* type_name(const Json& v) {
  switch (v.type()) {
    case Json::value_t::null:
      return "null";
    case Json::value_t::boolean:
      return "a boolean";
    case Json::value_t::number_integer:
    case Json::value_t::number_unsigned:
      return "an integer";
    case Json::value_t::number_float:
      return "a number";
    case Json::value_t::string:
      return "a string";
    case Json::value_t::array:
      return "an array";
    case Json::value_t::object:
      return "an object";
    default:
      return "a value of no JSON type";
  }
}

bool has_type(unsigned types, const Json& v) {
  using Node = CompiledSchema::Node;
  switch (v.type()) {
    case Json::value_t::null:
      return types & Node::kNull;
    case Json::value_t::boolean:
      return types & Node::kBoolean;
    case Json::value_t::number_integer:
    case Json::value_t::number_unsigned:
      return types & (Node::kInteger | Node::kNumber);
    case Json::value_t::number_float:
      return types & Node::kNumber;
    case Json::value_t::string:
      return types & Node::kString;
    case Json::value_t::array:
      return types & Node::kArray;
    case Json::value_t::object:
      return types & Node::kObject;
    default:
      return false;
  }
}

std::string type_list(unsigned types) {
  using Node = CompiledSchema::Node;
  static const std::pair<unsigned, const char*> names[] = {
      {Node::kNull, "null"},     {Node::kBoolean, "boolean"}, {Node::kInteger, "integer"},
      {Node::kNumber, "number"}, {Node::kString, "string"},   {Node::kArray, "array"},
      {Node::kObject, "object"}};
  std::string out;
  for (const auto& [bit, name] : names) {
    if (!(types & bit)) continue;
    if (!out.empty()) out += " or ";
    out += name;
  }
  return out;
}

// Scalars only: JSON equality of arrays and objects ignores key order,
// which ordered_json's operator== does not, so such enums go to the
// general validator.
bool is_scalar(const Json& v) {
  return !v.is_object() && !v.is_array() && !v.is_binary() && !v.is_discarded();
}

}  // namespace

class CompiledSchema::Compiler {
 public:
  explicit Compiler(const Json& root) : root_(root) {}

  // Compiles the schema at JSON pointer `pointer` ("" is the root) once;
  // returns its node, or -1 when it cannot be compiled.
  int at_pointer(const std::string& pointer) {
    if (auto it = by_pointer_.find(pointer); it != by_pointer_.end()) return it->second;
    const Json* target = resolve(pointer);
    if (target == nullptr) return -1;
    int index = add_node();
    by_pointer_[pointer] = index;
    return fill(index, *target) ? index : -1;
  }

  // A subschema written in place: compiled on its own.
  int inline_schema(const Json& schema) {
    int index = add_node();
    return fill(index, schema) ? index : -1;
  }

  std::vector<Node> nodes;

 private:
  int add_node() {
    nodes.emplace_back();
    return static_cast<int>(nodes.size() - 1);
  }

  const Json* resolve(const std::string& pointer) const {
    const Json* at = &root_;
    size_t pos = 0;
    while (pos < pointer.size()) {
      if (pointer[pos] != '/') return nullptr;
      size_t end = pointer.find('/', pos + 1);
      if (end == std::string::npos) end = pointer.size();
      std::string token;
      for (size_t i = pos + 1; i < end; ++i) {
        if (pointer[i] == '~' && i + 1 < end && (pointer[i + 1] == '0' || pointer[i + 1] == '1')) {
          token += pointer[i + 1] == '0' ? '~' : '/';
          ++i;
        } else if (pointer[i] == '~' || pointer[i] == '%') {
          return nullptr;  // a broken escape, or percent-encoding: not ours
        } else {
          token += pointer[i];
        }
      }
      if (!at->is_object()) return nullptr;
      auto it = at->find(token);
      if (it == at->end()) return nullptr;
      at = &*it;
      pos = end;
    }
    return at;
  }

  // A child schema: kAny for `true`, kNone for `false`, else a node.
  std::optional<int> child(const Json& schema) {
    if (schema.is_boolean()) return schema.get<bool>() ? Node::kAny : Node::kNone;
    int index = inline_schema(schema);
    if (index < 0) return std::nullopt;
    return index;
  }

  bool fill(int index, const Json& schema) {
    if (schema.is_boolean()) {
      nodes[index].never = !schema.get<bool>();
      return true;
    }
    if (!schema.is_object()) return false;
    Node node;
    // (A plain pointer: GCC's null-dereference check misreads
    // ordered_json's iterators here.)
    const Json* ref = nullptr;
    for (auto it = schema.begin(); it != schema.end(); ++it)
      if (it.key() == "$ref") ref = &it.value();
    if (ref != nullptr) {
      for (auto it = schema.begin(); it != schema.end(); ++it)
        if (it.key() != "$ref" && !is_annotation(it.key())) return false;
      if (!ref->is_string()) return false;
      const std::string& text = ref->get_ref<const std::string&>();
      if (text.empty() || text[0] != '#') return false;
      int target = at_pointer(text.substr(1));
      if (target < 0) return false;
      nodes[index].ref = target;
      return true;
    }
    for (auto it = schema.begin(); it != schema.end(); ++it) {
      const std::string& key = it.key();
      const Json& value = it.value();
      if (is_annotation(key)) continue;
      if (key == "type") {
        if (value.is_array()) {
          if (value.empty()) return false;
          for (const auto& name : value) {
            auto bit = type_bit(name);
            if (!bit) return false;
            node.types |= *bit;
          }
        } else {
          auto bit = type_bit(value);
          if (!bit) return false;
          node.types = *bit;
        }
      } else if (key == "enum") {
        if (!value.is_array() || value.empty()) return false;
        std::vector<Json> allowed;
        for (const auto& v : value) {
          if (!is_scalar(v)) return false;
          allowed.push_back(v);
        }
        node.allowed = std::move(allowed);
      } else if (key == "minimum") {
        if (!value.is_number()) return false;
        node.minimum = value;
      } else if (key == "required") {
        if (!value.is_array()) return false;
        for (const auto& name : value) {
          if (!name.is_string()) return false;
          node.required.push_back(name.get<std::string>());
        }
      } else if (key == "properties") {
        if (!value.is_object()) return false;
        for (auto p = value.begin(); p != value.end(); ++p) {
          auto c = child(p.value());
          if (!c) return false;
          node.properties.emplace_back(p.key(), *c);
        }
      } else if (key == "additionalProperties") {
        auto c = child(value);
        if (!c) return false;
        node.additional = *c;
      } else if (key == "items") {
        if (!value.is_object() && !value.is_boolean()) return false;  // tuple form: not ours
        auto c = child(value);
        if (!c) return false;
        node.items = *c;
      } else {
        return false;
      }
    }
    std::sort(node.properties.begin(), node.properties.end(),
              [](const auto& a, const auto& b) { return a.first < b.first; });
    for (size_t i = 1; i < node.properties.size(); ++i)
      if (node.properties[i].first == node.properties[i - 1].first) return false;
    nodes[index] = std::move(node);
    return true;
  }

  const Json& root_;
  std::map<std::string, int> by_pointer_;
};

std::optional<CompiledSchema> CompiledSchema::compile(const Json& schema) {
  Compiler compiler(schema);
  if (compiler.at_pointer("") != 0) return std::nullopt;
  // A chain of references that comes back to itself would never reach a
  // check; the general validator reports such a schema.
  const auto& nodes = compiler.nodes;
  for (const Node& start : nodes) {
    int at = start.ref;
    for (size_t steps = 0; at >= 0; ++steps) {
      if (steps > nodes.size()) return std::nullopt;
      at = nodes[at].ref;
    }
  }
  CompiledSchema out;
  out.nodes_ = std::move(compiler.nodes);
  return out;
}

CompiledSchema CompiledSchema::from_nodes(std::vector<Node> nodes) {
  CompiledSchema out;
  out.nodes_ = std::move(nodes);
  return out;
}

namespace {

// A std::string holding exactly `s`, NUL bytes included.
std::string cpp_string(const std::string& s) {
  return "std::string(" + cpp_string_literal(s) + ", " + std::to_string(s.size()) + ")";
}

// A C++ expression for a scalar Json (enum values and minimums are
// scalars; compile() sees to that).
std::string cpp_json(const Json& v) {
  switch (v.type()) {
    case Json::value_t::null:
      return "Json(nullptr)";
    case Json::value_t::boolean:
      return v.get<bool>() ? "Json(true)" : "Json(false)";
    case Json::value_t::number_integer:
      return "Json(static_cast<Json::number_integer_t>(" + std::to_string(v.get<long long>()) +
             "LL))";
    case Json::value_t::number_unsigned:
      return "Json(static_cast<Json::number_unsigned_t>(" +
             std::to_string(v.get<unsigned long long>()) + "ULL))";
    case Json::value_t::number_float: {
      char buf[40];
      std::snprintf(buf, sizeof buf, "%.17g", v.get<double>());
      return std::string("Json(static_cast<double>(") + buf + "))";
    }
    case Json::value_t::string:
      return "Json(" + cpp_string(*v.get_ptr<const std::string*>()) + ")";
    default:  // compile() lets no other kind through
      return "Json(nullptr)";
  }
}

}  // namespace

std::string CompiledSchema::to_cpp(const std::string& name) const {
  std::string out = "devgraph::CompiledSchema " + name + "() {\n";
  out += "  using Node = devgraph::CompiledSchema::Node;\n";
  out += "  using devgraph::Json;\n";
  out += "  std::vector<Node> n(" + std::to_string(nodes_.size()) + ");\n";
  for (size_t i = 0; i < nodes_.size(); ++i) {
    const Node& node = nodes_[i];
    const std::string at = "  n[" + std::to_string(i) + "].";
    if (node.ref != Node::kAny) out += at + "ref = " + std::to_string(node.ref) + ";\n";
    if (node.never) out += at + "never = true;\n";
    if (node.types != 0) out += at + "types = " + std::to_string(node.types) + "u;\n";
    if (node.allowed) {
      out += at + "allowed = std::vector<Json>{";
      for (size_t k = 0; k < node.allowed->size(); ++k)
        out += (k ? ", " : "") + cpp_json((*node.allowed)[k]);
      out += "};\n";
    }
    if (node.minimum) out += at + "minimum = " + cpp_json(*node.minimum) + ";\n";
    if (!node.required.empty()) {
      out += at + "required = {";
      for (size_t k = 0; k < node.required.size(); ++k)
        out += (k ? ", " : "") + cpp_string(node.required[k]);
      out += "};\n";
    }
    if (!node.properties.empty()) {
      out += at + "properties = {";
      for (size_t k = 0; k < node.properties.size(); ++k)
        out += std::string(k ? ", " : "") + "{" + cpp_string(node.properties[k].first) + ", " +
               std::to_string(node.properties[k].second) + "}";
      out += "};\n";
    }
    if (node.additional != Node::kAny)
      out += at + "additional = " + std::to_string(node.additional) + ";\n";
    if (node.items != Node::kAny) out += at + "items = " + std::to_string(node.items) + ";\n";
  }
  out += "  return devgraph::CompiledSchema::from_nodes(std::move(n));\n}\n";
  return out;
}

std::vector<std::string> CompiledSchema::validate(const Json& value) const {
  std::vector<std::string> out;
  std::string path;
  check(0, value, path, out);
  return out;
}

void CompiledSchema::check(int index, const Json& value, std::string& path,
                           std::vector<std::string>& out) const {
  if (index == Node::kAny) return;
  auto report = [&](const std::string& what) {
    out.push_back((path.empty() ? std::string("<root>") : path) + ": " + what);
  };
  if (index == Node::kNone) {
    report("no value is allowed here");
    return;
  }
  const Node* node = &nodes_[static_cast<size_t>(index)];
  while (node->ref >= 0) node = &nodes_[static_cast<size_t>(node->ref)];
  if (node->never) {
    report("no value is allowed here");
    return;
  }
  if (node->types != 0 && !has_type(node->types, value)) {
    report(std::string("is ") + type_name(value) + ", expected " + type_list(node->types));
    return;
  }
  if (node->allowed) {
    bool found = false;
    for (const auto& a : *node->allowed) found = found || a == value;
    if (!found) {
      std::string list;
      for (const auto& a : *node->allowed) list += (list.empty() ? "" : ", ") + dump_py(a);
      report("is " + dump_py(value) + ", expected one of " + list);
    }
  }
  if (node->minimum && value.is_number() && value.get<double>() < node->minimum->get<double>())
    report("is " + dump_py(value) + ", below the minimum " + dump_py(*node->minimum));
  const size_t depth = path.size();
  if (value.is_object()) {
    for (const auto& name : node->required)
      if (!value.contains(name)) report("misses the required property " + dump_py(Json(name)));
    for (auto it = value.begin(); it != value.end(); ++it) {
      const std::string& key = it.key();
      auto p =
          std::lower_bound(node->properties.begin(), node->properties.end(), key,
                           [](const auto& prop, const std::string& k) { return prop.first < k; });
      int child = p != node->properties.end() && p->first == key ? p->second : node->additional;
      if (child == Node::kAny) continue;
      path += '[';
      path += key;
      path += ']';
      check(child, it.value(), path, out);
      path.resize(depth);
    }
  } else if (value.is_array() && node->items != Node::kAny) {
    for (size_t i = 0; i < value.size(); ++i) {
      path += '[' + std::to_string(i) + ']';
      check(node->items, value[i], path, out);
      path.resize(depth);
    }
  }
}

}  // namespace devgraph
