// The bundle drivers of a run: one `devgraph run-bundle` child per bundle
// in flight, supervised on the orchestrator's one event loop.
//
// Contract:
// - start() spawns the driver's argv (never a shell) in its own process
//   group with the environment given; one driver per bundle at a time (a
//   second start of a running bundle is refused).
// - wait() returns the next event: a driver's exit with the tail of its
//   stdout (where its RESULT_JSON line is) and stderr, a timer, or a stop
//   signal (SIGINT, SIGTERM, SIGHUP once watch_stop_signals() was called).
//   Nothing polls: ChildLoop (proc/supervisor.h) waits on pidfds.
// - stop() asks one driver to stop (SIGTERM to its group, SIGKILL after
//   the grace); its exit still comes through wait().
// - The live drivers are recorded in a file (proc/leftovers.h), so a
//   successor of a killed orchestrator ends them before it starts any.
// - serve_events() has wait() call a function whenever a descriptor is
//   ready for `events` (epoll bits, level-triggered), with the bits that
//   are, and go on waiting: such a descriptor is never an event of its
//   own. serve_fd() is the same for readability (the run's limits broker
//   serves its sockets this way, orchestrator/limits.h; the run board its
//   connections, orchestrator/run_board.h). The function may serve and
//   unserve descriptors, its own included. A pool without a loop refuses.
// - A served descriptor never keeps wait() waiting: with no driver running
//   and no wake-up armed, wait() serves what is ready at that moment and
//   returns nullopt (a stop signal already pending is still returned).
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "proc/supervisor.h"
#include "util/expected.h"

namespace devgraph::orchestrator {

struct DriverExit {
  std::string bundle;
  int exit_code = -1;   // -1 when it died by a signal
  int term_signal = 0;  // that signal
  std::string out;      // tail of stdout
  std::string err;      // tail of stderr
};

struct DriverSpec {
  std::string bundle;
  std::vector<std::string> argv;
  std::string cwd;
  std::vector<std::string> env;  // complete environment
};

struct Wakeup {};  // a timer set with wake_at() fired
using DriverEvent = std::variant<DriverExit, Wakeup, StopRequested>;

class DriverPool {
 public:
  virtual ~DriverPool() = default;
  virtual Status start(const DriverSpec& spec) = 0;
  virtual void stop(const std::string& bundle) = 0;
  virtual bool running(const std::string& bundle) const = 0;
  virtual size_t live() const = 0;
  // One wake-up at `when` (an earlier one replaces a later one).
  virtual void wake_at(SteadyTime when) = 0;
  // The next event; nullopt when nothing is left to wait for.
  virtual std::optional<DriverEvent> wait() = 0;
  virtual Status watch_stop_signals() = 0;
  virtual Expected<WatchId> serve_events(int fd, std::uint32_t events,
                                         std::function<void(std::uint32_t)> on_ready);
  Expected<WatchId> serve_fd(int fd, std::function<void()> on_ready);
  virtual void unserve_fd(WatchId id) { (void)id; }
};

// The real pool over a ChildLoop; `record` is the leftovers file.
Expected<std::unique_ptr<DriverPool>> make_driver_pool(const std::string& record,
                                                       const Clock& clock = system_clock());

}  // namespace devgraph::orchestrator
