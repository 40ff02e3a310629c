#include "util/json.h"

#include <cstdio>

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

}  // namespace

void append_py(std::string& out, const Json& value, int indent, int depth) {
  dump_value(out, value, indent, depth);
}

std::string dump_py(const Json& value, int indent) {
  std::string out;
  dump_value(out, value, indent, 0);
  return out;
}

Expected<Json> parse_json(std::string_view text, std::string_view what) {
  try {
    return Json::parse(text);
  } catch (const Json::parse_error& e) {
    std::string msg = e.what();
    // nlohmann prefixes "[json.exception.parse_error.101] parse error at ...".
    if (auto pos = msg.find("] "); pos != std::string::npos) msg = msg.substr(pos + 2);
    return fail(std::string(what) + " is not valid JSON: " + msg);
  }
}

Expected<Json> load_json_file(const std::string& path) {
  DG_TRY(std::string text, read_file(path));
  return parse_json(text, path);
}

}  // namespace devgraph
