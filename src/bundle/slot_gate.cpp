#include "bundle/slot_gate.h"

#include <deque>
#include <map>

namespace devgraph::bundle {
namespace {

class GatedLauncher final : public Launcher {
 public:
  GatedLauncher(std::unique_ptr<Launcher> inner, std::unique_ptr<SlotGate> gate)
      : inner_(std::move(inner)), gate_(std::move(gate)) {
    if (gate_->fd() < 0) return;
    if (auto w = inner_->watch(gate_->fd()); !w)
      closed_ = "cannot wait for the run's limits: " + w.error().message;
    else
      watched_ = gate_->fd();
  }

  ~GatedLauncher() override {
    if (watched_ >= 0) inner_->unwatch(watched_);
  }

  // The gate's news is taken only while waiting (take()), so a launch
  // right after refusing() said nothing is never refused.
  Expected<std::uint64_t> launch(const agents::LaunchRequest& request) override {
    if (closed_) return fail(ErrorKind::refused, *closed_);
    std::uint64_t id = next_id_++;
    if (stopping_) {
      ready_.push_back(ended(id, request, "interrupted", "stopped before it started"));
      return id;
    }
    waiting_.push_back(Waiting{id, request});
    gate_->ask();
    return id;
  }

  std::optional<LaunchEvent> next() override { return take(false); }
  std::optional<LaunchEvent> poll() override { return take(true); }

  size_t outstanding() const override {
    return inner_->outstanding() + waiting_.size() + ready_.size();
  }
  int persona_runs() const override { return inner_->persona_runs(); }

  void stop_all() override {
    stopping_ = true;
    inner_->stop_all();
    while (!waiting_.empty()) {
      Waiting w = std::move(waiting_.front());
      waiting_.pop_front();
      ready_.push_back(ended(w.id, w.request, "interrupted", "stopped before it started"));
    }
  }

  Status watch(int fd) override { return inner_->watch(fd); }
  void unwatch(int fd) override { inner_->unwatch(fd); }
  void pause(std::chrono::system_clock::time_point until, const std::string& reason) override {
    inner_->pause(until, reason);
  }
  std::optional<std::string> refusing() const override { return closed_; }

 private:
  struct Waiting {
    std::uint64_t id = 0;
    agents::LaunchRequest request;
  };

  // A completion for a launch that never started.
  static LaunchEvent ended(std::uint64_t id, const agents::LaunchRequest& r,
                           std::string_view outcome, const std::string& why) {
    LaunchEvent ev;
    ev.kind = LaunchEvent::Kind::completed;
    ev.id = id;
    ev.persona = r.persona;
    ev.task = r.task;
    ev.outcome = std::string(outcome);
    ev.detail = why;
    ev.result = Json{{"status", "BLOCKED"},
                     {"summary", r.persona + ": not launched: " + why},
                     {"evidence", Json::array()},
                     {"blockers", Json::array({std::string(outcome)})}};
    return ev;
  }

  void close(const std::string& why) {
    if (closed_) return;
    closed_ = why;
    if (watched_ >= 0) {
      inner_->unwatch(watched_);
      watched_ = -1;
    }
    while (!waiting_.empty()) {
      Waiting w = std::move(waiting_.front());
      waiting_.pop_front();
      ready_.push_back(ended(w.id, w.request, kOutcomeWithdrawn, why));
    }
  }

  void start_oldest() {
    if (waiting_.empty() || closed_ || stopping_) {
      gate_->release();
      return;
    }
    Waiting w = std::move(waiting_.front());
    waiting_.pop_front();
    auto started = inner_->launch(w.request);
    if (!started) {
      gate_->release();
      ready_.push_back(ended(w.id, w.request, "launch_failed", started.error().message));
      return;
    }
    by_inner_[*started] = w.id;
  }

  // Takes the gate's news and acts on it.
  void absorb() {
    for (GateNews& n : gate_->take()) {
      switch (n.kind) {
        case GateNews::Kind::granted:
          start_oldest();
          break;
        case GateNews::Kind::paused:
          inner_->pause(n.until, n.reason);
          break;
        case GateNews::Kind::closed:
          close(n.reason);
          break;
      }
    }
  }

  std::optional<LaunchEvent> take(bool now_only) {
    while (true) {
      absorb();
      if (!ready_.empty()) {
        LaunchEvent ev = std::move(ready_.front());
        ready_.pop_front();
        return ev;
      }
      if (inner_->outstanding() == 0) {
        if (waiting_.empty()) return std::nullopt;
        if (watched_ < 0) {
          // Nothing in flight gives a slot back and nothing wakes us for
          // the gate: no slot can ever come.
          close("no persona slot can be granted: nothing in flight would give one back");
          continue;
        }
      }
      auto ev = now_only ? inner_->poll() : inner_->next();
      if (!ev) {
        if (now_only || waiting_.empty()) return std::nullopt;
        // The loop has nothing left to wait for, the gate included.
        close("no persona slot can be granted: the launcher has nothing left to wait for");
        continue;
      }
      switch (ev->kind) {
        case LaunchEvent::Kind::woken:
          continue;  // the gate's news: taken at the top
        case LaunchEvent::Kind::paused:
          gate_->report_limit(ev->until, ev->detail);
          continue;
        case LaunchEvent::Kind::interrupted:
          return ev;
        case LaunchEvent::Kind::completed: {
          auto it = by_inner_.find(ev->id);
          if (it == by_inner_.end()) return ev;
          ev->id = it->second;
          by_inner_.erase(it);
          gate_->finished(ev->cost_usd, ev->tokens);
          return ev;
        }
        default: {
          auto it = by_inner_.find(ev->id);
          if (it != by_inner_.end()) ev->id = it->second;
          return ev;
        }
      }
    }
  }

  std::unique_ptr<Launcher> inner_;
  std::unique_ptr<SlotGate> gate_;
  std::deque<Waiting> waiting_;
  std::deque<LaunchEvent> ready_;                    // completions of launches that never started
  std::map<std::uint64_t, std::uint64_t> by_inner_;  // inner's id -> ours
  std::optional<std::string> closed_;
  std::uint64_t next_id_ = 1;
  int watched_ = -1;
  bool stopping_ = false;
};

}  // namespace

std::unique_ptr<Launcher> gated_launcher(std::unique_ptr<Launcher> inner,
                                         std::unique_ptr<SlotGate> gate) {
  return std::make_unique<GatedLauncher>(std::move(inner), std::move(gate));
}

}  // namespace devgraph::bundle
