// Token usage in one shape, whatever agent CLI reported it: the value the
// persona runtime sums, the bundle driver writes into events and result
// files, and the session metrics add up per persona, bundle and run. How
// each CLI's own record becomes one is agents/usage.h.
//
// Contract:
// - The parts never overlap on the input side, so they add up:
//     input        input tokens neither read from nor written to a prompt
//                  cache
//     cache_read   input tokens read from the provider's prompt cache
//     cache_write  input tokens written to it
//     output       output tokens, reasoning included
//     reasoning    the part of `output` spent reasoning (thinking); shown
//                  on its own, never added to a total again
//   A part the CLI does not report is nullopt, not zero.
// - total() is the one `tokens` number devgraph shows, budgets and
//   reports: input + cache_read + cache_write + output, the reported parts
//   only; nullopt when none of the four is reported.
// - Sums (+=) keep a part nullopt only while no side reports it, and stop
//   at the largest long long rather than overflow. since() is a part's
//   growth over an earlier report (never below zero).
// - The JSON form is an object with the keys above, each a count or null
//   (to_json()). from_json() reads any value and never throws: a part that
//   is not a non-negative integer, or a value that is no object, reads as
//   not reported.
#pragma once

#include <optional>

#include "util/json.h"

namespace devgraph {

struct TokenUsage {
  std::optional<long long> input;
  std::optional<long long> cache_read;
  std::optional<long long> cache_write;
  std::optional<long long> output;
  std::optional<long long> reasoning;

  std::optional<long long> total() const;
  // Nothing at all is reported.
  bool empty() const;

  TokenUsage& operator+=(const TokenUsage& other);
  // Each part's growth from `before` to this report, for a CLI whose
  // report covers a whole session it was resumed into; a part `before`
  // lacks grows from zero.
  TokenUsage since(const TokenUsage& before) const;

  Json to_json() const;
  static TokenUsage from_json(const Json& value);

  bool operator==(const TokenUsage&) const = default;
};

// The count at `key` of `object` when it is a non-negative integer that
// fits a long long; nullopt for anything else (missing, a string, a
// fraction, a negative number, no object).
std::optional<long long> token_count(const Json& object, const char* key);

}  // namespace devgraph
