#include "util/suggest.h"

#include <algorithm>

namespace devgraph {

size_t edit_distance(std::string_view a, std::string_view b) {
  // Three rows of the table: two back for a swap, one back, this one.
  std::vector<size_t> before(b.size() + 1), prev(b.size() + 1), row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) prev[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
      row[j] = std::min({prev[j] + 1, row[j - 1] + 1, prev[j - 1] + cost});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1])
        row[j] = std::min(row[j], before[j - 2] + 1);
    }
    std::swap(before, prev);
    std::swap(prev, row);
  }
  return prev[b.size()];
}

std::optional<std::string> closest(std::string_view word,
                                   const std::vector<std::string>& candidates) {
  if (word.empty()) return std::nullopt;
  if (std::find(candidates.begin(), candidates.end(), word) != candidates.end())
    return std::nullopt;
  const std::string* best = nullptr;
  size_t best_distance = 3;
  for (const auto& c : candidates) {
    const size_t d = edit_distance(word, c);
    if (d < best_distance && d < word.size()) {
      best = &c;
      best_distance = d;
    }
  }
  if (best != nullptr) return *best;
  if (word.size() < 3) return std::nullopt;
  const std::string* only = nullptr;
  for (const auto& c : candidates) {
    const bool inside = c.find(word) != std::string::npos;
    const bool around = c.size() >= 3 && word.find(c) != std::string_view::npos;
    if (!inside && !around) continue;
    if (only != nullptr) return std::nullopt;
    only = &c;
  }
  return only ? std::optional<std::string>(*only) : std::nullopt;
}

}  // namespace devgraph
