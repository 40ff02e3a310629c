// doctor's look at what runs left behind (src/doctor/leftovers.h): stale
// locks from a lock file's note and the runs' states, orphaned worktrees
// from git's list and the runs' records, and the runs that wait for a
// person; the gathering on scratch directories, never changing them.
#include "doctor/leftovers.h"

#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <filesystem>
#include <map>

#include "support/fake_runner.h"
#include "support/test_util.h"
#include "util/fs.h"

namespace devgraph::doctor {
namespace {

using test::dead_pid;

std::map<std::string, std::string> snapshot(const std::string& dir) {
  return test::tree_snapshot(dir);
}

TEST(DoctorLeftovers, PidInNoteReadsOnlyWhatTheOrchestratorWrites) {
  EXPECT_EQ(pid_in_note("pid 4242"), 4242);
  EXPECT_EQ(pid_in_note("pid 4242\n"), 4242);
  EXPECT_FALSE(pid_in_note(""));
  EXPECT_FALSE(pid_in_note("pid "));
  EXPECT_FALSE(pid_in_note("pid 12a"));
  EXPECT_FALSE(pid_in_note("4242"));
  EXPECT_FALSE(pid_in_note("pid 0"));
  EXPECT_FALSE(pid_in_note("pid 99999999999"));
}

TEST(DoctorLeftovers, ADeadOwnerWithARunStillMarkedRunningIsAStaleLock) {
  LockFacts f;
  f.path = "/ai/develop/local/w/orchestrator.lock";
  f.exists = true;
  f.pid = 4242;
  f.runs = {{"20260101T000000Z", "complete", ""}, {"20260102T000000Z", "running", ""}};
  Finding stale = check_lock(f);
  EXPECT_EQ(stale.level, Level::warning);
  EXPECT_EQ(stale.id, "lock");
  EXPECT_EQ(stale.message,
            "stale lock: /ai/develop/local/w/orchestrator.lock names pid 4242, which is gone, but "
            "run 20260102T000000Z is still marked running (its orchestrator was killed)");
  EXPECT_EQ(stale.fix,
            "run `devgraph run` in the repository to resume it; nothing is locked meanwhile");
  f.runs[1].mode = "clean";
  EXPECT_NE(check_lock(f).fix.find("`devgraph clean`"), std::string::npos);
}

TEST(DoctorLeftovers, ALiveOwnerOrFinishedRunsAreNoStaleLock) {
  LockFacts f;
  f.exists = true;
  f.pid = 4242;
  f.runs = {{"r1", "complete", ""}, {"r2", "handoff", ""}};
  EXPECT_EQ(check_lock(f).level, Level::ok);
  f.runs.push_back({"r3", "running", ""});
  f.pid_alive = true;
  Finding held = check_lock(f);
  EXPECT_EQ(held.level, Level::ok);
  EXPECT_EQ(held.message, "orchestrator.lock: held by pid 4242, run r3 in progress");
}

TEST(DoctorLeftovers, GatherLockReadsTheNoteAndWhetherItsPidLives) {
  test::Scratch s;
  test::write_text(s / "runs/r1/state.json", R"({"run_id": "r1", "status": "running"})");
  test::write_text(s / "runs/r2/state.json", R"({"status": "complete", "mode": "clean"})");
  test::write_text(s / "runs/r3/state.json", "not json");
  int pid = dead_pid();
  test::write_text(s / "orchestrator.lock", "pid " + std::to_string(pid));
  auto before = snapshot(s.path());
  auto runs = gather_runs(s.path());
  ASSERT_EQ(runs.size(), 2u);
  EXPECT_EQ(runs[0].id, "r1");
  EXPECT_EQ(runs[0].status, "running");
  EXPECT_EQ(runs[1].mode, "clean");
  LockFacts dead = gather_lock(s.path(), runs);
  EXPECT_TRUE(dead.exists);
  EXPECT_EQ(dead.pid, pid);
  EXPECT_FALSE(dead.pid_alive);
  EXPECT_EQ(check_lock(dead).level, Level::warning);
  EXPECT_EQ(snapshot(s.path()), before);
  test::write_text(s / "orchestrator.lock", "pid " + std::to_string(::getpid()));
  LockFacts alive = gather_lock(s.path(), runs);
  EXPECT_TRUE(alive.pid_alive);
  EXPECT_EQ(check_lock(alive).level, Level::ok);
}

WorktreeFacts worktrees(std::vector<git::WorktreeEntry> registered) {
  WorktreeFacts f;
  f.top = "/src/w";
  f.canonical_dir = "/ai/worktrees/local/w";
  f.registered = std::move(registered);
  return f;
}

TEST(DoctorLeftovers, APrunableWorktreeIsAProblemAtItsCanonicalPathAndAWarningElsewhere) {
  auto out = check_worktrees(worktrees(
      {{"/ai/worktrees/local/w/develop-b1", "develop/b1", true}, {"/tmp/scratch-wt", "", true}}));
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].level, Level::problem);
  EXPECT_EQ(out[0].id, "worktree.prunable");
  EXPECT_EQ(out[0].message,
            "orphaned worktree /ai/worktrees/local/w/develop-b1 (develop/b1): registered, but its "
            "directory is gone; git refuses a new worktree for it there");
  EXPECT_EQ(out[0].fix, "run: git -C /src/w worktree prune");
  EXPECT_EQ(out[1].level, Level::warning);
}

TEST(DoctorLeftovers, ADevelopWorktreeNoRunNamesIsOrphaned) {
  auto f = worktrees({{"/ai/worktrees/local/w/develop-b1", "develop/b1", false},
                      {"/ai/worktrees/local/w/develop-b2", "develop/b2", false},
                      {"/ai/worktrees/local/w/feature-x", "feature/x", false},
                      {"/elsewhere/develop-b3", "develop/b3", false}});
  f.recorded = {"/ai/worktrees/local/w/develop-b2"};
  f.strays = {"/ai/worktrees/local/w/old"};
  auto out = check_worktrees(f);
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].id, "worktree.unowned");
  EXPECT_EQ(out[0].level, Level::warning);
  EXPECT_NE(out[0].message.find("develop-b1 (develop/b1): no run of this repository names it"),
            std::string::npos);
  EXPECT_EQ(out[1].id, "worktree.stray");
  EXPECT_EQ(out[1].level, Level::warning);
}

TEST(DoctorLeftovers, NoOrphanIsOneOk) {
  auto f = worktrees({{"/ai/worktrees/local/w/develop-b1", "develop/b1", false}});
  f.recorded = {"/ai/worktrees/local/w/develop-b1"};
  auto out = check_worktrees(f);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].level, Level::ok);
  EXPECT_EQ(out[0].message, "1 linked worktree(s), none orphaned");
}

TEST(DoctorLeftovers, GatherWorktreesReadsGitsListTheRunsAndTheDirectory) {
  test::Scratch s;
  const std::string canonical = s / "wt/local/w";
  test::write_text(canonical + "/develop-b1/.git", "gitdir: /nowhere\n");
  ASSERT_TRUE(make_directories(canonical + "/develop-b2").ok());
  test::write_text(
      s / "home/runs/r1/state.json",
      Json{{"bundles", Json::array({{{"id", "b1"}, {"worktree", canonical + "/develop-b1"}}})}}
          .dump());
  test::FakeRunner runner;
  runner.answer = [&](const CommandSpec& spec) -> Expected<CommandResult> {
    CommandResult r;
    r.exit_code = 0;
    if (spec.argv == std::vector<std::string>{"git", "worktree", "list", "--porcelain"})
      r.out = "worktree /src/w\nHEAD abc\nbranch refs/heads/main\n\nworktree " + canonical +
              "/develop-b1\nHEAD abc\nbranch refs/heads/develop/b1\n\nworktree " + canonical +
              "/develop-b9\nHEAD abc\nbranch refs/heads/develop/b9\nprunable gitdir file points "
              "to non-existent location\n\n";
    return r;
  };
  auto before = snapshot(s.path());
  auto f = gather_worktrees(runner, "/src/w", canonical, s / "home", s.path());
  ASSERT_FALSE(f.error) << *f.error;
  ASSERT_EQ(f.registered.size(), 2u);
  EXPECT_FALSE(f.registered[0].prunable);
  EXPECT_TRUE(f.registered[1].prunable);
  EXPECT_EQ(f.recorded.count(canonical + "/develop-b1"), 1u);
  EXPECT_EQ(f.strays, (std::vector<std::string>{canonical + "/develop-b2"}));
  auto out = check_worktrees(f);
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].id, "worktree.prunable");
  EXPECT_EQ(out[1].id, "worktree.stray");
  EXPECT_EQ(snapshot(s.path()), before);
}

TEST(DoctorLeftovers, EachItemWaitingForAPersonIsAWarningWithItsAnswer) {
  std::vector<inbox::Item> items(12);
  for (size_t i = 0; i < items.size(); ++i) {
    items[i].key = "b" + std::to_string(i + 1);
    items[i].run_id = "r1";
    items[i].reason = "the driver kept\nfailing";
  }
  auto out = check_waiting(items);
  ASSERT_EQ(out.size(), kMaxWaiting + 1);
  EXPECT_EQ(out[0].level, Level::warning);
  EXPECT_EQ(out[0].message, "b1 (run r1) waits for a person: the driver kept failing");
  EXPECT_EQ(out[0].fix,
            "answer it: devgraph answer b1 --run r1 (--text TEXT | --approve | --reject)");
  EXPECT_EQ(out.back().message, "2 more item(s) wait for a person");
  auto none = check_waiting(std::vector<inbox::Item>{});
  ASSERT_EQ(none.size(), 1u);
  EXPECT_EQ(none[0].level, Level::ok);
}

}  // namespace
}  // namespace devgraph::doctor
