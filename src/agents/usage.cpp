#include "agents/usage.h"

#include <algorithm>
#include <climits>

namespace devgraph::agents {
namespace {

using Count = std::optional<long long>;

// a + b, either side possibly unreported; stops at the largest count.
Count plus(Count a, Count b) {
  if (!a) return b;
  if (!b) return a;
  return *a > LLONG_MAX - *b ? LLONG_MAX : *a + *b;
}

// `part` cut to `whole` when both are known.
Count at_most(Count part, Count whole) {
  if (part && whole) return std::min(*part, *whole);
  return part;
}

// What is left of `whole` once `parts` are taken; nullopt without a whole.
Count rest(Count whole, Count parts) {
  if (!whole) return std::nullopt;
  return std::max(0LL, *whole - parts.value_or(0));
}

const Json& member(const Json& object, const char* key) {
  static const Json none;
  if (!object.is_object()) return none;
  auto it = object.find(key);
  return it == object.end() ? none : *it;
}

TokenUsage claude_usage(const Json& u) {
  TokenUsage out;
  out.input = token_count(u, "input_tokens");
  out.cache_write = token_count(u, "cache_creation_input_tokens");
  out.cache_read = token_count(u, "cache_read_input_tokens");
  out.output = token_count(u, "output_tokens");
  out.reasoning =
      at_most(token_count(member(u, "output_tokens_details"), "thinking_tokens"), out.output);
  return out;
}

TokenUsage codex_usage(const Json& u) {
  TokenUsage out;
  Count input = token_count(u, "input_tokens");
  out.cache_read = at_most(token_count(u, "cached_input_tokens"), input);
  out.cache_write =
      at_most(token_count(u, "cache_write_input_tokens"), rest(input, out.cache_read));
  out.input = rest(input, plus(out.cache_read, out.cache_write));
  out.output = token_count(u, "output_tokens");
  out.reasoning = at_most(token_count(u, "reasoning_output_tokens"), out.output);
  return out;
}

// One model's `tokens` of gemini's stats.
TokenUsage gemini_model_usage(const Json& t) {
  TokenUsage out;
  Count prompt = token_count(t, "prompt");
  Count cached = token_count(t, "cached");
  // Without `prompt`, gemini's own `input` is the prompt less its cached part.
  if (!prompt) prompt = plus(token_count(t, "input"), cached);
  out.cache_read = at_most(cached, prompt);
  out.input = plus(rest(prompt, out.cache_read), token_count(t, "tool"));
  Count thoughts = token_count(t, "thoughts");
  out.output = plus(token_count(t, "candidates"), thoughts);
  out.reasoning = thoughts;
  return out;
}

TokenUsage gemini_usage(const Json& stats) {
  TokenUsage out;
  const Json& models = member(stats, "models");
  if (!models.is_object()) return out;
  for (const auto& [name, model] : models.items()) {
    (void)name;
    out += gemini_model_usage(member(model, "tokens"));
  }
  return out;
}

}  // namespace

TokenUsage normalize_usage(BackendKind kind, const Json& raw) {
  if (!raw.is_object()) return {};
  switch (kind) {
    case BackendKind::claude:
    case BackendKind::sim:
      return claude_usage(raw);
    case BackendKind::codex:
      return codex_usage(raw);
    case BackendKind::gemini:
      return gemini_usage(raw);
    case BackendKind::command:
      break;
  }
  return {};
}

bool usage_covers_session(BackendKind kind) {
  return kind == BackendKind::codex;
}

bool cost_covers_session(BackendKind kind) {
  return kind == BackendKind::claude || kind == BackendKind::sim;
}

}  // namespace devgraph::agents
