// Where a run's limits socket lives, and lines in and out of it.
#include "bundle/limits_protocol.h"

#include <sys/socket.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include "support/test_util.h"

namespace devgraph::bundle {
namespace {

TEST(LimitsProtocol, TheSocketIsInTheRunDirectoryUnlessThePathIsTooLong) {
  EXPECT_EQ(limits_address("/home/me/runs/20260101T000000Z"),
            "/home/me/runs/20260101T000000Z/limits.sock");
  std::string deep = "/" + std::string(120, 'd');
  std::string a = limits_address(deep);
  ASSERT_EQ(a.rfind("@devgraph-limits-", 0), 0u) << a;
  EXPECT_EQ(a.size(), std::string("@devgraph-limits-").size() + 16);
  EXPECT_EQ(limits_address(deep), a) << "the same run, the same name";
  EXPECT_NE(limits_address(deep + "x"), a);
}

TEST(LimitsProtocol, AnAbstractAddressListensAndConnectsWithoutAFile) {
  test::Scratch s;
  std::string run = s / std::string(110, 'r');
  std::string address = limits_address(run);
  ASSERT_EQ(address[0], '@');
  auto listener = limits_listen(address);
  ASSERT_TRUE(listener.ok()) << listener.error().message;
  auto client = limits_connect(address);
  ASSERT_TRUE(client.ok()) << client.error().message;
  ASSERT_TRUE(limits_send(*client, limits_line(Json{{"op", "ask"}})).ok());
  int server = ::accept(*listener, nullptr, nullptr);
  ASSERT_GE(server, 0);
  LineBuffer in;
  std::string why;
  EXPECT_TRUE(in.fill(server, why)) << why;
  auto line = in.next();
  ASSERT_TRUE(line.ok());
  ASSERT_TRUE(line->has_value());
  EXPECT_EQ(**line, "{\"op\":\"ask\"}");
  EXPECT_FALSE(in.next()->has_value());
  ::close(*client);
  EXPECT_FALSE(in.fill(server, why)) << "the peer closed";
  ::close(server);
  ::close(*listener);
}

TEST(LimitsProtocol, AStaleSocketFileIsReplacedAndAnythingElseIsNot) {
  test::Scratch s;
  std::string path = s / "limits.sock";
  auto first = limits_listen(path);
  ASSERT_TRUE(first.ok()) << first.error().message;
  ::close(*first);  // a killed orchestrator leaves its file
  auto second = limits_listen(path);
  ASSERT_TRUE(second.ok()) << second.error().message;
  ::close(*second);
  limits_unlink(path);
  EXPECT_FALSE(path_exists(path));
  test::write_text(path, "not a socket\n");
  auto refused = limits_listen(path);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.error().message.find("not a socket"), std::string::npos);
}

TEST(LimitsProtocol, ALineLongerThanTheLimitIsAnError) {
  int fds[2];
  ASSERT_EQ(::socketpair(AF_UNIX, SOCK_STREAM, 0, fds), 0);
  std::string big(kLimitsMaxLine + 10, 'x');
  ASSERT_TRUE(limits_send(fds[0], big).ok());
  LineBuffer in;
  std::string why;
  EXPECT_TRUE(in.fill(fds[1], why));
  EXPECT_FALSE(in.next().ok());
  ::close(fds[0]);
  ::close(fds[1]);
}

}  // namespace
}  // namespace devgraph::bundle
