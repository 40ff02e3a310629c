// The run board's server: one listening TCP socket, the page, the run's
// data and its event stream, on an event loop it shares (devgraph run's,
// or the ChildLoop of `devgraph board serve`). A pure view: it reads what
// its feed gives and never writes into a run.
//
// Contract:
// - open() binds `bind`:`port` (port 0: one the system picks; port() says
//   which). The default bind is 127.0.0.1; an address that is not a
//   numeric IPv4 address, or a port in use, is an error in one line and
//   nothing is left open. A Listener binds the same way ahead of the
//   server, which then takes its socket over (`devgraph run --board` binds
//   before the run does anything, so a port in use stops it first).
// - Routes, matched as fixed strings (no request path ever reaches the
//   file system): GET / (the page), GET /data.json (the feed's snapshot),
//   GET /events (Server-Sent Events). Anything else is 404; a method other
//   than GET or HEAD is 405; a bad request 400; each closes the connection
//   once answered.
// - /events starts after the Last-Event-ID the page sends (a reconnect
//   catches up on everything it missed, from the feed), else after the
//   newest event (a new page has the snapshot). publish() sends every open
//   stream the events it has not had yet, in order, each once.
// - A connection that sends more than a request's worth of headers, or
//   whose unsent output passes kMaxPending (a page that stopped reading),
//   is closed; its page reconnects and catches up. At most kMaxClients
//   connections are open; more are closed at once.
// - Nothing blocks: sockets are non-blocking, and output waits for the
//   socket to be writable. An answer's body is the page's or the feed's
//   one text, shared by every connection sending it, never copied.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "proc/supervisor.h"
#include "util/expected.h"
#include "util/json.h"

namespace devgraph::board {

using HostWatch = std::uint64_t;

// Where the server's descriptors are watched: `on_ready` runs whenever one
// is ready for `events` (epoll bits, level-triggered), until unwatched.
class FdHost {
 public:
  virtual ~FdHost() = default;
  virtual Expected<HostWatch> watch(int fd, std::uint32_t events,
                                    std::function<void(std::uint32_t)> on_ready) = 0;
  virtual void unwatch(HostWatch id) = 0;
};

// An FdHost on a ChildLoop (`devgraph board serve`): the caller waits on
// the loop and hands each event to dispatch(), which runs the watcher of a
// ready descriptor and says whether the event was one of its.
class LoopHost final : public FdHost {
 public:
  explicit LoopHost(ChildLoop& loop) : loop_(loop) {}
  Expected<HostWatch> watch(int fd, std::uint32_t events,
                            std::function<void(std::uint32_t)> on_ready) override;
  void unwatch(HostWatch id) override;
  bool dispatch(const LoopEvent& event);

 private:
  ChildLoop& loop_;
  std::map<HostWatch, std::function<void(std::uint32_t)>> watchers_;
};

// What the board shows.
class BoardFeed {
 public:
  virtual ~BoardFeed() = default;
  // /data.json: the run as the page draws it, `event_seq` included.
  virtual Json snapshot() = 0;
  // snapshot() as the JSON text /data.json answers, shared by every
  // connection sending it (a feed may keep it until its run changes).
  virtual std::shared_ptr<const std::string> snapshot_text() {
    return std::make_shared<const std::string>(dump_py(snapshot()) + "\n");
  }
  // The events whose seq is above `after`, oldest first, as (seq, the
  // event's JSON text).
  virtual std::vector<std::pair<std::uint64_t, std::string>> events_after(std::uint64_t after) = 0;
  // The newest event's seq (0 before the first).
  virtual std::uint64_t newest() = 0;
};

struct ServeOptions {
  std::string bind = "127.0.0.1";
  int port = 0;
  std::string page;  // the HTML served at /
};

// A bound, listening, non-blocking socket that no server serves yet; it
// closes its socket unless a server took it.
class Listener {
 public:
  // Errors as BoardServer::open's: usage for an address or port that is
  // none, refused for one that cannot be had.
  static Expected<Listener> open(const std::string& bind, int port);
  Listener() = default;
  Listener(Listener&& other) noexcept;
  Listener& operator=(Listener&& other) noexcept;
  Listener(const Listener&) = delete;
  Listener& operator=(const Listener&) = delete;
  ~Listener();

  bool is_open() const { return fd_ >= 0; }
  int port() const { return port_; }
  const std::string& bind() const { return bind_; }

 private:
  friend class BoardServer;
  int fd_ = -1;
  int port_ = 0;
  std::string bind_;
};

inline constexpr size_t kMaxClients = 64;
inline constexpr size_t kMaxPending = 8u << 20;

class BoardServer {
 public:
  static Expected<std::unique_ptr<BoardServer>> open(FdHost& host, BoardFeed& feed,
                                                     ServeOptions options);
  // The same on a socket bound ahead (its address and port, not options');
  // the server takes it over, also when it fails.
  static Expected<std::unique_ptr<BoardServer>> open(FdHost& host, BoardFeed& feed,
                                                     ServeOptions options, Listener listener);
  ~BoardServer();
  BoardServer(const BoardServer&) = delete;
  BoardServer& operator=(const BoardServer&) = delete;

  int port() const { return port_; }
  std::string url() const;
  size_t connections() const { return clients_.size(); }
  size_t streams() const;

  // Sends every open stream the events it has not had yet.
  void publish();

 private:
  struct Client {
    int fd = -1;
    HostWatch watch = 0;
    std::string in;
    // What waits to be sent: `out` from `out_at`, then `body` from
    // `body_at`; a body is shared with every connection sending it.
    std::string out;
    size_t out_at = 0;
    std::shared_ptr<const std::string> body;
    size_t body_at = 0;
    bool streaming = false, closing = false, want_write = false;
    std::uint64_t sent = 0;  // the last event id this stream has had
  };

  BoardServer(FdHost& host, BoardFeed& feed, ServeOptions options)
      : host_(host),
        feed_(feed),
        options_(std::move(options)),
        page_(std::make_shared<const std::string>(options_.page)) {}
  void accept_all();
  void on_client(std::uint64_t id, std::uint32_t events);
  void answer(std::uint64_t id, Client& c);
  void send_stream(Client& c);
  void flush(std::uint64_t id);
  void close_client(std::uint64_t id);

  FdHost& host_;
  BoardFeed& feed_;
  ServeOptions options_;
  std::shared_ptr<const std::string> page_;  // options_.page, shared by every send
  int listen_fd_ = -1;
  HostWatch listen_watch_ = 0;
  int port_ = 0;
  std::uint64_t next_id_ = 1;
  std::map<std::uint64_t, Client> clients_;
};

}  // namespace devgraph::board
