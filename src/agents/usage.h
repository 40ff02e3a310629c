// What each agent CLI reports about its tokens, as one TokenUsage
// (util/token_usage.h), so costs and tokens read the same whichever backend
// ran a persona.
//
// Contract:
// - normalize_usage(kind, raw) takes AgentOutput::usage, the record the
//   backend's parser kept, and never fails or throws: a record that is not
//   the backend's shape, or a count that is not a non-negative integer
//   (a string, a fraction, a negative number), is a part not reported.
// - The shapes, from what the pinned CLIs print (tests/fixtures/
//   cli-failures/, docs/agents.md "Tokens"):
//     claude, sim  `usage` {input_tokens, cache_creation_input_tokens,
//                  cache_read_input_tokens, output_tokens,
//                  output_tokens_details.thinking_tokens}: the three input
//                  counts are already disjoint: input, cache_write,
//                  cache_read; output_tokens is output (thinking included),
//                  thinking_tokens reasoning.
//     codex        turn.completed `usage` {input_tokens,
//                  cached_input_tokens, cache_write_input_tokens,
//                  output_tokens, reasoning_output_tokens}: the cached and
//                  cache-write counts are parts of input_tokens, so input
//                  is what is left of it; output_tokens is output
//                  (reasoning included), reasoning_output_tokens reasoning.
//     gemini       `stats`: models.<model>.tokens {prompt, cached,
//                  candidates, thoughts, tool} summed over the models (the
//                  per-role counts under `roles` are parts of their model's
//                  and are not added again): cached, a part of prompt, is
//                  cache_read; input is the rest of prompt plus tool (the
//                  tool-use prompt, counted apart from prompt); output is
//                  candidates plus thoughts (gemini counts thoughts apart),
//                  reasoning is thoughts. gemini reports no cache writes.
//     command      nothing: an empty usage.
//   So for every backend TokenUsage::total(), the `tokens` number, is every
//   input token sent (cached or not) plus every output token (reasoning
//   included): for codex its input_tokens + output_tokens, for gemini its
//   stats' total, for claude the sum of its four counts.
// - A part reported larger than the count it is a part of (codex cached
//   beyond input_tokens, gemini cached beyond prompt, reasoning beyond
//   output) is cut to that count, so no total exceeds what the CLI said.
// - usage_covers_session(kind): whether a resumed call's report counts the
//   whole session so far (codex's thread totals: measured, a resume of a
//   20-in/10-out thread that cost 10/5 more reports 30/15) rather than that
//   call alone (claude's `usage`, gemini's stats, the sim). The runtime
//   then adds only the growth (TokenUsage::since).
// - cost_covers_session(kind): the same for the cost: claude's
//   total_cost_usd on a resumed call is the session's so far (measured:
//   $0.00028 after a first call of two requests, $0.00042 after a resume of
//   one more), while its `usage` covers the call alone; the sim prints
//   claude's document and reports the same way (agents/sim.h). codex and
//   gemini report no cost.
#pragma once

#include "agents/backend.h"
#include "util/json.h"
#include "util/token_usage.h"

namespace devgraph::agents {

TokenUsage normalize_usage(BackendKind kind, const Json& raw);

bool usage_covers_session(BackendKind kind);
bool cost_covers_session(BackendKind kind);

}  // namespace devgraph::agents
