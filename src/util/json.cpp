#include "util/json.h"

#include <cstdio>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "util/fs.h"

namespace devgraph {
namespace {

void escape_string(std::string& out, const std::string& s) {
  out.push_back('"');
  size_t i = 0;
  while (i < s.size()) {
    unsigned char c = static_cast<unsigned char>(s[i]);
    switch (c) {
      case '"':
        out += "\\\"";
        ++i;
        continue;
      case '\\':
        out += "\\\\";
        ++i;
        continue;
      case '\n':
        out += "\\n";
        ++i;
        continue;
      case '\r':
        out += "\\r";
        ++i;
        continue;
      case '\t':
        out += "\\t";
        ++i;
        continue;
      case '\b':
        out += "\\b";
        ++i;
        continue;
      case '\f':
        out += "\\f";
        ++i;
        continue;
      default:
        break;
    }
    if (c < 0x20 || c == 0x7f) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", c);
      out += buf;
      ++i;
      continue;
    }
    if (c < 0x80) {
      out.push_back(static_cast<char>(c));
      ++i;
      continue;
    }
    // Decode one UTF-8 sequence; Python escapes every non-ASCII code point.
    unsigned cp = 0;
    int extra = 0;
    if ((c & 0xE0) == 0xC0) {
      cp = c & 0x1F;
      extra = 1;
    } else if ((c & 0xF0) == 0xE0) {
      cp = c & 0x0F;
      extra = 2;
    } else if ((c & 0xF8) == 0xF0) {
      cp = c & 0x07;
      extra = 3;
    } else {
      cp = 0xFFFD;
    }
    size_t j = i + 1;
    for (int k = 0; k < extra && j < s.size(); ++k, ++j) cp = (cp << 6) | (s[j] & 0x3F);
    i = j;
    char buf[16];
    if (cp >= 0x10000) {
      unsigned v = cp - 0x10000;
      std::snprintf(buf, sizeof buf, "\\u%04x\\u%04x", 0xD800 + (v >> 10), 0xDC00 + (v & 0x3FF));
    } else {
      std::snprintf(buf, sizeof buf, "\\u%04x", cp);
    }
    out += buf;
  }
  out.push_back('"');
}

void newline(std::string& out, int indent, int depth) {
  out.push_back('\n');
  out.append(static_cast<size_t>(indent * depth), ' ');
}

void dump_value(std::string& out, const Json& v, int indent, int depth) {
  switch (v.type()) {
    case Json::value_t::object: {
      if (v.empty()) {
        out += "{}";
        return;
      }
      out.push_back('{');
      bool first = true;
      for (auto it = v.begin(); it != v.end(); ++it) {
        if (!first) out += indent >= 0 ? "," : ", ";
        first = false;
        if (indent >= 0) newline(out, indent, depth + 1);
        escape_string(out, it.key());
        out += ": ";
        dump_value(out, it.value(), indent, depth + 1);
      }
      if (indent >= 0) newline(out, indent, depth);
      out.push_back('}');
      return;
    }
    case Json::value_t::array: {
      if (v.empty()) {
        out += "[]";
        return;
      }
      out.push_back('[');
      bool first = true;
      for (const auto& item : v) {
        if (!first) out += indent >= 0 ? "," : ", ";
        first = false;
        if (indent >= 0) newline(out, indent, depth + 1);
        dump_value(out, item, indent, depth + 1);
      }
      if (indent >= 0) newline(out, indent, depth);
      out.push_back(']');
      return;
    }
    case Json::value_t::string:
      escape_string(out, v.get_ref<const std::string&>());
      return;
    case Json::value_t::boolean:
      out += v.get<bool>() ? "true" : "false";
      return;
    case Json::value_t::null:
    case Json::value_t::discarded:
      out += "null";
      return;
    case Json::value_t::number_float: {
      std::string s = v.dump();
      // Python prints floats with a fractional part or exponent, as does
      // nlohmann; only NaN/Infinity differ and never appear in our files.
      out += s;
      return;
    }
    default:
      out += v.dump();
      return;
  }
}

using Object = Json::object_t;
using Pairs = Object::Container;  // the vector under ordered_map

// Builds the document from nlohmann's SAX events. ordered_json's own
// parser inserts every key by a linear search of the keys before it, which
// makes a cursor map of n entries O(n^2) to read; this appends keys in file
// order and removes duplicates once per object, with Python's rule (the
// first position, the last value).
class JsonBuilder {
 public:
  Json root;
  std::string error;

  bool null() { return put(Json(nullptr)); }
  bool boolean(bool v) { return put(Json(v)); }
  bool number_integer(Json::number_integer_t v) { return put(Json(v)); }
  bool number_unsigned(Json::number_unsigned_t v) { return put(Json(v)); }
  // A number without '.', 'e' or 'E' is an integer that overflowed 64 bits.
  // Python keeps it exact; a double would change it, so it is refused.
  bool number_float(Json::number_float_t v, const std::string& text) {
    if (text.find_first_of(".eE") == std::string::npos) {
      error = "integer " + text + " is outside the 64-bit range";
      return false;
    }
    return put(Json(v));
  }
  bool string(std::string& v) { return put(Json(std::move(v))); }
  bool binary(Json::binary_t&) { return false; }
  bool key(std::string& k) {
    key_ = std::move(k);
    return true;
  }
  bool start_object(std::size_t) { return open(Json(Json::value_t::object)); }
  bool end_object() {
    dedupe(stack_.back()->get_ref<Object&>());
    stack_.pop_back();
    return true;
  }
  bool start_array(std::size_t) { return open(Json(Json::value_t::array)); }
  bool end_array() {
    stack_.pop_back();
    return true;
  }
  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception& e) {
    fail_with(e);
    return false;
  }
  // nlohmann prefixes "[json.exception.parse_error.101] parse error at ...".
  void fail_with(const nlohmann::detail::exception& e) {
    error = e.what();
    if (auto pos = error.find("] "); pos != std::string::npos) error = error.substr(pos + 2);
  }

 private:
  // Only the innermost open container grows, so pointers to the open
  // containers on the stack stay valid.
  Json* place(Json&& v) {
    if (stack_.empty()) {
      root = std::move(v);
      return &root;
    }
    Json* top = stack_.back();
    if (top->is_array()) {
      auto& arr = top->get_ref<Json::array_t&>();
      arr.push_back(std::move(v));
      return &arr.back();
    }
    Pairs& pairs = top->get_ref<Object&>();
    pairs.emplace_back(std::move(key_), std::move(v));
    return &pairs.back().second;
  }
  bool put(Json&& v) {
    place(std::move(v));
    return true;
  }
  bool open(Json&& v) {
    stack_.push_back(place(std::move(v)));
    return true;
  }
  static void dedupe(Object& obj) {
    Pairs& pairs = obj;
    if (pairs.size() < 2) return;
    bool dup = false;
    if (pairs.size() <= 8) {
      for (size_t i = 1; i < pairs.size() && !dup; ++i)
        for (size_t j = 0; j < i && !dup; ++j) dup = pairs[i].first == pairs[j].first;
    } else {
      std::unordered_map<std::string_view, size_t> seen;
      seen.reserve(pairs.size());
      for (const auto& p : pairs) dup = dup || !seen.emplace(p.first, 0).second;
    }
    if (!dup) return;
    Pairs unique;
    std::unordered_map<std::string, size_t> at;
    for (auto& p : pairs) {
      auto it = at.find(p.first);
      if (it == at.end()) {
        at.emplace(p.first, unique.size());
        unique.emplace_back(p.first, std::move(p.second));
      } else {
        unique[it->second].second = std::move(p.second);
      }
    }
    pairs.clear();
    for (auto& p : unique) pairs.emplace_back(p.first, std::move(p.second));
  }

  std::vector<Json*> stack_;
  std::string key_;
};

}  // namespace

std::string py_repr(std::string_view s) {
  const bool has_single = s.find('\'') != std::string_view::npos;
  const bool has_double = s.find('"') != std::string_view::npos;
  const char q = has_single && !has_double ? '"' : '\'';
  std::string out(1, q);
  for (unsigned char c : s) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == static_cast<unsigned char>(q)) {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\r') {
      out += "\\r";
    } else if (c == '\t') {
      out += "\\t";
    } else if (c < 0x20 || c == 0x7f) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02x", c);
      out += buf;
    } else {
      out += static_cast<char>(c);
    }
  }
  out += q;
  return out;
}

std::string py_repr(const Json& v) {
  switch (v.type()) {
    case Json::value_t::null:
      return "None";
    case Json::value_t::boolean:
      return v.get<bool>() ? "True" : "False";
    case Json::value_t::string:
      return py_repr(std::string_view(v.get_ref<const std::string&>()));
    case Json::value_t::array: {
      std::string out = "[";
      for (size_t i = 0; i < v.size(); ++i) out += (i ? ", " : "") + py_repr(v[i]);
      return out + "]";
    }
    case Json::value_t::object: {
      std::string out = "{";
      bool first = true;
      for (auto it = v.begin(); it != v.end(); ++it) {
        out +=
            (first ? "" : ", ") + py_repr(std::string_view(it.key())) + ": " + py_repr(it.value());
        first = false;
      }
      return out + "}";
    }
    default:
      return dump_py(v);
  }
}

std::string py_str(const Json& v) {
  return v.is_string() ? v.get<std::string>() : py_repr(v);
}

void append_py(std::string& out, const Json& value, int indent, int depth) {
  dump_value(out, value, indent, depth);
}

std::string dump_py(const Json& value, int indent) {
  std::string out;
  dump_value(out, value, indent, 0);
  return out;
}

Expected<Json> parse_json(std::string_view text, std::string_view what) {
  JsonBuilder b;
  bool ok = false;
  try {
    ok = Json::sax_parse(text, &b);
  } catch (const Json::exception& e) {
    b.fail_with(e);  // a number too large for a double (out_of_range.406)
  }
  if (!ok)
    return fail(std::string(what) +
                " is not valid JSON: " + (b.error.empty() ? "parse error" : b.error));
  return std::move(b.root);
}

Expected<Json> load_json_file(const std::string& path) {
  DG_TRY(std::string text, read_file(path));
  return parse_json(text, path);
}

std::string json_str(const Json& j, const char* key, const std::string& fallback) {
  if (j.is_object() && j.contains(key) && j[key].is_string()) return j[key].get<std::string>();
  return fallback;
}

std::vector<std::string> json_str_list(const Json& j, const char* key) {
  std::vector<std::string> out;
  if (j.is_object() && j.contains(key) && j[key].is_array())
    for (const auto& v : j[key])
      if (v.is_string()) out.push_back(v.get<std::string>());
  return out;
}

}  // namespace devgraph
