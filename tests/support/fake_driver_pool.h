// A DriverPool (orchestrator/drivers.h) without processes, for in-process
// tests of the orchestrator. start() records the driver's spec and the
// bundle "runs"; the test scripts what each run of each bundle answers (a
// RESULT_JSON line, an exit code without a result, a death by a signal),
// and wait() hands the answers back one at a time in a fixed order.
//
// Contract:
// - start() refuses a second start of a running bundle, as the real pool
//   does; otherwise it records the spec (`started`) and asks the script
//   for this launch's Answer: script(bundle, launch), launch counting that
//   bundle's starts in this pool from 1. Without a script, or when the
//   script answers nullopt, the run answers done().
// - wait() returns, in this order of precedence: a stop signal queued by
//   raise() (as StopRequested); the exit of a driver stop() was asked of,
//   in the order asked; the exit of the running driver started first; and,
//   once no driver runs, the wake-up armed by wake_at(), at once (nothing
//   waits for the time named: drivers finish at once in the fake's time).
//   Nothing left: nullopt. `on_wait` runs at the start of every
//   wait() with its number (from 1).
// - An Answer's `during` runs just before its exit is handed back, while
//   the bundle still counts as running: where a test changes the world "while
//   the driver runs" (files, closes or edits an issue, raises a stop).
// - A done answer leaves the run as a real driver's delivery does before it
//   prints its result: the bundle's cursor walks the bundle lane along the
//   graph's routes to the lane's completion node and completes there
//   (BRANCH_READY, or PR_CREATED with the result's "pr" when state.delivery
//   is github), with the result's head on it. Any other answer leaves the
//   cursors where they stood.
// - A stopped driver exits as a real one does on SIGTERM: 128 + 15 with a
//   HANDOFF result, its cursors untouched, its script's answer unused
//   (unless the answer says it had finished before the stop: a driver
//   that exits as the stop is sent).
// - live() and running() count a driver from start() to the wait() that
//   hands back its exit; `max_live` is the most there ever were at once.
// - serve_events() and serve_fd() keep the function with its descriptor
//   and events (`served`); nothing is ever ready by itself: ready(fd, bits)
//   calls the functions serving `fd` for any of those bits, with the bits
//   they asked for, as the real pool's wait() would (EPOLLHUP and EPOLLERR
//   always count, as epoll's do). A served descriptor is
//   never an event and never keeps wait() from answering nullopt.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "graph/graph.h"
#include "orchestrator/drivers.h"
#include "store/run_store.h"
#include "util/json.h"

namespace devgraph::test {

class FakeDriverPool final : public orchestrator::DriverPool {
 public:
  struct Answer {
    std::string out;  // the tail of stdout (where a RESULT_JSON line goes)
    std::string err;  // the tail of stderr
    int exit_code = 0;
    int term_signal = 0;
    bool delivers = false;  // moves the cursor to the lane's completion (see above)
    // The driver had finished when stop() was asked of it: its exit is
    // still this answer, not the stopped one.
    bool finished_before_stop = false;
    std::function<void()> during;

    // DONE with `head`: delivered.
    static Answer done(const std::string& head = "c0ffee00c0ffee00c0ffee00c0ffee00c0ffee00");
    // A RESULT_JSON line with this object, and the exit code; a DONE or
    // DONE_WITH_CONCERNS status delivers.
    static Answer result(const Json& result, int exit_code);
    // Death by `signal`, no result.
    static Answer killed(int signal);
    // Exit `code` without a result, `err` on stderr.
    static Answer exited(int code, const std::string& err = "");
  };
  // (bundle, launch from 1) -> the answer; nullopt: done().
  using Script = std::function<std::optional<Answer>(const std::string& bundle, int launch)>;

  FakeDriverPool(RunStore& store, const Graph& graph, Script script = nullptr);

  Status start(const orchestrator::DriverSpec& spec) override;
  void stop(const std::string& bundle) override;
  bool running(const std::string& bundle) const override;
  size_t live() const override { return running_.size(); }
  void wake_at(SteadyTime when) override;
  std::optional<orchestrator::DriverEvent> wait() override;
  Status watch_stop_signals() override;
  Expected<WatchId> serve_events(int fd, std::uint32_t events,
                                 std::function<void(std::uint32_t)> on_ready) override;
  void unserve_fd(WatchId id) override;

  // Test controls.
  Script script;
  // The next wait() returns StopRequested{signal} (queued in order).
  void raise(int signal) { signals_.push_back(signal); }
  std::function<void(int wait_call)> on_wait;
  // Calls every function serving `fd` for one of `bits` (see above); how
  // many were called.
  int ready(int fd, std::uint32_t bits);

  // Records.
  std::vector<orchestrator::DriverSpec> started;  // every start, in order
  std::vector<std::string> stopped;               // stop() of a running driver, in order
  // Every exit handed back, in order.
  std::vector<orchestrator::DriverExit> exits;
  // One line per thing that happened: "start b1", "stop b1", "exit b1",
  // "wake", "signal 15".
  std::vector<std::string> log;
  std::vector<SteadyTime> wakes;  // every wake_at() asked
  size_t max_live = 0;
  int waits = 0;
  bool watching = false;  // watch_stop_signals() was called
  struct Served {
    int fd = -1;
    std::uint32_t events = 0;
    std::function<void(std::uint32_t)> on_ready;
  };
  std::map<WatchId, Served> served;  // what is served now
  // How many times `bundle` was started.
  int launches(const std::string& bundle) const;

 private:
  struct Live {
    std::string bundle;
    Answer answer;
    bool stopping = false;
  };
  orchestrator::DriverExit finish(Live& d);
  void deliver(const std::string& bundle, const Json& result);

  RunStore& store_;
  const Graph& graph_;
  std::vector<Live> running_;           // in start order
  std::deque<std::string> stop_order_;  // bundles asked to stop, in order
  std::deque<int> signals_;
  std::optional<SteadyTime> timer_;
  WatchId next_watch_ = 1;
};

}  // namespace devgraph::test
