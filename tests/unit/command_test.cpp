#include "proc/command.h"

#include <gtest/gtest.h>
#include <signal.h>

#include "support/stop_signal_sandbox.h"
#include "support/test_util.h"

namespace devgraph {
namespace {

TEST(Command, CapturesOutputAndExitCode) {
  auto r = run_command({.argv = {"sh", "-c", "echo out; echo err >&2; exit 3"}});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->exit_code, 3);
  EXPECT_EQ(r->out, "out\n");
  EXPECT_EQ(r->err, "err\n");
}

TEST(Command, ArgvIsNeverAShell) {
  auto r = run_command({.argv = {"echo", "$HOME; rm -rf /", "a b"}});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->out, "$HOME; rm -rf / a b\n");
}

TEST(Command, MissingProgramIsAnError) {
  auto r = run_command({.argv = {"devgraph-no-such-program-xyz"}});
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("devgraph-no-such-program-xyz"), std::string::npos);
}

TEST(Command, InputCwdAndEnvironment) {
  auto r = run_command({.argv = {"sh", "-c", "cat; pwd; echo ${DG_X:-unset}"},
                        .cwd = "/",
                        .env = {{"DG_X", "set"}},
                        .input = "hello\n"});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->out, "hello\n/\nset\n");
}

TEST(Command, TimeoutKillsTheWholeGroup) {
  // The grandchild keeps the pipe open; only a group kill ends it.
  auto r = run_command({.argv = {"sh", "-c", "sleep 30 & sleep 30; wait"},
                        .timeout = std::chrono::milliseconds(100),
                        .kill_grace = std::chrono::milliseconds(100)});
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(r->timed_out);
  EXPECT_FALSE(r->ok());
}

TEST(Command, AChildThatClosesItsOutputIsStillBoundByTheTimeout) {
  const auto start = std::chrono::steady_clock::now();
  auto r = run_command({.argv = {"sh", "-c", "exec >/dev/null 2>&1; sleep 30"},
                        .timeout = std::chrono::milliseconds(200),
                        .kill_grace = std::chrono::milliseconds(100)});
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(r->timed_out);
  EXPECT_EQ(r->term_signal, SIGTERM);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(10));
}

TEST(Command, AnExitWhileABackgroundChildHoldsTheOutputStillReadsIt) {
  // The shell exits at once; its background child writes later and ends
  // the output when it ends.
  auto r = run_command({.argv = {"sh", "-c", "(sleep 0.2; echo late) & echo early; exit 4"}});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->exit_code, 4);
  EXPECT_EQ(r->out, "early\nlate\n");
  EXPECT_FALSE(r->timed_out);
}

TEST(Command, OutputIsBoundedKeepingTheTail) {
  auto r = run_command(
      {.argv = {"sh", "-c", "yes x | head -c 1000000; echo END"}, .max_output_bytes = 1024});
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(r->output_truncated);
  EXPECT_EQ(r->out.size(), 1024u);
  EXPECT_EQ(r->out.substr(r->out.size() - 4), "END\n");
}

TEST(Command, TheWaitCallbackRunsWhileTheCommandRuns) {
  // The command lives 0.4 s; the callback comes every 50 ms meanwhile.
  int ticks = 0;
  auto start = std::chrono::steady_clock::now();
  std::chrono::steady_clock::duration first{};
  auto r = run_command({.argv = {"sleep", "0.4"},
                        .on_wait =
                            [&] {
                              if (ticks++ == 0) first = std::chrono::steady_clock::now() - start;
                            },
                        .wait_tick = std::chrono::milliseconds(50)});
  const auto took = std::chrono::steady_clock::now() - start;
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->exit_code, 0);
  // About eight ticks in 0.4 s; a loaded machine may lose some, never all,
  // and never ticks faster than asked.
  EXPECT_GE(ticks, 3);
  EXPECT_LE(ticks, took / std::chrono::milliseconds(50) + 1);
  EXPECT_GE(first, std::chrono::milliseconds(50));
}

TEST(Command, NoWaitCallbackWithoutOneOrWithoutATick) {
  int ticks = 0;
  auto r = run_command({.argv = {"sleep", "0.1"},
                        .on_wait = [&] { ++ticks; },
                        .wait_tick = std::chrono::milliseconds(0)});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(ticks, 0);
  auto plain = run_command({.argv = {"sleep", "0.1"}, .wait_tick = std::chrono::milliseconds(10)});
  ASSERT_TRUE(plain.ok());
  EXPECT_EQ(plain->exit_code, 0);
}

TEST(Command, AStopSignalEndsTheCommandsGroupAndSaysSo) {
  test::StopSignalSandbox sandbox;
  // The command itself sends the Ctrl-C while run() waits on it; the
  // grandchild sleep must go too.
  auto r = run_command({.argv = {"sh", "-c", "kill -INT $PPID; sleep 1000 & wait"},
                        .kill_grace = std::chrono::minutes(10),
                        .stop_on_signal = true});
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->interrupted_by, SIGINT);
  EXPECT_TRUE(r->interrupted());
  EXPECT_EQ(r->term_signal, SIGTERM) << "a TERM, long before the grace ran out";
  EXPECT_FALSE(r->timed_out);
  EXPECT_FALSE(r->ok());
}

TEST(Command, ACommandThatIgnoresTheTermIsKilledAfterTheGrace) {
  test::StopSignalSandbox sandbox;
  auto r = run_command({.argv = {"sh", "-c", "trap '' TERM; kill -TERM $PPID; sleep 1000"},
                        .kill_grace = std::chrono::milliseconds(100),
                        .stop_on_signal = true});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->interrupted_by, SIGTERM);
  EXPECT_EQ(r->term_signal, SIGKILL);
}

TEST(Command, ASecondStopSignalKillsWithoutWaitingOutTheGrace) {
  test::StopSignalSandbox sandbox;
  // The first signal's TERM runs the trap, which sends the second; the
  // shell lives on (a trap interrupts `wait` at once, where it would wait
  // for a foreground job), so only a KILL ends it.
  const auto start = std::chrono::steady_clock::now();
  auto r = run_command(
      {.argv = {"sh", "-c",
                "trap 'kill -HUP $PPID' TERM; sleep 1000 & kill -INT $PPID; wait; exec sleep 1000"},
       .kill_grace = std::chrono::hours(1),
       .stop_on_signal = true});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->interrupted_by, SIGINT) << "the first signal is the reason";
  EXPECT_EQ(r->term_signal, SIGKILL);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::minutes(1));
}

TEST(Command, AStopSignalPendingBeforehandKeepsTheCommandFromStarting) {
  test::StopSignalSandbox sandbox;
  test::Scratch scratch;
  ASSERT_EQ(::raise(SIGHUP), 0);
  auto r = run_command(
      {.argv = {"sh", "-c", "echo ran > '" + scratch / "ran" + "'"}, .stop_on_signal = true});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->interrupted_by, SIGHUP);
  EXPECT_EQ(r->exit_code, -1);
  EXPECT_FALSE(path_exists(scratch / "ran"));
  // Reported once: the next command runs.
  auto next = run_command({.argv = {"true"}, .stop_on_signal = true});
  ASSERT_TRUE(next.ok());
  EXPECT_TRUE(next->ok());
}

TEST(Command, WithoutTheOptInAStopSignalIsNotTheCommandsBusiness) {
  test::StopSignalSandbox sandbox;  // holds the signal pending, then drops it
  auto r = run_command({.argv = {"sh", "-c", "kill -INT $PPID; echo done"}});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->exit_code, 0);
  EXPECT_EQ(r->out, "done\n");
  EXPECT_EQ(r->interrupted_by, 0);
}

}  // namespace
}  // namespace devgraph
