#include "gh/closing.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <string_view>

namespace devgraph::gh {
namespace {

// Bytes of a multi-byte UTF-8 character count as word bytes: "préfix #1"
// holds no keyword.
bool is_word(char c) {
  auto u = static_cast<unsigned char>(c);
  return std::isalnum(u) || c == '_' || u >= 0x80;
}

char lower(char c) {
  return static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
}

constexpr std::array<std::string_view, 9> kKeywords = {
    "close", "closes", "closed", "fix", "fixes", "fixed", "resolve", "resolves", "resolved"};

// The length of the keyword the word at `s` is, or 0.
size_t keyword_at(std::string_view s) {
  size_t len = 0;
  while (len < s.size() && std::isalpha(static_cast<unsigned char>(s[len]))) ++len;
  if (len < s.size() && is_word(s[len])) return 0;  // "fixes2", "closed_"
  for (std::string_view k : kKeywords) {
    if (k.size() != len) continue;
    bool same = true;
    for (size_t i = 0; i < len && same; ++i) same = lower(s[i]) == k[i];
    if (same) return len;
  }
  return 0;
}

// Reads "[:] +#N" at `s`; N, or 0 when `s` holds no reference.
long long reference_at(std::string_view s) {
  size_t i = 0;
  if (i < s.size() && s[i] == ':') ++i;
  size_t blanks = i;
  while (i < s.size() && (s[i] == ' ' || s[i] == '\t')) ++i;
  if (i == blanks || i >= s.size() || s[i] != '#') return 0;
  ++i;
  long long n = 0;
  size_t digits = 0;
  for (; i < s.size() && std::isdigit(static_cast<unsigned char>(s[i])); ++i, ++digits) {
    if (digits == 15) return 0;  // no issue number is that long
    n = n * 10 + (s[i] - '0');
  }
  if (digits == 0 || n == 0) return 0;
  if (i < s.size() && is_word(s[i])) return 0;  // "#12abc"
  return n;
}

}  // namespace

std::vector<long long> closing_issues(const std::string& body) {
  std::vector<long long> found;
  std::string_view text(body);
  for (size_t i = 0; i < text.size(); ++i) {
    if (!std::isalpha(static_cast<unsigned char>(text[i]))) continue;
    if (i > 0 && is_word(text[i - 1])) continue;
    size_t len = keyword_at(text.substr(i));
    if (len == 0) continue;
    long long n = reference_at(text.substr(i + len));
    if (n != 0 && std::find(found.begin(), found.end(), n) == found.end()) found.push_back(n);
    i += len - 1;
  }
  return found;
}

}  // namespace devgraph::gh
