// cleanup_merged's removal rule against real git: a merged, clean,
// canonical worktree goes with its branch; every other one stays, with the
// reason, and nothing of its work is lost.
#include "orchestrator/cleanup.h"

#include <gtest/gtest.h>

#include "support/test_util.h"
#include "util/fs.h"

namespace devgraph::orchestrator {
namespace {

const std::map<std::string, std::string> kIdentity = {
    {"GIT_AUTHOR_NAME", "T"},           {"GIT_AUTHOR_EMAIL", "t@example.invalid"},
    {"GIT_COMMITTER_NAME", "T"},        {"GIT_COMMITTER_EMAIL", "t@example.invalid"},
    {"GIT_CONFIG_GLOBAL", "/dev/null"}, {"GIT_CONFIG_NOSYSTEM", "1"}};

TEST(Cleanup, KeepReasonsInOrder) {
  WorktreeFacts f{"/w", "develop/b1", true, true, false, false, false};
  EXPECT_EQ(keep_reason(f), Keep::none);
  f.unpushed = true;
  EXPECT_EQ(keep_reason(f), Keep::unpushed);
  f.untracked = true;
  EXPECT_EQ(keep_reason(f), Keep::untracked);
  f.dirty = true;
  EXPECT_EQ(keep_reason(f), Keep::dirty);
  f.merged = false;
  EXPECT_EQ(keep_reason(f), Keep::not_merged);
  f.canonical = false;
  EXPECT_EQ(keep_reason(f), Keep::not_canonical);
  f.branch = "feature/x";
  EXPECT_EQ(keep_reason(f), Keep::not_devgraph);
  f.branch = "";
  EXPECT_EQ(keep_reason(f), Keep::not_devgraph);
  EXPECT_EQ(keep_reason_text(Keep::unpushed), "commits the remote does not have");
}

class CleanupGit : public ::testing::Test {
 protected:
  void SetUp() override {
    sh({"git", "init", "-q", "-b", "main", repo});
    test::write_text(repo + "/README.md", "base\n");
    git(repo, {"add", "README.md"});
    git(repo, {"commit", "-qm", "base"});
  }

  void sh(const std::vector<std::string>& argv) {
    auto r = test::run_process(argv, kIdentity);
    ASSERT_EQ(r.exit_code, 0) << argv[0] << ": " << r.err;
  }
  void git(const std::string& dir, std::vector<std::string> args) {
    args.insert(args.begin(), {"git", "-C", dir});
    sh(args);
  }
  std::string out(const std::string& dir, std::vector<std::string> args) {
    args.insert(args.begin(), {"git", "-C", dir});
    return test::run_process(args, kIdentity).out;
  }

  // develop/<b> in its worktree with one commit, merged into main unless
  // `merge` is false.
  std::string bundle(const std::string& b, bool merge = true) {
    std::string wt = s / ("wt/" + b);
    git(repo, {"worktree", "add", "-q", "-b", "develop/" + b, wt, "main"});
    test::write_text(wt + "/" + b + ".txt", b + "\n");
    git(wt, {"add", b + ".txt"});
    git(wt, {"commit", "-qm", b});
    if (merge) git(repo, {"merge", "-q", "--no-ff", "-m", "merge " + b, "develop/" + b});
    return wt;
  }

  FactsRequest request(const std::string& wt) const { return {wt, wt, "main", false, "", ""}; }

  bool branch_exists(const std::string& b) {
    return test::run_process({"git", "-C", repo, "rev-parse", "-q", "--verify", "refs/heads/" + b},
                             kIdentity)
               .exit_code == 0;
  }

  test::Scratch s;
  std::string repo = s / "repo";
  RealCommandRunner runner;
};

TEST_F(CleanupGit, AMergedCleanCanonicalWorktreeGoesWithItsBranch) {
  std::string wt = bundle("b1");
  auto r = remove_merged(runner, repo, request(wt));
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->kept, Keep::none);
  EXPECT_TRUE(r->removed_worktree);
  EXPECT_TRUE(r->removed_branch) << r->note;
  EXPECT_FALSE(path_exists(wt));
  EXPECT_FALSE(branch_exists("develop/b1"));
}

TEST_F(CleanupGit, EveryWorktreeWithWorkOfItsOwnIsPreservedAsItWas) {
  struct Case {
    std::string name;
    Keep want;
  };
  std::string dirty = bundle("dirty");
  test::write_text(dirty + "/README.md", "changed\n");
  std::string staged = bundle("staged");
  test::write_text(staged + "/new.txt", "x\n");
  git(staged, {"add", "new.txt"});
  std::string untracked = bundle("untracked");
  test::write_text(untracked + "/notes/todo.txt", "keep me\n");
  std::string unmerged = bundle("unmerged", false);
  std::string ahead = bundle("ahead");
  test::write_text(ahead + "/later.txt", "after the merge\n");
  git(ahead, {"add", "later.txt"});
  git(ahead, {"commit", "-qm", "later"});

  const std::pair<std::string, Keep> cases[] = {{dirty, Keep::dirty},
                                                {staged, Keep::dirty},
                                                {untracked, Keep::untracked},
                                                {unmerged, Keep::not_merged},
                                                {ahead, Keep::not_merged}};
  for (const auto& [wt, want] : cases) {
    SCOPED_TRACE(wt);
    std::string before = out(wt, {"status", "--porcelain"}) + out(wt, {"rev-parse", "HEAD"});
    auto r = remove_merged(runner, repo, request(wt));
    ASSERT_TRUE(r) << r.error().message;
    EXPECT_EQ(r->kept, want) << keep_reason_text(r->kept);
    EXPECT_FALSE(r->removed_worktree);
    EXPECT_FALSE(r->removed_branch);
    EXPECT_TRUE(is_directory(wt));
    EXPECT_EQ(out(wt, {"status", "--porcelain"}) + out(wt, {"rev-parse", "HEAD"}), before);
  }
  EXPECT_EQ(test::slurp(untracked + "/notes/todo.txt"), "keep me\n");
}

TEST_F(CleanupGit, AWorktreeAwayFromItsCanonicalPathIsSomeoneElses) {
  std::string wt = bundle("b1");
  FactsRequest req = request(wt);
  req.canonical_path = s / "elsewhere/b1";
  auto r = remove_merged(runner, repo, req);
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->kept, Keep::not_canonical);
  EXPECT_TRUE(is_directory(wt));
  EXPECT_TRUE(branch_exists("develop/b1"));
}

TEST_F(CleanupGit, ABranchThatIsNotDevgraphsOrADetachedHeadStays) {
  std::string wt = s / "wt/mine";
  git(repo, {"worktree", "add", "-q", "-b", "feature/mine", wt, "main"});
  auto r = remove_merged(runner, repo, request(wt));
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->kept, Keep::not_devgraph);
  std::string detached = s / "wt/detached";
  git(repo, {"worktree", "add", "-q", "--detach", detached, "main"});
  r = remove_merged(runner, repo, request(detached));
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->kept, Keep::not_devgraph);
  EXPECT_TRUE(is_directory(wt));
  EXPECT_TRUE(is_directory(detached));
}

// github delivery: the remote's copy decides what is pushed; a squash
// merge leaves the branch out of main, so the PR's state and head decide
// whether it is merged, and git branch -d keeps the branch.
TEST_F(CleanupGit, UnpushedCommitsStayAndASquashMergedPrsWorktreeGoes) {
  std::string origin = s / "origin.git";
  sh({"git", "init", "-q", "--bare", origin});
  git(repo, {"remote", "add", "origin", origin});
  std::string wt = bundle("pushed");
  git(wt, {"push", "-q", "origin", "develop/pushed"});
  FactsRequest req = request(wt);
  req.remote = "origin";
  test::write_text(wt + "/more.txt", "not pushed\n");
  git(wt, {"add", "more.txt"});
  git(wt, {"commit", "-qm", "more"});
  git(repo, {"merge", "-q", "--no-ff", "-m", "merge more", "develop/pushed"});
  auto r = remove_merged(runner, repo, req);
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->kept, Keep::unpushed);
  EXPECT_TRUE(is_directory(wt));

  std::string squashed = bundle("squashed", false);
  std::string head = out(squashed, {"rev-parse", "HEAD"});
  head.pop_back();
  git(repo, {"merge", "-q", "--squash", "develop/squashed"});
  git(repo, {"commit", "-qm", "squash"});
  req = request(squashed);
  req.remote = "origin";
  req.pr_merged = true;
  req.pr_head = head;
  r = remove_merged(runner, repo, req);
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->kept, Keep::none);
  EXPECT_TRUE(r->removed_worktree);
  EXPECT_FALSE(r->removed_branch) << "git branch -d keeps a squash-merged branch";
  EXPECT_NE(r->note.find("git branch -d refused"), std::string::npos) << r->note;
  EXPECT_TRUE(branch_exists("develop/squashed"));
}

TEST_F(CleanupGit, BadInputIsAnErrorAndNothingIsRemoved) {
  std::string wt = bundle("b1");
  FactsRequest req = request(s / "missing");
  auto r = remove_merged(runner, repo, req);
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message.find("is not a directory"), std::string::npos);
  req = request(wt);
  req.default_branch = "no-such-branch";
  r = remove_merged(runner, repo, req);
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message.find("git merge-base failed"), std::string::npos)
      << r.error().message;
  EXPECT_TRUE(is_directory(wt));
  EXPECT_TRUE(branch_exists("develop/b1"));
}

}  // namespace
}  // namespace devgraph::orchestrator
