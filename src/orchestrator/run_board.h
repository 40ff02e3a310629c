// The live board of the run `devgraph run --board` drives, served on the
// run's own event loop (the driver pool's) for as long as the run runs.
//
// Contract:
// - PoolHost is a board::FdHost over a DriverPool: a watch is
//   DriverPool::serve_events(), so the board's descriptors are served
//   inside the pool's wait(), are never events of the run and never keep
//   it waiting (drivers.h). Destroying it unserves whatever it still
//   watches.
// - RunBoard::open() serves the board of `run_dir` on a socket bound ahead
//   (board::Listener): a RunFeed of the directory, its inotify descriptor
//   served on the same pool, and whatever the run appends or replaces
//   published to every open stream. A pure view: it reads the run's files
//   and never writes or locks them, and a page that stops reading is
//   dropped by the server, never waited for.
// - open_browser() is board/browser.h's, on the same loop.
// - Destroying a RunBoard stops serving: its socket, its connections and
//   the feed's descriptor are closed and unserved.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <set>
#include <string>

#include "board/run_feed.h"
#include "board/server.h"
#include "orchestrator/drivers.h"
#include "util/expected.h"

namespace devgraph::orchestrator {

class PoolHost final : public board::FdHost {
 public:
  explicit PoolHost(DriverPool& pool) : pool_(pool) {}
  ~PoolHost() override;
  PoolHost(const PoolHost&) = delete;
  PoolHost& operator=(const PoolHost&) = delete;

  Expected<board::HostWatch> watch(int fd, std::uint32_t events,
                                   std::function<void(std::uint32_t)> on_ready) override;
  void unwatch(board::HostWatch id) override;
  size_t watching() const { return live_.size(); }

 private:
  DriverPool& pool_;
  std::set<board::HostWatch> live_;
};

class RunBoard {
 public:
  static Expected<std::unique_ptr<RunBoard>> open(DriverPool& pool, const std::string& run_dir,
                                                  board::Listener listener);
  ~RunBoard() = default;
  RunBoard(const RunBoard&) = delete;
  RunBoard& operator=(const RunBoard&) = delete;

  std::string url() const { return server_->url(); }
  Status open_browser();
  const board::BoardServer& server() const { return *server_; }

 private:
  RunBoard(DriverPool& pool, const std::string& run_dir) : feed_(run_dir), host_(pool) {}
  void refresh();

  // Destroyed from the bottom up: the server's connections while the host
  // serves them, then the host unserves the feed's descriptor before the
  // feed closes it.
  board::RunFeed feed_;
  PoolHost host_;
  std::unique_ptr<board::BoardServer> server_;
};

}  // namespace devgraph::orchestrator
