// The primary clone's queries (src/git/repo.h), answered by a fake runner.
#include "git/repo.h"

#include <gtest/gtest.h>

#include "support/fake_runner.h"

namespace devgraph::git {
namespace {

TEST(GitRepo, WorktreesLeaveOutThePrimaryCloneAndMarkThePrunableOnes) {
  test::FakeRunner runner;
  runner.answer = [](const CommandSpec& spec) -> Expected<CommandResult> {
    CommandResult r;
    r.exit_code = 0;
    if (spec.argv == std::vector<std::string>{"git", "worktree", "list", "--porcelain"})
      r.out =
          "worktree /src/w\nHEAD 1111\nbranch refs/heads/main\n\n"
          "worktree /wt/develop-b1\nHEAD 2222\nbranch refs/heads/develop/b1\n\n"
          "worktree /wt/gone\nHEAD 3333\ndetached\nprunable gitdir file points to non-existent "
          "location\n\n";
    return r;
  };
  auto list = make_repo_queries(runner, "/src/w")->worktrees();
  ASSERT_TRUE(list.ok()) << list.error().message;
  ASSERT_EQ(list->size(), 2u);
  EXPECT_EQ((*list)[0].path, "/wt/develop-b1");
  EXPECT_EQ((*list)[0].branch, "develop/b1");
  EXPECT_FALSE((*list)[0].prunable);
  EXPECT_EQ((*list)[1].path, "/wt/gone");
  EXPECT_EQ((*list)[1].branch, "");
  EXPECT_TRUE((*list)[1].prunable);
}

}  // namespace
}  // namespace devgraph::git
