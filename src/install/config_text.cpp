#include "install/config_text.h"

#include <cstdio>

namespace devgraph::install {
namespace {

std::string at(std::string_view origin, int line) {
  return std::string(origin) + ":" + std::to_string(line);
}

bool starts(std::string_view text, size_t i, std::string_view what) {
  return text.substr(i, what.size()) == what;
}

// Moves `i` past the string literal starting at text[i] (a quote). Handles
// TOML's four kinds: "basic", 'literal', """multi-line""", '''multi-line'''.
Status skip_string(std::string_view text, size_t& i, int& line, std::string_view origin) {
  const int start = line;
  const char q = text[i];
  if (starts(text, i, std::string(3, q))) {
    size_t j = i + 3;
    while (j < text.size()) {
      if (q == '"' && text[j] == '\\') {
        if (j + 1 < text.size() && text[j + 1] == '\n') ++line;
        j += 2;
        continue;
      }
      if (starts(text, j, std::string(3, q))) {
        j += 3;
        while (j < text.size() && text[j] == q) ++j;  // up to two quotes may close it
        i = j;
        return {};
      }
      if (text[j] == '\n') ++line;
      ++j;
    }
    return fail(at(origin, start) + ": unterminated multi-line string");
  }
  size_t j = i + 1;
  while (j < text.size() && text[j] != q) {
    if (text[j] == '\n') return fail(at(origin, start) + ": unterminated string");
    j += (q == '"' && text[j] == '\\') ? 2 : 1;
  }
  if (j >= text.size()) return fail(at(origin, start) + ": unterminated string");
  i = j + 1;
  return {};
}

void skip_comment(std::string_view text, size_t& i) {
  while (i < text.size() && text[i] != '\n') ++i;
}

// After a header or a value: only blanks and a comment may follow on the line.
Status finish_line(std::string_view text, size_t& i, int& line, std::string_view origin) {
  while (i < text.size() && (text[i] == ' ' || text[i] == '\t' || text[i] == '\r')) ++i;
  if (i < text.size() && text[i] == '#') skip_comment(text, i);
  if (i < text.size() && text[i] != '\n')
    return fail(at(origin, line) + ": unexpected text after the value");
  if (i < text.size()) {
    ++i;
    ++line;
  }
  return {};
}

// "a . \"b.c\"" -> "a.b.c": dotted-key parts, blanks and quotes removed.
std::string normalize_key(std::string_view raw) {
  std::string out, part;
  auto flush = [&] {
    size_t b = part.find_first_not_of(" \t");
    size_t e = part.find_last_not_of(" \t");
    std::string p = b == std::string::npos ? "" : part.substr(b, e - b + 1);
    if (p.size() >= 2 && (p.front() == '"' || p.front() == '\'') && p.back() == p.front())
      p = p.substr(1, p.size() - 2);
    out += (out.empty() ? "" : ".") + p;
    part.clear();
  };
  char quote = 0;
  for (char c : raw) {
    if (quote) {
      if (c == quote) quote = 0;
      part += c;
    } else if (c == '"' || c == '\'') {
      quote = c;
      part += c;
    } else if (c == '.') {
      flush();
    } else {
      part += c;
    }
  }
  flush();
  return out;
}

Status skip_value(std::string_view text, size_t& i, int& line, std::string_view origin) {
  const int start = line;
  if (i >= text.size() || text[i] == '\n' || text[i] == '#')
    return fail(at(origin, start) + ": a key without a value");
  char c = text[i];
  if (c == '"' || c == '\'') return skip_string(text, i, line, origin);
  if (c == '[' || c == '{') {
    std::string stack;
    while (i < text.size()) {
      char d = text[i];
      if (d == '"' || d == '\'') {
        DG_CHECK(skip_string(text, i, line, origin));
        continue;
      }
      if (d == '#') {
        skip_comment(text, i);
        continue;
      }
      if (d == '\n') ++line;
      if (d == '[' || d == '{') stack += d;
      if (d == ']' || d == '}') {
        if (stack.empty() || (d == ']') != (stack.back() == '['))
          return fail(at(origin, line) + ": mismatched '" + std::string(1, d) + "'");
        stack.pop_back();
        if (stack.empty()) {
          ++i;
          return {};
        }
      }
      ++i;
    }
    return fail(at(origin, start) + ": unterminated array or inline table");
  }
  // A bare scalar (number, boolean, date) runs to the end of the line.
  size_t last = i;
  while (i < text.size() && text[i] != '\n' && text[i] != '#') {
    if (text[i] != ' ' && text[i] != '\t' && text[i] != '\r') last = i + 1;
    ++i;
  }
  i = last;
  return {};
}

void skip_blank(std::string_view v, size_t& i, bool comments) {
  while (i < v.size()) {
    char c = v[i];
    if (c == ' ' || c == '\t' || c == '\r' || c == '\n') {
      ++i;
    } else if (comments && c == '#') {
      skip_comment(v, i);
    } else {
      break;
    }
  }
}

}  // namespace

Expected<std::vector<TomlStatement>> scan_toml(std::string_view text, std::string_view origin) {
  std::vector<TomlStatement> out;
  std::string table;
  size_t i = 0;
  int line = 1;
  while (i < text.size()) {
    char c = text[i];
    if (c == ' ' || c == '\t' || c == '\r') {
      ++i;
      continue;
    }
    if (c == '\n') {
      ++i;
      ++line;
      continue;
    }
    if (c == '#') {
      skip_comment(text, i);
      continue;
    }
    TomlStatement st;
    st.begin = i;
    st.line = line;
    if (c == '[') {
      bool array = starts(text, i, "[[");
      size_t j = i + (array ? 2 : 1);
      size_t name_begin = j;
      while (j < text.size() && text[j] != ']' && text[j] != '\n') {
        if (text[j] == '"' || text[j] == '\'') {
          int l = line;
          DG_CHECK(skip_string(text, j, l, origin));
          continue;
        }
        ++j;
      }
      if (j >= text.size() || text[j] != ']' || (array && !starts(text, j, "]]")))
        return fail(at(origin, line) + ": unterminated table header");
      st.kind = array ? TomlStatement::Kind::array_table : TomlStatement::Kind::table;
      st.key = normalize_key(text.substr(name_begin, j - name_begin));
      if (st.key.empty()) return fail(at(origin, line) + ": empty table name");
      table = st.key;
      st.table = table;
      i = j + (array ? 2 : 1);
      DG_CHECK(finish_line(text, i, line, origin));
      st.end = i;
      out.push_back(std::move(st));
      continue;
    }
    size_t j = i;
    while (j < text.size() && text[j] != '=' && text[j] != '\n') {
      if (text[j] == '"' || text[j] == '\'') {
        int l = line;
        DG_CHECK(skip_string(text, j, l, origin));
        continue;
      }
      ++j;
    }
    if (j >= text.size() || text[j] != '=')
      return fail(at(origin, line) + ": expected a [table] header or key = value");
    st.kind = TomlStatement::Kind::key_value;
    st.key = normalize_key(text.substr(i, j - i));
    if (st.key.empty()) return fail(at(origin, line) + ": a value without a key");
    st.table = table;
    i = j + 1;
    while (i < text.size() && (text[i] == ' ' || text[i] == '\t')) ++i;
    st.value_begin = i;
    DG_CHECK(skip_value(text, i, line, origin));
    st.value_end = i;
    DG_CHECK(finish_line(text, i, line, origin));
    st.end = i;
    out.push_back(std::move(st));
  }
  return out;
}

Expected<TomlStringArray> parse_toml_string_array(std::string_view v, std::string_view what) {
  TomlStringArray out;
  size_t i = 0;
  skip_blank(v, i, false);
  if (i >= v.size() || v[i] != '[') return fail(std::string(what) + " is not an array");
  ++i;
  out.insert_at = i;
  while (true) {
    skip_blank(v, i, true);
    if (i >= v.size()) return fail(std::string(what) + ": unterminated array");
    if (v[i] == ']') return out;
    char q = v[i];
    if ((q != '"' && q != '\'') || starts(v, i, std::string(3, q)))
      return fail(std::string(what) + " holds something other than plain strings");
    std::string value;
    size_t j = i + 1;
    while (j < v.size() && v[j] != q) {
      if (q == '"' && v[j] == '\\' && j + 1 < v.size()) {
        char e = v[j + 1];
        value += e == 'n' ? '\n' : e == 't' ? '\t' : e;
        j += 2;
        continue;
      }
      value += v[j++];
    }
    if (j >= v.size()) return fail(std::string(what) + ": unterminated string");
    out.values.push_back(std::move(value));
    i = j + 1;
    out.insert_at = i;
    out.needs_comma = true;
    out.trailing_comma = false;
    skip_blank(v, i, true);
    if (i < v.size() && v[i] == ',') {
      ++i;
      out.insert_at = i;
      out.needs_comma = false;
      out.trailing_comma = true;
      continue;
    }
    if (i < v.size() && v[i] == ']') return out;
    return fail(std::string(what) + ": expected ',' or ']' between elements");
  }
}

std::string toml_quote(std::string_view s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", static_cast<unsigned char>(c));
      out += buf;
    } else {
      out += c;
    }
  }
  return out + "\"";
}

Status check_starlark(std::string_view text, std::string_view origin) {
  std::string stack;
  std::vector<int> opened_at;
  size_t i = 0;
  int line = 1;
  while (i < text.size()) {
    char c = text[i];
    if (c == '"' || c == '\'') {
      DG_CHECK(skip_string(text, i, line, origin));
      continue;
    }
    if (c == '#') {
      skip_comment(text, i);
      continue;
    }
    if (c == '\n') ++line;
    if (c == '\0') return fail(at(origin, line) + ": binary content");
    if (c == '(' || c == '[' || c == '{') {
      stack += c;
      opened_at.push_back(line);
    } else if (c == ')' || c == ']' || c == '}') {
      char want = c == ')' ? '(' : c == ']' ? '[' : '{';
      if (stack.empty() || stack.back() != want)
        return fail(at(origin, line) + ": unbalanced '" + std::string(1, c) + "'");
      stack.pop_back();
      opened_at.pop_back();
    }
    ++i;
  }
  if (!stack.empty())
    return fail(at(origin, opened_at.back()) + ": '" + std::string(1, stack.back()) +
                "' is never closed");
  return {};
}

}  // namespace devgraph::install
