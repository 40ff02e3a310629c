#include "support/fake_slot_gate.h"

#include <algorithm>

namespace devgraph::test {

void FakeSlotGate::ask() {
  ++asks;
  ++queued_;
  if (in_use >= ceiling_) ++waited;
  grant_what_fits();
}

void FakeSlotGate::finished(double cost_usd, std::optional<long long> tokens) {
  (void)tokens;
  ++finishes;
  cost += cost_usd;
  --in_use;
  grant_what_fits();
  if (on_finished) on_finished(finishes);
}

void FakeSlotGate::release() {
  ++releases;
  --in_use;
  grant_what_fits();
}

void FakeSlotGate::report_limit(std::chrono::system_clock::time_point until,
                                const std::string& reason) {
  limits.emplace_back(until, reason);
}

std::vector<bundle::GateNews> FakeSlotGate::take() {
  std::vector<bundle::GateNews> out(news_.begin(), news_.end());
  news_.clear();
  return out;
}

void FakeSlotGate::grant_what_fits() {
  while (queued_ > 0 && in_use < ceiling_) {
    --queued_;
    ++in_use;
    ++grants;
    peak_in_use = std::max(peak_in_use, in_use);
    news_.push_back(bundle::GateNews{bundle::GateNews::Kind::granted, {}, ""});
  }
}

}  // namespace devgraph::test
