// "Did you mean ...?": the closest of a few known words to one a person
// typed, for the messages of an unknown verb, sub-command or flag.
//
// Contract:
// - edit_distance() is the optimal string alignment distance (Damerau-
//   Levenshtein without moving a substring twice): insertions, deletions,
//   substitutions and swaps of two neighbouring bytes, each costing 1.
// - closest() returns the candidate nearest `word`: the nearest at distance
//   at most 2 and less than the word's length (so a one-letter word does
//   not match everything); else, for a word of at least 3 bytes, the only
//   candidate that contains it or that it contains. Ties go to the earlier
//   candidate. nullopt when nothing is close, when `word` is itself a
//   candidate, or when `word` is empty.
// - Pure: no I/O.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace devgraph {

size_t edit_distance(std::string_view a, std::string_view b);

std::optional<std::string> closest(std::string_view word,
                                   const std::vector<std::string>& candidates);

}  // namespace devgraph
