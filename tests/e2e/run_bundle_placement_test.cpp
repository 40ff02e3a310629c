// `devgraph run-bundle` and `devgraph demo` put their worktree and write
// locations to the placement guard before writing anything: a worktree
// inside a primary clone, a primary clone used as the worktree, a run
// directory inside a clone, and an AI_ROOT inside a clone are refused with
// one BLOCKED line and nothing written.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include "support/test_util.h"
#include "util/json.h"

namespace devgraph {
namespace {

class RunBundlePlacement : public ::testing::Test {
 protected:
  void SetUp() override {
    repo = s / "repo";
    ASSERT_TRUE(make_directories(repo).ok());
    git(repo, {"init", "-q", "-b", "main"});
    test::write_text(repo + "/README.md", "app\n");
    git(repo, {"add", "README.md"});
    git(repo, {"-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "base"});
    // A fake agent that leaves a mark: it must never run.
    fake = s / "fake-claude";
    test::write_text(fake, "#!/bin/sh\necho launched >> \"$0.launched\"\nexit 1\n");
    ASSERT_EQ(::chmod(fake.c_str(), 0755), 0);
  }

  void git(const std::string& dir, std::vector<std::string> args) {
    args.insert(args.begin(), {"git", "-C", dir});
    auto r = test::run_process(args);
    ASSERT_EQ(r.exit_code, 0) << r.err;
  }

  // A run at `run_dir` whose bundle b1 sits at plan_bundle in `worktree`.
  void make_run(const std::string& run_dir, const std::string& worktree) {
    auto init = test::run_devgraph({"checkpoint", run_dir, "init", "--repo", repo,
                                    "--default-branch", "main", "--merge",
                                    R"({"delivery": "local", "commands": {"test": "true"}})"});
    ASSERT_EQ(init.exit_code, 0) << init.err;
    Json merge = {{"worktree", worktree}, {"branch", "develop/b1"}, {"base", "main"}};
    auto mv =
        test::run_devgraph({"checkpoint", run_dir, "move", "--bundle", "b1", "--node",
                            "plan_bundle", "--event", "BUNDLE_STARTED", "--merge", dump_py(merge)});
    ASSERT_EQ(mv.exit_code, 0) << mv.err;
  }

  // Runs the driver; expects the refusal and that nothing was written.
  void expect_refused(const std::string& run_dir, const std::string& worktree,
                      const std::string& words) {
    std::string events = test::slurp(run_dir + "/events.jsonl");
    std::string state = test::slurp(run_dir + "/state.json");
    auto r = test::run_devgraph({"run-bundle", run_dir, "--bundle", "b1", "--claude-bin", fake},
                                {{"AI_ROOT", s / "ai"}, {"DEVELOP_GUARD_EXEMPT", ""}});
    EXPECT_EQ(r.exit_code, 3) << r.out << r.err;
    auto pos = r.out.rfind("RESULT_JSON: ");
    ASSERT_NE(pos, std::string::npos) << r.out;
    Json result = Json::parse(r.out.substr(pos + 13));
    EXPECT_EQ(result["status"], "BLOCKED");
    EXPECT_EQ(result["human_required"], true);
    std::string summary = result["summary"];
    EXPECT_EQ(summary.rfind("placement guard: ", 0), 0u) << summary;
    EXPECT_NE(summary.find(words), std::string::npos) << summary;
    EXPECT_EQ(summary.find('\n'), std::string::npos);
    // Nothing written: no bundle directory, no driver.pid, no events, no
    // agent launched, the worktree untouched.
    EXPECT_FALSE(path_exists(run_dir + "/bundles"));
    EXPECT_EQ(test::slurp(run_dir + "/events.jsonl"), events);
    EXPECT_EQ(test::slurp(run_dir + "/state.json"), state);
    EXPECT_FALSE(path_exists(fake + ".launched"));
    auto st = test::run_process({"git", "-C", worktree, "status", "--porcelain"});
    EXPECT_EQ(st.out, "");
  }

  test::Scratch s;
  std::string repo, fake;
};

TEST_F(RunBundlePlacement, RefusesAWorktreeInsideAPrimaryClone) {
  std::string wt = repo + "/.worktrees/b1";
  git(repo, {"worktree", "add", "-q", "-b", "develop/b1", wt, "main"});
  std::string run_dir = s / "runs/r1";
  make_run(run_dir, wt);
  expect_refused(run_dir, wt, "lies inside the primary clone " + repo);
}

TEST_F(RunBundlePlacement, RefusesThePrimaryCloneAsTheWorktree) {
  std::string run_dir = s / "runs/r1";
  make_run(run_dir, repo);
  expect_refused(run_dir, repo, "is a primary clone");
}

TEST_F(RunBundlePlacement, RefusesARunDirectoryInsideAPrimaryClone) {
  std::string wt = s / "ai/worktrees/local/repo/develop-b1";
  git(repo, {"worktree", "add", "-q", "-b", "develop/b1", wt, "main"});
  std::string run_dir = repo + "/.develop/runs/r1";
  make_run(run_dir, wt);
  expect_refused(run_dir, wt, "run directory " + run_dir + " lies inside the primary clone");
}

TEST_F(RunBundlePlacement, DemoRefusesAnAiRootInsideAPrimaryClone) {
  std::string root = repo + "/.ai";
  auto r = test::run_devgraph({"demo"}, {{"AI_ROOT", root}, {"DEVELOP_GUARD_EXEMPT", ""}});
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find("placement guard: demo root " + root + " lies inside the primary clone"),
            std::string::npos)
      << r.err;
  EXPECT_FALSE(path_exists(root));
  auto st = test::run_process({"git", "-C", repo, "status", "--porcelain"});
  EXPECT_EQ(st.out, "");
}

}  // namespace
}  // namespace devgraph
