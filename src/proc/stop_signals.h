// The stop signals (SIGINT, SIGTERM, SIGHUP) as something to read, not
// something that kills: how Ctrl-C, a closed terminal or a supervisor's
// TERM reach devgraph's event loops as ordinary results.
//
// Contract:
// - While at least one StopSignals is alive, the stop signals are blocked
//   in the calling thread and arrive on one close-on-exec signalfd that
//   every watcher shares (ChildLoop::watch_stop_signals,
//   CommandSpec::stop_on_signal). No signal handler runs, ever.
// - A stop signal this process was started ignoring (HUP under nohup)
//   stays ignored: it is not watched.
// - Every watcher hears of every stop signal that arrives while it lives,
//   once, whichever watcher read it from the descriptor: a command that
//   read a Ctrl-C does not hide it from the event loop that watches too.
//   A signal that arrived before a watcher began, and that another watcher
//   has already read, is not news to it.
// - When the last watcher goes, the mask is put back as it was found. A
//   stop signal that arrived since anyone last looked is then delivered
//   as if nobody had watched (by default, it ends the process).
// - Children see none of this: spawn (proc/spawn.h) starts them with an
//   empty mask and default dispositions for these signals.
// - Blocking is per thread and devgraph runs one: watch before any other
//   thread exists, or block the signals there too.
#pragma once

#include <cstdint>
#include <string>

#include "util/expected.h"

namespace devgraph {

class StopSignals {
 public:
  // Begins watching (the first watcher blocks the signals and opens the
  // descriptor). Fails, changing nothing, when the descriptor cannot be
  // made.
  static Expected<StopSignals> watch();

  StopSignals(StopSignals&& other) noexcept;
  StopSignals& operator=(StopSignals&& other) noexcept;
  StopSignals(const StopSignals&) = delete;
  StopSignals& operator=(const StopSignals&) = delete;
  ~StopSignals();

  // Readable while a stop signal waits to be read; poll or epoll it.
  int fd() const;
  // Reads whatever stop signals are pending, then returns the latest one
  // this watcher has not been told of yet, or 0 when there is none.
  int take();
  // Whether another watcher has read a stop signal this one has not been
  // told of yet. Costs no system call.
  bool has_unseen() const;

 private:
  StopSignals() = default;
  void release();
  bool active_ = false;
  std::uint64_t seen_ = 0;  // stop signals received when this one last took
};

// "SIGINT", "SIGTERM", "SIGHUP"; "signal N" for any other number.
std::string stop_signal_name(int signal);

}  // namespace devgraph
