// A bundle's lifetime budget (GRAPH.yaml budgets.per_bundle) as a run
// applies it, and the words a park for a budget is known by. The run's
// limits broker (orchestrator/limits.h) decides when a bundle has spent
// its budget; the inbox's answer (inbox/inbox.h) allows it one more.
//
// Contract:
// - A bundle may spend `rounds` budgets' worth in all: budget_rounds() of
//   its state.bundles entry (kBudgetRoundsKey; 1 when absent or not a
//   whole number of at least 1).
// - bundle_budget_spent() is the reason, starting kBundleBudgetSpent, when
//   the usage reaches rounds times any limit the budget sets (a limit of
//   nullopt is none; tokens count only where the ledger has them); else
//   nullopt.
// - allow_another_budget() raises an entry's rounds by one when the
//   entry is parked and its parked_reason starts with kBundleBudgetSpent;
//   it touches nothing else and says whether it did.
// - A park for the run's budget (devgraph run --budget-usd) has a reason
//   starting kRunBudgetSpent.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "bundle/dispatch.h"
#include "graph/graph.h"
#include "util/json.h"

namespace devgraph::bundle {

inline constexpr std::string_view kBundleBudgetSpent = "bundle budget spent: ";
inline constexpr std::string_view kRunBudgetSpent = "run budget spent: ";
inline constexpr const char* kBudgetRoundsKey = "budget_rounds";

int budget_rounds(const Json& entry);

std::optional<std::string> bundle_budget_spent(const BundleBudget& budget,
                                               const LedgerTotals& usage, int rounds);

bool allow_another_budget(Json& entry);

// "$1.23": an amount of money as a person reads it.
std::string dollars(double usd);

}  // namespace devgraph::bundle
