#include "issues/issue.h"

#include <cctype>
#include <string_view>

#include "util/args.h"

namespace devgraph::issues {
namespace {

bool blank(char c) {
  return c == ' ' || c == '\t';
}

char lower(char c) {
  return static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
}

// Consumes `word` (ASCII, lower case) at the front of `s`, ignoring case.
bool take_word(std::string_view& s, std::string_view word) {
  if (s.size() < word.size()) return false;
  for (size_t i = 0; i < word.size(); ++i)
    if (lower(s[i]) != word[i]) return false;
  s.remove_prefix(word.size());
  return true;
}

// Consumes spaces and tabs; whether there was at least one.
bool take_blanks(std::string_view& s) {
  size_t n = 0;
  while (n < s.size() && blank(s[n])) ++n;
  s.remove_prefix(n);
  return n > 0;
}

// "Part of #N" at the front of `line` (leading blanks allowed), N > 0 and
// not followed by a letter, digit or '_'.
std::optional<long long> part_of(std::string_view line) {
  take_blanks(line);
  if (!take_word(line, "part") || !take_blanks(line) || !take_word(line, "of") ||
      !take_blanks(line) || !take_word(line, "#"))
    return std::nullopt;
  size_t n = 0;
  while (n < line.size() && std::isdigit(static_cast<unsigned char>(line[n]))) ++n;
  if (n == 0) return std::nullopt;
  if (n < line.size() && (std::isalnum(static_cast<unsigned char>(line[n])) || line[n] == '_'))
    return std::nullopt;
  auto number = parse_int(line.substr(0, n));
  if (!number || *number <= 0) return std::nullopt;
  return number;
}

// 0, 1 or 2 for a label that names a priority, else -1.
int priority_rank(std::string_view label) {
  while (!label.empty() && blank(label.front())) label.remove_prefix(1);
  while (!label.empty() && blank(label.back())) label.remove_suffix(1);
  if (take_word(label, "priority")) {
    take_blanks(label);
    if (label.empty() || (label.front() != ':' && label.front() != '/')) return -1;
    label.remove_prefix(1);
    take_blanks(label);
  }
  if (label.size() != 2 || lower(label[0]) != 'p' || label[1] < '0' || label[1] > '2') return -1;
  return label[1] - '0';
}

}  // namespace

std::optional<long long> parent_from_body(const std::string& body) {
  std::string_view rest(body);
  while (true) {
    const size_t end = rest.find('\n');
    if (auto n = part_of(rest.substr(0, end))) return n;
    if (end == std::string_view::npos) return std::nullopt;
    rest.remove_prefix(end + 1);
  }
}

std::string priority_from_labels(const std::vector<std::string>& labels) {
  int best = -1;
  for (const auto& label : labels) {
    const int rank = priority_rank(label);
    if (rank >= 0 && (best < 0 || rank < best)) best = rank;
  }
  return best < 0 ? std::string() : "P" + std::to_string(best);
}

}  // namespace devgraph::issues
