// Starting a bundle: worktree, cursor at the bundle lane's first node, spec;
// each step done once, so a second start changes nothing.
#include "bundle/start.h"

#include <gtest/gtest.h>

#include "support/fake_git.h"
#include "support/shipped.h"

namespace devgraph::bundle {
namespace {

class StartBundle : public test::RunFixture {
 protected:
  git::FakeGit repo{s / "repo"};
  StartRequest req{"b1", s / "wt/b1", "develop/b1", "main", "# b1\n"};
};

TEST_F(StartBundle, AddsTheWorktreeMovesTheCursorToTheLanesFirstNodeAndWritesTheSpec) {
  auto started = start_bundle(store, graph, repo, req);
  ASSERT_TRUE(started.ok()) << started.error().message;
  EXPECT_EQ(repo.worktrees_added, std::vector<std::string>{s / "wt/b1" + " develop/b1 main"});
  Json c = std::move(store.read()).value()["bundles_runtime"]["b1"];
  EXPECT_EQ(c["node"], graph.lane("bundle")->nodes.front());
  EXPECT_EQ(c["worktree"], s / "wt/b1");
  EXPECT_EQ(c["branch"], "develop/b1");
  EXPECT_EQ(c["base"], "main");
  EXPECT_EQ(test::slurp(started->spec()), "# b1\n");
}

TEST_F(StartBundle, ASecondStartChangesNothing) {
  ASSERT_TRUE(make_directories(s / "wt/b1").ok());
  test::write_text(s / "wt/b1/.git", "gitdir: elsewhere\n");
  ASSERT_TRUE(start_bundle(store, graph, repo, req).ok());
  EXPECT_TRUE(repo.worktrees_added.empty()) << "an existing worktree is used as it is";
  std::string state = test::slurp(s / "run/state.json");
  std::string events = test::slurp(s / "run/events.jsonl");
  req.spec = "# another spec\n";
  ASSERT_TRUE(start_bundle(store, graph, repo, req).ok());
  EXPECT_EQ(test::slurp(s / "run/state.json"), state);
  EXPECT_EQ(test::slurp(s / "run/events.jsonl"), events);
  EXPECT_EQ(test::slurp(s / "run/bundles/b1/spec.md"), "# b1\n");
}

TEST_F(StartBundle, ABadIdIsAUsageErrorAndChangesNothing) {
  std::string state = test::slurp(s / "run/state.json");
  req.bundle = "../b1";
  auto r = start_bundle(store, graph, repo, req);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().kind, ErrorKind::usage);
  EXPECT_EQ(test::slurp(s / "run/state.json"), state);
  EXPECT_TRUE(repo.worktrees_added.empty());
}

}  // namespace
}  // namespace devgraph::bundle
