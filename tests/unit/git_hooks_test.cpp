// The git seam runs the repository's own hooks at a commit (src/git/git.h):
// real git in a scratch repository, real hook scripts.
#include <gtest/gtest.h>

#include "git/git.h"
#include "support/test_util.h"
#include "util/fs.h"

namespace devgraph::git {
namespace {

const std::map<std::string, std::string> kIdentity = {
    {"GIT_AUTHOR_NAME", "Test"},
    {"GIT_AUTHOR_EMAIL", "test@example.invalid"},
    {"GIT_COMMITTER_NAME", "Test"},
    {"GIT_COMMITTER_EMAIL", "test@example.invalid"}};

// A repository with one commit on main and hooks written on demand.
struct HookRepo {
  test::Scratch scratch;
  std::string dir = scratch / "repo";
  RealCommandRunner runner;
  HookRepo() {
    EXPECT_TRUE(make_directories(dir).ok());
    sh({"git", "init", "-q", "-b", "main", dir});
    test::write_text(dir + "/README.md", "hello\n");
    sh({"git", "-C", dir, "add", "--", "README.md"});
    sh({"git", "-C", dir, "commit", "-q", "-m", "base"});
  }
  void sh(const std::vector<std::string>& argv) {
    auto r = test::run_process(argv, kIdentity);
    EXPECT_EQ(r.exit_code, 0) << r.err;
  }
  std::string out(const std::vector<std::string>& args) {
    std::vector<std::string> argv = {"git", "-C", dir};
    argv.insert(argv.end(), args.begin(), args.end());
    return test::run_process(argv).out;
  }
  void hook(const std::string& name, const std::string& body) {
    ASSERT_TRUE(make_directories(dir + "/.git/hooks").ok());
    ASSERT_TRUE(write_file_atomic(dir + "/.git/hooks/" + name, "#!/bin/sh\n" + body, 0755).ok());
  }
  std::unique_ptr<Git> git(bool hooks = true) {
    return make_git(runner, dir, kIdentity, GitOptions{hooks});
  }
};

// Refuses any staged file holding a tab, naming it.
const char* const kNoTabs =
    "tab=$(printf '\\t')\n"
    "status=0\n"
    "for f in $(git diff --cached --name-only --diff-filter=ACM); do\n"
    "  if grep -q \"$tab\" \"$f\"; then echo \"$f: a tab character\" >&2; status=1; fi\n"
    "done\n"
    "exit $status\n";

TEST(GitHooks, ARefusingPreCommitHookIsAHookErrorWithItsOutputAndNothingIsCommitted) {
  HookRepo r;
  r.hook("pre-commit", kNoTabs);
  auto git = r.git();
  EXPECT_TRUE(git->runs_hooks());
  std::string base = *git->rev_parse("HEAD");
  test::write_text(r.dir + "/a.txt", "a\tb\n");
  auto c = commit_paths(*git, {":(literal)a.txt"}, {"feat: a", "", {}});
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.error().kind, ErrorKind::hook);
  EXPECT_NE(c.error().message.find("pre-commit hook refused"), std::string::npos)
      << c.error().message;
  EXPECT_NE(c.error().message.find("a.txt: a tab character"), std::string::npos);
  EXPECT_EQ(c.error().output, "a.txt: a tab character\n");
  EXPECT_EQ(*git->rev_parse("HEAD"), base);
}

TEST(GitHooks, WithHooksOffTheSameCommitIsMade) {
  HookRepo r;
  r.hook("pre-commit", kNoTabs);
  r.hook("commit-msg", "exit 1\n");
  auto git = r.git(false);
  EXPECT_FALSE(git->runs_hooks());
  test::write_text(r.dir + "/a.txt", "a\tb\n");
  EXPECT_TRUE(git->pre_commit({":(literal)a.txt"}).ok());
  auto c = commit_paths(*git, {":(literal)a.txt"}, {"feat: a", "", {}});
  ASSERT_TRUE(c.ok()) << c.error().message;
  EXPECT_EQ(r.out({"show", "HEAD:a.txt"}), "a\tb\n");
}

TEST(GitHooks, APreCommitHookSeesOnlyTheCommittedPathsAndWhatItRewritesIsCommitted) {
  HookRepo r;
  // Strips trailing blanks in place and stages the result; refuses a file
  // that says BAD.
  r.hook("pre-commit",
         "for f in $(git diff --cached --name-only --diff-filter=ACM); do\n"
         "  if grep -q BAD \"$f\"; then echo \"$f is bad\" >&2; exit 1; fi\n"
         "  sed -i 's/[[:space:]]*$//' \"$f\" && git add -- \"$f\"\n"
         "done\n");
  auto git = r.git();
  // Another writer's file sits staged in the index: the hook never sees it,
  // and it stays staged and out of the commit.
  test::write_text(r.dir + "/theirs.txt", "BAD\n");
  r.sh({"git", "-C", r.dir, "add", "--", "theirs.txt"});
  test::write_text(r.dir + "/mine.txt", "x   \ny\t\n");
  auto c = commit_paths(*git, {":(literal)mine.txt"}, {"feat: mine", "", {}});
  ASSERT_TRUE(c.ok()) << c.error().message;
  EXPECT_EQ(r.out({"show", "HEAD:mine.txt"}), "x\ny\n");
  EXPECT_EQ(r.out({"show", "--name-only", "--format=", "HEAD"}), "mine.txt\n");
  EXPECT_EQ(r.out({"status", "--porcelain"}), "A  theirs.txt\n");
}

TEST(GitHooks, ACommitMsgHookMayRewriteTheMessageOrRefuseIt) {
  HookRepo r;
  r.hook("commit-msg", "echo 'Signed-off-by: Test <test@example.invalid>' >> \"$1\"\n");
  auto git = r.git();
  test::write_text(r.dir + "/a.txt", "a\n");
  auto c = commit_paths(*git, {":(literal)a.txt"}, {"feat: a", "", {{"Devgraph-Task", "b1/T1"}}});
  ASSERT_TRUE(c.ok()) << c.error().message;
  std::string message = r.out({"log", "-1", "--format=%B"});
  EXPECT_NE(message.find("Devgraph-Task: b1/T1\nSigned-off-by: Test"), std::string::npos)
      << message;
  auto hits = git->find_trailer("Devgraph-Task");
  ASSERT_TRUE(hits.ok());
  ASSERT_EQ(hits->size(), 1u);

  r.hook("commit-msg", "echo 'no ticket number in the subject'\nexit 1\n");
  test::write_text(r.dir + "/b.txt", "b\n");
  auto refused = commit_paths(*git, {":(literal)b.txt"}, {"feat: b", "", {}});
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().kind, ErrorKind::hook);
  EXPECT_NE(refused.error().message.find("commit-msg hook"), std::string::npos);
  EXPECT_EQ(refused.error().output, "no ticket number in the subject\n");
  EXPECT_EQ(r.out({"log", "-1", "--format=%s"}), "feat: a\n");
}

TEST(GitHooks, AHookThatOutlivesItsTimeoutIsARefusalAndEndsWithIt) {
  HookRepo r;
  r.hook("pre-commit", "echo checking\nexec sleep 600\n");
  auto git = make_git(r.runner, r.dir, kIdentity, GitOptions{true, std::chrono::milliseconds(300)});
  test::write_text(r.dir + "/a.txt", "a\n");
  auto c = commit_paths(*git, {":(literal)a.txt"}, {"feat: a", "", {}});
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.error().kind, ErrorKind::hook);
  EXPECT_NE(c.error().message.find("timed out"), std::string::npos) << c.error().message;
}

}  // namespace
}  // namespace devgraph::git
