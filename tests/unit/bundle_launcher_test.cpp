// The driver's launcher over the real persona runtime, for what the
// adapter adds: a stop signal comes out of next() and poll() as
// `interrupted`, stop_all() reaches the runtime, a watched descriptor
// wakes it, and a provider pause is an event.
#include "bundle/launcher.h"

#include <signal.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include "contracts/schema.h"
#include "support/stop_signal_sandbox.h"
#include "support/test_util.h"

namespace devgraph::bundle {
namespace {

using namespace std::chrono_literals;

TEST(Launcher, AStopSignalIsInterruptedAndStopAllEndsTheLaunches) {
  test::StopSignalSandbox sandbox;
  test::Scratch scratch;
  ASSERT_TRUE(make_directories(scratch / "wt").ok());
  agents::RuntimeConfig cfg;
  cfg.backend.binary = test::test_dir() + "/fixtures/fake-cli/fake-claude";
  cfg.bundle = "b1";
  cfg.result_schema = result_schema_path(test::source_dir() + "/skill");
  cfg.kill_grace = 1h;  // never waited out: the child ends on the TERM
  cfg.watch_stop_signals = true;
  auto rt = agents::PersonaRuntime::create(cfg);
  ASSERT_TRUE(rt.ok()) << rt.error().message;
  auto launcher = runtime_launcher(std::move(*rt), Ticker{1h, [] {}});

  ASSERT_EQ(::raise(SIGHUP), 0);
  auto now = launcher->poll();
  ASSERT_TRUE(now.has_value()) << "poll() reports a signal already there";
  EXPECT_EQ(now->kind, LaunchEvent::Kind::interrupted);
  EXPECT_EQ(now->signal, SIGHUP);

  agents::LaunchRequest req;
  req.persona = "developer";
  req.task = "T1";
  req.dispatch = "fake-mode=hang";
  req.worktree = scratch / "wt";
  req.run_dir = scratch.path();
  req.skill_dir = test::source_dir() + "/skill";
  auto id = launcher->launch(req);
  ASSERT_TRUE(id.ok()) << id.error().message;
  auto ev = launcher->next();
  ASSERT_TRUE(ev.has_value());
  EXPECT_EQ(ev->kind, LaunchEvent::Kind::launched);
  ASSERT_EQ(::raise(SIGTERM), 0);
  ev = launcher->next();
  ASSERT_TRUE(ev.has_value());
  EXPECT_EQ(ev->kind, LaunchEvent::Kind::interrupted);
  EXPECT_EQ(ev->signal, SIGTERM);
  EXPECT_EQ(launcher->outstanding(), 1u);

  launcher->stop_all();
  ev = launcher->next();
  ASSERT_TRUE(ev.has_value());
  EXPECT_EQ(ev->kind, LaunchEvent::Kind::completed);
  EXPECT_EQ(ev->id, *id);
  EXPECT_EQ(ev->outcome, "interrupted");
  EXPECT_EQ(ev->result["blockers"], Json::array({"interrupted"}));
  EXPECT_EQ(ev->detail, "interrupted by SIGTERM");
  EXPECT_FALSE(launcher->next().has_value());
}

TEST(Launcher, AWatchedDescriptorWakesNextAndAProviderPauseIsAnEvent) {
  test::Scratch scratch;
  ASSERT_TRUE(make_directories(scratch / "wt").ok());
  agents::RuntimeConfig cfg;
  cfg.backend.binary = test::test_dir() + "/fixtures/fake-cli/fake-claude";
  cfg.bundle = "b1";
  cfg.result_schema = result_schema_path(test::source_dir() + "/skill");
  const long long reset = std::chrono::duration_cast<std::chrono::seconds>(
                              (std::chrono::system_clock::now() + 1h).time_since_epoch())
                              .count();
  ::setenv("FAKE_RESET", std::to_string(reset).c_str(), 1);
  auto rt = agents::PersonaRuntime::create(cfg);
  ::unsetenv("FAKE_RESET");
  ASSERT_TRUE(rt.ok()) << rt.error().message;
  auto launcher = runtime_launcher(std::move(*rt));

  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);
  ASSERT_TRUE(launcher->watch(fds[0]).ok());
  ASSERT_EQ(::write(fds[1], "x", 1), 1);
  auto ev = launcher->next();
  ASSERT_TRUE(ev.has_value());
  EXPECT_EQ(ev->kind, LaunchEvent::Kind::woken);
  EXPECT_EQ(ev->fd, fds[0]);
  char c;
  ASSERT_EQ(::read(fds[0], &c, 1), 1);
  EXPECT_FALSE(launcher->poll().has_value()) << "read: nothing more to wake for";
  launcher->unwatch(fds[0]);
  ASSERT_EQ(::write(fds[1], "x", 1), 1);
  EXPECT_FALSE(launcher->poll().has_value()) << "unwatched";
  ::close(fds[0]);
  ::close(fds[1]);

  agents::LaunchRequest req;
  req.persona = "developer";
  req.task = "T1";
  req.dispatch = "fake-mode=limit-then-good fake-state=" + scratch / "limit";
  req.worktree = scratch / "wt";
  req.run_dir = scratch.path();
  req.skill_dir = test::source_dir() + "/skill";
  ASSERT_TRUE(launcher->launch(req).ok());
  std::optional<LaunchEvent> paused;
  while (auto e = launcher->next()) {
    if (e->kind == LaunchEvent::Kind::paused) {
      paused = e;
      break;
    }
  }
  ASSERT_TRUE(paused.has_value());
  EXPECT_EQ(paused->until, std::chrono::system_clock::time_point(std::chrono::seconds(reset)));
  EXPECT_NE(paused->detail.find("usage limit"), std::string::npos);
  launcher->stop_all();
  while (launcher->next()) {
  }
}

}  // namespace
}  // namespace devgraph::bundle
