// The real driver pool's served descriptors (orchestrator/drivers.h): the
// ready bits of any event mask come back to the function serving them,
// they are served while wait() waits for a driver, and they never keep
// wait() waiting once the run's work is done.
#include "orchestrator/drivers.h"

#include <fcntl.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <cstdlib>
#include <vector>

#include "support/test_util.h"

namespace devgraph::orchestrator {
namespace {

class DriverPoolServe : public ::testing::Test {
 protected:
  void SetUp() override {
    auto p = make_driver_pool(s / "live-drivers");
    ASSERT_TRUE(p.ok()) << p.error().message;
    pool = std::move(*p);
    ASSERT_EQ(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, pair), 0);
  }
  void TearDown() override {
    ::close(pair[0]);
    ::close(pair[1]);
  }

  test::Scratch s;
  std::unique_ptr<DriverPool> pool;
  int pair[2] = {-1, -1};
};

TEST_F(DriverPoolServe, ADescriptorGetsTheBitsItIsReadyForAndNeverKeepsWaitWaiting) {
  std::vector<std::uint32_t> seen;
  auto w = pool->serve_events(pair[0], EPOLLIN | EPOLLOUT,
                              [&](std::uint32_t bits) { seen.push_back(bits); });
  ASSERT_TRUE(w.ok()) << w.error().message;
  // No driver and no wake-up: what is ready is served, then nothing is
  // left to wait for.
  EXPECT_FALSE(pool->wait().has_value());
  ASSERT_EQ(seen.size(), 1u);
  EXPECT_TRUE(seen[0] & EPOLLOUT);
  EXPECT_FALSE(seen[0] & EPOLLIN);
  ASSERT_EQ(::write(pair[1], "x", 1), 1);
  EXPECT_FALSE(pool->wait().has_value());
  ASSERT_EQ(seen.size(), 2u);
  EXPECT_TRUE(seen[1] & EPOLLIN);
  EXPECT_TRUE(seen[1] & EPOLLOUT);
  // Readability alone, the limits broker's way; and an unserved
  // descriptor is not served again.
  pool->unserve_fd(*w);
  int reads = 0;
  auto r = pool->serve_fd(pair[0], [&] { ++reads; });
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_FALSE(pool->wait().has_value());
  EXPECT_EQ(reads, 1);
  EXPECT_EQ(seen.size(), 2u);
  pool->unserve_fd(*r);
  EXPECT_FALSE(pool->wait().has_value());
  EXPECT_EQ(reads, 1);
}

// While a driver runs, wait() serves the descriptor and goes on waiting for
// the driver: its exit is the event. The function here is what lets the
// driver finish (it opens the FIFO the driver reads).
TEST_F(DriverPoolServe, WhileADriverRunsADescriptorIsServedAndTheDriversExitIsTheEvent) {
  const std::string fifo = s / "go";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  DriverSpec d;
  d.bundle = "b1";
  d.argv = {"/bin/sh", "-c", "read x < \"$0\"; exit 7", fifo};
  d.env = {std::string("PATH=") + std::getenv("PATH")};
  ASSERT_TRUE(pool->start(d).ok());
  int served = 0;
  auto w = pool->serve_events(pair[0], EPOLLIN, [&](std::uint32_t bits) {
    ++served;
    EXPECT_TRUE(bits & EPOLLIN);
    char c;
    EXPECT_EQ(::read(pair[0], &c, 1), 1);
    int fd = ::open(fifo.c_str(), O_WRONLY | O_CLOEXEC);
    ASSERT_GE(fd, 0);
    EXPECT_EQ(::write(fd, "go\n", 3), 3);
    ::close(fd);
  });
  ASSERT_TRUE(w.ok()) << w.error().message;
  ASSERT_EQ(::write(pair[1], "x", 1), 1);
  auto ev = pool->wait();
  ASSERT_TRUE(ev.has_value());
  auto* exit = std::get_if<DriverExit>(&*ev);
  ASSERT_NE(exit, nullptr);
  EXPECT_EQ(exit->bundle, "b1");
  EXPECT_EQ(exit->exit_code, 7);
  EXPECT_EQ(served, 1);
  EXPECT_EQ(pool->live(), 0u);
  EXPECT_FALSE(pool->wait().has_value()) << "the descriptor alone keeps nothing alive";
}

}  // namespace
}  // namespace devgraph::orchestrator
