// The placement guard's allow/deny table, run against real git checkouts:
// a primary clone (with an origin remote), a linked worktree created with
// `git worktree add` at its canonical path, a scratch directory, and
// symlinks from the worktree into the primary clone.
#include <gtest/gtest.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "guard/guard.h"
#include "support/test_util.h"

namespace devgraph {
namespace {

struct Case {
  char where;  // 'P' primary clone, 'W' linked worktree, 'S' scratch, 'D' primary/docs
  const char* command;
  bool allow;
};

// {P} primary clone, {W} linked worktree, {S} scratch, {R} worktrees root,
// {L} a symlink in the worktree pointing at the primary clone.
const std::vector<Case> kCases = {
    // ---- ordinary read-only work in the primary clone stays allowed ----
    {'P', "git status", true},
    {'P', "git status --short && git log --oneline -5", true},
    {'P', "git diff HEAD~1 -- README.md", true},
    {'P', "git show --stat HEAD", true},
    {'P', "git fetch --all --prune", true},
    {'P', "git branch -a", true},
    {'P', "git branch -D old-feature", true},
    {'P', "git worktree list", true},
    {'P', "git worktree prune", true},
    {'P', "git worktree remove {R}/acme/widgets/feat", true},
    {'P', "git pull --ff-only", true},
    {'P', "git rev-parse --show-toplevel", true},
    {'P', "git log --format=%H | head -1", true},
    {'P', "git remote -v", true},
    {'P', "git config --get remote.origin.url", true},
    {'P', "git stash list", true},
    {'P', "git ls-files | wc -l", true},
    {'P', "git blame README.md", true},
    {'P', "git grep -n TODO", true},
    {'P', "git format-patch --stdout HEAD~1", true},
    {'P', "git diff > /dev/null", true},
    {'P', "git -C {P} status", true},
    {'P', "cat README.md", true},
    {'P', "grep \"a > b\" README.md", true},
    {'P', "grep 'x >> y' README.md | sort | uniq -c", true},
    {'P', "ls -la > /dev/null 2>&1", true},
    {'P', "ls 2>/dev/null >&2", true},
    {'P', "echo hello", true},
    {'P', "echo \"a > b\" 'c >| d'", true},
    {'P', "wc -l README.md docs/guide.md", true},
    {'P', "find . -name '*.md' -print", true},
    {'P', "head -n 5 README.md && tail -n 2 README.md", true},
    {'P', "echo hi > /tmp/devgraph-guard-table-out.txt", true},
    {'P', "echo hi > {S}/out.txt", true},
    {'P', "cp README.md {S}/copy.md", true},
    {'P', "cp -r docs {W}/docs-copy", true},
    {'P', "diff README.md {W}/README.md", true},
    {'P', "cat README.md | tee {S}/log.txt", true},
    {'P', "sed -n 1,5p README.md", true},
    {'P', "sed 's/a/b/' README.md > {S}/out", true},
    {'P', "perl -ne 'print if /x/' README.md", true},
    {'P', "find . -type f | xargs grep -l TODO", true},
    {'P', "command -v git", true},
    {'P', "test -f README.md && echo yes", true},
    {'P', "[[ -n $HOME && 3 > 2 ]] && echo ok", true},
    {'P', "(( 3 > 2 )) && echo ok", true},
    {'P', "x=$(git rev-parse HEAD); echo $x", true},
    {'P', "cd {S} && touch made-here", true},
    {'P', "cd {W} && git add -A && git commit -m x", true},
    {'P', "cd {W}; echo x > notes.md", true},
    {'P', "pushd {S} && echo x > f && popd", true},
    {'P', "git worktree add {R}/acme/widgets/feature-b -b feature/b origin/main", true},
    {'P', "git worktree add {R}/Acme/Widgets/feature-c -b feature/c main", true},
    {'P', "git worktree add -b feature/d {R}/acme/widgets/feature-d", true},
    {'P', "tar -czf {S}/backup.tgz .", true},
    {'P', "mkdir -p {S}/a/b && cp README.md {S}/a/b/", true},
    {'P', "cat <<'EOF'\nhello > world\nEOF", true},
    {'P', "bash -c 'git status && cat README.md'", true},
    {'P', "sh -c \"ls > /dev/null\"", true},
    {'P', "env LC_ALL=C sort README.md", true},
    {'P', "sudo -n true", true},
    {'P', "echo $HOME/x > /dev/null", true},
    {'P', "git --no-pager log -1", true},
    {'P', "time git status", true},
    {'D', "cat guide.md && git status", true},
    // ---- writes into the primary clone are denied ----
    {'P', "echo hi > out.txt", false},
    {'P', "echo hi >> README.md", false},
    {'P', "echo hi >| README.md", false},
    {'P', "ls 2> errors.log", false},
    {'P', "make &> build.log", false},
    {'P', "make &>> build.log", false},
    {'P', "exec 3<> lock.file", false},
    {'P', "echo x 1>out", false},
    {'P', "echo x >&out.txt", false},
    {'P', "echo x > {P}/out.txt", false},
    {'S', "echo x > {P}/out.txt", false},
    {'S', "echo x > ../primary/out.txt", false},
    {'W', "echo x > {L}/out.txt", false},
    {'W', "echo x > up/out.txt", false},
    {'W', "echo x > link-readme.md", false},
    {'W', "echo x > dangling.md", false},
    {'W', "echo x > ../../../../primary/out.txt", false},
    {'S', "echo x > ~/../../primary/out.txt", false},
    {'P', "touch new.txt", false},
    {'P', "rm README.md", false},
    {'P', "rm -rf docs", false},
    {'P', "mkdir -p .develop/runs", false},
    {'P', "rmdir docs", false},
    {'P', "mv README.md README.old", false},
    {'S', "mv {P}/README.md {S}/", false},
    {'P', "cp /etc/hostname .", false},
    {'S', "cp /etc/hostname {P}/", false},
    {'S', "cp -t {P} /etc/hostname", false},
    {'S', "cp --target-directory={P}/docs /etc/hostname", false},
    {'S', "mv -t {P} {S}/a", false},
    {'S', "rsync -a {S}/ {P}/", false},
    {'S', "ln -s /etc/passwd {P}/passwd", false},
    {'P', "ln -s /etc/passwd", false},
    {'S', "install -m 644 /etc/hostname {P}/h", false},
    {'S', "install -d {P}/newdir", false},
    {'S', "install -t {P} /etc/hostname", false},
    {'P', "tee out.txt < README.md", false},
    {'P', "echo x | tee -a README.md", false},
    {'S', "echo x | sudo tee {P}/README.md", false},
    {'P', "truncate -s 0 README.md", false},
    {'P', "chmod +x README.md", false},
    {'P', "chmod -w README.md", false},
    {'P', "chown $USER README.md", false},
    {'P', "dd if=/dev/zero of=blob bs=1 count=1", false},
    {'S', "dd if=/dev/zero of={P}/blob count=1", false},
    {'P', "sed -i 's/a/b/' README.md", false},
    {'P', "sed -i.bak -e 's/a/b/' README.md", false},
    {'P', "sed --in-place=.orig 's/a/b/' README.md", false},
    {'P', "sed -ni 's/a/b/p' README.md", false},
    {'P', "perl -pi -e 's/a/b/' README.md", false},
    {'P', "perl -i.bak -pe 's/a/b/' README.md", false},
    {'P', "find . -name '*.md' -delete", false},
    {'S', "find {P} -name '*.md' -delete", false},
    {'S', "find {P}/docs -exec rm {} \\;", false},
    {'S', "find {P} -type f -exec sed -i s/a/b/ {} +", false},
    {'P', "find . -execdir touch x \\;", false},
    {'P', "find . -fprint list.txt", false},
    {'P', "ls | xargs rm", false},
    {'P', "ls | xargs -I{} mv {} {}.bak", false},
    {'P', "git ls-files | xargs sed -i s/a/b/", false},
    {'P', "echo README.md | xargs -n1 truncate -s0", false},
    {'P', "patch -p1 < /dev/null", false},
    {'S', "tar -xf /dev/null -C {P}", false},
    {'P', "tar xf /dev/null", false},
    {'P', "unzip /dev/null", false},
    {'P', "curl -o page.html http://example.invalid", false},
    {'P', "wget http://example.invalid/x", false},
    // ---- wrappers ----
    {'P', "sudo touch x", false},
    {'P', "sudo -u root rm README.md", false},
    {'P', "env FOO=1 touch x", false},
    {'P', "env -i PATH=/usr/bin rm README.md", false},
    {'S', "env -C {P} touch x", false},
    {'S', "sudo -D {P} touch x", false},
    {'P', "nohup rm README.md", false},
    {'P', "nice -n 10 rm README.md", false},
    {'P', "time rm README.md", false},
    {'P', "command rm README.md", false},
    {'P', "builtin echo x > f", false},
    {'P', "timeout 5 touch x", false},
    {'P', "stdbuf -oL tee out.txt", false},
    {'P', "exec > out.log", false},
    {'P', "env -S 'touch x'", false},
    // ---- nested shells and substitutions ----
    {'P', "bash -c 'touch x'", false},
    {'P', "sh -c \"echo x > y\"", false},
    {'P', "bash -lc 'cd docs && rm guide.md'", false},
    {'S', "bash -c 'cd {P} && touch x'", false},
    {'S', "sh -c 'sh -c \"touch {P}/x\"'", false},
    {'P', "echo $(touch x)", false},
    {'P', "echo `rm README.md`", false},
    {'P', "echo \"$(git commit -m x)\"", false},
    {'S', "x=$(touch {P}/x)", false},
    {'P', "cat <(touch x)", false},
    {'P', "echo ${X:-$(touch x)}", false},
    {'P', "cat <<EOF\n$(touch x)\nEOF", false},
    {'P', "bash <<'EOF'\ntouch x\nEOF", false},
    {'P', "sh <<< 'rm README.md'", false},
    {'P', "echo 'touch x' | sh", false},
    {'P', "eval 'touch x'", false},
    {'P', "eval \"$CMD\"", false},
    {'P', "watch -n 1 touch x", false},
    {'P', "flock /tmp/devgraph-guard.lock -c 'touch x'", false},
    // ---- lists, subshells, groups ----
    {'P', "true; touch x", false},
    {'P', "false || touch x", false},
    {'P', "true && rm README.md", false},
    {'P', "sleep 1 & touch x", false},
    {'P', "(touch x)", false},
    {'P', "{ touch x; }", false},
    {'P', "if true; then touch x; fi", false},
    {'P', "while false; do rm README.md; done", false},
    {'P', "ls\nrm README.md", false},
    {'P', "cat README.md | tee copy.md | wc -l", false},
    {'S', "(cd {P}) ; touch x", true},
    {'P', "(cd {S}; touch x)", true},
    {'P', "(cd {S}); touch x", false},
    {'P', "false && cd {S}; touch x", false},
    {'P', "cd {S} || true; touch x", true},
    {'P', "cd /nonexistent-devgraph-dir; touch x", false},
    {'P', "echo $(cd {S}) > x", false},
    {'P', "cd {S} | true; touch x", false},
    // ---- the effective directory ----
    {'S', "cd {P} && echo x > out", false},
    {'S', "cd {P}; touch x", false},
    {'S', "cd {P}/docs && rm guide.md", false},
    {'S', "pushd {P} && touch x", false},
    {'S', "pushd {P} >/dev/null; popd; touch x", true},
    {'S', "cd {P}; cd -; touch x", true},
    {'S', "cd {P} && cd - && touch x", false},  // the second cd might not run
    {'W', "cd up && touch x", false},
    {'W', "cd {L} && git commit -m x", false},
    {'S', "D={P}; touch $D/x", false},
    {'S', "D={P}; cd $D && touch x", false},
    {'S', "cd \"$(echo {P})\" && touch x", false},
    {'S', "cd $SOMEWHERE && touch x", true},
    // ---- git in the primary clone ----
    {'P', "git add .", false},
    {'P', "git commit -am x", false},
    {'P', "git checkout -b feature", false},
    {'P', "git switch main", false},
    {'P', "git restore README.md", false},
    {'P', "git reset --hard HEAD~1", false},
    {'P', "git clean -fdx", false},
    {'P', "git merge origin/main", false},
    {'P', "git rebase origin/main", false},
    {'P', "git cherry-pick abc123", false},
    {'P', "git revert HEAD", false},
    {'P', "git mv README.md README", false},
    {'P', "git rm README.md", false},
    {'P', "git stash", false},
    {'P', "git stash pop", false},
    {'P', "git pull", false},
    {'P', "git pull --rebase", false},
    {'P', "git apply /dev/null", false},
    {'P', "git am < /dev/null", false},
    {'P', "git update-index --assume-unchanged README.md", false},
    {'P', "git read-tree HEAD", false},
    {'P', "git symbolic-ref HEAD refs/heads/other", false},
    {'P', "git co main", false},
    {'P', "git format-patch HEAD~1", false},
    {'P', "git diff --output=diff.txt", false},
    {'P', "git -c user.name=x commit -m x", false},
    {'P', "git --no-pager commit -m x", false},
    {'D', "git commit -m x", false},
    {'S', "git -C {P} add .", false},
    {'S', "git -C {P} -C docs checkout -- .", false},
    {'S', "git --git-dir={P}/.git --work-tree={P} checkout .", false},
    {'S', "git --git-dir {P}/.git reset --hard", false},
    {'S', "git --work-tree={P} checkout -- README.md", false},
    {'S', "GIT_DIR={P}/.git git reset --hard", false},
    {'S', "GIT_WORK_TREE={P} GIT_DIR={P}/.git git checkout .", false},
    {'S', "export GIT_DIR={P}/.git; git commit -m x", false},
    {'S', "git -c core.worktree={P} checkout .", false},
    {'S', "git clone https://example.invalid/x.git {P}/vendor/x", false},
    {'P', "git clone https://example.invalid/x.git", false},
    {'S', "git init {P}/nested", false},
    {'W', "git -C up commit -m x", false},
    // ---- git worktree add targets ----
    {'P', "git worktree add ../elsewhere -b x", false},
    {'P', "git worktree add {S}/wt -b x", false},
    {'P', "git worktree add {R}/x -b x", false},
    {'P', "git worktree add {R}/acme/widgets -b x", false},
    {'P', "git worktree add {R}/other/widgets/x -b x", false},
    {'P', "git worktree add {R}/acme/widgets/x/y -b x", false},
    {'P', "git worktree move {R}/acme/widgets/feat {S}/moved", false},
    {'S', "git -C {P} worktree add {S}/wt", false},
    // ---- fail closed on what cannot be parsed or resolved ----
    {'P', "echo 'unterminated", false},
    {'P', "echo \"unterminated", false},
    {'P', "echo $(unterminated", false},
    {'P', "cat <<EOF", true},
    {'S', "echo 'unterminated {P}/x", false},
    {'S', "echo 'unterminated", true},
    {'P', "echo x > \"$OUT\"", false},
    {'P', "touch $(cat list.txt)", false},
    {'S', "touch $(echo {P}/x)", false},
    {'S', "echo x > $OUT", true},
    {'S', "touch \"$F\"", true},
    {'P', "$EDITOR README.md", true},
    // ---- everything is allowed in a linked worktree ----
    {'W', "echo x > out.txt && rm out.txt", true},
    {'W', "git add -A && git commit -m 'feat: x' && git push -u origin HEAD", true},
    {'W', "git checkout -b other && git rebase origin/main", true},
    {'W', "git reset --hard && git clean -fdx", true},
    {'W', "sed -i 's/a/b/' README.md && perl -pi -e 's/b/c/' README.md", true},
    {'W', "find . -name '*.tmp' -delete", true},
    {'W', "ls | xargs rm -f", true},
    {'W', "bash -c 'touch x && rm x'", true},
    {'W', "cat <<EOF > notes.md\n$(date)\nEOF", true},
    {'W', "mkdir -p build && cd build && touch CMakeCache.txt", true},
    {'W', "cp {P}/README.md ./from-primary.md", true},
    {'W', "dd if=/dev/zero of=blob count=1 && truncate -s 0 blob", true},
    {'W', "git apply /dev/null; git stash; git stash pop", true},
    {'W', "git -C {W} commit -m x", true},
    {'W', "tar -xf /dev/null && unzip -l /dev/null", true},
    {'W', "env -C {W} touch x", true},
    // ---- and in a scratch directory ----
    {'S', "echo x > out.txt && mkdir d && mv out.txt d/", true},
    {'S', "git init scratch-repo && cd scratch-repo && touch a && git add a", true},
    {'S', "git clone {P} copy", true},
    {'S', "find . -delete", true},
    {'S', "ls | xargs rm -f", true},
    {'S', "bash -c 'echo x > y'", true},
    {'S', "cp -t {S} /etc/hostname", true},
    {'S', "ln -s {P}/README.md readme-link", true},
    {'S', "tar -czf out.tgz {P}", true},
    {'S', "git -C {W} commit --allow-empty -m x", true},
    {'S', "git -C {P} log -1", true},
    {'S', "GIT_DIR={W}/.git git status", true},
};

class GuardTable : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    scratch_ = new test::Scratch();
    const std::string root = guard::resolve_path(scratch_->path(), "/", "");
    primary_ = root + "/primary";
    wt_root_ = root + "/wt";
    worktree_ = wt_root_ + "/acme/widgets/feat";
    sandbox_ = root + "/scratch";
    auto git = [&](std::vector<std::string> args, const std::string& cwd) {
      args.insert(args.begin(), {"git", "-c", "user.name=t", "-c", "user.email=t@example.invalid",
                                 "-c", "init.defaultBranch=main"});
      auto r = test::run_process(args, {}, cwd);
      ASSERT_EQ(r.exit_code, 0) << r.err;
    };
    ASSERT_EQ(make_directories(primary_ + "/docs").ok(), true);
    ASSERT_EQ(make_directories(sandbox_ + "/home").ok(), true);
    test::write_text(primary_ + "/README.md", "hello\n");
    test::write_text(primary_ + "/docs/guide.md", "guide\n");
    git({"init", "-q"}, primary_);
    git({"remote", "add", "origin", "https://github.com/acme/widgets.git"}, primary_);
    git({"add", "."}, primary_);
    git({"commit", "-qm", "init"}, primary_);
    git({"worktree", "add", "-q", worktree_, "-b", "feat"}, primary_);
    ASSERT_EQ(symlink(primary_.c_str(), (worktree_ + "/up").c_str()), 0);
    ASSERT_EQ(symlink((primary_ + "/README.md").c_str(), (worktree_ + "/link-readme.md").c_str()),
              0);
    ASSERT_EQ(symlink((primary_ + "/new.md").c_str(), (worktree_ + "/dangling.md").c_str()), 0);
    roots_.home = sandbox_ + "/home";
    roots_.worktrees = wt_root_;
    roots_.develop_home = root + "/develop";
  }
  static void TearDownTestSuite() {
    delete scratch_;
    scratch_ = nullptr;
  }

  static std::string expand(std::string s) {
    const std::pair<const char*, std::string> subs[] = {{"{P}", primary_},
                                                        {"{W}", worktree_},
                                                        {"{S}", sandbox_},
                                                        {"{R}", wt_root_},
                                                        {"{L}", worktree_ + "/up"}};
    for (const auto& [key, value] : subs)
      for (size_t at = s.find(key); at != std::string::npos; at = s.find(key, at + value.size()))
        s.replace(at, std::string(key).size(), value);
    return s;
  }

  static std::string dir(char where) {
    switch (where) {
      case 'P':
        return primary_;
      case 'D':
        return primary_ + "/docs";
      case 'W':
        return worktree_;
      default:
        return sandbox_;
    }
  }

  static inline test::Scratch* scratch_ = nullptr;
  static inline std::string primary_, worktree_, sandbox_, wt_root_;
  static inline guard::Roots roots_;
};

TEST_F(GuardTable, HasEnoughCasesInBothDirections) {
  size_t allow = 0, deny = 0;
  for (const auto& c : kCases) (c.allow ? allow : deny)++;
  EXPECT_GE(kCases.size(), 150u);
  EXPECT_GE(allow, 60u);
  EXPECT_GE(deny, 60u);
}

TEST_F(GuardTable, EveryCase) {
  for (const auto& c : kCases) {
    std::string command = expand(c.command);
    auto verdict = guard::check_bash(command, dir(c.where), roots_);
    EXPECT_EQ(!verdict.has_value(), c.allow)
        << "in " << c.where << ": " << command << "\n  -> " << verdict.value_or("allowed");
    if (verdict) {
      EXPECT_EQ(verdict->find('\n'), std::string::npos) << "reason must be one line: " << *verdict;
    }
  }
}

TEST_F(GuardTable, NothingOnDiskChanges) {
  // The guard only looks: after the whole table the primary clone holds
  // exactly what it held before.
  for (const auto& c : kCases) (void)guard::check_bash(expand(c.command), dir(c.where), roots_);
  auto r = test::run_process({"git", "status", "--porcelain", "--ignored"}, {}, primary_);
  EXPECT_EQ(r.out, "");
}

TEST_F(GuardTable, WritesThroughFileTools) {
  EXPECT_TRUE(guard::check_write(primary_ + "/README.md", sandbox_, roots_));
  EXPECT_TRUE(guard::check_write("README.md", primary_, roots_));
  EXPECT_TRUE(guard::check_write("docs/new.md", primary_, roots_));
  EXPECT_TRUE(guard::check_write(worktree_ + "/up/x.md", sandbox_, roots_));
  EXPECT_TRUE(guard::check_write(worktree_ + "/link-readme.md", sandbox_, roots_));
  EXPECT_TRUE(guard::check_write(worktree_ + "/dangling.md", sandbox_, roots_));
  EXPECT_TRUE(guard::check_write(primary_ + "/.git/config", sandbox_, roots_));
  EXPECT_FALSE(guard::check_write(worktree_ + "/README.md", sandbox_, roots_));
  EXPECT_FALSE(guard::check_write("new.md", worktree_, roots_));
  EXPECT_FALSE(guard::check_write(sandbox_ + "/x", primary_, roots_));
  EXPECT_FALSE(guard::check_write("~/notes.md", primary_, roots_));
  guard::Roots exempt = roots_;
  exempt.exempt.push_back(primary_);
  EXPECT_FALSE(guard::check_write(primary_ + "/README.md", sandbox_, exempt));
  EXPECT_FALSE(guard::check_bash("git commit -m x && touch y", primary_, exempt));
  EXPECT_FALSE(guard::check_bash("git worktree add ../x -b x", primary_, exempt));
}

}  // namespace
}  // namespace devgraph
