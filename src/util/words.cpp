#include "util/words.h"

namespace devgraph {

Expected<std::vector<std::string>> split_command(std::string_view text) {
  std::vector<std::string> words;
  std::string cur;
  bool in_word = false;
  auto refuse = [&](std::string_view what) {
    return fail("command '" + std::string(text) + "' " + std::string(what) +
                "; record a single program invocation");
  };
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (c == ' ' || c == '\t' || c == '\n') {
      if (in_word) words.push_back(std::move(cur));
      cur.clear();
      in_word = false;
      continue;
    }
    if (c == '\'') {
      auto end = text.find('\'', i + 1);
      if (end == std::string_view::npos) return refuse("has an unterminated single quote");
      cur.append(text.substr(i + 1, end - i - 1));
      i = end;
      in_word = true;
      continue;
    }
    if (c == '"') {
      size_t j = i + 1;
      for (; j < text.size() && text[j] != '"'; ++j) {
        char d = text[j];
        if (d == '\\' && j + 1 < text.size() &&
            (text[j + 1] == '"' || text[j + 1] == '\\' || text[j + 1] == '$' ||
             text[j + 1] == '`')) {
          cur.push_back(text[++j]);
        } else if (d == '`' || (d == '$' && j + 1 < text.size() && text[j + 1] == '(')) {
          return refuse("uses command substitution");
        } else {
          cur.push_back(d);
        }
      }
      if (j >= text.size()) return refuse("has an unterminated double quote");
      i = j;
      in_word = true;
      continue;
    }
    if (c == '\\') {
      if (i + 1 >= text.size()) return refuse("ends with a backslash");
      cur.push_back(text[++i]);
      in_word = true;
      continue;
    }
    if (c == '|' || c == '&' || c == ';' || c == '<' || c == '>' || c == '(' || c == ')' ||
        c == '`')
      return refuse(std::string("contains the shell operator '") + c + "'");
    if (c == '$' && i + 1 < text.size() && text[i + 1] == '(')
      return refuse("uses command substitution");
    cur.push_back(c);
    in_word = true;
  }
  if (in_word) words.push_back(std::move(cur));
  if (words.empty()) return fail("command is empty");
  return words;
}

}  // namespace devgraph
