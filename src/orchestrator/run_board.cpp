#include "orchestrator/run_board.h"

#include <sys/epoll.h>

#include "board/browser.h"
#include "board/page.h"

namespace devgraph::orchestrator {

PoolHost::~PoolHost() {
  for (board::HostWatch id : live_) pool_.unserve_fd(id);
}

Expected<board::HostWatch> PoolHost::watch(int fd, std::uint32_t events,
                                           std::function<void(std::uint32_t)> on_ready) {
  DG_TRY(WatchId id, pool_.serve_events(fd, events, std::move(on_ready)));
  live_.insert(id);
  return id;
}

void PoolHost::unwatch(board::HostWatch id) {
  if (live_.erase(id)) pool_.unserve_fd(id);
}

Expected<std::unique_ptr<RunBoard>> RunBoard::open(DriverPool& pool, const std::string& run_dir,
                                                   board::Listener listener) {
  std::unique_ptr<RunBoard> b(new RunBoard(pool, run_dir));
  b->feed_.refresh();
  DG_TRY(int fd, b->feed_.watch());
  board::ServeOptions options;
  options.page = board::board_page();
  DG_TRY(b->server_,
         board::BoardServer::open(b->host_, b->feed_, std::move(options), std::move(listener)));
  RunBoard* self = b.get();
  DG_TRY(auto watched, b->host_.watch(fd, EPOLLIN, [self](std::uint32_t) { self->refresh(); }));
  (void)watched;  // unserved with the host
  return b;
}

void RunBoard::refresh() {
  // Emptied first: a change after this read wakes the loop again.
  feed_.drain();
  if (feed_.refresh()) server_->publish();
}

Status RunBoard::open_browser() {
  return board::open_in_browser(host_, url());
}

}  // namespace devgraph::orchestrator
