// The run's board on the run's own loop (orchestrator/run_board.h): the
// FdHost adapter over the driver pool (the fake one here, whose served
// descriptors the test makes ready from poll()), a board served and
// published through it, and a board that never keeps the real pool's
// wait() waiting.
#include "orchestrator/run_board.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <chrono>
#include <vector>

#include "support/fake_driver_pool.h"
#include "support/shipped.h"

namespace devgraph::orchestrator {
namespace {

using test::FakeDriverPool;

TEST(PoolHost, AWatchIsAServedDescriptorWithItsEventsAndReadyBitsAndGoesWithTheHost) {
  test::Scratch s;
  Graph graph = test::shipped_graph();
  Schema schema = test::shipped_state_schema();
  RunStore store(s / "run", graph, schema);
  FakeDriverPool pool(store, graph);
  int pair[2];
  ASSERT_EQ(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair), 0);
  std::vector<std::uint32_t> seen;
  {
    PoolHost host(pool);
    auto w = host.watch(pair[0], EPOLLIN | EPOLLOUT, [&](std::uint32_t b) { seen.push_back(b); });
    ASSERT_TRUE(w.ok()) << w.error().message;
    ASSERT_EQ(pool.served.size(), 1u);
    EXPECT_EQ(pool.served.begin()->second.fd, pair[0]);
    EXPECT_EQ(pool.served.begin()->second.events, std::uint32_t{EPOLLIN | EPOLLOUT});
    EXPECT_EQ(pool.ready(pair[0], EPOLLOUT | EPOLLPRI), 1);
    EXPECT_EQ(pool.ready(pair[1], EPOLLIN), 0) << "another descriptor";
    ASSERT_EQ(seen, std::vector<std::uint32_t>{EPOLLOUT});
    // A watcher may unwatch itself while it is called.
    board::HostWatch self = 0;
    auto once = host.watch(pair[1], EPOLLIN, [&](std::uint32_t) { host.unwatch(self); });
    ASSERT_TRUE(once.ok());
    self = *once;
    EXPECT_EQ(pool.ready(pair[1], EPOLLIN), 1);
    EXPECT_EQ(pool.ready(pair[1], EPOLLIN), 0) << "it unwatched itself";
    host.unwatch(*w);
    EXPECT_EQ(pool.ready(pair[0], EPOLLOUT), 0);
    EXPECT_EQ(host.watching(), 0u);
    ASSERT_TRUE(host.watch(pair[0], EPOLLIN, [](std::uint32_t) {}).ok());
    ASSERT_TRUE(host.watch(pair[1], EPOLLOUT, [](std::uint32_t) {}).ok());
    EXPECT_EQ(pool.served.size(), 2u);
  }
  EXPECT_TRUE(pool.served.empty()) << "what the host still watched went with it";
  EXPECT_FALSE(pool.wait().has_value()) << "served descriptors are never events";
  ::close(pair[0]);
  ::close(pair[1]);
}

class RunBoardTest : public test::RunFixture {
 protected:
  FakeDriverPool pool{store, graph};
  std::unique_ptr<RunBoard> board;
  std::vector<int> clients;

  void SetUp() override {
    RunFixture::SetUp();
    auto l = board::Listener::open("127.0.0.1", 0);
    ASSERT_TRUE(l) << l.error().message;
    auto b = RunBoard::open(pool, s / "run", std::move(*l));
    ASSERT_TRUE(b) << b.error().message;
    board = std::move(*b);
  }
  void TearDown() override {
    board.reset();
    for (int fd : clients) ::close(fd);
  }

  int connect_to() {
    int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in sa{};
    sa.sin_family = AF_INET;
    sa.sin_port = htons(static_cast<std::uint16_t>(board->server().port()));
    ::inet_pton(AF_INET, "127.0.0.1", &sa.sin_addr);
    EXPECT_EQ(::connect(fd, reinterpret_cast<sockaddr*>(&sa), sizeof sa), 0);
    clients.push_back(fd);
    return fd;
  }

  // Sends `request` on a new connection and reads until `until` came (or,
  // empty, until the server closed), serving the board's descriptors as
  // poll() finds them ready, as the pool's wait() would. The deadline only
  // fails the test.
  std::string ask(int fd, const std::string& until, const std::string& request = "") {
    if (!request.empty()) {
      EXPECT_EQ(::send(fd, request.data(), request.size(), MSG_NOSIGNAL),
                static_cast<ssize_t>(request.size()));
    }
    std::string got;
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (std::chrono::steady_clock::now() < deadline) {
      std::vector<pollfd> fds = {{fd, POLLIN, 0}};
      for (const auto& [id, w] : pool.served)
        fds.push_back({w.fd, static_cast<short>(w.events & (EPOLLIN | EPOLLOUT)), 0});
      if (::poll(fds.data(), fds.size(), 10000) <= 0) break;
      for (size_t i = 1; i < fds.size(); ++i)
        if (fds[i].revents) pool.ready(fds[i].fd, static_cast<std::uint32_t>(fds[i].revents));
      if (fds[0].revents) {
        char buf[65536];
        ssize_t n = ::recv(fd, buf, sizeof buf, MSG_DONTWAIT);
        if (n > 0) got.append(buf, static_cast<size_t>(n));
        if (n == 0 && until.empty()) return got;
      }
      if (!until.empty() && got.find(until) != std::string::npos) return got;
    }
    ADD_FAILURE() << "nothing more came: " << got;
    return got;
  }
};

TEST_F(RunBoardTest, ThePageAndTheRunsDataAreServedOverThePool) {
  std::string page = ask(connect_to(), "", "GET / HTTP/1.1\r\n\r\n");
  EXPECT_EQ(page.rfind("HTTP/1.1 200 OK\r\n", 0), 0u) << page.substr(0, 200);
  EXPECT_NE(page.find("<html"), std::string::npos);
  std::string data = ask(connect_to(), "", "GET /data.json HTTP/1.1\r\n\r\n");
  auto body = parse_json(data.substr(data.find("\r\n\r\n") + 4), "data");
  ASSERT_TRUE(body) << data;
  EXPECT_EQ((*body)["state"]["run_id"], initial["run_id"]);
  EXPECT_EQ((*body)["event_seq"], 1);
  EXPECT_EQ(board->url(), "http://127.0.0.1:" + std::to_string(board->server().port()) + "/");
}

// The run appends; the feed's inotify descriptor, served on the pool,
// wakes the board, which publishes the event to the open stream.
TEST_F(RunBoardTest, WhatTheRunRecordsReachesAnOpenStream) {
  int stream = connect_to();
  std::string got = ask(stream, ":devgraph board\n\n", "GET /events HTTP/1.1\r\n\r\n");
  ASSERT_TRUE(store.event({"NOTE", Json{{"text", "from the run"}}, Json(), nullptr}).ok());
  got = ask(stream, "\"from the run\"");
  EXPECT_NE(got.find("id: 2\nevent: event\n"), std::string::npos) << got;
  EXPECT_EQ(board->server().streams(), 1u);
  EXPECT_FALSE(pool.wait().has_value()) << "an open stream keeps nothing waiting";
}

// Over the real pool: with no driver and no wake-up, wait() serves what is
// ready (the page's connection is accepted) and ends; the board keeps
// nothing alive.
TEST(RunBoardOnTheRealPool, AnOpenBoardNeverKeepsWaitWaiting) {
  test::Scratch s;
  Graph graph = test::shipped_graph();
  Schema schema = test::shipped_state_schema();
  RunStore store(s / "run", graph, schema);
  ASSERT_TRUE(store.init({s / "repo", "main", Json()}).ok());
  auto p = make_driver_pool(s / "run/live-drivers");
  ASSERT_TRUE(p.ok()) << p.error().message;
  auto l = board::Listener::open("127.0.0.1", 0);
  ASSERT_TRUE(l);
  auto b = RunBoard::open(**p, s / "run", std::move(*l));
  ASSERT_TRUE(b) << b.error().message;
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in sa{};
  sa.sin_family = AF_INET;
  sa.sin_port = htons(static_cast<std::uint16_t>((*b)->server().port()));
  ::inet_pton(AF_INET, "127.0.0.1", &sa.sin_addr);
  ASSERT_EQ(::connect(fd, reinterpret_cast<sockaddr*>(&sa), sizeof sa), 0);
  const std::string req = "GET /events HTTP/1.1\r\n\r\n";
  ASSERT_EQ(::send(fd, req.data(), req.size(), MSG_NOSIGNAL), static_cast<ssize_t>(req.size()));
  EXPECT_FALSE((*p)->wait().has_value());
  EXPECT_EQ((*b)->server().connections(), 1u) << "the connection was served meanwhile";
  b->reset();
  char c;
  EXPECT_EQ(::recv(fd, &c, 1, MSG_PEEK), 1) << "the stream had its start";
  ::close(fd);
  EXPECT_FALSE((*p)->wait().has_value());
}

}  // namespace
}  // namespace devgraph::orchestrator
