// Named crash points: the process that reaches the named point (its Nth
// hit with @N, or the first point of a bare label) is SIGKILLed; any other
// point passes. Each case runs in a child process.
#include "bundle/crash_points.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <functional>

namespace devgraph::bundle {
namespace {

// The signal that ended a child running `body`, or 0 when it exited.
int killed_by(const std::function<void()>& body) {
  pid_t pid = ::fork();
  if (pid == 0) {
    body();
    ::_exit(0);
  }
  int st = 0;
  ::waitpid(pid, &st, 0);
  return WIFSIGNALED(st) ? WTERMSIG(st) : 0;
}

TEST(CrashPoints, TheNamedPointKillsAndOthersPass) {
  EXPECT_EQ(killed_by([] {
              EnvCrashPoints c("commit:b1/T2");
              c.reach("commit", "b1/T1");
              c.reach("committed", "b1/T2");
              c.reach("commit", "b1/T2");
            }),
            SIGKILL);
  EXPECT_EQ(killed_by([] {
              EnvCrashPoints c("commit:b1/T2");
              c.reach("commit", "b1/T1");
              c.reach("push", "develop/b1");
            }),
            0);
}

TEST(CrashPoints, TheNthHitAndABareLabel) {
  EXPECT_EQ(killed_by([] {
              EnvCrashPoints c("saved:b1/T1/tester@2");
              c.reach("saved", "b1/T1/tester");
              ::_exit(3);
            }),
            0);
  EXPECT_EQ(killed_by([] {
              EnvCrashPoints c("saved:b1/T1/tester@2");
              c.reach("saved", "b1/T1/tester");
              c.reach("saved", "b1/T1/tester");
            }),
            SIGKILL);
  EXPECT_EQ(killed_by([] {
              EnvCrashPoints c("push");
              c.reach("push", "develop/b1");
            }),
            SIGKILL);
  EXPECT_EQ(killed_by([] {
              EnvCrashPoints c("");
              c.reach("push", "develop/b1");
            }),
            0);
}

}  // namespace
}  // namespace devgraph::bundle
