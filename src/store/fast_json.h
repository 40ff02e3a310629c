// A JSON reader for state.json that keeps key order without paying for it.
//
// nlohmann's ordered_json inserts every key by a linear search of the keys
// before it, which makes reading a cursor map of n entries O(n^2). This
// reader appends keys in file order and removes duplicates once per object,
// with Python's rule (the first position, the last value). At 1,000 tasks
// it saves about 10 % of the parse (see BENCHMARKS.md); the rest is the
// lexer and allocation, and grows linearly.
//
// Contract: the same value and error wording as parse_json() in
// util/json.h for every input.
#pragma once

#include <string>
#include <string_view>

#include "util/expected.h"
#include "util/json.h"

namespace devgraph {

Expected<Json> parse_json_fast(std::string_view text, std::string_view what);

}  // namespace devgraph
