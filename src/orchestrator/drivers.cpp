#include "orchestrator/drivers.h"

#include <sys/epoll.h>

#include <set>

namespace devgraph::orchestrator {

Expected<WatchId> DriverPool::serve_events(int fd, std::uint32_t events,
                                           std::function<void(std::uint32_t)> on_ready) {
  (void)events;
  (void)on_ready;
  return fail(ErrorKind::internal,
              "this driver pool cannot watch descriptor " + std::to_string(fd));
}

Expected<WatchId> DriverPool::serve_fd(int fd, std::function<void()> on_ready) {
  return serve_events(fd, EPOLLIN, [f = std::move(on_ready)](std::uint32_t) { f(); });
}

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
    // Only served descriptors left: each one that is ready is served once
    // (a writable socket stays ready), and nothing is waited for.
    std::set<WatchId> swept;
    while (true) {
      const bool idle = by_id_.empty() && !timer_;
      auto ev = idle ? loop_.wait(loop_.clock().steady()) : loop_.wait();
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
      if (auto* f = std::get_if<FdReady>(&*ev)) {
        auto it = served_.find(f->id);
        if (it == served_.end()) continue;
        if (idle && !swept.insert(f->id).second) return std::nullopt;
        auto serve = it->second;  // a copy: it may unserve itself
        serve(f->events);
      }
    }
  }

  Status watch_stop_signals() override { return loop_.watch_stop_signals(); }

  Expected<WatchId> serve_events(int fd, std::uint32_t events,
                                 std::function<void(std::uint32_t)> on_ready) override {
    DG_TRY(WatchId id, loop_.watch_fd(fd, events));
    served_[id] = std::move(on_ready);
    return id;
  }

  void unserve_fd(WatchId id) override {
    if (served_.erase(id)) loop_.unwatch_fd(id);
  }

 private:
  ChildLoop loop_;
  std::map<ChildId, std::string> by_id_;
  std::map<WatchId, std::function<void(std::uint32_t)>> served_;
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
