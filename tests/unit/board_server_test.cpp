#include "board/server.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <chrono>

namespace devgraph::board {
namespace {

// Events 1..N as the feed has them.
class FakeFeed final : public BoardFeed {
 public:
  std::vector<std::string> events;
  std::shared_ptr<const std::string> big;  // when set, /data.json's text
  std::shared_ptr<const std::string> snapshot_text() override {
    return big ? big : BoardFeed::snapshot_text();
  }
  Json snapshot() override { return Json{{"event_seq", events.size()}, {"title", "<b>x</b>"}}; }
  std::vector<std::pair<std::uint64_t, std::string>> events_after(std::uint64_t after) override {
    std::vector<std::pair<std::uint64_t, std::string>> out;
    for (std::uint64_t i = after; i < events.size(); ++i) out.emplace_back(i + 1, events[i]);
    return out;
  }
  std::uint64_t newest() override { return events.size(); }
};

class BoardServerTest : public ::testing::Test {
 protected:
  Expected<ChildLoop> made = ChildLoop::create();
  ChildLoop& loop = *made;
  LoopHost host{loop};
  FakeFeed feed;
  std::unique_ptr<BoardServer> server;

  void SetUp() override {
    feed.events = {R"({"seq": 1})", R"({"seq": 2})", R"({"seq": 3})"};
    auto s = BoardServer::open(host, feed, ServeOptions{"127.0.0.1", 0, "<html>page</html>"});
    ASSERT_TRUE(s) << s.error().message;
    server = std::move(*s);
  }

  int connect_to() {
    int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    sockaddr_in sa{};
    sa.sin_family = AF_INET;
    sa.sin_port = htons(static_cast<std::uint16_t>(server->port()));
    ::inet_pton(AF_INET, "127.0.0.1", &sa.sin_addr);
    int r = ::connect(fd, reinterpret_cast<sockaddr*>(&sa), sizeof sa);
    EXPECT_TRUE(r == 0 || errno == EINPROGRESS) << std::strerror(errno);
    return fd;
  }

  // Runs the loop until the client has read `until` (or, empty, until the
  // server closed): everything read. The deadline only fails the test.
  // The client's socket is watched on the same loop, so the wait ends as
  // soon as either side has something to do.
  std::string read_until(int fd, const std::string& until, bool* closed = nullptr) {
    std::string got;
    auto watch = loop.watch_fd(fd, EPOLLIN);
    EXPECT_TRUE(watch.ok());
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (std::chrono::steady_clock::now() < deadline) {
      char buf[65536];
      ssize_t n;
      while ((n = ::read(fd, buf, sizeof buf)) > 0) got.append(buf, static_cast<size_t>(n));
      if (n == 0 && closed) *closed = true;
      if (n == 0 || (!until.empty() && got.find(until) != std::string::npos)) {
        loop.unwatch_fd(*watch);
        return got;
      }
      if (auto e = loop.wait(deadline)) host.dispatch(*e);
    }
    loop.unwatch_fd(*watch);
    ADD_FAILURE() << "nothing more came: " << got;
    return got;
  }

  std::string get(const std::string& request, bool* closed = nullptr) {
    int fd = connect_to();
    EXPECT_EQ(::send(fd, request.data(), request.size(), MSG_NOSIGNAL),
              static_cast<ssize_t>(request.size()));
    std::string got = read_until(fd, "", closed);
    ::close(fd);
    return got;
  }
};

TEST_F(BoardServerTest, ThePageAndTheDataAreServedAndEachConnectionClosedOnceAnswered) {
  bool closed = false;
  std::string page = get("GET / HTTP/1.1\r\nHost: x\r\n\r\n", &closed);
  EXPECT_TRUE(closed);
  EXPECT_EQ(page.rfind("HTTP/1.1 200 OK\r\n", 0), 0u) << page;
  EXPECT_NE(page.find("Content-Type: text/html; charset=utf-8"), std::string::npos);
  EXPECT_NE(page.find("\r\n\r\n<html>page</html>"), std::string::npos) << page;
  std::string data = get("GET /data.json HTTP/1.1\r\n\r\n");
  EXPECT_NE(data.find("application/json"), std::string::npos) << data;
  auto body = parse_json(data.substr(data.find("\r\n\r\n") + 4), "data");
  ASSERT_TRUE(body) << data;
  EXPECT_EQ((*body)["event_seq"], 3);
  EXPECT_EQ((*body)["title"], "<b>x</b>") << "data is JSON; the page escapes it";
  std::string head = get("HEAD / HTTP/1.1\r\n\r\n");
  EXPECT_EQ(head.find("<html>"), std::string::npos) << head;
  EXPECT_EQ(server->connections(), 0u);
}

// An answer far larger than a socket takes at once reaches every page
// asking for it whole, each sent from the one text the feed holds.
TEST_F(BoardServerTest, ALargeAnswerReachesSeveralPagesWholeFromOneSharedText) {
  std::string text(3 << 20, 'x');
  for (size_t i = 0; i < text.size(); i += 4096) text[i] = static_cast<char>('a' + (i / 4096) % 26);
  feed.big = std::make_shared<const std::string>(text);
  std::vector<int> fds;
  for (int i = 0; i < 3; ++i) {
    fds.push_back(connect_to());
    const std::string req = "GET /data.json HTTP/1.1\r\n\r\n";
    EXPECT_EQ(::send(fds.back(), req.data(), req.size(), MSG_NOSIGNAL),
              static_cast<ssize_t>(req.size()));
  }
  for (int fd : fds) {
    bool closed = false;
    std::string got = read_until(fd, "", &closed);
    ::close(fd);
    EXPECT_TRUE(closed);
    auto at = got.find("\r\n\r\n");
    ASSERT_NE(at, std::string::npos);
    EXPECT_NE(got.find("Content-Length: " + std::to_string(text.size()) + "\r\n"),
              std::string::npos);
    EXPECT_TRUE(got.compare(at + 4, std::string::npos, text) == 0) << got.size() - at - 4;
  }
  // Sent, and held by nobody but the feed.
  EXPECT_EQ(feed.big.use_count(), 1);
  EXPECT_EQ(server->connections(), 0u);
}

TEST_F(BoardServerTest, EveryOtherPathIsNotFoundAndEveryOtherMethodRefused) {
  for (const char* path : {"/../../etc/passwd", "/data.json/..", "/index.html/x", "//", "/%2e"}) {
    std::string r = get(std::string("GET ") + path + " HTTP/1.1\r\n\r\n");
    EXPECT_EQ(r.rfind("HTTP/1.1 404 Not Found\r\n", 0), 0u) << path << ": " << r;
  }
  EXPECT_EQ(get("DELETE / HTTP/1.1\r\n\r\n").rfind("HTTP/1.1 405", 0), 0u);
  std::string bad = get("nonsense\r\n\r\n");
  EXPECT_EQ(bad.rfind("HTTP/1.1 400 Bad Request\r\n", 0), 0u) << bad;
  EXPECT_NE(bad.find("bad request: "), std::string::npos) << bad;
}

TEST_F(BoardServerTest, AStreamCatchesUpFromTheLastIdItSawThenGetsEachNewEventOnce) {
  int fd = connect_to();
  std::string req = "GET /events HTTP/1.1\r\nLast-Event-ID: 1\r\n\r\n";
  ASSERT_GT(::send(fd, req.data(), req.size(), MSG_NOSIGNAL), 0);
  std::string got = read_until(fd, "id: 3\n");
  EXPECT_NE(got.find("Content-Type: text/event-stream"), std::string::npos) << got;
  EXPECT_EQ(got.find("id: 1\n"), std::string::npos) << got;
  EXPECT_NE(got.find("id: 2\nevent: event\ndata: {\"seq\": 2}\n\n"), std::string::npos) << got;
  EXPECT_EQ(server->streams(), 1u);
  feed.events.push_back(R"({"seq": 4})");
  server->publish();
  server->publish();  // nothing new: nothing sent
  got = read_until(fd, "id: 4\n");
  EXPECT_EQ(got, "id: 4\nevent: event\ndata: {\"seq\": 4}\n\n");
  ::close(fd);
  // The server sees the page go.
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (server->connections() > 0 && std::chrono::steady_clock::now() < deadline)
    if (auto e = loop.wait(deadline)) host.dispatch(*e);
  EXPECT_EQ(server->connections(), 0u);
}

TEST_F(BoardServerTest, ANewStreamStartsAfterTheNewestEvent) {
  int fd = connect_to();
  std::string req = "GET /events HTTP/1.1\r\n\r\n";
  ASSERT_GT(::send(fd, req.data(), req.size(), MSG_NOSIGNAL), 0);
  std::string got = read_until(fd, ":devgraph board\n\n");
  EXPECT_EQ(got.find("id: "), std::string::npos) << got;
  feed.events.push_back(R"({"seq": 4})");
  server->publish();
  EXPECT_NE(read_until(fd, "id: 4\n").find("id: 4\n"), std::string::npos);
  ::close(fd);
}

TEST(BoardServerOpen, ABadAddressOrAPortInUseIsOneLineAndLeavesNothingOpen) {
  auto loop = ChildLoop::create();
  ASSERT_TRUE(loop.ok());
  LoopHost host(*loop);
  FakeFeed feed;
  auto bad = BoardServer::open(host, feed, ServeOptions{"localhost", 0, ""});
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().kind, ErrorKind::usage);
  EXPECT_NE(bad.error().message.find("numeric IPv4"), std::string::npos);
  auto first = BoardServer::open(host, feed, ServeOptions{});
  ASSERT_TRUE(first) << first.error().message;
  auto again = BoardServer::open(host, feed, ServeOptions{"127.0.0.1", (*first)->port(), ""});
  ASSERT_FALSE(again);
  EXPECT_EQ(again.error().kind, ErrorKind::refused);
  EXPECT_NE(again.error().message.find("cannot listen on 127.0.0.1:"), std::string::npos)
      << again.error().message;
  EXPECT_EQ(again.error().message.find('\n'), std::string::npos);
  EXPECT_EQ((*first)->url(), "http://127.0.0.1:" + std::to_string((*first)->port()) + "/");
}

// A port bound ahead of the server: a port in use is the Listener's error,
// and the server takes the socket over with its address and port.
TEST(BoardServerOpen, AListenerBindsAheadAndTheServerTakesItsSocketOver) {
  auto ahead = Listener::open("127.0.0.1", 0);
  ASSERT_TRUE(ahead) << ahead.error().message;
  ASSERT_GT(ahead->port(), 0);
  const int port = ahead->port();
  auto taken = Listener::open("127.0.0.1", port);
  ASSERT_FALSE(taken);
  EXPECT_EQ(taken.error().kind, ErrorKind::refused);
  EXPECT_EQ(taken.error().message, "board: cannot listen on 127.0.0.1:" + std::to_string(port) +
                                       ": Address already in use");
  EXPECT_EQ(Listener::open("::1", 0).error().kind, ErrorKind::usage);
  auto loop = ChildLoop::create();
  ASSERT_TRUE(loop.ok());
  LoopHost host(*loop);
  FakeFeed feed;
  auto s = BoardServer::open(host, feed, ServeOptions{"0.0.0.0", 1, ""}, std::move(*ahead));
  ASSERT_TRUE(s) << s.error().message;
  EXPECT_FALSE(ahead->is_open()) << "the server owns the socket now";
  EXPECT_EQ((*s)->port(), port);
  EXPECT_EQ((*s)->url(), "http://127.0.0.1:" + std::to_string(port) + "/");
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in sa{};
  sa.sin_family = AF_INET;
  sa.sin_port = htons(static_cast<std::uint16_t>(port));
  ::inet_pton(AF_INET, "127.0.0.1", &sa.sin_addr);
  EXPECT_EQ(::connect(fd, reinterpret_cast<sockaddr*>(&sa), sizeof sa), 0);
  ::close(fd);
  s->reset();
  // Closed with its server: the port is free again.
  EXPECT_TRUE(Listener::open("127.0.0.1", port)) << "the port was not given back";
}

}  // namespace
}  // namespace devgraph::board
