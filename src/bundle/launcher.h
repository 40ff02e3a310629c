// The driver's view of the persona runtime: launch a persona, wait for the
// next thing that happens to any launch. A narrow interface of the bundle
// module's own, so the driver's state machine is tested with a scripted
// launcher and the production adapter over agents::PersonaRuntime stays a
// few lines.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "agents/backend.h"
#include "agents/runtime.h"
#include "util/expected.h"
#include "util/json.h"
#include "util/token_usage.h"

namespace devgraph::bundle {

// The outcome of a launch the launcher gave up before it started (a
// SlotGate closed while it waited for a slot, bundle/slot_gate.h): no child
// ran and nothing was spent; a resumed driver launches that visit again.
inline constexpr std::string_view kOutcomeWithdrawn = "withdrawn";

struct LaunchEvent {
  // resuming: a clean exit without a result; the one resume by session id
  // is under way (detail: why the output was not a result).
  // interrupted: a stop signal arrived (`signal`); no launch is named and
  // nothing has been stopped yet: that is stop_all().
  // paused: a provider limit paused new launches until `until` (detail:
  // the limit's message); the launch is queued again, nothing completed.
  // woken: a descriptor given to watch() is readable (`fd`).
  enum class Kind { launched, backoff, resuming, completed, interrupted, paused, woken };
  Kind kind = Kind::launched;
  std::uint64_t id = 0;
  std::string handle;
  std::string persona;
  std::optional<std::string> task;
  int attempt = 1;
  long long delay_ms = 0;                         // backoff
  int signal = 0;                                 // interrupted: SIGINT, SIGTERM or SIGHUP
  int fd = -1;                                    // woken
  std::chrono::system_clock::time_point until{};  // paused
  std::string detail;                             // backoff: the error; paused: the limit
  // completed:
  Json result;          // always an object with a status
  std::string outcome;  // "result", "malformed_result", "timeout", ...
  std::string session_id;
  double cost_usd = 0.0;
  std::optional<long long> tokens;  // where the CLI reported them: usage.total()
  TokenUsage usage;                 // the same, part by part (util/token_usage.h)
  std::optional<int> tool_calls;    // likewise
  long long duration_ms = 0;
  bool resumed = false;
};

class Launcher {
 public:
  virtual ~Launcher() = default;
  virtual Expected<std::uint64_t> launch(const agents::LaunchRequest& request) = 0;
  // Blocks until the next event; nullopt when nothing is outstanding.
  virtual std::optional<LaunchEvent> next() = 0;
  // The next event if one has already happened; never waits.
  virtual std::optional<LaunchEvent> poll() = 0;
  virtual size_t outstanding() const = 0;
  virtual int persona_runs() const = 0;
  // Stops every launch: running personas get TERM, then KILL after the
  // runtime's kill grace; waiting ones end at once; nothing new starts.
  // Each launch still ends in one `completed` event from next(), with
  // outcome "interrupted" unless its exit already said otherwise. Returns
  // at once. This default stops nothing: a launcher that wraps another
  // must pass the call on (as it must the four calls below).
  virtual void stop_all() {}
  // Wakes next() and poll() for `fd` too: while it is watched and readable
  // (level-triggered: until it is read or unwatched) they return `woken`.
  // This default has no loop to watch on and fails.
  virtual Status watch(int fd);
  virtual void unwatch(int fd) { (void)fd; }
  // Pauses new launches until `until`, for a provider limit met elsewhere
  // in the run (agents::PersonaRuntime::pause). This default does nothing.
  virtual void pause(std::chrono::system_clock::time_point until, const std::string& reason) {
    (void)until;
    (void)reason;
  }
  // Why no new launch may start (the run's limits said so: see
  // bundle/slot_gate.h); nullopt while launches may start.
  virtual std::optional<std::string> refusing() const { return std::nullopt; }
};

// A callback run every `every` while launches are outstanding, from a timer
// on the runtime's event loop (the live view's clock): no thread, no sleep.
struct Ticker {
  std::chrono::milliseconds every{250};
  std::function<void()> fn;
};

// Adapter over the real persona runtime; with a ticker, next() also runs
// the ticker's callback while it waits. next() and poll() report a stop
// signal as `interrupted` when the runtime watches them
// (RuntimeConfig::watch_stop_signals).
std::unique_ptr<Launcher> runtime_launcher(std::unique_ptr<agents::PersonaRuntime> runtime,
                                           Ticker ticker = {});

}  // namespace devgraph::bundle
