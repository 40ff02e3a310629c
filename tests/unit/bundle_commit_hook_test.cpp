// What a task's commit does with the repository's pre-commit hook's answer
// (src/bundle/commit_hook.h), pure.
#include "bundle/commit_hook.h"

#include <gtest/gtest.h>

#include "git/git.h"

namespace devgraph::bundle {
namespace {

TEST(CommitHook, APassingHookLetsTheCommitGoOn) {
  HookVerdict v = judge_pre_commit(Status{});
  EXPECT_EQ(v.action, HookAction::commit);
  EXPECT_TRUE(v.finding.empty());
}

TEST(CommitHook, ARefusalIsARepairFindingWithTheHooksOutputBounded) {
  Error e = fail(ErrorKind::hook, "the repository's pre-commit hook refused the commit: tab");
  e.output = std::string(3 * git::kHookOutputMax, 'x') + "\nsrc/a.txt:1: tab\n";
  HookVerdict v = judge_pre_commit(e);
  EXPECT_EQ(v.action, HookAction::repair);
  EXPECT_NE(v.finding.find("pre-commit hook refused the commit: tab"), std::string::npos);
  EXPECT_NE(v.finding.find("src/a.txt:1: tab"), std::string::npos) << "the output's tail is kept";
  EXPECT_LT(v.finding.size(), git::kHookOutputMax + 400);
}

TEST(CommitHook, AnyOtherFailureParksTheTaskWithGitsMessage) {
  HookVerdict v = judge_pre_commit(fail("git add failed in /w: index.lock exists"));
  EXPECT_EQ(v.action, HookAction::block);
  EXPECT_EQ(v.why, "git add failed in /w: index.lock exists");
  EXPECT_TRUE(v.finding.empty());
}

}  // namespace
}  // namespace devgraph::bundle
