#include "proc/supervisor.h"

#include <poll.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include "agents/backend.h"

namespace devgraph {
namespace {

using namespace std::chrono_literals;

ChildSpec sh(const std::string& script) {
  ChildSpec s;
  s.argv = {"sh", "-c", script};
  s.env = agents::current_environment();
  return s;
}

ChildExit wait_exit(ChildLoop& loop) {
  for (;;) {
    auto ev = loop.wait();
    if (!ev) ADD_FAILURE() << "loop went idle before the child exited";
    if (!ev) return {};
    if (auto* e = std::get_if<ChildExit>(&*ev)) return std::move(*e);
  }
}

TEST(Supervisor, ReportsExitCodeAndBothStreams) {
  auto loop = ChildLoop::create();
  ASSERT_TRUE(loop.ok());
  ASSERT_TRUE(loop->spawn(sh("echo out; echo err >&2; exit 3")).ok());
  ChildExit e = wait_exit(*loop);
  EXPECT_EQ(e.exit_code, 3);
  EXPECT_EQ(e.out, "out\n");
  EXPECT_EQ(e.err, "err\n");
  EXPECT_FALSE(e.timed_out);
  EXPECT_FALSE(loop->wait().has_value()) << "nothing left to wait for";
}

TEST(Supervisor, StdinIsDevNullAndArgvIsNotAShell) {
  auto loop = ChildLoop::create();
  ASSERT_TRUE(loop.ok());
  ChildSpec s;
  s.argv = {"cat"};
  ASSERT_TRUE(loop->spawn(s).ok());  // would block forever on an inherited stdin
  EXPECT_EQ(wait_exit(*loop).exit_code, 0);
  s.argv = {"echo", "$HOME; rm -rf /"};
  ASSERT_TRUE(loop->spawn(s).ok());
  EXPECT_EQ(wait_exit(*loop).out, "$HOME; rm -rf /\n");
}

TEST(Supervisor, EnvironmentIsExactlyTheGivenOne) {
  auto loop = ChildLoop::create();
  ASSERT_TRUE(loop.ok());
  ChildSpec s;
  s.argv = {"/usr/bin/env"};
  s.env = {"ONLY=this"};
  ASSERT_TRUE(loop->spawn(s).ok());
  EXPECT_EQ(wait_exit(*loop).out, "ONLY=this\n");
}

TEST(Supervisor, SpawnFailuresAreValues) {
  auto loop = ChildLoop::create();
  ASSERT_TRUE(loop.ok());
  ChildSpec s;
  s.argv = {"devgraph-no-such-program-xyz"};
  auto r = loop->spawn(s);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("devgraph-no-such-program-xyz"), std::string::npos);
  s.argv = {"true"};
  s.cwd = "/nonexistent/dir";
  r = loop->spawn(s);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("/nonexistent/dir"), std::string::npos);
  EXPECT_EQ(loop->running(), 0u);
}

TEST(Supervisor, TimeoutTermsThenKillsTheWholeGroup) {
  auto loop = ChildLoop::create();
  ASSERT_TRUE(loop.ok());
  // Ignores TERM, and a grandchild holds the pipes: only a group KILL ends it.
  ChildSpec s = sh("trap '' TERM; sleep 1000 & sleep 1000; wait");
  s.timeout = 100ms;
  s.kill_grace = 100ms;
  auto start = std::chrono::steady_clock::now();
  ASSERT_TRUE(loop->spawn(s).ok());
  ChildExit e = wait_exit(*loop);
  EXPECT_TRUE(e.timed_out);
  EXPECT_EQ(e.term_signal, SIGKILL);
  EXPECT_LT(std::chrono::steady_clock::now() - start, 5s);
}

TEST(Supervisor, TermEndsACooperativeChildBeforeTheGrace) {
  auto loop = ChildLoop::create();
  ASSERT_TRUE(loop.ok());
  ChildSpec s;
  s.argv = {"sleep", "1000"};
  s.timeout = 50ms;
  s.kill_grace = 60s;
  auto start = std::chrono::steady_clock::now();
  ASSERT_TRUE(loop->spawn(s).ok());
  ChildExit e = wait_exit(*loop);
  EXPECT_TRUE(e.timed_out);
  EXPECT_EQ(e.term_signal, SIGTERM);
  EXPECT_LT(std::chrono::steady_clock::now() - start, 10s);
}

TEST(Supervisor, DeathBySignalIsReported) {
  auto loop = ChildLoop::create();
  ASSERT_TRUE(loop.ok());
  ASSERT_TRUE(loop->spawn(sh("echo before; kill -SEGV $$")).ok());
  ChildExit e = wait_exit(*loop);
  EXPECT_EQ(e.exit_code, -1);
  EXPECT_EQ(e.term_signal, SIGSEGV);
  EXPECT_EQ(e.out, "before\n");
}

TEST(Supervisor, StrayBackgroundJobsDieWithTheLeader) {
  auto loop = ChildLoop::create();
  ASSERT_TRUE(loop.ok());
  // The background sleep keeps stdout open; the leader's exit must still be
  // reported at once, and the sleep must not survive it.
  ASSERT_TRUE(loop->spawn(sh("sleep 1000 & echo $!; echo done")).ok());
  auto start = std::chrono::steady_clock::now();
  ChildExit e = wait_exit(*loop);
  EXPECT_LT(std::chrono::steady_clock::now() - start, 5s);
  EXPECT_EQ(e.exit_code, 0);
  pid_t stray = std::stoi(e.out);
  // Waiting on a pidfd is an event, not a sleep: it turns readable when the
  // stray is gone (or already is, which pidfd_open reports as ESRCH).
  int pidfd = static_cast<int>(::syscall(SYS_pidfd_open, stray, 0));
  if (pidfd >= 0) {
    pollfd p{pidfd, POLLIN, 0};
    EXPECT_EQ(::poll(&p, 1, 5000), 1) << "the background sleep outlived its persona";
    ::close(pidfd);
  } else {
    EXPECT_EQ(errno, ESRCH);
  }
}

// The runtime test floods a gigabyte through a persona; this one only
// checks the bookkeeping, so a smaller flood keeps the suite fast.
TEST(Supervisor, FloodsStayBoundedKeepingTheTail) {
  auto loop = ChildLoop::create();
  ASSERT_TRUE(loop.ok());
  ChildSpec s =
      sh("yes eeeeeeeeeeeeeeeeeeeeeeeeeeeeeee | head -c 268435456 >&2 & "
         "yes ooooooooooooooooooooooooooooooo | head -c 268435456; wait; echo; echo THE-END");
  s.max_output_bytes = 1 << 20;
  rusage before{};
  ::getrusage(RUSAGE_SELF, &before);
  ASSERT_TRUE(loop->spawn(s).ok());
  ChildExit e = wait_exit(*loop);
  rusage after{};
  ::getrusage(RUSAGE_SELF, &after);
  EXPECT_EQ(e.exit_code, 0);
  EXPECT_TRUE(e.output_truncated);
  EXPECT_EQ(e.out.size(), size_t{1} << 20);
  EXPECT_EQ(e.err.size(), size_t{1} << 20);
  EXPECT_EQ(e.out.substr(e.out.size() - 8), "THE-END\n");
  // 512 MiB went through; the peak resident size grew by far less.
  EXPECT_LT(after.ru_maxrss - before.ru_maxrss, 64 * 1024) << "KiB";
}

// A clock the test moves by hand.
class ManualClock final : public Clock {
 public:
  std::chrono::system_clock::time_point wall() const override { return wall_; }
  std::chrono::steady_clock::time_point steady() const override { return steady_; }
  void advance(std::chrono::milliseconds d) {
    wall_ += d;
    steady_ += d;
  }

 private:
  std::chrono::system_clock::time_point wall_{std::chrono::seconds(1'700'000'000)};
  std::chrono::steady_clock::time_point steady_{std::chrono::hours(1)};
};

TEST(Supervisor, TimersFireInDeadlineOrderOnAFakeClock) {
  ManualClock clock;
  auto loop = ChildLoop::create(clock);
  ASSERT_TRUE(loop.ok());
  TimerId late = loop->add_timer(clock.steady() + 10min);
  TimerId early = loop->add_timer(clock.steady() + 1min);
  TimerId cancelled = loop->add_timer(clock.steady() + 2min);
  loop->cancel_timer(cancelled);
  EXPECT_FALSE(loop->wait(clock.steady()).has_value()) << "nothing is due yet";
  clock.advance(1min);
  auto ev = loop->wait(clock.steady());
  ASSERT_TRUE(ev.has_value());
  EXPECT_EQ(std::get<TimerFired>(*ev).id, early);
  clock.advance(20min);
  ev = loop->wait(clock.steady());
  ASSERT_TRUE(ev.has_value());
  EXPECT_EQ(std::get<TimerFired>(*ev).id, late);
  EXPECT_FALSE(loop->wait().has_value());
}

TEST(Supervisor, WatchedDescriptorsAreEvents) {
  auto loop = ChildLoop::create();
  ASSERT_TRUE(loop.ok());
  int p[2];
  ASSERT_EQ(::pipe(p), 0);
  auto w = loop->watch_fd(p[0], EPOLLIN);
  ASSERT_TRUE(w.ok());
  ASSERT_EQ(::write(p[1], "x", 1), 1);
  auto ev = loop->wait();
  ASSERT_TRUE(ev.has_value());
  EXPECT_EQ(std::get<FdReady>(*ev).fd, p[0]);
  loop->unwatch_fd(*w);
  EXPECT_FALSE(loop->wait().has_value());
  ::close(p[0]);
  ::close(p[1]);
}

TEST(Supervisor, ManyChildrenAtOnce) {
  auto loop = ChildLoop::create();
  ASSERT_TRUE(loop.ok());
  for (int i = 0; i < 40; ++i)
    ASSERT_TRUE(loop->spawn(sh("sleep 0.2; echo " + std::to_string(i))).ok());
  EXPECT_EQ(loop->running(), 40u);
  auto start = std::chrono::steady_clock::now();
  std::set<std::string> seen;
  while (auto ev = loop->wait())
    if (auto* e = std::get_if<ChildExit>(&*ev)) seen.insert(e->out);
  EXPECT_EQ(seen.size(), 40u);
  // Run side by side, not one after another (40 x 0.2 s = 8 s).
  EXPECT_LT(std::chrono::steady_clock::now() - start, 6s);
}

}  // namespace
}  // namespace devgraph
