#include "validate/contract_check.h"

#include <algorithm>
#include <variant>

#include "util/fs.h"

namespace devgraph {
namespace {

// One step of an instance path: an object key or an array index.
using PathStep = std::variant<long long, std::string>;

struct Violation {
  std::vector<PathStep> path;
  std::string message;
};

std::string py_path(const std::vector<PathStep>& path) {
  std::string out = "[";
  for (size_t i = 0; i < path.size(); ++i) {
    if (i) out += ", ";
    if (const auto* n = std::get_if<long long>(&path[i]))
      out += std::to_string(*n);
    else
      out += py_repr(std::get<std::string>(path[i]));
  }
  return out + "]";
}

// valijson writes a location as "[key][0][key]" (or "<root>"). Keys may
// themselves hold brackets, so each step is matched against the keys that
// actually exist at that point of the instance instead of being split.
std::vector<PathStep> parse_location(const Json& instance, std::string_view loc) {
  std::vector<PathStep> steps;
  if (loc == "<root>") return steps;
  const Json* cur = &instance;
  while (!loc.empty() && loc.front() == '[') {
    std::string_view rest = loc.substr(1);
    bool matched = false;
    if (cur && cur->is_object()) {
      // Prefer the longest key that fits, so "a][b" beats "a".
      size_t best = 0;
      std::string best_key;
      for (auto it = cur->begin(); it != cur->end(); ++it) {
        const std::string& k = it.key();
        if (rest.size() > k.size() && rest.compare(0, k.size(), k) == 0 && rest[k.size()] == ']' &&
            (!matched || k.size() > best)) {
          matched = true;
          best = k.size();
          best_key = k;
        }
      }
      if (matched) {
        steps.emplace_back(best_key);
        cur = &(*cur)[best_key];
        loc = rest.substr(best + 1);
        continue;
      }
    }
    size_t close = rest.find(']');
    if (close == std::string_view::npos) break;
    std::string token(rest.substr(0, close));
    if (cur && cur->is_array() && !token.empty() &&
        token.find_first_not_of("0123456789") == std::string::npos) {
      long long idx = std::stoll(token);
      steps.emplace_back(idx);
      cur = idx < static_cast<long long>(cur->size()) ? &(*cur)[static_cast<size_t>(idx)] : nullptr;
    } else {
      steps.emplace_back(token);
      cur = nullptr;
    }
    loc = rest.substr(close + 1);
  }
  return steps;
}

const Json* at_path(const Json& root, const std::vector<PathStep>& path) {
  const Json* cur = &root;
  for (const auto& step : path) {
    if (const auto* n = std::get_if<long long>(&step)) {
      if (!cur->is_array() || *n >= static_cast<long long>(cur->size())) return nullptr;
      cur = &(*cur)[static_cast<size_t>(*n)];
    } else {
      const auto& k = std::get<std::string>(step);
      if (!cur->is_object() || !cur->contains(k)) return nullptr;
      cur = &(*cur)[k];
    }
  }
  return cur;
}

// Follows local "$ref": "#/a/b" pointers inside the schema document.
const Json* deref(const Json& doc, const Json* node) {
  for (int hops = 0; node && node->is_object() && hops < 16; ++hops) {
    auto ref = node->find("$ref");
    if (ref == node->end() || !ref->is_string()) break;
    std::string r = ref->get<std::string>();
    if (r.rfind("#", 0) != 0) break;
    try {
      node = &doc.at(Json::json_pointer(r.substr(1)));
    } catch (const std::exception&) {
      return nullptr;
    }
  }
  return node;
}

// The subschema that governs the instance at `path`, through properties,
// additionalProperties, items and $ref (the keywords the contracts use).
const Json* schema_at(const Json& doc, const std::vector<PathStep>& path) {
  const Json* node = deref(doc, &doc);
  for (const auto& step : path) {
    if (!node || !node->is_object()) return nullptr;
    if (std::holds_alternative<long long>(step)) {
      auto items = node->find("items");
      node = items != node->end() ? deref(doc, &*items) : nullptr;
      continue;
    }
    const auto& k = std::get<std::string>(step);
    auto props = node->find("properties");
    if (props != node->end() && props->is_object() && props->contains(k)) {
      node = deref(doc, &(*props)[k]);
      continue;
    }
    auto extra = node->find("additionalProperties");
    node = (extra != node->end() && extra->is_object()) ? deref(doc, &*extra) : nullptr;
  }
  return node;
}

bool starts_with(std::string_view s, std::string_view prefix) {
  return s.substr(0, prefix.size()) == prefix;
}

// valijson also reports each failure once more at every enclosing level
// ("failed to validate against schema associated with property ..."); the
// reference lists only the failing keyword itself.
bool is_propagated(std::string_view description) {
  return starts_with(description, "Failed to validate against schema associated with property") ||
         starts_with(description, "Failed to validate item #") ||
         starts_with(description, "Failed to validate against additional properties schema");
}

std::string reword(const Json& doc, const Json& instance, const std::vector<PathStep>& path,
                   const std::string& description) {
  const Json* value = at_path(instance, path);
  const Json* schema = schema_at(doc, path);
  const std::string missing = "Missing required property '";
  if (starts_with(description, missing)) {
    std::string name = description.substr(missing.size());
    auto end = name.rfind("'");
    if (end != std::string::npos) name.resize(end);
    return py_repr(name) + " is a required property";
  }
  if (!value || !schema || !schema->is_object()) return description;
  if (starts_with(description, "Failed to match against any enum values") &&
      schema->contains("enum"))
    return py_repr(*value) + " is not one of " + py_repr((*schema)["enum"]);
  if (starts_with(description, "Value type not permitted") && schema->contains("type")) {
    const Json& type = (*schema)["type"];
    std::string types;
    if (type.is_array()) {
      for (const auto& t : type) types += (types.empty() ? "" : ", ") + py_repr(t);
    } else {
      types = py_repr(type);
    }
    return py_repr(*value) + " is not of type " + types;
  }
  if (starts_with(description, "Expected number greater than or equal to") &&
      schema->contains("minimum"))
    return py_repr(*value) + " is less than the minimum of " + py_repr((*schema)["minimum"]);
  return description;
}

bool path_less(const std::vector<PathStep>& a, const std::vector<PathStep>& b) {
  // Python orders lists element by element; a key and an index never meet
  // at the same depth of one document, so ordering them apart is enough.
  return std::lexicographical_compare(a.begin(), a.end(), b.begin(), b.end());
}

}  // namespace

Expected<ContractChecker> ContractChecker::load(const std::string& schema_path) {
  DG_TRY(Json doc, load_json_file(schema_path));
  return parse(std::move(doc), schema_path);
}

Expected<ContractChecker> ContractChecker::parse(Json schema_doc, const std::string& origin) {
  // The messages are reworded from valijson's (see reword()).
  DG_TRY(Schema schema, Schema::parse(schema_doc, origin));
  return ContractChecker(std::move(schema_doc), std::move(schema));
}

std::vector<std::string> ContractChecker::check(const Json& value, Order order) const {
  std::vector<Violation> found;
  for (const std::string& line : schema_.validate(value)) {
    // Schema::validate() writes "<location>: <description>"; a location
    // never contains ": " followed by valijson's capitalised prose, but a
    // key might contain ": ", so split at the separator after the last "]".
    size_t split = line.rfind("]: ");
    size_t sep = split == std::string::npos ? line.find(": ") : split + 1;
    if (sep == std::string::npos) continue;
    std::string loc = line.substr(0, sep);
    std::string description = line.substr(sep + 2);
    if (is_propagated(description)) continue;
    auto path = parse_location(value, loc);
    found.push_back({path, reword(doc_, value, path, description)});
  }
  if (order == Order::by_path) {
    std::stable_sort(found.begin(), found.end(), [](const Violation& a, const Violation& b) {
      return path_less(a.path, b.path);
    });
  } else {
    // Rank of the top-level property in the schema; the document itself first.
    auto rank = [this](const Violation& v) -> size_t {
      if (v.path.empty()) return 0;
      const auto* key = std::get_if<std::string>(&v.path.front());
      auto props = doc_.find("properties");
      if (key && props != doc_.end() && props->is_object()) {
        size_t i = 1;
        for (auto it = props->begin(); it != props->end(); ++it, ++i)
          if (it.key() == *key) return i;
      }
      return static_cast<size_t>(-1);
    };
    std::stable_sort(found.begin(), found.end(), [&](const Violation& a, const Violation& b) {
      size_t ra = rank(a), rb = rank(b);
      return ra != rb ? ra < rb : path_less(a.path, b.path);
    });
  }
  std::vector<std::string> out;
  for (const auto& v : found) {
    std::string line = py_path(v.path) + ": " + v.message;
    if (std::find(out.begin(), out.end(), line) == out.end()) out.push_back(line);
  }
  return out;
}

Expected<Json> result_json_line(std::string_view transcript) {
  std::string_view last;
  size_t pos = 0;
  while (pos <= transcript.size()) {
    size_t nl = transcript.find('\n', pos);
    std::string_view line =
        transcript.substr(pos, nl == std::string_view::npos ? std::string_view::npos : nl - pos);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.find_first_not_of(" \t\f\v\r") != std::string_view::npos) last = line;
    if (nl == std::string_view::npos) break;
    pos = nl + 1;
  }
  if (last.empty()) return fail("empty result file");
  constexpr std::string_view kPrefix = "RESULT_JSON:";
  if (!starts_with(last, kPrefix)) return fail("result must start with RESULT_JSON:");
  return parse_json(last.substr(kPrefix.size()), "RESULT_JSON");
}

}  // namespace devgraph
