// An event loop that supervises many long-lived child processes at once,
// plus timers and caller-owned file descriptors, without ever polling.
//
// Contract:
// - spawn() starts argv (never a shell) in its own process group, with
//   stdin from /dev/null, the exact environment given in ChildSpec::env
//   (the caller decides what a child may see), and stdout/stderr on
//   non-blocking pipes. Output is read as it arrives into buffers bounded
//   by max_output_bytes each; only the tail is kept, so a child that prints
//   gigabytes costs a bounded amount of memory.
// - Child exit is observed through a pidfd registered with epoll; timers
//   are a deadline heap whose earliest entry bounds the epoll_wait timeout.
//   Nothing sleeps and nothing wakes up periodically.
// - When a child's wall-clock timeout passes, its whole process group gets
//   SIGTERM, then SIGKILL after kill_grace. When the group leader exits,
//   whatever is left of its group is killed (a persona's stray background
//   jobs must not outlive it) before the leader is reaped.
// - wait() returns one event at a time, in the order they became ready.
//   Time comes from the Clock given at construction, so tests can drive
//   timers with a fake clock by calling wait() with a deadline of "now".
// - The loop owns every child it spawned: destroying it SIGKILLs the
//   groups of children still running and reaps them.
// - After watch_stop_signals(), SIGINT, SIGTERM and SIGHUP no longer end
//   this process: each one is a StopRequested event from wait() (which
//   wakes up for it), and nothing else happens. What to stop is the
//   caller's decision (terminate()). Children still start with those
//   signals unblocked and at their defaults. See proc/stop_signals.h.
#pragma once

#include <chrono>
#include <cstdint>
#include <deque>
#include <map>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "util/clock.h"
#include "util/expected.h"

namespace devgraph {

using SteadyTime = std::chrono::steady_clock::time_point;

struct ChildSpec {
  std::vector<std::string> argv;
  std::string cwd;               // empty: inherit
  std::vector<std::string> env;  // complete environment, "NAME=value" entries
  std::chrono::milliseconds timeout{std::chrono::minutes(30)};
  std::chrono::milliseconds kill_grace{std::chrono::seconds(5)};
  size_t max_output_bytes = 8 * 1024 * 1024;
  // A complete stdout line that contains one of these strings is reported
  // as an OutputLine event while the child runs (once per line; lines
  // longer than kMaxMarkedLine bytes are cut to their first bytes). Empty:
  // no lines are looked at.
  std::vector<std::string> stdout_line_marks;
};

inline constexpr size_t kMaxMarkedLine = 16 * 1024;

using ChildId = std::uint64_t;
using TimerId = std::uint64_t;
using WatchId = std::uint64_t;

struct ChildExit {
  ChildId id = 0;
  int pid = 0;
  int exit_code = -1;   // -1 when the child died by a signal
  int term_signal = 0;  // the signal, when it died by one
  bool timed_out = false;
  bool output_truncated = false;
  std::string out;  // the tail of stdout
  std::string err;  // the tail of stderr
  std::chrono::milliseconds elapsed{0};
};

struct TimerFired {
  TimerId id = 0;
};

struct FdReady {
  WatchId id = 0;
  int fd = -1;
  std::uint32_t events = 0;  // epoll event bits
};

// A stdout line of a running child carried one of its ChildSpec marks.
struct OutputLine {
  ChildId id = 0;
  std::string line;  // without the newline
};

// A stop signal arrived (watch_stop_signals()).
struct StopRequested {
  int signal = 0;  // SIGINT, SIGTERM or SIGHUP
};

using LoopEvent = std::variant<ChildExit, TimerFired, FdReady, StopRequested, OutputLine>;

class ChildLoop {
 public:
  static Expected<ChildLoop> create(const Clock& clock = system_clock());
  ChildLoop(ChildLoop&&) noexcept;
  ChildLoop& operator=(ChildLoop&&) noexcept;
  ChildLoop(const ChildLoop&) = delete;
  ChildLoop& operator=(const ChildLoop&) = delete;
  ~ChildLoop();

  // Fails (one-line message naming argv[0] or cwd) when the child cannot
  // be started; nothing is left running then.
  Expected<ChildId> spawn(const ChildSpec& spec);
  // Starts the TERM-then-KILL sequence for a running child now. Its exit
  // is still reported by wait(), with timed_out false (or true, when its
  // timeout had already begun to end it).
  void terminate(ChildId id);
  // The same with its own grace before the KILL. For a child already on
  // its way out, a grace that ends sooner brings the KILL forward; one
  // that ends later changes nothing. A zero grace KILLs at once.
  void terminate(ChildId id, std::chrono::milliseconds grace);

  // Opt-in: from now on the stop signals are StopRequested events, for as
  // long as the loop lives. Calling it again changes nothing. Watching
  // alone does not keep wait() from returning nullopt when nothing else is
  // left; a signal already pending is still reported then.
  Status watch_stop_signals();

  TimerId add_timer(SteadyTime when);
  void cancel_timer(TimerId id);

  // Reports readiness of a descriptor the caller owns (level-triggered;
  // the caller reads it or unwatches it).
  Expected<WatchId> watch_fd(int fd, std::uint32_t events);
  void unwatch_fd(WatchId id);

  // The next event, blocking until one is ready. With `until`, returns
  // nullopt when that time passes first (`until` <= now: never blocks).
  // Without `until`, returns nullopt only when there is nothing left to
  // wait for (no children, timers or watched descriptors).
  std::optional<LoopEvent> wait(std::optional<SteadyTime> until = std::nullopt);

  // Keeps `path` listing the live children (pid and start time), so a
  // successor can end them if this process is killed: proc/leftovers.h.
  void record_children_in(const std::string& path);

  size_t running() const;
  size_t timers() const;
  const Clock& clock() const;

 private:
  struct Impl;
  explicit ChildLoop(Impl* impl);
  Impl* impl_ = nullptr;
};

}  // namespace devgraph
