#include "git/git.h"

#include <gtest/gtest.h>

#include "support/fake_git.h"
#include "support/test_util.h"

namespace devgraph::git {
namespace {

const std::map<std::string, std::string> kIdentity = {
    {"GIT_AUTHOR_NAME", "Test"},
    {"GIT_AUTHOR_EMAIL", "test@example.invalid"},
    {"GIT_COMMITTER_NAME", "Test"},
    {"GIT_COMMITTER_EMAIL", "test@example.invalid"}};

// A repository with one commit on main.
struct Repo {
  test::Scratch scratch;
  std::string dir = scratch / "repo";
  RealCommandRunner runner;
  std::unique_ptr<Git> git;
  Repo() {
    EXPECT_TRUE(make_directories(dir).ok());
    sh({"git", "init", "-q", "-b", "main", dir});
    test::write_text(dir + "/README.md", "hello\n");
    sh({"git", "-C", dir, "add", "--", "README.md"});
    sh({"git", "-C", dir, "commit", "-q", "-m", "base"});
    git = make_git(runner, dir, kIdentity);
  }
  void sh(const std::vector<std::string>& argv) {
    auto r = test::run_process(argv, kIdentity);
    EXPECT_EQ(r.exit_code, 0) << r.err;
  }
};

TEST(Git, RevParseAndUnknownRevision) {
  Repo r;
  auto head = r.git->rev_parse("HEAD");
  ASSERT_TRUE(head.ok()) << head.error().message;
  EXPECT_EQ(head->size(), 40u);
  auto bad = r.git->rev_parse("no-such-branch");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().message.find("git rev-parse"), std::string::npos);
}

TEST(Git, StatusListsUntrackedFilesOneByOne) {
  Repo r;
  test::write_text(r.dir + "/README.md", "changed\n");
  ASSERT_TRUE(make_directories(r.dir + "/src/a").ok());
  test::write_text(r.dir + "/src/a/x.py", "x\n");
  test::write_text(r.dir + "/src/y py.txt", "y\n");
  auto st = r.git->status();
  ASSERT_TRUE(st.ok());
  ASSERT_EQ(st->size(), 3u);
  EXPECT_EQ((*st)[0].path, "README.md");
  EXPECT_EQ((*st)[0].worktree, 'M');
  EXPECT_EQ((*st)[1].path, "src/a/x.py");
  EXPECT_TRUE((*st)[1].untracked());
  EXPECT_EQ((*st)[2].path, "src/y py.txt");
}

TEST(Git, AddStagesOnlyThePathspec) {
  Repo r;
  test::write_text(r.dir + "/a.txt", "a\n");
  test::write_text(r.dir + "/b.txt", "b\n");
  ASSERT_TRUE(r.git->add({"a.txt"}).ok());
  auto staged = r.git->staged();
  ASSERT_TRUE(staged.ok());
  EXPECT_EQ(*staged, std::vector<std::string>{"a.txt"});
  EXPECT_FALSE(r.git->add({}).ok());
}

TEST(Git, PathspecThatLooksLikeAnOptionIsAPath) {
  Repo r;
  test::write_text(r.dir + "/-A", "tricky\n");
  test::write_text(r.dir + "/other.txt", "o\n");
  ASSERT_TRUE(r.git->add({"-A"}).ok());
  EXPECT_EQ(*r.git->staged(), std::vector<std::string>{"-A"});
}

TEST(Git, CommitWithTrailerIsFoundAgain) {
  Repo r;
  auto base = *r.git->rev_parse("HEAD");
  test::write_text(r.dir + "/a.txt", "a\n");
  ASSERT_TRUE(r.git->add({"a.txt"}).ok());
  auto c =
      r.git->commit({"feat(b1): add a", "Task T1 of bundle b1.", {{"Devgraph-Task", "b1/T1"}}});
  ASSERT_TRUE(c.ok()) << c.error().message;
  EXPECT_EQ(*c, *r.git->rev_parse("HEAD"));
  test::write_text(r.dir + "/b.txt", "b\n");
  ASSERT_TRUE(r.git->add({"b.txt"}).ok());
  ASSERT_TRUE(r.git->commit({"feat(b1): add b", "", {{"Devgraph-Task", "b1/T2"}}}).ok());

  auto hits = r.git->find_trailer("Devgraph-Task", base);
  ASSERT_TRUE(hits.ok()) << hits.error().message;
  ASSERT_EQ(hits->size(), 2u);
  EXPECT_EQ((*hits)[0].value, "b1/T2");
  EXPECT_EQ((*hits)[1].value, "b1/T1");
  EXPECT_EQ((*hits)[1].commit, *c);

  auto log = r.git->log_oneline(base);
  ASSERT_TRUE(log.ok());
  ASSERT_EQ(log->size(), 2u);
  EXPECT_NE((*log)[0].find("feat(b1): add a"), std::string::npos);
}

TEST(Git, CommitByPathspecLeavesOtherStagedPathsAlone) {
  // Another task's file sits in the index (a persona staged it); the task's
  // commit takes only its own paths and leaves that one staged.
  Repo r;
  test::write_text(r.dir + "/mine.txt", "m\n");
  test::write_text(r.dir + "/theirs.txt", "t\n");
  ASSERT_TRUE(r.git->add({"theirs.txt"}).ok());
  ASSERT_TRUE(r.git->add({":(literal)mine.txt"}).ok());
  EXPECT_EQ(*r.git->staged({":(literal)mine.txt"}), std::vector<std::string>{"mine.txt"});
  auto c = r.git->commit({"feat: mine", "", {{"Devgraph-Task", "b1/T1"}}}, {":(literal)mine.txt"});
  ASSERT_TRUE(c.ok()) << c.error().message;
  auto shown = test::run_process({"git", "-C", r.dir, "show", "--name-only", "--format=", "HEAD"});
  EXPECT_EQ(shown.out, "mine.txt\n");
  EXPECT_EQ(*r.git->staged(), std::vector<std::string>{"theirs.txt"});
}

TEST(Git, CommitWithNothingStagedFails) {
  Repo r;
  auto c = r.git->commit({"empty", "", {}});
  ASSERT_FALSE(c.ok());
  EXPECT_NE(c.error().message.find("git commit"), std::string::npos);
}

TEST(Git, MessageTextIsNeverAnOption) {
  Repo r;
  test::write_text(r.dir + "/a.txt", "a\n");
  ASSERT_TRUE(r.git->add({"a.txt"}).ok());
  auto c = r.git->commit({"--amend", "$(rm -rf /)", {}});
  ASSERT_TRUE(c.ok()) << c.error().message;
  auto log = r.git->log_oneline("HEAD~1");
  ASSERT_TRUE(log.ok());
  EXPECT_NE((*log)[0].find("--amend"), std::string::npos);
}

// What `git rev-parse` says HEAD is, from a git process.
std::string git_head(const std::string& dir) {
  auto r = test::run_process({"git", "-C", dir, "rev-parse", "HEAD"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return r.out.substr(0, r.out.find('\n'));
}

TEST(Git, HeadFromFilesAgreesWithGitInEveryRefLayout) {
  Repo r;
  // A loose branch ref in a main worktree.
  EXPECT_EQ(head_from_files(r.dir), git_head(r.dir));
  // A linked worktree: `.git` is a file, the branch lives in the common dir.
  std::string wt = r.scratch / "wt";
  ASSERT_TRUE(r.git->worktree_add(wt, "develop/b1", "main").ok());
  test::write_text(wt + "/n.txt", "n\n");
  auto wgit = make_git(r.runner, wt, kIdentity);
  ASSERT_TRUE(wgit->add({"n.txt"}).ok());
  auto made = wgit->commit({"n", "", {}});
  ASSERT_TRUE(made.ok()) << made.error().message;
  EXPECT_EQ(head_from_files(wt), git_head(wt));
  EXPECT_EQ(*made, git_head(wt));
  EXPECT_NE(git_head(wt), git_head(r.dir));
  // Packed refs only.
  r.sh({"git", "-C", r.dir, "pack-refs", "--all"});
  EXPECT_FALSE(path_exists(r.dir + "/.git/refs/heads/develop/b1"));
  EXPECT_EQ(head_from_files(wt), git_head(wt));
  EXPECT_EQ(head_from_files(r.dir), git_head(r.dir));
  // Detached HEAD.
  r.sh({"git", "-C", r.dir, "checkout", "-q", "--detach", "HEAD"});
  EXPECT_EQ(head_from_files(r.dir), git_head(r.dir));
}

TEST(Git, HeadFromFilesDefersToGitWhenUnsure) {
  Repo r;
  // Not a repository, an unborn branch, a malformed HEAD: nullopt, and
  // rev_parse still answers (or fails) through git.
  EXPECT_EQ(head_from_files(r.scratch / "nowhere"), std::nullopt);
  std::string fresh = r.scratch / "fresh";
  r.sh({"git", "init", "-q", "-b", "main", fresh});
  EXPECT_EQ(head_from_files(fresh), std::nullopt);
  EXPECT_FALSE(make_git(r.runner, fresh, kIdentity)->rev_parse("HEAD").ok());
  std::string head = git_head(r.dir);
  test::write_text(r.dir + "/.git/HEAD", "ref: refs/heads/../../escape\n");
  EXPECT_EQ(head_from_files(r.dir), std::nullopt);
  test::write_text(r.dir + "/.git/HEAD", "ref: refs/heads/main\n");
  test::write_text(r.dir + "/.git/refs/heads/main", "not a hash\n");
  EXPECT_EQ(head_from_files(r.dir), std::nullopt);
  test::write_text(r.dir + "/.git/refs/heads/main", head + "\n");
  EXPECT_EQ(head_from_files(r.dir), head);
}

TEST(Git, WorktreeAddCreatesOrReusesTheBranch) {
  Repo r;
  std::string wt = r.scratch / "wt";
  ASSERT_TRUE(r.git->worktree_add(wt, "develop/b1", "main").ok());
  EXPECT_TRUE(path_exists(wt + "/README.md"));
  auto wgit = make_git(r.runner, wt, kIdentity);
  test::write_text(wt + "/n.txt", "n\n");
  ASSERT_TRUE(wgit->add({"n.txt"}).ok());
  ASSERT_TRUE(wgit->commit({"n", "", {}}).ok());
  auto diff = wgit->diff("main...HEAD");
  ASSERT_TRUE(diff.ok());
  EXPECT_NE(diff->find("+n"), std::string::npos);
  // A second worktree for an existing branch that is checked out elsewhere
  // is refused by git, and the error names the command.
  auto again = r.git->worktree_add(r.scratch / "wt2", "develop/b1", "main");
  ASSERT_FALSE(again.ok());
  EXPECT_NE(again.error().message.find("git worktree"), std::string::npos);
}

TEST(Git, PushAndRemoteHead) {
  Repo r;
  std::string bare = r.scratch / "remote.git";
  r.sh({"git", "init", "-q", "--bare", bare});
  r.sh({"git", "-C", r.dir, "remote", "add", "origin", bare});
  auto before = r.git->remote_head("origin", "main");
  ASSERT_TRUE(before.ok()) << before.error().message;
  EXPECT_FALSE(before->has_value());
  ASSERT_TRUE(r.git->push("origin", "main").ok());
  auto after = r.git->remote_head("origin", "main");
  ASSERT_TRUE(after.ok());
  ASSERT_TRUE(after->has_value());
  EXPECT_EQ(**after, *r.git->rev_parse("HEAD"));
}

TEST(Git, PorcelainParserHandlesRenames) {
  std::string text = std::string("R  new.txt\0old.txt\0?? u.txt\0", 28);
  auto entries = parse_porcelain_z(text);
  ASSERT_TRUE(entries.ok()) << entries.error().message;
  ASSERT_EQ(entries->size(), 2u);
  EXPECT_EQ((*entries)[0].path, "new.txt");
  EXPECT_EQ((*entries)[0].orig_path, "old.txt");
  EXPECT_EQ((*entries)[1].path, "u.txt");
  EXPECT_TRUE((*entries)[1].untracked());
}

TEST(FakeGit, CommitsOnlyStagedPathsAndFindsTrailers) {
  FakeGit g;
  g.touch("src/a.py");
  g.touch("docs/x.md");
  ASSERT_TRUE(g.add({"src/"}).ok());
  auto c = g.commit({"s", "", {{"Devgraph-Task", "b/T1"}}});
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(g.commits.back().paths, std::vector<std::string>{"src/a.py"});
  auto hits = g.find_trailer("Devgraph-Task");
  ASSERT_TRUE(hits.ok());
  ASSERT_EQ(hits->size(), 1u);
  EXPECT_EQ((*hits)[0].value, "b/T1");
  EXPECT_FALSE(g.commit({"s", "", {}}).ok());
  EXPECT_EQ(g.status()->size(), 1u);
}

TEST(FakeGit, CommitByPathspecLeavesOtherStagedPathsAlone) {
  FakeGit g;
  g.touch("src/a.py");
  g.touch("src/b.py");
  ASSERT_TRUE(g.add({"src/"}).ok());
  ASSERT_TRUE(g.commit({"s", "", {}}, {"src/a.py"}).ok());
  EXPECT_EQ(g.commits.back().paths, std::vector<std::string>{"src/a.py"});
  EXPECT_EQ(*g.staged(), std::vector<std::string>{"src/b.py"});
  EXPECT_FALSE(g.commit({"s", "", {}}, {"docs/"}).ok());
}

TEST(FakeGit, PathspecMatching) {
  EXPECT_TRUE(pathspec_matches("src/*.py", "src/a.py"));
  EXPECT_TRUE(pathspec_matches("src", "src/deep/a.py"));
  EXPECT_TRUE(pathspec_matches("a.txt", "a.txt"));
  EXPECT_FALSE(pathspec_matches("src/", "srcx/a.py"));
}

}  // namespace
}  // namespace devgraph::git
