// The driver's placement checks against real checkouts: a primary clone,
// a linked worktree at its canonical place, one nested inside the primary
// clone, and run directories inside and outside the clone.
#include "bundle/placement.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include "support/test_util.h"

namespace devgraph::bundle {
namespace {

class Placement : public ::testing::Test {
 protected:
  void SetUp() override {
    primary = s / "src/app";
    ASSERT_TRUE(make_directories(primary).ok());
    git(primary, {"init", "-q", "-b", "main"});
    test::write_text(primary + "/README.md", "app\n");
    git(primary, {"add", "README.md"});
    git(primary, {"-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "base"});
    roots.home = s.path();
    roots.worktrees = s / "ai/worktrees";
    roots.develop_home = s / "ai/develop";
    canonical = roots.worktrees + "/local/app/develop-b1";
    git(primary, {"worktree", "add", "-q", "-b", "develop/b1", canonical, "main"});
    nested = primary + "/.worktrees/b2";
    git(primary, {"worktree", "add", "-q", "-b", "develop/b2", nested, "main"});
  }

  void git(const std::string& dir, std::vector<std::string> args) {
    args.insert(args.begin(), {"git", "-C", dir});
    auto r = test::run_process(args);
    ASSERT_EQ(r.exit_code, 0) << r.err;
  }

  test::Scratch s;
  guard::Roots roots;
  std::string primary, canonical, nested;
};

TEST_F(Placement, ALinkedWorktreeOutsideEveryCloneIsAllowed) {
  EXPECT_EQ(check_bundle_worktree(canonical, roots), std::nullopt);
}

TEST_F(Placement, APrimaryCloneAsTheWorktreeIsRefused) {
  auto deny = check_bundle_worktree(primary, roots);
  ASSERT_TRUE(deny);
  EXPECT_NE(deny->find("is a primary clone"), std::string::npos) << *deny;
  EXPECT_EQ(deny->find('\n'), std::string::npos);
}

TEST_F(Placement, AWorktreeInsideAPrimaryCloneIsRefused) {
  auto deny = check_bundle_worktree(nested, roots);
  ASSERT_TRUE(deny);
  EXPECT_NE(deny->find("lies inside the primary clone " + primary), std::string::npos) << *deny;
}

TEST_F(Placement, ASymlinkIntoThePrimaryCloneCountsAsTheClone) {
  std::string link = s / "link-to-nested";
  ASSERT_EQ(::symlink(nested.c_str(), link.c_str()), 0);
  EXPECT_TRUE(check_bundle_worktree(link, roots));
}

TEST_F(Placement, ExemptRootsAreHonoured) {
  roots.exempt = {primary};
  EXPECT_EQ(check_bundle_worktree(nested, roots), std::nullopt);
  EXPECT_EQ(check_write_root("run directory", primary + "/runs/r1", roots), std::nullopt);
}

TEST_F(Placement, RunDirectoriesInsideAPrimaryCloneAreRefused) {
  EXPECT_EQ(check_write_root("run directory", roots.develop_home + "/local/app/runs/r1", roots),
            std::nullopt);
  // Inside the linked worktree is not inside the primary clone.
  EXPECT_EQ(check_write_root("run directory", canonical + "/runs/r1", roots), std::nullopt);
  auto deny = check_write_root("run directory", primary + "/.runs/r1", roots);
  ASSERT_TRUE(deny);
  EXPECT_EQ(
      deny->rfind("run directory " + primary + "/.runs/r1 lies inside the primary clone " + primary,
                  0),
      0u)
      << *deny;
}

}  // namespace
}  // namespace devgraph::bundle
