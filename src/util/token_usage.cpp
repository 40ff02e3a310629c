#include "util/token_usage.h"

#include <algorithm>
#include <array>
#include <climits>

namespace devgraph {
namespace {

constexpr const char* kKeys[] = {"input", "cache_read", "cache_write", "output", "reasoning"};

// The parts in kKeys order, so every operation walks one list.
template <typename Usage>
auto parts(Usage& u) {
  return std::array{&u.input, &u.cache_read, &u.cache_write, &u.output, &u.reasoning};
}

long long saturating_add(long long a, long long b) {
  return a > LLONG_MAX - b ? LLONG_MAX : a + b;
}

}  // namespace

std::optional<long long> TokenUsage::total() const {
  std::optional<long long> sum;
  for (const auto* part : {&input, &cache_read, &cache_write, &output})
    if (*part) sum = saturating_add(sum.value_or(0), **part);
  return sum;
}

bool TokenUsage::empty() const {
  for (const auto* part : parts(*this))
    if (*part) return false;
  return true;
}

TokenUsage& TokenUsage::operator+=(const TokenUsage& other) {
  auto mine = parts(*this);
  auto theirs = parts(other);
  for (size_t i = 0; i < mine.size(); ++i)
    if (*theirs[i]) *mine[i] = saturating_add(mine[i]->value_or(0), **theirs[i]);
  return *this;
}

TokenUsage TokenUsage::since(const TokenUsage& before) const {
  TokenUsage out = *this;
  auto grown = parts(out);
  auto earlier = parts(before);
  for (size_t i = 0; i < grown.size(); ++i)
    if (*grown[i] && *earlier[i]) *grown[i] = std::max(0LL, **grown[i] - **earlier[i]);
  return out;
}

Json TokenUsage::to_json() const {
  Json out = Json::object();
  auto mine = parts(*this);
  for (size_t i = 0; i < mine.size(); ++i) out[kKeys[i]] = *mine[i] ? Json(**mine[i]) : Json();
  return out;
}

TokenUsage TokenUsage::from_json(const Json& value) {
  TokenUsage u;
  auto mine = parts(u);
  for (size_t i = 0; i < mine.size(); ++i) *mine[i] = token_count(value, kKeys[i]);
  return u;
}

std::optional<long long> token_count(const Json& object, const char* key) {
  if (!object.is_object()) return std::nullopt;
  auto it = object.find(key);
  if (it == object.end() || !it->is_number_integer()) return std::nullopt;
  if (it->is_number_unsigned()) {
    auto n = it->get<unsigned long long>();
    if (n > static_cast<unsigned long long>(LLONG_MAX)) return std::nullopt;
    return static_cast<long long>(n);
  }
  long long n = it->get<long long>();
  if (n < 0) return std::nullopt;
  return n;
}

}  // namespace devgraph
