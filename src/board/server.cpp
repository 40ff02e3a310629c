#include "board/server.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <utility>

#include "board/http.h"

namespace devgraph::board {

Expected<HostWatch> LoopHost::watch(int fd, std::uint32_t events,
                                    std::function<void(std::uint32_t)> on_ready) {
  DG_TRY(WatchId id, loop_.watch_fd(fd, events));
  watchers_[id] = std::move(on_ready);
  return id;
}

void LoopHost::unwatch(HostWatch id) {
  if (watchers_.erase(id)) loop_.unwatch_fd(id);
}

bool LoopHost::dispatch(const LoopEvent& event) {
  const auto* ready = std::get_if<FdReady>(&event);
  if (!ready) return false;
  auto it = watchers_.find(ready->id);
  if (it == watchers_.end()) return false;
  auto fn = it->second;  // the watcher may unwatch itself
  fn(ready->events);
  return true;
}

Expected<Listener> Listener::open(const std::string& bind, int port) {
  sockaddr_in sa{};
  sa.sin_family = AF_INET;
  if (::inet_pton(AF_INET, bind.c_str(), &sa.sin_addr) != 1)
    return fail(ErrorKind::usage, "--bind " + bind + ": not a numeric IPv4 address");
  if (port < 0 || port > 65535)
    return fail(ErrorKind::usage, "--port " + std::to_string(port) + ": not a port");
  sa.sin_port = htons(static_cast<std::uint16_t>(port));
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) return fail("board: socket: " + std::string(std::strerror(errno)));
  int one = 1;
  ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  if (::bind(fd, reinterpret_cast<const sockaddr*>(&sa), sizeof sa) != 0 || ::listen(fd, 64) != 0) {
    std::string why = std::strerror(errno);
    ::close(fd);
    return fail(ErrorKind::refused,
                "board: cannot listen on " + bind + ":" + std::to_string(port) + ": " + why);
  }
  socklen_t len = sizeof sa;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&sa), &len);
  Listener l;
  l.fd_ = fd;
  l.port_ = ntohs(sa.sin_port);
  l.bind_ = bind;
  return l;
}

Listener::Listener(Listener&& other) noexcept
    : fd_(std::exchange(other.fd_, -1)), port_(other.port_), bind_(std::move(other.bind_)) {}

Listener& Listener::operator=(Listener&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = std::exchange(other.fd_, -1);
    port_ = other.port_;
    bind_ = std::move(other.bind_);
  }
  return *this;
}

Listener::~Listener() {
  if (fd_ >= 0) ::close(fd_);
}

Expected<std::unique_ptr<BoardServer>> BoardServer::open(FdHost& host, BoardFeed& feed,
                                                         ServeOptions options) {
  DG_TRY(Listener l, Listener::open(options.bind, options.port));
  return open(host, feed, std::move(options), std::move(l));
}

Expected<std::unique_ptr<BoardServer>> BoardServer::open(FdHost& host, BoardFeed& feed,
                                                         ServeOptions options, Listener listener) {
  if (!listener.is_open()) return fail(ErrorKind::internal, "board: no listening socket");
  options.bind = listener.bind_;
  options.port = listener.port_;
  std::unique_ptr<BoardServer> s(new BoardServer(host, feed, std::move(options)));
  s->port_ = listener.port_;
  s->listen_fd_ = std::exchange(listener.fd_, -1);
  BoardServer* self = s.get();
  auto w = host.watch(s->listen_fd_, EPOLLIN, [self](std::uint32_t) { self->accept_all(); });
  if (!w) {
    ::close(s->listen_fd_);
    s->listen_fd_ = -1;
    return w.error();
  }
  s->listen_watch_ = *w;
  return s;
}

BoardServer::~BoardServer() {
  for (auto& [id, c] : clients_) {
    host_.unwatch(c.watch);
    ::close(c.fd);
  }
  if (listen_fd_ >= 0) {
    host_.unwatch(listen_watch_);
    ::close(listen_fd_);
  }
}

std::string BoardServer::url() const {
  return "http://" + options_.bind + ":" + std::to_string(port_) + "/";
}

size_t BoardServer::streams() const {
  size_t n = 0;
  for (const auto& [id, c] : clients_) n += c.streaming;
  return n;
}

void BoardServer::accept_all() {
  while (true) {
    int fd = ::accept4(listen_fd_, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0) {
      if (errno == EINTR) continue;
      return;  // EAGAIN, or an aborted connection: nothing to serve
    }
    if (clients_.size() >= kMaxClients) {
      ::close(fd);
      continue;
    }
    std::uint64_t id = next_id_++;
    auto w = host_.watch(fd, EPOLLIN, [this, id](std::uint32_t ev) { on_client(id, ev); });
    if (!w) {
      ::close(fd);
      continue;
    }
    Client c;
    c.fd = fd;
    c.watch = *w;
    clients_.emplace(id, std::move(c));
  }
}

void BoardServer::on_client(std::uint64_t id, std::uint32_t events) {
  auto it = clients_.find(id);
  if (it == clients_.end()) return;
  Client& c = it->second;
  if (events & EPOLLOUT) {
    flush(id);
    if (!clients_.count(id)) return;
  }
  if (!(events & (EPOLLIN | EPOLLHUP | EPOLLERR))) return;
  char buf[8192];
  while (true) {
    ssize_t n = ::read(c.fd, buf, sizeof buf);
    if (n > 0) {
      // A stream's page has nothing more to say; a request is one block.
      if (!c.streaming && !c.closing) c.in.append(buf, static_cast<size_t>(n));
      if (c.in.size() > kMaxRequestBytes + sizeof buf) return close_client(id);
      continue;
    }
    if (n == 0) return close_client(id);  // the page went away
    if (errno == EINTR) continue;
    if (errno == EAGAIN || errno == EWOULDBLOCK) break;
    return close_client(id);
  }
  if (!c.streaming && !c.closing) answer(id, c);
}

void BoardServer::answer(std::uint64_t id, Client& c) {
  auto req = parse_request(c.in);
  if (!req) {
    c.out += response(400, "text/plain; charset=utf-8", req.error().message + "\n");
    c.closing = true;
    return flush(id);
  }
  if (!*req) return;  // not all of it yet
  const HttpRequest& r = **req;
  c.in.clear();
  bool head = r.method == "HEAD";
  auto send = [&](int status, const char* type, std::shared_ptr<const std::string> body) {
    c.out += response_head(status, type, body->size());
    if (!head) c.body = std::move(body);
    c.body_at = 0;
    c.closing = true;
  };
  auto text = [](const char* words) { return std::make_shared<const std::string>(words); };
  if (r.method != "GET" && !head) {
    send(405, "text/plain; charset=utf-8", text("the board only answers GET\n"));
  } else if (r.path == "/" || r.path == "/index.html") {
    send(200, "text/html; charset=utf-8", page_);
  } else if (r.path == "/data.json") {
    send(200, "application/json; charset=utf-8", feed_.snapshot_text());
  } else if (r.path == "/events" && !head) {
    c.streaming = true;
    auto last = last_event_id(r);
    c.sent = last ? *last : feed_.newest();
    // retry: a page that loses the stream tries again after 1 s, not the
    // browser's default 3 s.
    c.out += sse_head() + "retry: 1000\n\n" + sse_comment("devgraph board");
    send_stream(c);
  } else {
    send(404, "text/plain; charset=utf-8", text("no such page\n"));
  }
  flush(id);
}

void BoardServer::send_stream(Client& c) {
  for (auto& [seq, text] : feed_.events_after(c.sent)) {
    c.out += sse_event(seq, "event", text);
    c.sent = seq;
  }
}

void BoardServer::publish() {
  std::vector<std::uint64_t> ids;
  for (auto& [id, c] : clients_)
    if (c.streaming) {
      send_stream(c);
      ids.push_back(id);
    }
  for (auto id : ids) flush(id);
}

void BoardServer::flush(std::uint64_t id) {
  auto it = clients_.find(id);
  if (it == clients_.end()) return;
  Client& c = it->second;
  while (c.out_at < c.out.size() || (c.body && c.body_at < c.body->size())) {
    bool head = c.out_at < c.out.size();
    const char* from = head ? c.out.data() + c.out_at : c.body->data() + c.body_at;
    size_t left = head ? c.out.size() - c.out_at : c.body->size() - c.body_at;
    ssize_t n = ::send(c.fd, from, left, MSG_NOSIGNAL);
    if (n > 0) {
      (head ? c.out_at : c.body_at) += static_cast<size_t>(n);
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) break;
    return close_client(id);
  }
  // What was sent is dropped, not moved about on every send.
  if (c.out_at == c.out.size()) {
    c.out.clear();
    c.out_at = 0;
  } else if (c.out_at > c.out.size() / 2) {
    c.out.erase(0, c.out_at);
    c.out_at = 0;
  }
  if (c.body && c.body_at == c.body->size()) c.body.reset();
  if (c.out.size() - c.out_at > kMaxPending) return close_client(id);
  const bool pending = !c.out.empty() || c.body;
  if (!pending && c.closing) return close_client(id);
  bool want = pending;
  if (want == c.want_write) return;
  // Watch for writability only while output waits.
  host_.unwatch(c.watch);
  auto w = host_.watch(c.fd, want ? (EPOLLIN | EPOLLOUT) : EPOLLIN,
                       [this, id](std::uint32_t ev) { on_client(id, ev); });
  if (!w) return close_client(id);
  c.watch = *w;
  c.want_write = want;
}

void BoardServer::close_client(std::uint64_t id) {
  auto it = clients_.find(id);
  if (it == clients_.end()) return;
  host_.unwatch(it->second.watch);
  ::close(it->second.fd);
  clients_.erase(it);
}

}  // namespace devgraph::board
