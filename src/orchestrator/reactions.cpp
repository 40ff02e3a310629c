#include "orchestrator/reactions.h"

namespace devgraph::orchestrator {

std::string_view reaction_name(Reaction r) {
  switch (r) {
    case Reaction::report:
      return "report";
    case Reaction::repair:
      return "repair";
    case Reaction::report_flaky:
      return "report_flaky";
    case Reaction::park_exhausted:
      return "park_exhausted";
    case Reaction::park_no_progress:
      return "park_no_progress";
  }
  return "report";
}

Reaction react(const ReactionInput& in) {
  if (in.policy.mode == ReactionMode::report) return Reaction::report;
  if (in.cycles_spent > 0 && in.before_last_cycle && *in.before_last_cycle == in.now)
    return Reaction::park_no_progress;
  if (in.cycles_spent >= in.policy.max_cycles) return Reaction::park_exhausted;
  if (!in.now.failing.empty() && in.reproduced == false) return Reaction::report_flaky;
  return Reaction::repair;
}

}  // namespace devgraph::orchestrator
