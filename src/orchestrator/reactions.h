// What monitor_prs does about a failing check or a review asking for
// changes on a delivered pull request (GRAPH.yaml `reactions`): report it,
// or spend a bounded repair cycle on the bundle's own branch, guarded so
// that no cycle is spent on a failure the bundle cannot see or on a repair
// that changed nothing. Pure; monitor_prs (after_delivery.h) calls it.
//
// Rules, in order:
// 1. `report` (the default): report, never repair.
// 2. A cycle was spent and the pull request is as it was before it (same
//    head, same diff, same failing checks): no progress, park at once.
// 3. The cycles are used up: park with the evidence.
// 4. A failing check the bundle's own test and build commands pass at the
//    PR's head is reported as possibly flaky or infrastructure, not
//    repaired (a review asking for changes needs no reproduction).
// 5. Otherwise: repair.
#pragma once

#include <optional>
#include <set>
#include <string>
#include <string_view>

namespace devgraph::orchestrator {

enum class ReactionMode { report, repair };

struct ReactionPolicy {
  ReactionMode mode = ReactionMode::report;
  int max_cycles = 2;
};

// What a pull request looks like when a reaction is decided.
struct PrSnapshot {
  std::string head;               // the head commit
  std::string diff_digest;        // a digest of its diff against the base
  std::set<std::string> failing;  // the failing checks' names
  bool changes_requested = false;
  bool operator==(const PrSnapshot&) const = default;
};

enum class Reaction { report, repair, report_flaky, park_exhausted, park_no_progress };
std::string_view reaction_name(Reaction r);

struct ReactionInput {
  ReactionPolicy policy;
  int cycles_spent = 0;
  // The pull request when the last cycle began; nullopt before any.
  std::optional<PrSnapshot> before_last_cycle;
  PrSnapshot now;
  // For a failing check: whether the bundle's own commands fail at the
  // PR's head too (nullopt: not tried yet, or a review, not a check).
  std::optional<bool> reproduced;
};

Reaction react(const ReactionInput& input);

}  // namespace devgraph::orchestrator
