#include "bundle/budget.h"

#include <cstdio>

namespace devgraph::bundle {

int budget_rounds(const Json& entry) {
  if (!entry.is_object()) return 1;
  auto it = entry.find(kBudgetRoundsKey);
  if (it == entry.end() || !it->is_number_integer()) return 1;
  long long n = it->get<long long>();
  return n < 1 || n > 1'000'000 ? 1 : static_cast<int>(n);
}

std::string dollars(double usd) {
  char buf[48];
  std::snprintf(buf, sizeof buf, "$%.2f", usd);
  return buf;
}

std::optional<std::string> bundle_budget_spent(const BundleBudget& b, const LedgerTotals& usage,
                                               int rounds) {
  if (rounds < 1) rounds = 1;
  // "61 persona runs of the 60 it may use (60 per budget, 1 budget allowed)"
  auto spent = [&](const std::string& used, const std::string& allowed, const std::string& per) {
    return std::string(kBundleBudgetSpent) + used + " of the " + allowed +
           " it may use (GRAPH.yaml budgets.per_bundle: " + per + " per budget, " +
           std::to_string(rounds) + (rounds == 1 ? " budget" : " budgets") +
           " allowed); answer it in devgraph inbox to allow one more budget's worth";
  };
  if (b.persona_runs) {
    long long allowed = static_cast<long long>(*b.persona_runs) * rounds;
    if (usage.persona_runs >= allowed)
      return spent(std::to_string(usage.persona_runs) + " persona runs", std::to_string(allowed),
                   std::to_string(*b.persona_runs));
  }
  if (b.cost_usd) {
    double allowed = *b.cost_usd * static_cast<double>(rounds);
    if (usage.cost_usd + 1e-9 >= allowed)
      return spent(dollars(usage.cost_usd), dollars(allowed), dollars(*b.cost_usd));
  }
  if (b.tokens && usage.tokens) {
    long long allowed = *b.tokens * rounds;
    if (*usage.tokens >= allowed)
      return spent(std::to_string(*usage.tokens) + " tokens", std::to_string(allowed),
                   std::to_string(*b.tokens));
  }
  return std::nullopt;
}

bool allow_another_budget(Json& entry) {
  if (!entry.is_object() || json_str(entry, "status") != "parked") return false;
  if (json_str(entry, "parked_reason").rfind(kBundleBudgetSpent, 0) != 0) return false;
  entry[kBudgetRoundsKey] = budget_rounds(entry) + 1;
  return true;
}

}  // namespace devgraph::bundle
