// `devgraph run-bundle` on a repository with its own git hooks: the tasks'
// commits run them (GRAPH.yaml headless.run_git_hooks), a refusal sends the
// developer back with the hook's output, a hook's rewrite is committed, and
// the switch turns them off.
#include <gtest/gtest.h>

#include "support/run_bundle_fixture.h"

namespace devgraph::test {
namespace {

// Refuses any staged file holding a tab, naming it.
const char* const kNoTabs =
    "#!/bin/sh\n"
    "tab=$(printf '\\t')\n"
    "status=0\n"
    "for f in $(git diff --cached --name-only --diff-filter=ACM); do\n"
    "  if grep -q \"$tab\" \"$f\"; then echo \"$f: a tab character\" >&2; status=1; fi\n"
    "done\n"
    "exit $status\n";

// Strips trailing blanks from every staged file, in place, and stages it.
const char* const kStripTrailingBlanks =
    "#!/bin/sh\n"
    "for f in $(git diff --cached --name-only --diff-filter=ACM); do\n"
    "  sed -i 's/[ ]*$//' \"$f\" && git add -- \"$f\"\n"
    "done\n";

class RunBundleHooks : public RunBundleFixture {
 public:
  // Hooks live in the repository's common directory: the bundle's worktree
  // runs them as its own.
  void hook(const std::string& name, const std::string& script) {
    ASSERT_TRUE(make_directories(repo + "/.git/hooks").ok());
    ASSERT_TRUE(write_file_atomic(repo + "/.git/hooks/" + name, script, 0755).ok());
  }
  std::string committed(const std::string& task, const std::string& path) {
    return git({"show", commit_of(task) + ":" + path});
  }
  bool logged_hooks(bool run) {
    for (const auto& rec : log())
      if (rec.value("event", "") == "git_hooks" && rec.value("run", !run) == run) return true;
    return false;
  }
};

TEST_F(RunBundleHooks, APreCommitHookThatRefusesATabSendsTheDeveloperBackAndItsFixIsDelivered) {
  one_task();
  hook("pre-commit", kNoTabs);
  // The repair answers only a dispatch that shows the hook's words.
  prepend("developer", {{"task", "T1"},
                        {"after_call", 1},
                        {"dispatch_contains", "src/T1.txt: a tab character"},
                        {"files", Json::array({file("src/T1.txt", "hello\n  indented\n")})},
                        {"result", done("replaced the tab")}});
  prepend("developer", {{"task", "T1"},
                        {"call", 1},
                        {"files", Json::array({file("src/T1.txt", "hello\n\tindented\n")})},
                        {"result", done("wrote T1")}});
  auto r = run();
  expect_done(r);
  auto rejected = find("COMMIT_HOOK_REJECTED", {{"task", "T1"}});
  ASSERT_EQ(rejected.size(), 1u);
  Json d = events()[rejected[0]]["detail"];
  EXPECT_EQ(d["lane_to"], "repair_task");
  EXPECT_EQ(d["owner"], "developer");
  EXPECT_EQ(calls("developer T1 launch"), 2u);
  EXPECT_EQ(saved("developer", "T1")["result"]["summary"], "replaced the tab");
  EXPECT_EQ(committed("T1", "src/T1.txt"), "hello\n  indented\n");
  EXPECT_TRUE(logged_hooks(true));
  auto valid = test::run_devgraph({"validate", "run", run_dir});
  EXPECT_EQ(valid.exit_code, 0) << valid.out << valid.err;
}

TEST_F(RunBundleHooks, APreCommitHookThatReformatsAFileDeliversTheReformattedFileCommitted) {
  one_task();
  hook("pre-commit", kStripTrailingBlanks);
  prepend("developer", {{"task", "T1"},
                        {"files", Json::array({file("src/T1.txt", "hello\nand more   \n")})},
                        {"result", done("wrote T1")}});
  auto r = run();
  expect_done(r);  // the worktree is clean: nothing of the rewrite is left over
  EXPECT_EQ(committed("T1", "src/T1.txt"), "hello\nand more\n");
  EXPECT_EQ(calls("developer T1 launch"), 1u);
  EXPECT_TRUE(find("COMMIT_HOOK_REJECTED").empty());
  EXPECT_TRUE(find("FOOTPRINT_VIOLATION").empty());
}

TEST_F(RunBundleHooks, WithTheGraphSwitchOffNeitherHookRuns) {
  one_task();
  std::string skill = s / "skill";
  sh(s.path(), {"cp", "-R", test::source_dir() + "/skill", skill});
  std::string graph = test::slurp(skill + "/GRAPH.yaml");
  const std::string from = "\n  run_git_hooks: true\n";
  auto at = graph.find(from);
  ASSERT_NE(at, std::string::npos);
  graph.replace(at, from.size(), "\n  run_git_hooks: false\n");
  test::write_text(skill + "/GRAPH.yaml", graph);
  // Both hooks in one: the reformatting one, then the tab check.
  hook("pre-commit", std::string(kStripTrailingBlanks) + std::string(kNoTabs).substr(10));
  hook("commit-msg", "#!/bin/sh\necho 'every message refused' >&2\nexit 1\n");
  prepend("developer", {{"task", "T1"},
                        {"files", Json::array({file("src/T1.txt", "hello\n\tand more   \n")})},
                        {"result", done("wrote T1")}});
  auto r = run({"--skill", skill});
  expect_done(r);
  EXPECT_EQ(committed("T1", "src/T1.txt"), "hello\n\tand more   \n");
  EXPECT_EQ(calls("developer T1 launch"), 1u);
  EXPECT_TRUE(find("COMMIT_HOOK_REJECTED").empty());
  EXPECT_TRUE(logged_hooks(false));
}

}  // namespace
}  // namespace devgraph::test
