#include "proc/supervisor.h"

#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include "agents/backend.h"
#include "proc/stop_signals.h"
#include "support/stop_signal_sandbox.h"

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

TEST(Supervisor, MarkedStdoutLinesAreReportedWhileTheChildRuns) {
  auto loop = ChildLoop::create();
  ASSERT_TRUE(loop.ok());
  // The child prints, then waits for ever: the lines must come before any
  // exit. A line split across writes is one line; stderr is not looked at;
  // a line past the cap is cut.
  ChildSpec spec =
      sh("printf 'plain\\nReconn'; printf 'ecting... 1/5\\nReconnecting on stderr\\n' >&2;"
         " printf 'ecting... 2/5\\nafter\\n'; head -c 20000 /dev/zero | tr '\\0' R;"
         " printf 'econnecting\\n'; exec sleep 600");
  spec.stdout_line_marks = {"Reconnecting", "RRRR"};
  auto id = loop->spawn(spec);
  ASSERT_TRUE(id.ok());
  std::vector<std::string> lines;
  while (lines.size() < 2) {
    auto ev = loop->wait();
    ASSERT_TRUE(ev.has_value());
    ASSERT_FALSE(std::holds_alternative<ChildExit>(*ev)) << "exited before its lines were seen";
    if (auto* l = std::get_if<OutputLine>(&*ev)) {
      EXPECT_EQ(l->id, *id);
      lines.push_back(l->line);
    }
  }
  EXPECT_EQ(lines[0], "Reconnecting... 2/5");
  EXPECT_EQ(lines[1], std::string(kMaxMarkedLine, 'R'));
  loop->terminate(*id, 0ms);
  ChildExit e = wait_exit(*loop);
  EXPECT_NE(e.term_signal, 0) << "it was still running";
  EXPECT_NE(e.out.find("after\n"), std::string::npos);
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

// -- stop signals -------------------------------------------------------------

bool blocked(int sig) {
  sigset_t now;
  ::pthread_sigmask(SIG_SETMASK, nullptr, &now);
  return sigismember(&now, sig) == 1;
}

// The hex mask of a /proc/PID/status line such as "SigBlk:\t0000...".
unsigned long long status_mask(const std::string& status, const std::string& name) {
  size_t at = status.find(name + ":");
  if (at == std::string::npos) return ~0ull;
  return std::stoull(status.substr(at + name.size() + 1), nullptr, 16);
}

unsigned long long bit(int sig) {
  return 1ull << (sig - 1);
}

TEST(StopSignals, TheLastWatcherPutsTheMaskBackAsItFoundIt) {
  // No signal is sent here, so nothing can be pending when the mask opens.
  if (blocked(SIGINT) || blocked(SIGTERM) || blocked(SIGHUP))
    GTEST_SKIP() << "the test runner blocks a stop signal itself";
  {
    auto first = StopSignals::watch();
    ASSERT_TRUE(first.ok()) << first.error().message;
    EXPECT_GE(first->fd(), 0);
    auto second = StopSignals::watch();
    ASSERT_TRUE(second.ok());
    EXPECT_EQ(second->fd(), first->fd()) << "one descriptor for all watchers";
    EXPECT_TRUE(blocked(SIGINT) && blocked(SIGTERM) && blocked(SIGHUP));
    StopSignals moved = std::move(*second);
    EXPECT_EQ(second->fd(), -1) << "a moved-from watcher watches nothing";
  }
  EXPECT_FALSE(blocked(SIGINT) || blocked(SIGTERM) || blocked(SIGHUP));
  // A signal the caller had blocked itself stays blocked.
  test::StopSignalSandbox sandbox;
  { auto w = StopSignals::watch(); }
  EXPECT_TRUE(blocked(SIGINT) && blocked(SIGTERM) && blocked(SIGHUP));
}

TEST(StopSignals, EveryWatcherHearsOfEachSignalOnce) {
  test::StopSignalSandbox sandbox;
  auto a = StopSignals::watch();
  auto b = StopSignals::watch();
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(a->take(), 0);
  ASSERT_EQ(::raise(SIGINT), 0);
  EXPECT_EQ(a->take(), SIGINT);
  EXPECT_EQ(a->take(), 0);
  EXPECT_TRUE(b->has_unseen()) << "a read it from the descriptor; b has not been told";
  EXPECT_EQ(b->take(), SIGINT);
  EXPECT_FALSE(b->has_unseen());
  auto late = StopSignals::watch();
  ASSERT_TRUE(late.ok());
  EXPECT_EQ(late->take(), 0) << "a signal read before it began is not news to it";
}

TEST(StopSignals, ASignalThisProcessIgnoresStaysIgnored) {
  test::StopSignalSandbox sandbox;  // restores SIGHUP's disposition afterwards
  ASSERT_NE(::signal(SIGHUP, SIG_IGN), SIG_ERR);
  auto w = StopSignals::watch();
  ASSERT_TRUE(w.ok());
  ASSERT_EQ(::raise(SIGHUP), 0);
  EXPECT_EQ(w->take(), 0) << "nohup's HUP is not a stop";
  ASSERT_EQ(::raise(SIGTERM), 0);
  EXPECT_EQ(w->take(), SIGTERM);
}

TEST(Supervisor, AStopSignalWakesTheWaitAsAnEventAndStopsNothing) {
  test::StopSignalSandbox sandbox;
  auto loop = ChildLoop::create();
  ASSERT_TRUE(loop.ok());
  ASSERT_TRUE(loop->watch_stop_signals().ok());
  ASSERT_TRUE(loop->watch_stop_signals().ok()) << "a second call changes nothing";
  // The child sends the signal while the loop is blocked waiting for it.
  auto id = loop->spawn(sh("kill -INT $PPID; exec sleep 1000"));
  ASSERT_TRUE(id.ok());
  auto ev = loop->wait();
  ASSERT_TRUE(ev.has_value());
  auto* stop = std::get_if<StopRequested>(&*ev);
  ASSERT_NE(stop, nullptr) << "event index " << ev->index();
  EXPECT_EQ(stop->signal, SIGINT);
  EXPECT_EQ(loop->running(), 1u) << "what to stop is the caller's decision";
  loop->terminate(*id, 60s);
  ChildExit e = wait_exit(*loop);
  EXPECT_EQ(e.term_signal, SIGTERM);
  EXPECT_FALSE(loop->wait().has_value());
}

TEST(Supervisor, AStopSignalAlreadyPendingIsReportedEvenWithNothingElseToWaitFor) {
  test::StopSignalSandbox sandbox;
  auto loop = ChildLoop::create();
  ASSERT_TRUE(loop.ok());
  ASSERT_TRUE(loop->watch_stop_signals().ok());
  EXPECT_FALSE(loop->wait().has_value()) << "watching alone is nothing to wait for";
  ASSERT_EQ(::raise(SIGTERM), 0);
  auto ev = loop->wait();
  ASSERT_TRUE(ev.has_value());
  ASSERT_TRUE(std::holds_alternative<StopRequested>(*ev));
  EXPECT_EQ(std::get<StopRequested>(*ev).signal, SIGTERM);
  EXPECT_FALSE(loop->wait().has_value()) << "reported once";
}

TEST(Supervisor, AStopSignalReadElsewhereIsStillReportedByTheLoop) {
  test::StopSignalSandbox sandbox;
  auto loop = ChildLoop::create();
  ASSERT_TRUE(loop.ok());
  ASSERT_TRUE(loop->watch_stop_signals().ok());
  auto other = StopSignals::watch();  // a command running meanwhile, say
  ASSERT_TRUE(other.ok());
  ASSERT_EQ(::raise(SIGHUP), 0);
  EXPECT_EQ(other->take(), SIGHUP);
  auto ev = loop->wait(loop->clock().steady());
  ASSERT_TRUE(ev.has_value());
  EXPECT_EQ(std::get<StopRequested>(*ev).signal, SIGHUP);
}

TEST(Supervisor, ALoopThatDoesNotWatchLeavesStopSignalsAlone) {
  test::StopSignalSandbox sandbox;  // keeps the raised signal pending, then drops it
  auto loop = ChildLoop::create();
  ASSERT_TRUE(loop.ok());
  ASSERT_EQ(::raise(SIGINT), 0);
  ASSERT_TRUE(loop->spawn(sh("exit 0")).ok());
  EXPECT_EQ(wait_exit(*loop).exit_code, 0);
  EXPECT_FALSE(loop->wait().has_value());
}

TEST(Supervisor, ChildrenOfAWatchingLoopStartWithTheStopSignalsAtTheirDefaults) {
  // The parent blocks all three, and ignores one of them.
  test::StopSignalSandbox sandbox;
  ASSERT_NE(::signal(SIGINT, SIG_IGN), SIG_ERR);
  auto loop = ChildLoop::create();
  ASSERT_TRUE(loop.ok());
  ASSERT_TRUE(loop->watch_stop_signals().ok());
  ChildSpec status;
  status.argv = {"cat", "/proc/self/status"};
  ASSERT_TRUE(loop->spawn(status).ok());
  ChildExit e = wait_exit(*loop);
  ASSERT_EQ(e.exit_code, 0) << e.err;
  EXPECT_EQ(status_mask(e.out, "SigBlk"), 0u) << e.out;
  EXPECT_EQ(status_mask(e.out, "SigIgn") & (bit(SIGINT) | bit(SIGTERM) | bit(SIGHUP)), 0u) << e.out;
  // The descriptor is not inherited either.
  ChildSpec fds;
  fds.argv = {"ls", "-l", "/proc/self/fd/"};
  ASSERT_TRUE(loop->spawn(fds).ok());
  e = wait_exit(*loop);
  EXPECT_EQ(e.out.find("signalfd"), std::string::npos) << e.out;
  // And a TERM ends a child as it always would.
  ChildSpec sleeper;
  sleeper.argv = {"sleep", "1000"};
  sleeper.kill_grace = 60s;
  auto id = loop->spawn(sleeper);
  ASSERT_TRUE(id.ok());
  loop->terminate(*id);
  EXPECT_EQ(wait_exit(*loop).term_signal, SIGTERM);
}

TEST(Supervisor, AShorterGraceBringsTheKillForward) {
  test::StopSignalSandbox sandbox;
  auto loop = ChildLoop::create();
  ASSERT_TRUE(loop.ok());
  ASSERT_TRUE(loop->watch_stop_signals().ok());
  // The stop signal says the child has set its trap: TERM cannot end it.
  auto id = loop->spawn(sh("trap '' TERM; kill -INT $PPID; sleep 1000; sleep 1000"));
  ASSERT_TRUE(id.ok());
  auto ev = loop->wait();
  ASSERT_TRUE(ev.has_value());
  ASSERT_TRUE(std::holds_alternative<StopRequested>(*ev));
  auto start = std::chrono::steady_clock::now();
  loop->terminate(*id, 1h);
  loop->terminate(*id, 2h);  // a later KILL changes nothing
  loop->terminate(*id, 0ms);
  ChildExit e = wait_exit(*loop);
  EXPECT_EQ(e.term_signal, SIGKILL);
  EXPECT_FALSE(e.timed_out);
  EXPECT_LT(std::chrono::steady_clock::now() - start, 60s);
}

}  // namespace
}  // namespace devgraph
