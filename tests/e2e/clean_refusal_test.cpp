// `devgraph clean` refusing what it must not clean: a project.yaml that
// names no strategy, an unknown --strategy, another run holding the
// repository's lock, a primary clone with tracked changes or a detached
// HEAD, a directory that is no repository, a bare one or a linked
// worktree, an origin without a default branch. Each refusal exits 3 with
// one line on stderr and a RESULT_JSON status ERROR, and writes nothing:
// no ref moves, nothing appears under AI_ROOT, no commit is lost
// (tests/support/clean_repo.h).
#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <string>

#include "support/clean_repo.h"
#include "support/run_scenario.h"
#include "support/test_util.h"
#include "util/fs.h"
#include "util/json.h"

namespace devgraph {
namespace {

using CleanCli = test::CleanRepo;
using test::result_of;
using test::Snapshot;

// An unknown strategy, and text that is not YAML at all.
TEST_F(CleanCli, AProjectYamlThatNamesNoStrategyIsRefusedWithExitThreeAndNothingWritten) {
  init_github();
  commit_project_yaml("develop:\n  clean:\n    strategy: octopus\n");
  make_merged("feature/merged");
  make_clean();
  advance_main();
  for (const char* text : {"", "develop: [clean: {strategy: merge\n"}) {
    SCOPED_TRACE(text);
    if (*text) commit_project_yaml(text);
    Snapshot before = snapshot();
    auto r = clean();
    expect_refused(r, "project.yaml", before);
    expect_nothing_lost(before, result_of(r));
  }
}

TEST_F(CleanCli, AnotherRunHoldingTheOrchestratorLockIsRefused) {
  init_github();
  make_merged("feature/merged");
  make_clean();
  advance_main();
  std::string home = ai_root + "/develop/acme/widgets";
  ASSERT_TRUE(make_directories(home));
  int fd = ::open((home + "/orchestrator.lock").c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(::flock(fd, LOCK_EX | LOCK_NB), 0);
  Snapshot before = snapshot();
  auto r = clean();
  ::close(fd);
  expect_refused(r, "", before);
  expect_nothing_lost(before, result_of(r));
}

TEST_F(CleanCli, TrackedChangesInThePrimaryCloneAreRefused) {
  init_github();
  make_merged("feature/merged");
  make_clean();
  advance_main();
  test::write_text(repo + "/README.md", "changed\n");
  Snapshot before = snapshot();
  auto r = clean();
  expect_refused(r, "", before);
  EXPECT_EQ(test::slurp(repo + "/README.md"), "changed\n");
  expect_nothing_lost(before, result_of(r));
}

TEST_F(CleanCli, UntrackedFilesInThePrimaryCloneAreFine) {
  init_github();
  make_merged("feature/merged");
  test::write_text(repo + "/scratch-notes.txt", "mine\n");
  Snapshot before = snapshot();
  Json res = finished(clean());
  expect_branch(res, before, "feature/merged", {"MERGED", "cleaned", "", true, false});
  EXPECT_EQ(test::slurp(repo + "/scratch-notes.txt"), "mine\n");
  expect_nothing_lost(before, res);
}

TEST_F(CleanCli, DetachedHeadInThePrimaryCloneIsRefused) {
  init_github();
  make_merged("feature/merged");
  make_clean();
  advance_main();
  git({"checkout", "-q", "--detach", "main"});
  Snapshot before = snapshot();
  auto r = clean();
  expect_refused(r, "", before);
  expect_nothing_lost(before, result_of(r));
}

TEST_F(CleanCli, ADirectoryThatIsNoRepositoryIsRefused) {
  init_github();
  make_merged("feature/merged");
  std::string plain = scratch / "plain";
  ASSERT_TRUE(make_directories(plain));
  Snapshot before = snapshot();
  auto r = clean({}, plain);
  expect_refused(r, "", before);
  auto r2 = clean({"--repo", plain});
  expect_refused(r2, "", before);
  EXPECT_EQ(test::entries(plain), "");
  expect_nothing_lost(before, result_of(r2));
}

TEST_F(CleanCli, ABareRepositoryAndALinkedWorktreeAreRefused) {
  init_github();
  make_merged("feature/merged");
  make_merged_with_worktree();
  Snapshot before = snapshot();
  expect_refused(clean({"--repo", remote}), "", before);
  auto r = clean({}, canonical("feature-merged-wt"));
  expect_refused(r, "", before);
  expect_nothing_lost(before, result_of(r));
}

TEST_F(CleanCli, AnUnknownStrategyFlagIsRefused) {
  init_github();
  make_merged("feature/merged");
  Snapshot before = snapshot();
  auto r = clean({"--strategy", "octopus"});
  expect_refused(r, "--strategy", before);
  expect_nothing_lost(before, result_of(r));
}

TEST_F(CleanCli, NoDefaultBranchOnOriginIsRefused) {
  init_github();
  make_merged("feature/merged");
  make_clean();
  // origin keeps the work under another name only: no HEAD it names, no
  // main, no master.
  git({"push", "-q", "origin", "main:trunk"});
  git({"--git-dir", remote, "update-ref", "-d", "refs/heads/main"}, scratch.path());
  git({"remote", "set-head", "origin", "-d"});
  git({"fetch", "-q", "--prune", "origin"});
  Snapshot before = snapshot();
  auto r = clean();
  expect_refused(r, "", before);
  expect_nothing_lost(before, result_of(r));
}

}  // namespace
}  // namespace devgraph
