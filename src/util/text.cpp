#include "util/text.h"

namespace devgraph {

std::string join(const std::vector<std::string>& items, const std::string& sep) {
  std::string s;
  for (size_t i = 0; i < items.size(); ++i) s += (i ? sep : "") + items[i];
  return s;
}

std::string clip(const std::string& s, size_t n) {
  return s.size() <= n ? s : s.substr(0, n);
}

bool path_ends_with(const std::string& path, const std::string& tail) {
  return path == tail || (path.size() > tail.size() &&
                          path.compare(path.size() - tail.size(), tail.size(), tail) == 0 &&
                          path[path.size() - tail.size() - 1] == '/');
}

std::string clip_tail(const std::string& s, size_t n) {
  return s.size() <= n ? s : s.substr(s.size() - n);
}

std::string last_line(std::string_view text) {
  size_t end = text.size();
  while (end > 0 && (text[end - 1] == '\n' || text[end - 1] == '\r' || text[end - 1] == ' ')) --end;
  size_t nl = text.rfind('\n', end == 0 ? 0 : end - 1);
  size_t start = nl == std::string_view::npos || end == 0 ? 0 : nl + 1;
  return std::string(text.substr(start, end - start));
}

std::string one_line(std::string_view text, size_t max) {
  std::string out(text);
  if (out.size() > max) out = clip(out, max) + "...";
  for (char& c : out)
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) c = ' ';
  return out;
}

std::string squeeze_spaces(std::string_view text) {
  std::string out;
  bool space = false;
  for (char c : text) {
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v') {
      space = !out.empty();
      continue;
    }
    if (space) out += ' ';
    space = false;
    out += c;
  }
  return out;
}

std::vector<std::string> split_list(const std::string& text) {
  std::vector<std::string> out;
  std::string item;
  for (char c : text + ",") {
    if (c == ',') {
      if (!item.empty()) out.push_back(item);
      item.clear();
    } else if (c != ' ' && c != '\t') {
      item += c;
    }
  }
  return out;
}

std::string wrap_words(std::string_view text, size_t indent, size_t first_column, size_t width) {
  std::string out;
  size_t column = first_column;
  bool first = true;
  size_t i = 0;
  while (i <= text.size()) {
    size_t end = text.find(' ', i);
    if (end == std::string_view::npos) end = text.size();
    const std::string_view word = text.substr(i, end - i);
    if (!first && column + 1 + word.size() > width) {
      out += "\n" + std::string(indent, ' ');
      column = indent;
    } else if (!first) {
      out += " ";
      ++column;
    }
    out += word;
    column += word.size();
    first = false;
    i = end + 1;
  }
  return out;
}

}  // namespace devgraph
