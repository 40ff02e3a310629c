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

#include "agents/backend.h"
#include "agents/runtime.h"
#include "util/expected.h"
#include "util/json.h"

namespace devgraph::bundle {

struct LaunchEvent {
  // resuming: a clean exit without a result; the one resume by session id
  // is under way (detail: why the output was not a result).
  // interrupted: a stop signal arrived (`signal`); no launch is named and
  // nothing has been stopped yet: that is stop_all().
  enum class Kind { launched, backoff, resuming, completed, interrupted };
  Kind kind = Kind::launched;
  std::uint64_t id = 0;
  std::string handle;
  std::string persona;
  std::optional<std::string> task;
  int attempt = 1;
  long long delay_ms = 0;  // backoff
  int signal = 0;          // interrupted: SIGINT, SIGTERM or SIGHUP
  std::string detail;      // backoff: the error
  // completed:
  Json result;          // always an object with a status
  std::string outcome;  // "result", "malformed_result", "timeout", ...
  std::string session_id;
  double cost_usd = 0.0;
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
  // must pass the call on.
  virtual void stop_all() {}
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
