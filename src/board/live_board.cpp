#include "board/live_board.h"

#include <signal.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>

#include "board/browser.h"
#include "board/page.h"

namespace devgraph::board {

Expected<std::unique_ptr<LiveBoard>> LiveBoard::open(const std::string& run_dir,
                                                     ServeOptions options,
                                                     std::optional<Listener> listener) {
  DG_TRY(ChildLoop loop, ChildLoop::create());
  std::unique_ptr<LiveBoard> b(new LiveBoard(std::move(loop), run_dir));
  b->feed_.refresh();
  DG_TRY(int fd, b->feed_.watch());
  if (options.page.empty()) options.page = board_page();
  if (listener) {
    DG_TRY(b->server_,
           BoardServer::open(b->host_, b->feed_, std::move(options), std::move(*listener)));
  } else {
    DG_TRY(b->server_, BoardServer::open(b->host_, b->feed_, std::move(options)));
  }
  b->url_ = b->server_->url();
  LiveBoard* self = b.get();
  DG_TRY(b->feed_watch_, b->host_.watch(fd, EPOLLIN, [self](std::uint32_t) { self->refresh(); }));
  return b;
}

LiveBoard::~LiveBoard() {
  if (thread_.joinable()) {
    std::uint64_t one = 1;
    // A failed write leaves the thread waiting: it cannot fail on an
    // eventfd far from its limit.
    while (::write(wake_fd_, &one, sizeof one) < 0 && errno == EINTR) {
    }
    thread_.join();
  }
  if (wake_fd_ >= 0) ::close(wake_fd_);
  server_.reset();
  if (feed_watch_ != 0) host_.unwatch(feed_watch_);
}

void LiveBoard::refresh() {
  // Emptied first: a change after this read wakes the loop again.
  feed_.drain();
  if (feed_.refresh()) server_->publish();
}

Status LiveBoard::open_browser() {
  return open_in_browser(host_, url_);
}

Status LiveBoard::serve_in_background() {
  if (thread_.joinable()) return {};
  wake_fd_ = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (wake_fd_ < 0) return fail(std::string("board: eventfd: ") + std::strerror(errno));
  DG_TRY(WatchId wake, loop_.watch_fd(wake_fd_, EPOLLIN));
  // The thread inherits this mask: it is blocked there before the thread
  // can run at all, and put back here once it exists.
  sigset_t stops, before;
  sigemptyset(&stops);
  for (int s : {SIGINT, SIGTERM, SIGHUP}) sigaddset(&stops, s);
  if (int rc = ::pthread_sigmask(SIG_BLOCK, &stops, &before); rc != 0)
    return fail(std::string("board: pthread_sigmask: ") + std::strerror(rc));
  try {
    thread_ = std::thread([this, wake] {
      while (auto e = loop_.wait()) {
        if (const auto* r = std::get_if<FdReady>(&*e); r && r->id == wake) return;
        host_.dispatch(*e);
      }
    });
  } catch (const std::system_error& e) {
    ::pthread_sigmask(SIG_SETMASK, &before, nullptr);
    return fail(std::string("board: cannot start its thread: ") + e.what());
  }
  ::pthread_sigmask(SIG_SETMASK, &before, nullptr);
  return {};
}

}  // namespace devgraph::board
