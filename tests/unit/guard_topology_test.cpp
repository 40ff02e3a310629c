// Which `.git` the placement guard takes for a repository: only what git
// itself would (a git directory, or a gitdir file naming one); an empty or
// incomplete `.git` is passed over and the walk goes on upwards.
#include <gtest/gtest.h>

#include <unistd.h>

#include <string>
#include <vector>

#include "guard/guard.h"
#include "support/test_util.h"

namespace devgraph {
namespace {

class GuardTopology : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = guard::resolve_path(scratch_.path(), "/", "");
    roots_.home = root_ + "/home";
    roots_.worktrees = root_ + "/ai/worktrees";
    roots_.develop_home = root_ + "/ai/develop";
    // git's own view: the scratch directory must not lie in a repository.
    auto outside = test::run_process({"git", "-C", root_, "rev-parse", "--absolute-git-dir"},
                                     {{"GIT_DIR", ""}, {"GIT_WORK_TREE", ""}});
    ASSERT_NE(outside.exit_code, 0) << root_ << " lies inside the repository " << outside.out
                                    << "set TMPDIR to a directory outside any repository";
  }

  void git(std::vector<std::string> args, const std::string& cwd) {
    args.insert(args.begin(), {"git", "-c", "user.name=t", "-c", "user.email=t@example.invalid",
                               "-c", "init.defaultBranch=main"});
    auto r = test::run_process(args, {}, cwd);
    ASSERT_EQ(r.exit_code, 0) << r.err;
  }

  void mkdir(const std::string& path) { ASSERT_TRUE(make_directories(path).ok()) << path; }

  // A real repository with one commit at `dir`.
  void init_repo(const std::string& dir) {
    mkdir(dir);
    test::write_text(dir + "/README.md", "x\n");
    git({"init", "-q"}, dir);
    git({"add", "."}, dir);
    git({"commit", "-qm", "init"}, dir);
  }

  bool write_denied(const std::string& path) {
    return guard::check_write(path, root_, roots_).has_value();
  }

  test::Scratch scratch_;
  std::string root_;
  guard::Roots roots_;
};

TEST_F(GuardTopology, EmptyGitDirectoryAbovePlainDirectoryIsNotARepository) {
  mkdir(root_ + "/tmp/.git");
  mkdir(root_ + "/tmp/plain");
  EXPECT_EQ(guard::probe(root_ + "/tmp/plain").kind, guard::CheckoutKind::kNone);
  EXPECT_EQ(guard::probe(root_ + "/tmp").kind, guard::CheckoutKind::kNone);
  EXPECT_FALSE(write_denied(root_ + "/tmp/plain/x"));
  EXPECT_FALSE(write_denied(root_ + "/tmp/x"));
  EXPECT_FALSE(guard::resolve_placement(root_ + "/tmp/plain", std::nullopt, roots_).ok());
}

TEST_F(GuardTopology, GitDirectoryMissingObjectsRefsOrHeadIsNotARepository) {
  // Each layout lacks one thing git requires.
  const std::vector<std::pair<std::string, std::vector<std::string>>> layouts = {
      {"no-head", {"objects", "refs"}},
      {"no-objects", {"HEAD", "refs"}},
      {"no-refs", {"HEAD", "objects"}},
  };
  for (const auto& [name, parts] : layouts) {
    const std::string dir = root_ + "/" + name;
    mkdir(dir + "/.git");
    for (const auto& part : parts) {
      if (part == "HEAD")
        test::write_text(dir + "/.git/HEAD", "ref: refs/heads/main\n");
      else
        mkdir(dir + "/.git/" + part);
    }
    EXPECT_EQ(guard::probe(dir).kind, guard::CheckoutKind::kNone) << name;
    EXPECT_FALSE(write_denied(dir + "/x")) << name;
  }
}

TEST_F(GuardTopology, HeadNamingNeitherARefNorACommitIsNotARepository) {
  const std::string dir = root_ + "/bad-head";
  mkdir(dir + "/.git/objects");
  mkdir(dir + "/.git/refs");
  test::write_text(dir + "/.git/HEAD", "not a ref\n");
  EXPECT_EQ(guard::probe(dir).kind, guard::CheckoutKind::kNone);
  test::write_text(dir + "/.git/HEAD", "ref: heads/main\n");
  EXPECT_EQ(guard::probe(dir).kind, guard::CheckoutKind::kNone);
}

TEST_F(GuardTopology, HeadIsReadTheWayGitReadsIt) {
  // git reads a detached HEAD's id from the first bytes (what follows is
  // ignored), allows no blank before "ref:" or the id, and any blanks
  // between "ref:" and "refs/".
  const std::string id(40, 'c');
  const std::vector<std::pair<std::string, bool>> heads = {
      {id, true},
      {id + "junk\n", true},
      {"ref:refs/heads/main", true},
      {"ref: \t refs/heads/main\n", true},
      {" " + id + "\n", false},
      {"  ref: refs/heads/main\n", false},
      {"ref: refs", false},
      {id.substr(0, 39) + "\n", false},
  };
  const std::string dir = root_ + "/heads";
  mkdir(dir + "/.git/objects");
  mkdir(dir + "/.git/refs");
  for (const auto& [head, repository] : heads) {
    test::write_text(dir + "/.git/HEAD", head);
    EXPECT_EQ(guard::probe(dir).kind,
              repository ? guard::CheckoutKind::kPrimary : guard::CheckoutKind::kNone)
        << head;
    EXPECT_EQ(write_denied(dir + "/x"), repository) << head;
  }
}

TEST_F(GuardTopology, HeadSymlinkIntoRefsMarksARepository) {
  const std::string dir = root_ + "/linked-head";
  mkdir(dir + "/.git/objects");
  mkdir(dir + "/.git/refs");
  ASSERT_EQ(::symlink("refs/", (dir + "/.git/HEAD").c_str()), 0);
  EXPECT_EQ(guard::probe(dir).kind, guard::CheckoutKind::kPrimary);
  ASSERT_EQ(::unlink((dir + "/.git/HEAD").c_str()), 0);
  ASSERT_EQ(::symlink("../elsewhere/HEAD", (dir + "/.git/HEAD").c_str()), 0);
  EXPECT_EQ(guard::probe(dir).kind, guard::CheckoutKind::kNone);
}

TEST_F(GuardTopology, MinimalGitDirectoryIsAPrimaryClone) {
  // HEAD naming a branch or a commit, objects/ and refs/: git's own test.
  const std::vector<std::string> heads = {"ref: refs/heads/main\n", std::string(40, 'a') + "\n",
                                          std::string(64, '0')};
  for (const auto& head : heads) {
    const std::string dir = root_ + "/minimal-" + std::to_string(head.size());
    mkdir(dir + "/.git/objects");
    mkdir(dir + "/.git/refs");
    test::write_text(dir + "/.git/HEAD", head);
    auto c = guard::probe(dir + "/sub");
    EXPECT_EQ(c.kind, guard::CheckoutKind::kPrimary) << head;
    EXPECT_EQ(c.top, dir);
    EXPECT_TRUE(write_denied(dir + "/sub/x")) << head;
  }
}

TEST_F(GuardTopology, RealRepositoryBelowAnEmptyGitDirectoryIsStillAPrimaryClone) {
  mkdir(root_ + "/.git");
  init_repo(root_ + "/repo");
  auto c = guard::probe(root_ + "/repo");
  EXPECT_EQ(c.kind, guard::CheckoutKind::kPrimary);
  EXPECT_EQ(c.top, root_ + "/repo");
  EXPECT_EQ(c.common_dir, root_ + "/repo/.git");
  EXPECT_TRUE(write_denied(root_ + "/repo/README.md"));
  EXPECT_TRUE(write_denied(root_ + "/repo/new/file.txt"));
}

TEST_F(GuardTopology, EmptyGitDirectoryInsideARepositoryDoesNotHideIt) {
  // A stray `.git` below a primary clone's top is passed over, so the files
  // around it still belong to the clone and stay read-only.
  init_repo(root_ + "/repo");
  mkdir(root_ + "/repo/vendor/.git");
  test::write_text(root_ + "/repo/tools/.git", "gitdir: " + root_ + "/nowhere\n");
  for (const char* sub : {"vendor", "tools"}) {
    auto c = guard::probe(root_ + "/repo/" + sub);
    EXPECT_EQ(c.kind, guard::CheckoutKind::kPrimary) << sub;
    EXPECT_EQ(c.top, root_ + "/repo") << sub;
    EXPECT_TRUE(write_denied(root_ + "/repo/" + sub + "/x")) << sub;
  }
}

TEST_F(GuardTopology, GitdirFileOfALinkedWorktreeIsAWorktree) {
  init_repo(root_ + "/repo");
  const std::string wt = roots_.worktrees + "/local/repo/feat";
  git({"worktree", "add", "-q", wt, "-b", "feat"}, root_ + "/repo");
  auto c = guard::probe(wt);
  EXPECT_EQ(c.kind, guard::CheckoutKind::kWorktree);
  EXPECT_EQ(c.top, wt);
  EXPECT_EQ(c.common_dir, root_ + "/repo/.git");
  EXPECT_EQ(guard::owner_repo(c), "local/repo");
  EXPECT_FALSE(write_denied(wt + "/README.md"));
}

TEST_F(GuardTopology, GitdirFileOfASubmoduleIsAPrimaryClone) {
  // A submodule checkout: `.git` is a file naming the git directory under
  // the superproject's .git/modules/, a complete git directory of its own.
  init_repo(root_ + "/super");
  const std::string modules = root_ + "/super/.git/modules/lib";
  mkdir(modules + "/objects");
  mkdir(modules + "/refs");
  test::write_text(modules + "/HEAD", std::string(40, 'b') + "\n");
  mkdir(root_ + "/super/lib");
  test::write_text(root_ + "/super/lib/.git", "gitdir: ../.git/modules/lib\n");
  auto c = guard::probe(root_ + "/super/lib");
  EXPECT_EQ(c.kind, guard::CheckoutKind::kPrimary);
  EXPECT_EQ(c.top, root_ + "/super/lib");
  EXPECT_EQ(c.common_dir, modules);
}

TEST_F(GuardTopology, GitdirFilePointingAtNoRepositoryIsNotARepository) {
  mkdir(root_ + "/plain");
  mkdir(root_ + "/empty-gitdir");
  const std::vector<std::string> texts = {"gitdir: " + root_ + "/missing\n",
                                          "gitdir: " + root_ + "/empty-gitdir\n", "gitdir:\n",
                                          "garbage\n"};
  for (const auto& text : texts) {
    test::write_text(root_ + "/plain/.git", text);
    EXPECT_EQ(guard::probe(root_ + "/plain").kind, guard::CheckoutKind::kNone) << text;
    EXPECT_FALSE(write_denied(root_ + "/plain/x")) << text;
  }
}

}  // namespace
}  // namespace devgraph
