// A driver's gate over the limits socket, against a listener the test
// plays by hand: what the gate says, what it reads, and how it ends.
#include "bundle/limits_client.h"

#include <sys/socket.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include "bundle/limits_protocol.h"
#include "support/test_util.h"

namespace devgraph::bundle {
namespace {

class LimitsGate : public ::testing::Test {
 protected:
  void SetUp() override {
    address = s / "limits.sock";
    auto l = limits_listen(address);
    ASSERT_TRUE(l.ok()) << l.error().message;
    listener = *l;
    auto g = connect_limits(address, "b7");
    ASSERT_TRUE(g.ok()) << g.error().message;
    gate = std::move(*g);
    peer = ::accept(listener, nullptr, nullptr);
    ASSERT_GE(peer, 0);
  }
  void TearDown() override {
    if (peer >= 0) ::close(peer);
    ::close(listener);
  }
  // The lines the gate sent so far, parsed.
  std::vector<Json> heard() {
    std::vector<Json> out;
    std::string why;
    in.fill(peer, why);
    while (true) {
      auto l = in.next();
      if (!l.ok() || !l->has_value()) break;
      out.push_back(*parse_json(**l, "line"));
    }
    return out;
  }
  void say(const std::string& line) { ASSERT_TRUE(limits_send(peer, line).ok()); }

  test::Scratch s;
  std::string address;
  int listener = -1;
  int peer = -1;
  std::unique_ptr<SlotGate> gate;
  LineBuffer in;
};

TEST_F(LimitsGate, SaysHelloThenOneLinePerCall) {
  gate->ask();
  gate->finished(0.5, 12);
  gate->finished(0.25, std::nullopt);
  gate->release();
  gate->report_limit(std::chrono::system_clock::time_point(std::chrono::milliseconds(1234)),
                     "usage limit");
  auto lines = heard();
  ASSERT_EQ(lines.size(), 6u);
  EXPECT_EQ(lines[0]["op"], "hello");
  EXPECT_EQ(lines[0]["bundle"], "b7");
  EXPECT_EQ(lines[0]["pid"], ::getpid());
  EXPECT_EQ(lines[1], Json({{"op", "ask"}}));
  EXPECT_EQ(lines[2], Json({{"op", "finished"}, {"cost_usd", 0.5}, {"tokens", 12}}));
  EXPECT_TRUE(lines[3]["tokens"].is_null());
  EXPECT_EQ(lines[4], Json({{"op", "release"}}));
  EXPECT_EQ(lines[5], Json({{"op", "limit"}, {"until_ms", 1234}, {"reason", "usage limit"}}));
  EXPECT_GE(gate->fd(), 0);
}

TEST_F(LimitsGate, GrantsPausesAndACloseAreNewsInOrder) {
  EXPECT_TRUE(gate->take().empty());
  say("{\"op\": \"grant\"}\n{\"op\": \"pause\", \"until_ms\": 5000, \"reason\": \"b1 met one\"}\n");
  say("{\"op\": \"closed\", \"reason\": \"run budget spent: $5\", \"extra\": 1}\n{\"op\": \"gr");
  auto news = gate->take();
  ASSERT_EQ(news.size(), 3u);
  EXPECT_EQ(news[0].kind, GateNews::Kind::granted);
  EXPECT_EQ(news[1].kind, GateNews::Kind::paused);
  EXPECT_EQ(news[1].until, std::chrono::system_clock::time_point(std::chrono::milliseconds(5000)));
  EXPECT_EQ(news[1].reason, "b1 met one");
  EXPECT_EQ(news[2].kind, GateNews::Kind::closed);
  EXPECT_EQ(news[2].reason, "run budget spent: $5");
  say("ant\"}\n");
  news = gate->take();
  ASSERT_EQ(news.size(), 1u) << "a line split across reads is one line";
  EXPECT_EQ(news[0].kind, GateNews::Kind::granted);
}

TEST_F(LimitsGate, ALineOutsideTheProtocolOrTheEndIsOneClose) {
  say("{\"op\": \"grant\"}\nnot json\n{\"op\": \"grant\"}\n");
  auto news = gate->take();
  ASSERT_EQ(news.size(), 2u);
  EXPECT_EQ(news[0].kind, GateNews::Kind::granted);
  EXPECT_EQ(news[1].kind, GateNews::Kind::closed);
  EXPECT_NE(news[1].reason.find("went away"), std::string::npos) << news[1].reason;
  EXPECT_TRUE(gate->take().empty()) << "closed once";
}

TEST_F(LimitsGate, TheBrokersEndIsOneCloseAndLaterCallsSendNothing) {
  ::close(peer);
  peer = -1;
  auto news = gate->take();
  ASSERT_EQ(news.size(), 1u);
  EXPECT_EQ(news[0].kind, GateNews::Kind::closed);
  gate->ask();
  gate->finished(1, std::nullopt);
  EXPECT_TRUE(gate->take().empty());
}

TEST(LimitsClient, NobodyListeningIsAnErrorNamingTheAddress) {
  test::Scratch s;
  auto g = connect_limits(s / "limits.sock", "b1");
  ASSERT_FALSE(g.ok());
  EXPECT_EQ(g.error().kind, ErrorKind::not_found);
  EXPECT_NE(g.error().message.find(s / "limits.sock"), std::string::npos);
}

}  // namespace
}  // namespace devgraph::bundle
