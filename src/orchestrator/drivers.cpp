#include "orchestrator/drivers.h"

#include <set>

namespace devgraph::orchestrator {
namespace {

class LoopPool final : public DriverPool {
 public:
  explicit LoopPool(ChildLoop loop) : loop_(std::move(loop)) {}

  Status start(const DriverSpec& spec) override {
    if (running(spec.bundle))
      return fail(ErrorKind::internal, "bundle " + spec.bundle + " already has a driver");
    ChildSpec c;
    c.argv = spec.argv;
    c.cwd = spec.cwd;
    c.env = spec.env;
    // A bundle takes as long as its personas; each of them has its own
    // limit inside the driver.
    c.timeout = std::chrono::hours(24 * 7);
    c.kill_grace = std::chrono::seconds(30);
    c.max_output_bytes = 256 * 1024;
    DG_TRY(ChildId id, loop_.spawn(c));
    by_id_[id] = spec.bundle;
    return {};
  }

  void stop(const std::string& bundle) override {
    for (const auto& [id, b] : by_id_)
      if (b == bundle) loop_.terminate(id);
  }

  bool running(const std::string& bundle) const override {
    for (const auto& [id, b] : by_id_)
      if (b == bundle) return true;
    return false;
  }

  size_t live() const override { return by_id_.size(); }

  void wake_at(SteadyTime when) override {
    if (timer_ && when >= timer_at_) return;
    if (timer_) loop_.cancel_timer(*timer_);
    timer_ = loop_.add_timer(when);
    timer_at_ = when;
  }

  std::optional<DriverEvent> wait() override {
    while (true) {
      auto ev = loop_.wait();
      if (!ev) return std::nullopt;
      if (auto* exit = std::get_if<ChildExit>(&*ev)) {
        auto it = by_id_.find(exit->id);
        if (it == by_id_.end()) continue;
        DriverExit d{it->second, exit->exit_code, exit->term_signal, std::move(exit->out),
                     std::move(exit->err)};
        by_id_.erase(it);
        return d;
      }
      if (auto* t = std::get_if<TimerFired>(&*ev)) {
        if (timer_ && t->id == *timer_) {
          timer_.reset();
          return Wakeup{};
        }
        continue;
      }
      if (auto* s = std::get_if<StopRequested>(&*ev)) return *s;
    }
  }

  Status watch_stop_signals() override { return loop_.watch_stop_signals(); }

 private:
  ChildLoop loop_;
  std::map<ChildId, std::string> by_id_;
  std::optional<TimerId> timer_;
  SteadyTime timer_at_{};
};

}  // namespace

Expected<std::unique_ptr<DriverPool>> make_driver_pool(const std::string& record,
                                                       const Clock& clock) {
  DG_TRY(auto loop, ChildLoop::create(clock));
  loop.record_children_in(record);
  return std::unique_ptr<DriverPool>(new LoopPool(std::move(loop)));
}

}  // namespace devgraph::orchestrator
