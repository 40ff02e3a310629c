#include "board/live_board.h"

#include <poll.h>
#include <signal.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include "proc/stop_signals.h"
#include "support/kill_harness.h"
#include "support/stderr_process.h"
#include "support/test_util.h"
#include "util/fs.h"

namespace devgraph::board {
namespace {

std::string event(int seq, const std::string& type) {
  return R"({"ts": "t", "seq": )" + std::to_string(seq) + R"(, "type": ")" + type +
         R"(", "node": "clean_discover", "detail": {}})" + "\n";
}

class LiveBoardTest : public ::testing::Test {
 protected:
  void SetUp() override {
    test::write_text(s / "state.json", R"({"run_id": "r1", "status": "running"})");
    test::write_text(s / "events.jsonl", event(1, "RUN_STARTED"));
  }
  // An event the run appends, the way it does: one write of whole lines.
  void append(const std::string& line) {
    std::string old = test::slurp(s / "events.jsonl");
    ASSERT_TRUE(write_file_atomic(s / "events.jsonl", old + line));
  }
  test::Scratch s;
};

TEST_F(LiveBoardTest, InTheBackgroundWhatTheRunWritesReachesAnOpenPageAndDestroyingItStops) {
  auto b = LiveBoard::open(s.path(), ServeOptions{}, std::nullopt);
  ASSERT_TRUE(b) << b.error().message;
  ASSERT_TRUE((*b)->serve_in_background());
  EXPECT_EQ((*b)->run_dir(), s.path());
  int port = test::port_after((*b)->url(), "");
  ASSERT_GT(port, 0) << (*b)->url();
  std::string data = test::http_get(port, "/data.json", std::chrono::seconds(20));
  EXPECT_EQ(data.rfind("HTTP/1.1 200", 0), 0u) << data.substr(0, 200);
  EXPECT_NE(data.find("\"run_id\": \"r1\""), std::string::npos);
  EXPECT_NE(data.find("\"event_seq\": 1"), std::string::npos);
  test::EventStream stream(port);
  ASSERT_TRUE(stream.connected());
  ASSERT_TRUE(stream.read_until("\r\n\r\n", std::chrono::seconds(20))) << stream.text();
  append(event(2, "CLEAN_CLASSIFIED"));
  EXPECT_TRUE(stream.read_until("CLEAN_CLASSIFIED", std::chrono::seconds(20))) << stream.text();
  b->reset();
  EXPECT_EQ(test::http_get(port, "/", std::chrono::seconds(5)), "");
}

TEST_F(LiveBoardTest, ASocketBoundAheadIsTheOneServed) {
  auto bound = Listener::open("127.0.0.1", 0);
  ASSERT_TRUE(bound) << bound.error().message;
  int port = bound->port();
  auto b = LiveBoard::open(s.path(), ServeOptions{}, std::move(*bound));
  ASSERT_TRUE(b) << b.error().message;
  EXPECT_EQ((*b)->url(), "http://127.0.0.1:" + std::to_string(port) + "/");
  ASSERT_TRUE((*b)->serve_in_background());
  std::string page = test::http_get(port, "/", std::chrono::seconds(20));
  EXPECT_NE(page.find("board-data"), std::string::npos);
}

// The signals blocked in thread `tid` of this process (its SigBlk).
unsigned long long blocked_in(const std::string& tid) {
  std::string status = test::slurp("/proc/self/task/" + tid + "/status");
  auto at = status.find("SigBlk:");
  return at == std::string::npos ? 0 : std::stoull(status.substr(at + 7), nullptr, 16);
}

// The board's thread never takes a stop signal: it has them blocked from
// its first instruction (whatever the caller's mask), so they are always
// the caller's to read; the caller's own mask is as it was.
TEST_F(LiveBoardTest, AStopSignalIsTheCallersToReadNeverTheBoardThreads) {
  const std::string me = std::to_string(::gettid());
  const unsigned long long mine = blocked_in(me);
  auto b = LiveBoard::open(s.path(), ServeOptions{}, std::nullopt);
  ASSERT_TRUE(b) << b.error().message;
  ASSERT_TRUE((*b)->serve_in_background());
  EXPECT_EQ(blocked_in(me), mine);
  int others = 0;
  for (const auto& tid : test::names_in("/proc/self/task")) {
    if (tid == me) continue;
    ++others;
    unsigned long long mask = blocked_in(tid);
    for (int sig : {SIGINT, SIGTERM, SIGHUP})
      EXPECT_TRUE(mask & (1ULL << (sig - 1))) << "thread " << tid << " takes signal " << sig;
  }
  EXPECT_EQ(others, 1);
  // And a stop signal the caller watches reaches it, the board still
  // serving.
  auto stops = StopSignals::watch();
  ASSERT_TRUE(stops) << stops.error().message;
  ASSERT_EQ(::kill(::getpid(), SIGTERM), 0);
  pollfd p = {stops->fd(), POLLIN, 0};
  ASSERT_EQ(::poll(&p, 1, 20000), 1);
  EXPECT_EQ(stops->take(), SIGTERM);
  int port = test::port_after((*b)->url(), "");
  EXPECT_NE(test::http_get(port, "/", std::chrono::seconds(20)).find("board-data"),
            std::string::npos);
}

TEST_F(LiveBoardTest, APortInUseIsOneLineAndNothingIsServed) {
  auto first = LiveBoard::open(s.path(), ServeOptions{}, std::nullopt);
  ASSERT_TRUE(first);
  ServeOptions same;
  same.port = test::port_after((*first)->url(), "");
  auto second = LiveBoard::open(s.path(), same, std::nullopt);
  ASSERT_FALSE(second);
  EXPECT_EQ(second.error().kind, ErrorKind::refused);
  EXPECT_NE(second.error().message.find(std::to_string(same.port)), std::string::npos)
      << second.error().message;
  EXPECT_EQ(second.error().message.find('\n'), std::string::npos);
}

}  // namespace
}  // namespace devgraph::board
