#include "graph/yaml_doc.h"

#include <yaml.h>

#include <charconv>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace devgraph {
namespace {

// A plain scalar reads as an integer only when it is one whole, optionally
// signed, decimal number that fits a long long.
std::optional<long long> plain_int(std::string_view s) {
  if (s.empty() || s.find_first_not_of("+-0123456789") != std::string_view::npos)
    return std::nullopt;
  const char* first = s.data();
  const char* last = s.data() + s.size();
  if (*first == '+') ++first;
  long long value = 0;
  auto [end, ec] = std::from_chars(first, last, value);
  if (ec != std::errc() || end != last) return std::nullopt;
  return value;
}

std::string_view text_of(const yaml_char_t* s) {
  return s == nullptr ? std::string_view() : std::string_view(reinterpret_cast<const char*>(s));
}

// Plain scalars are resolved; quoted and block scalars, and plain ones
// carrying the non-specific tag "!", are strings as written.
Json scalar(const yaml_event_t& e) {
  std::string_view text(reinterpret_cast<const char*>(e.data.scalar.value), e.data.scalar.length);
  if (e.data.scalar.style != YAML_PLAIN_SCALAR_STYLE || text_of(e.data.scalar.tag) == "!")
    return std::string(text);
  if (text.empty() || text == "~" || text == "null" || text == "Null" || text == "NULL")
    return nullptr;
  if (text == "true" || text == "True") return true;
  if (text == "false" || text == "False") return false;
  if (auto i = plain_int(text)) return *i;
  return std::string(text);
}

// Builds the first document of the stream from the parser's events.
class Builder {
 public:
  explicit Builder(std::string_view origin) : origin_(origin) {}

  // Takes one event; returns false when the document is complete.
  Expected<bool> take(const yaml_event_t& e) {
    switch (e.type) {
      case YAML_SCALAR_EVENT:
        return place(scalar(e), text_of(e.data.scalar.anchor), e);
      case YAML_ALIAS_EVENT: {
        // An anchor counts once its node is complete, so an alias can
        // never reach into the node that holds it.
        auto it = anchors_.find(std::string(text_of(e.data.alias.anchor)));
        if (it == anchors_.end())
          return error(e, "alias *" + std::string(text_of(e.data.alias.anchor)) +
                              " names no complete anchored node");
        return place(it->second, {}, e);
      }
      case YAML_SEQUENCE_START_EVENT:
        open_.push_back(
            {Json::array(), std::string(text_of(e.data.sequence_start.anchor)), {}, false});
        return true;
      case YAML_MAPPING_START_EVENT:
        open_.push_back(
            {Json::object(), std::string(text_of(e.data.mapping_start.anchor)), {}, false});
        return true;
      case YAML_SEQUENCE_END_EVENT:
      case YAML_MAPPING_END_EVENT: {
        Open done = std::move(open_.back());
        open_.pop_back();
        return place(std::move(done.value), done.anchor, e);
      }
      case YAML_DOCUMENT_END_EVENT:
      case YAML_STREAM_END_EVENT:
        return false;
      default:
        return true;
    }
  }

  Json result() { return std::move(root_); }

 private:
  struct Open {
    Json value;
    std::string anchor;
    std::string key;  // mappings: the key waiting for its value
    bool has_key;
  };

  Error error(const yaml_event_t& e, const std::string& what) const {
    return fail(std::string(origin_) + ": not valid YAML: " + what + " at line " +
                std::to_string(e.start_mark.line + 1) + ", column " +
                std::to_string(e.start_mark.column + 1));
  }

  Expected<bool> place(Json value, std::string_view anchor, const yaml_event_t& e) {
    if (!anchor.empty()) anchors_[std::string(anchor)] = value;
    if (open_.empty()) {
      root_ = std::move(value);
      return true;
    }
    Open& top = open_.back();
    if (top.value.is_array()) {
      top.value.push_back(std::move(value));
    } else if (!top.has_key) {
      if (!value.is_primitive() || e.type != YAML_SCALAR_EVENT)
        return error(e, "a mapping key must be a scalar");
      // The key as written: a plain `true` or `1` is still the key "true"
      // or "1".
      top.key.assign(reinterpret_cast<const char*>(e.data.scalar.value), e.data.scalar.length);
      top.has_key = true;
    } else {
      top.value[top.key] = std::move(value);  // a repeated key: first position, last value
      top.has_key = false;
    }
    return true;
  }

  std::string_view origin_;
  std::vector<Open> open_;
  std::map<std::string, Json> anchors_;
  Json root_;  // an empty stream is null
};

}  // namespace

Expected<Json> parse_yaml_document(std::string_view text, std::string_view origin) {
  yaml_parser_t parser;
  if (!yaml_parser_initialize(&parser))
    return fail(std::string(origin) + ": cannot start the YAML parser (out of memory)");
  std::unique_ptr<yaml_parser_t, void (*)(yaml_parser_t*)> parser_guard(&parser,
                                                                        yaml_parser_delete);
  yaml_parser_set_input_string(&parser, reinterpret_cast<const unsigned char*>(text.data()),
                               text.size());
  Builder builder(origin);
  while (true) {
    yaml_event_t event;
    if (!yaml_parser_parse(&parser, &event)) {
      std::string context = parser.context ? std::string(parser.context) + ": " : std::string();
      return fail(std::string(origin) + ": not valid YAML: " + context +
                  (parser.problem ? parser.problem : "unreadable") + " at line " +
                  std::to_string(parser.problem_mark.line + 1) + ", column " +
                  std::to_string(parser.problem_mark.column + 1));
    }
    std::unique_ptr<yaml_event_t, void (*)(yaml_event_t*)> event_guard(&event, yaml_event_delete);
    DG_TRY(bool more, builder.take(event));
    if (!more) break;
  }
  return builder.result();
}

}  // namespace devgraph
