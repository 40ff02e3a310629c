// One run's live board on an event loop of its own: what `devgraph board
// serve` waits on in its main thread, and what `devgraph clean --board`
// serves on a thread beside the clean lane's git commands (which wait on
// git, not on a loop a board could share; `devgraph run --board` serves on
// the run's own loop instead, orchestrator/run_board.h).
//
// Contract:
// - open() makes the loop, a RunFeed of `run_dir` (read-only, never its
//   lock; board/run_feed.h) with its inotify descriptor watched, and a
//   BoardServer on `listener` (bound ahead, so a port in use was refused
//   before anything was done) or, without one, on options' bind and port.
//   Whatever the run appends or replaces is published to every open page.
//   A failure is one line and leaves nothing open.
// - In the caller's thread: dispatch() serves one event of loop() and
//   says whether it was the board's; the caller decides what else the
//   loop watches (stop signals, for `board serve`).
// - serve_in_background() serves on a thread of its own from then on. The
//   thread starts with the stop signals blocked (proc/stop_signals.h: a
//   Ctrl-C is always the caller's to read, never this thread's to die
//   of), and nothing but url() and the destructor may be used meanwhile.
// - Destroying it stops serving (the thread is woken and joined first):
//   its socket, its connections and the feed's descriptor are closed.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <thread>

#include "board/run_feed.h"
#include "board/server.h"
#include "proc/supervisor.h"
#include "util/expected.h"

namespace devgraph::board {

class LiveBoard {
 public:
  static Expected<std::unique_ptr<LiveBoard>> open(const std::string& run_dir, ServeOptions options,
                                                   std::optional<Listener> listener);
  ~LiveBoard();
  LiveBoard(const LiveBoard&) = delete;
  LiveBoard& operator=(const LiveBoard&) = delete;

  const std::string& url() const { return url_; }
  const std::string& run_dir() const { return feed_.run_dir(); }
  ChildLoop& loop() { return loop_; }
  bool dispatch(const LoopEvent& event) { return host_.dispatch(event); }
  // `--open`: board/browser.h, reaped on this loop.
  Status open_browser();

  Status serve_in_background();

 private:
  LiveBoard(ChildLoop loop, const std::string& run_dir)
      : loop_(std::move(loop)), host_(loop_), feed_(run_dir) {}
  void refresh();

  // Destroyed from the bottom up, after the thread is joined: the server
  // while the host still watches its descriptors, then the feed's watch
  // (unwatched by the destructor), the host and the loop.
  ChildLoop loop_;
  LoopHost host_;
  RunFeed feed_;
  std::unique_ptr<BoardServer> server_;
  std::string url_;
  HostWatch feed_watch_ = 0;
  int wake_fd_ = -1;  // eventfd: the destructor's word to the thread
  std::thread thread_;
};

}  // namespace devgraph::board
