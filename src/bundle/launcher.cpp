#include "bundle/launcher.h"

#include <sys/epoll.h>

#include <map>

namespace devgraph::bundle {

Status Launcher::watch(int fd) {
  return fail(ErrorKind::internal,
              "this launcher cannot watch descriptor " + std::to_string(fd) + " (it has no loop)");
}

namespace {

class RuntimeLauncher final : public Launcher {
 public:
  RuntimeLauncher(std::unique_ptr<agents::PersonaRuntime> rt, Ticker ticker)
      : rt_(std::move(rt)), ticker_(std::move(ticker)) {}

  Expected<std::uint64_t> launch(const agents::LaunchRequest& request) override {
    return rt_->launch(request);
  }

  std::optional<LaunchEvent> next() override { return take(false); }
  std::optional<LaunchEvent> poll() override { return take(true); }

  size_t outstanding() const override { return rt_->outstanding(); }
  int persona_runs() const override { return rt_->persona_runs(); }
  void stop_all() override { rt_->stop_all(); }

  Status watch(int fd) override {
    if (watches_.count(fd)) return {};
    DG_TRY(WatchId id, rt_->watch_fd(fd, EPOLLIN));
    watches_[fd] = id;
    return {};
  }
  void unwatch(int fd) override {
    auto it = watches_.find(fd);
    if (it == watches_.end()) return;
    rt_->unwatch_fd(it->second);
    watches_.erase(it);
  }
  void pause(std::chrono::system_clock::time_point until, const std::string& reason) override {
    rt_->pause(until, reason);
  }

 private:
  std::optional<LaunchEvent> take(bool now_only) {
    using K = agents::RuntimeEvent::Kind;
    while (true) {
      rearm_tick();
      auto ev = now_only ? rt_->next_event(rt_->clock().steady()) : rt_->next_event();
      if (!ev) return std::nullopt;
      if (ev->kind == K::timer && tick_timer_ != 0 && ev->timer == tick_timer_) {
        tick_timer_ = 0;
        ticker_.fn();
        continue;
      }
      LaunchEvent out;
      out.id = ev->id;
      out.handle = ev->handle;
      out.persona = ev->persona;
      out.task = ev->task;
      out.attempt = ev->attempt;
      switch (ev->kind) {
        case K::launched:
          out.kind = LaunchEvent::Kind::launched;
          return out;
        case K::backoff:
          out.kind = LaunchEvent::Kind::backoff;
          out.delay_ms = ev->delay.count();
          out.detail = ev->detail;
          return out;
        case K::resuming:
          out.kind = LaunchEvent::Kind::resuming;
          out.detail = ev->detail;
          return out;
        case K::interrupted:
          out.kind = LaunchEvent::Kind::interrupted;
          out.signal = ev->signal;
          return out;
        case K::paused:
          out.kind = LaunchEvent::Kind::paused;
          out.until = ev->until;
          out.detail = ev->detail;
          return out;
        case K::fd_ready:
          out.kind = LaunchEvent::Kind::woken;
          out.fd = ev->fd;
          return out;
        case K::completed: {
          const agents::Completion& c = *ev->completion;
          out.kind = LaunchEvent::Kind::completed;
          out.handle = c.handle;
          out.persona = c.persona;
          out.task = c.task;
          out.result = c.result;
          out.outcome = std::string(agents::outcome_name(c.outcome));
          out.session_id = c.session_id;
          out.cost_usd = c.cost_usd;
          out.tokens = c.tokens;
          out.usage = c.token_usage;
          out.tool_calls = c.tool_calls;
          out.duration_ms = c.duration_ms;
          out.resumed = c.resumed;
          out.detail = c.error;
          return out;
        }
        default:
          continue;  // unpauses and timers are the runtime's business
      }
    }
  }

  // The tick timer runs only while launches are outstanding: with nothing
  // outstanding, next_event() must return at once, not wait for a tick.
  void rearm_tick() {
    if (!ticker_.fn) return;
    if (rt_->outstanding() == 0) {
      if (tick_timer_ != 0) rt_->cancel_timer(tick_timer_);
      tick_timer_ = 0;
    } else if (tick_timer_ == 0) {
      tick_timer_ = rt_->add_timer(rt_->clock().steady() + ticker_.every);
    }
  }

  std::unique_ptr<agents::PersonaRuntime> rt_;
  Ticker ticker_;
  TimerId tick_timer_ = 0;
  std::map<int, WatchId> watches_;  // fd -> its watch on the runtime's loop
};

}  // namespace

std::unique_ptr<Launcher> runtime_launcher(std::unique_ptr<agents::PersonaRuntime> runtime,
                                           Ticker ticker) {
  return std::make_unique<RuntimeLauncher>(std::move(runtime), std::move(ticker));
}

}  // namespace devgraph::bundle
