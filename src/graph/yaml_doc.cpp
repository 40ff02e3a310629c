#include "graph/yaml_doc.h"

#include <yaml-cpp/yaml.h>

#include <charconv>
#include <optional>
#include <string>

namespace devgraph {
namespace {

// A plain scalar reads as an integer only when it is one whole, optionally
// signed, decimal number that fits a long long.
std::optional<long long> plain_int(const std::string& s) {
  if (s.empty() || s.find_first_not_of("+-0123456789") != std::string::npos) return std::nullopt;
  const char* first = s.data();
  const char* last = s.data() + s.size();
  if (*first == '+') ++first;
  long long value = 0;
  auto [end, ec] = std::from_chars(first, last, value);
  if (ec != std::errc() || end != last) return std::nullopt;
  return value;
}

Json to_json(const YAML::Node& n) {
  switch (n.Type()) {
    case YAML::NodeType::Map: {
      Json obj = Json::object();
      for (const auto& kv : n) obj[kv.first.as<std::string>()] = to_json(kv.second);
      return obj;
    }
    case YAML::NodeType::Sequence: {
      Json arr = Json::array();
      for (const auto& item : n) arr.push_back(to_json(item));
      return arr;
    }
    case YAML::NodeType::Scalar: {
      const std::string& s = n.Scalar();
      if (n.Tag() == "!") return s;  // quoted: always a string
      if (s == "true" || s == "True") return true;
      if (s == "false" || s == "False") return false;
      if (s == "null" || s == "~") return nullptr;
      if (auto i = plain_int(s)) return *i;
      return s;
    }
    case YAML::NodeType::Null:
    case YAML::NodeType::Undefined:
      return nullptr;
  }
  return nullptr;
}

}  // namespace

Expected<Json> parse_yaml_document(std::string_view text, std::string_view origin) {
  try {
    return to_json(YAML::Load(std::string(text)));
  } catch (const YAML::Exception& e) {
    return fail(std::string(origin) + ": not valid YAML: " + e.what());
  }
}

}  // namespace devgraph
