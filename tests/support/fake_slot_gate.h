// An in-process SlotGate for driver tests: slots up to a ceiling, granted
// in ask order as slots come back, and news a test pushes (a pause, a
// close). No descriptor: its news comes in answer to the calls made on it.
#pragma once

#include <chrono>
#include <deque>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "bundle/slot_gate.h"

namespace devgraph::test {

class FakeSlotGate final : public bundle::SlotGate {
 public:
  explicit FakeSlotGate(int ceiling) : ceiling_(ceiling) {}

  void ask() override;
  void finished(double cost_usd, std::optional<long long> tokens) override;
  void release() override;
  void report_limit(std::chrono::system_clock::time_point until,
                    const std::string& reason) override;
  int fd() const override { return -1; }
  std::vector<bundle::GateNews> take() override;

  // News for the next take(). A close drops the asks not granted, as the
  // run's broker does.
  void push(bundle::GateNews news) {
    if (news.kind == bundle::GateNews::Kind::closed) queued_ = 0;
    news_.push_back(std::move(news));
  }
  // Called after each finished(), with the count so far (a test closes the
  // gate after the Nth persona, say).
  std::function<void(int finished)> on_finished;

  int asks = 0;
  int grants = 0;
  int waited = 0;  // asks not granted at once: a slot had to come back first
  int finishes = 0;
  int releases = 0;
  int in_use = 0;
  int peak_in_use = 0;
  double cost = 0;
  std::vector<std::pair<std::chrono::system_clock::time_point, std::string>> limits;

 private:
  void grant_what_fits();

  int ceiling_;
  int queued_ = 0;  // asks not yet granted
  std::deque<bundle::GateNews> news_;
};

}  // namespace devgraph::test
