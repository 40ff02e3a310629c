// `devgraph clean` end to end: the real binary in a real primary clone, its
// branches made with git in a scratch directory, one of each kind the
// contract sorts (merged already, cleanly integrable, conflicting, checked
// out with uncommitted or untracked work, with an open pull request, checked
// out away from the canonical worktree, with characters devgraph keeps out
// of paths, with a merge stopped in its worktree). GitHub delivery is a
// clone whose origin is https://github.com/acme/widgets.git, rewritten by
// the clone's own `url.<bare>.insteadOf` to a bare repository beside it (as
// in run_github_test.cpp), with the fake GitHub CLI
// (tests/fixtures/bundle/fake-gh) first on PATH; local delivery is a clone
// without origin. Every test asserts on the exit code, the RESULT_JSON line
// and git, and checks that no commit reachable before the run is lost, but
// for the commits of a branch proven landed by a rebase or a squash.
#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <set>
#include <sstream>

#include "support/kill_harness.h"
#include "support/run_scenario.h"
#include "support/test_util.h"
#include "util/fs.h"
#include "util/json.h"

namespace devgraph {
namespace {

using test::lines_of;
using test::result_of;

constexpr const char* kOrigin = "https://github.com/acme/widgets.git";

// The branch with a character devgraph keeps out of paths (git allows it).
constexpr const char* kWeird = "feature/we'ird";

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// object[key], null when the key is missing (a const Json's operator[]
// must never see a missing key).
Json field(const Json& object, const char* key) {
  return object.is_object() && object.contains(key) ? object[key] : Json();
}

// Every path under `dir`, relative to it, one per line, sorted: what a
// test compares to prove that nothing was written there.
std::string tree_of(const std::string& dir) {
  std::vector<std::string> names;
  std::error_code ec;
  if (!std::filesystem::exists(dir, ec)) return "";
  for (auto it = std::filesystem::recursive_directory_iterator(dir, ec);
       it != std::filesystem::recursive_directory_iterator(); it.increment(ec)) {
    if (ec) break;
    names.push_back(std::filesystem::relative(it->path(), dir, ec).string());
  }
  std::sort(names.begin(), names.end());
  std::string out;
  for (const auto& n : names) out += n + "\n";
  return out;
}

// What one branch was before a run: its tip, and its commits and their
// subjects not on the default ref, oldest first.
struct BranchBefore {
  std::string tip;
  std::vector<std::string> commits;
  std::vector<std::string> subjects;
};

// What the nothing-lost checker and the nothing-written checks compare
// with: every commit reachable from a ref of the clone or of origin, every
// local branch, the refs of both and everything under AI_ROOT.
struct Snapshot {
  std::set<std::string> commits;
  std::map<std::string, BranchBefore> branches;
  std::string clone_refs, origin_refs, ai_tree, default_tip;
};

// What the contract says becomes of one branch.
struct Want {
  std::string bucket, outcome;
  std::string reason;  // a substring of the reason; "" checks nothing
  bool deleted = false;
  bool worktree_removed = false;
};

class CleanCli : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(make_directories(gh_dir));
    ASSERT_TRUE(make_directories(bin));
    ASSERT_TRUE(make_directories(repo));
    ASSERT_EQ(
        ::symlink((test::test_dir() + "/fixtures/bundle/fake-gh").c_str(), (bin + "/gh").c_str()),
        0);
  }

  // ---- the repositories ------------------------------------------------

  // A primary clone of a bare origin holding main, the origin named as a
  // GitHub repository: placement gives acme/widgets, delivery github.
  void init_github() {
    github = true;
    owner_repo = "acme/widgets";
    git({"init", "-q", "--bare", "-b", "main", remote}, scratch.path());
    git({"init", "-q", "-b", "main"});
    base_commit();
    git({"remote", "add", "origin", kOrigin});
    git({"config", "url." + remote + ".insteadOf", kOrigin});
    git({"push", "-q", "-u", "origin", "main"});
    git({"remote", "set-head", "origin", "main"});
  }

  // A repository without origin: local/widgets, delivery local.
  void init_local() {
    github = false;
    owner_repo = "local/widgets";
    git({"init", "-q", "-b", "main"});
    base_commit();
  }

  void base_commit() {
    test::write_text(repo + "/README.md", "widgets\n");
    test::write_text(repo + "/shared.txt", "line\n");
    git({"add", "-A"});
    git({"commit", "-q", "-m", "base"});
  }

  struct Change {
    std::string path, content, subject;
  };

  // Branch `name` cut from `start`, one commit per change; the primary
  // clone is back on main afterwards.
  void branch(const std::string& name, const std::string& start,
              const std::vector<Change>& changes) {
    git({"checkout", "-q", "-b", name, start});
    for (const auto& c : changes) {
      test::write_text(repo + "/" + c.path, c.content);
      git({"add", "--", c.path});
      git({"commit", "-q", "-m", c.subject});
    }
    git({"checkout", "-q", "main"});
  }

  void publish_main() {
    if (github) git({"push", "-q", "origin", "main"});
  }

  std::string canonical(const std::string& slug) const {
    return ai_root + "/worktrees/" + owner_repo + "/" + slug;
  }

  // Merged already: a commit merged into main (and main published).
  void make_merged(const std::string& name) {
    branch(name, "main", {{basename_of(name) + ".txt", name + "\n", name + ": one"}});
    git({"merge", "-q", "--no-ff", "-m", "Merge " + name, name});
    publish_main();
  }

  // Merged already, checked out, clean, at the canonical worktree.
  void make_merged_with_worktree() {
    make_merged("feature/merged-wt");
    git({"worktree", "add", "-q", canonical("feature-merged-wt"), "feature/merged-wt"});
  }

  // Merged already, but its canonical worktree holds an untracked file:
  // the work there is at risk, so it is for a person, never removed.
  void make_merged_with_untracked_worktree() {
    make_merged("feature/merged-notes");
    git({"worktree", "add", "-q", canonical("feature-merged-notes"), "feature/merged-notes"});
    test::write_text(canonical("feature-merged-notes") + "/notes.txt", "mine\n");
  }

  // Two commits touching files main never touches: integrable once main
  // moves on (advance_main).
  void make_clean() {
    branch("feature/clean", "main",
           {{"clean-1.txt", "clean one\n", "clean: one"},
            {"clean-2.txt", "clean two\n", "clean: two"}});
  }

  // Changes the line of shared.txt that advance_main changes too.
  void make_conflict() {
    branch("feature/conflict", "main", {{"shared.txt", "branch\n", "conflict: change shared"}});
  }

  // main moves on: shared.txt's line changes, published.
  void advance_main() {
    test::write_text(repo + "/shared.txt", "main\n");
    git({"add", "shared.txt"});
    git({"commit", "-q", "-m", "main: change shared"});
    publish_main();
  }

  // Checked out at the canonical worktree with a tracked file changed.
  void make_dirty() {
    branch("feature/dirty", "main", {{"dirty.txt", "committed\n", "dirty: one"}});
    git({"worktree", "add", "-q", canonical("feature-dirty"), "feature/dirty"});
    test::write_text(canonical("feature-dirty") + "/dirty.txt", "uncommitted\n");
  }

  // Checked out at the canonical worktree with only an untracked file.
  void make_untracked() {
    branch("feature/untracked", "main", {{"untracked.txt", "committed\n", "untracked: one"}});
    git({"worktree", "add", "-q", canonical("feature-untracked"), "feature/untracked"});
    test::write_text(canonical("feature-untracked") + "/notes.txt", "not yet added\n");
  }

  // Pushed, with open pull request #1 (the fake's files, as its header
  // describes them).
  void make_pr() {
    branch("feature/pr", "main", {{"pr.txt", "pr\n", "pr: one"}});
    git({"push", "-q", "origin", "feature/pr"});
    open_pr("feature/pr");
  }

  // Declares the next open pull request, from `head` into main, in the
  // fake's files; its number.
  int open_pr(const std::string& head) {
    int n = 1;
    while (path_exists(gh_dir + "/pr-" + std::to_string(n) + ".fields")) ++n;
    std::string num = std::to_string(n);
    test::write_text(gh_dir + "/pr-" + num + ".fields",
                     "number=" + num + "\nurl=https://github.invalid/acme/widgets/pull/" + num +
                         "\nheadRefName=" + head + "\nbaseRefName=main\ntitle=" + head +
                         "\nautoMerge=false\n");
    test::write_text(gh_dir + "/pr-" + num + ".body", "A pull request.\n");
    auto heads = read_file(gh_dir + "/heads");
    test::write_text(gh_dir + "/heads", (heads ? *heads : "") + num + " " + head + "\n");
    test::write_text(gh_dir + "/counter", num + "\n");
    return n;
  }

  // Checked out, clean, away from the canonical worktree.
  void make_elsewhere() {
    branch("feature/elsewhere", "main", {{"elsewhere.txt", "elsewhere\n", "elsewhere: one"}});
    git({"worktree", "add", "-q", elsewhere, "feature/elsewhere"});
  }

  void make_weird() { branch(kWeird, "main", {{"weird.txt", "weird\n", "weird: one"}}); }

  // Checked out at the canonical worktree with a merge of
  // feature/conflict stopped on a conflict (after advance_main).
  void make_midmerge() {
    branch("feature/midmerge", "main", {{"shared.txt", "midmerge\n", "midmerge: change shared"}});
    git({"worktree", "add", "-q", canonical("feature-midmerge"), "feature/midmerge"});
    auto r = git_may_fail({"merge", "feature/conflict"}, canonical("feature-midmerge"));
    ASSERT_NE(r.exit_code, 0) << "the merge was meant to stop on a conflict: " << r.out;
  }

  // Every kind of branch at once (GitHub delivery).
  void make_branch_set() {
    make_merged("feature/merged");
    make_merged_with_worktree();
    make_merged_with_untracked_worktree();
    make_clean();
    make_conflict();
    advance_main();
    make_dirty();
    make_untracked();
    make_pr();
    make_elsewhere();
    make_weird();
    make_midmerge();
  }

  // origin refuses every push to main, as a protected default branch does.
  void protect_main() {
    std::string hook = remote + "/hooks/pre-receive";
    test::write_text(hook,
                     "#!/bin/sh\n"
                     "while read old new ref; do\n"
                     "  if [ \"$ref\" = refs/heads/main ]; then\n"
                     "    echo \"main is protected\" >&2\n"
                     "    exit 1\n"
                     "  fi\n"
                     "done\n"
                     "exit 0\n");
    ASSERT_EQ(::chmod(hook.c_str(), 0755), 0);
  }

  // project.yaml committed on main (and published).
  void commit_project_yaml(const std::string& text) {
    test::write_text(repo + "/project.yaml", text);
    git({"add", "project.yaml"});
    git({"commit", "-q", "-m", "project.yaml"});
    publish_main();
  }

  // ---- processes ---------------------------------------------------------

  std::map<std::string, std::string> env() const {
    const char* path = std::getenv("PATH");
    // No background gc or maintenance: a detached git would outlive the
    // command that started it (and the kill tests wait for every process).
    auto e = test::quiet_git_env();
    e.insert({{"AI_ROOT", ai_root},
              {"PATH", bin + ":" + (path ? path : "/usr/bin:/bin")},
              {"FAKE_GH_DIR", gh_dir},
              {"GIT_AUTHOR_NAME", "t"},
              {"GIT_AUTHOR_EMAIL", "t@example.invalid"},
              {"GIT_COMMITTER_NAME", "t"},
              {"GIT_COMMITTER_EMAIL", "t@example.invalid"},
              {"NO_COLOR", "1"}});
    return e;
  }

  test::ProcessResult git_may_fail(const std::vector<std::string>& args,
                                   const std::string& dir = "") {
    std::vector<std::string> argv = {"git"};
    argv.insert(argv.end(), args.begin(), args.end());
    return test::run_process(argv, env(), dir.empty() ? repo : dir);
  }

  void git(const std::vector<std::string>& args, const std::string& dir = "") {
    auto r = git_may_fail(args, dir);
    ASSERT_EQ(r.exit_code, 0) << "git " << args[0] << ": " << r.err;
  }

  std::string git_out(const std::vector<std::string>& args, const std::string& dir = "") {
    auto r = git_may_fail(args, dir);
    EXPECT_EQ(r.exit_code, 0) << "git " << args[0] << ": " << r.err;
    while (!r.out.empty() && r.out.back() == '\n') r.out.pop_back();
    return r.out;
  }

  // git in the bare origin.
  std::string origin_out(const std::vector<std::string>& args) {
    std::vector<std::string> a = {"--git-dir", remote};
    a.insert(a.end(), args.begin(), args.end());
    return git_out(a, scratch.path());
  }

  // The tip of refs/heads/<name> in the clone, "" when there is none.
  std::string tip(const std::string& name) {
    auto r = git_may_fail({"rev-parse", "-q", "--verify", "refs/heads/" + name + "^{commit}"});
    if (r.exit_code != 0) return "";
    while (!r.out.empty() && r.out.back() == '\n') r.out.pop_back();
    return r.out;
  }

  // The default branch's tip where delivery lands: origin's main (github)
  // or the clone's main (local).
  std::string default_tip() {
    if (!github) return tip("main");
    auto r = git_may_fail({"--git-dir", remote, "rev-parse", "-q", "--verify", "refs/heads/main"},
                          scratch.path());
    while (!r.out.empty() && r.out.back() == '\n') r.out.pop_back();
    return r.exit_code == 0 ? r.out : std::string();
  }

  // True when `sha` is reachable from the default branch where delivery
  // lands.
  bool landed(const std::string& sha) {
    if (sha.empty()) return false;
    auto r = github ? git_may_fail({"--git-dir", remote, "merge-base", "--is-ancestor", sha,
                                    "refs/heads/main"},
                                   scratch.path())
                    : git_may_fail({"merge-base", "--is-ancestor", sha, "refs/heads/main"});
    return r.exit_code == 0;
  }

  test::ProcessResult clean(std::vector<std::string> extra = {}, const std::string& cwd = "") {
    std::vector<std::string> args = {"clean"};
    args.insert(args.end(), extra.begin(), extra.end());
    return test::run_devgraph(args, env(), cwd.empty() ? repo : cwd);
  }

  // A clean run that finished: exit 0, COMPLETE, and a run devgraph
  // validate accepts.
  Json finished(const test::ProcessResult& r) {
    EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
    Json res = result_of(r);
    EXPECT_EQ(res["status"], "COMPLETE") << r.out;
    std::string dir = json_str(res, "run_dir");
    EXPECT_TRUE(is_directory(dir)) << dir;
    if (is_directory(dir)) {
      auto v = test::run_devgraph({"validate", "run", dir}, env(), repo);
      EXPECT_EQ(v.exit_code, 0) << v.out << v.err;
    }
    return res;
  }

  // Starts `devgraph clean ARGS` in the background and sends `sig` to its
  // process group once its run's events.jsonl holds `line` lines (woken by
  // inotify, never by a timer); waits for it and for every process it
  // started in a group of its own (the test adopts them). Returns its wait
  // status; `dir` is the run's directory, `sent` whether the signal went
  // (the run may have finished first).
  int stop_at(size_t line, int sig, const std::vector<std::string>& args, std::string& dir,
              bool& sent) {
    test::adopt_orphans();
    std::string home = ai_root + "/develop/" + owner_repo;
    auto run_dir = [&] {
      auto names = test::names_in(home + "/runs");
      return names.empty() ? std::string() : home + "/runs/" + names.back();
    };
    std::vector<std::string> argv = {"clean"};
    argv.insert(argv.end(), args.begin(), args.end());
    test::Background bg;
    test::start_background(bg, argv, env(), repo, scratch / "clean.log");
    test::Watch watch;
    EXPECT_TRUE(watch.ok());
    auto why = test::wait_until(
        watch, bg.pidfd,
        [&] {
          std::vector<std::string> dirs = {scratch.path(),   ai_root, ai_root + "/develop",
                                           dirname_of(home), home,    home + "/runs"};
          if (std::string d = run_dir(); !d.empty()) dirs.push_back(d);
          return dirs;
        },
        [&] { return test::event_lines(run_dir()) >= line; },
        std::chrono::steady_clock::now() + std::chrono::seconds(60));
    sent = why == test::Waited::kReached;
    if (sent) ::kill(-bg.pid, sig);
    int st = bg.wait();
    // Until every adopted process has gone (ECHILD).
    while (::waitpid(-1, nullptr, 0) > 0 || errno == EINTR) {
    }
    dir = run_dir();
    return st;
  }

  // ---- checkers ------------------------------------------------------------

  Snapshot snapshot() {
    Snapshot s;
    for (const auto& c : lines_of(git_out({"rev-list", "--all"}))) s.commits.insert(c);
    s.clone_refs = git_out({"for-each-ref", "--format=%(objectname) %(refname)"});
    if (github) {
      for (const auto& c : lines_of(origin_out({"rev-list", "--all"}))) s.commits.insert(c);
      s.origin_refs = origin_out({"for-each-ref", "--format=%(objectname) %(refname)"});
    }
    std::string base = github ? "refs/remotes/origin/main" : "refs/heads/main";
    bool has_base = git_may_fail({"rev-parse", "-q", "--verify", base}).exit_code == 0;
    for (const auto& ref :
         lines_of(git_out({"for-each-ref", "--format=%(refname)", "refs/heads"}))) {
      std::string name = ref.substr(std::string("refs/heads/").size());
      BranchBefore b;
      b.tip = tip(name);
      if (has_base) {
        b.commits = lines_of(git_out({"rev-list", "--reverse", base + ".." + ref}));
        b.subjects = lines_of(git_out({"log", "--reverse", "--format=%s", base + ".." + ref}));
      }
      s.branches[name] = b;
    }
    s.ai_tree = tree_of(ai_root);
    s.default_tip = default_tip();
    return s;
  }

  // Nothing lost: every commit reachable from a ref of the clone or of
  // origin before the run still is, but for the commits of a branch the
  // run reports verified by a rebase or a squash with the very tip, count
  // and subjects the branch had, whose result landed on the default
  // branch.
  void expect_nothing_lost(const Snapshot& before, const Json& res) {
    std::set<std::string> now;
    for (const auto& c : lines_of(git_out({"rev-list", "--all"}))) now.insert(c);
    if (github)
      for (const auto& c : lines_of(origin_out({"rev-list", "--all"}))) now.insert(c);
    std::map<std::string, std::string> exempt;  // commit -> branch
    if (res.contains("branches") && res["branches"].is_array()) {
      for (const auto& e : res["branches"]) {
        std::string name = json_str(e, "branch"), strategy = json_str(e, "strategy");
        if (json_str(e, "outcome") != "verified" || (strategy != "squash" && strategy != "rebase"))
          continue;
        auto it = before.branches.find(name);
        if (it == before.branches.end()) continue;
        const BranchBefore& b = it->second;
        Json commits = field(e, "commits");
        bool same = json_str(e, "before") == b.tip && commits.is_number_integer() &&
                    commits.get<long long>() == static_cast<long long>(b.commits.size()) &&
                    field(e, "subjects") == Json(b.subjects);
        EXPECT_TRUE(same) << name << " is verified but its report does not match the branch "
                          << "before the run: " << dump_py(e);
        bool in = landed(json_str(e, "after"));
        EXPECT_TRUE(in) << name << " is verified but its result is not on the default branch: "
                        << dump_py(e);
        if (same && in)
          for (const auto& c : b.commits) exempt[c] = name;
      }
    }
    for (const auto& c : before.commits) {
      if (now.count(c) || exempt.count(c)) continue;
      std::string owner;
      for (const auto& [name, b] : before.branches)
        if (std::find(b.commits.begin(), b.commits.end(), c) != b.commits.end()) owner = name;
      ADD_FAILURE() << "commit " << c << " (branch " << (owner.empty() ? "?" : owner)
                    << ") was reachable before the run and is reachable from no ref after it";
    }
  }

  // Nothing written: no ref of the clone or origin changed, nothing under
  // AI_ROOT appeared or went (no run directory above all).
  void expect_nothing_written(const Snapshot& before) {
    EXPECT_EQ(git_out({"for-each-ref", "--format=%(objectname) %(refname)"}), before.clone_refs);
    if (github) {
      EXPECT_EQ(origin_out({"for-each-ref", "--format=%(objectname) %(refname)"}),
                before.origin_refs);
    }
    EXPECT_FALSE(path_exists(ai_root + "/develop/" + owner_repo + "/runs"))
        << tree_of(ai_root + "/develop");
    EXPECT_EQ(tree_of(ai_root), before.ai_tree);
  }

  // A refusal: exit 3, one line on stderr holding `words`, RESULT_JSON
  // status ERROR, nothing written.
  void expect_refused(const test::ProcessResult& r, const std::string& words,
                      const Snapshot& before) {
    EXPECT_EQ(r.exit_code, 3) << r.out << r.err;
    ASSERT_FALSE(r.err.empty()) << r.out;
    EXPECT_EQ(r.err.find('\n'), r.err.size() - 1) << r.err;
    if (!words.empty()) {
      EXPECT_TRUE(contains(r.err, words)) << r.err;
    }
    EXPECT_EQ(result_of(r)["status"], "ERROR") << r.out;
    expect_nothing_written(before);
  }

  static const Json* entry(const Json& res, const std::string& name) {
    if (!res.contains("branches") || !res["branches"].is_array()) return nullptr;
    for (const auto& e : res["branches"])
      if (json_str(e, "branch") == name) return &e;
    return nullptr;
  }

  // The report lists every local branch but main (and devgraph's own
  // throwaways) once, sorted by name.
  void expect_lists_every_branch(const Json& res, const Snapshot& before) {
    std::vector<std::string> want, got;
    for (const auto& [name, b] : before.branches)
      if (name != "main" && name.rfind("develop/clean-integrated-", 0) != 0) want.push_back(name);
    ASSERT_TRUE(res.contains("branches") && res["branches"].is_array()) << dump_py(res);
    for (const auto& e : res["branches"]) got.push_back(json_str(e, "branch"));
    EXPECT_EQ(got, want) << dump_py(res["branches"]);
  }

  // One branch's entry and git state as `w` says: bucket, outcome, reason,
  // deleted (the ref gone) or kept at the very same tip, its canonical
  // worktree removed or not.
  void expect_branch(const Json& res, const Snapshot& before, const std::string& name,
                     const Want& w) {
    SCOPED_TRACE(name);
    const Json* e = entry(res, name);
    ASSERT_NE(e, nullptr) << dump_py(res);
    ASSERT_TRUE(before.branches.count(name));
    EXPECT_EQ(json_str(*e, "bucket"), w.bucket) << dump_py(*e);
    EXPECT_EQ(json_str(*e, "outcome"), w.outcome) << dump_py(*e);
    if (!w.reason.empty()) {
      EXPECT_TRUE(contains(json_str(*e, "reason"), w.reason)) << dump_py(*e);
    }
    EXPECT_EQ(json_str(*e, "before"), before.branches.at(name).tip) << dump_py(*e);
    EXPECT_EQ(field(*e, "deleted"), w.deleted) << dump_py(*e);
    EXPECT_EQ(field(*e, "worktree_removed"), w.worktree_removed) << dump_py(*e);
    if (w.deleted) {
      EXPECT_EQ(tip(name), "");
    } else {
      EXPECT_EQ(tip(name), before.branches.at(name).tip);
    }
  }

  // No throwaway branch or worktree left, here or on origin.
  void expect_no_throwaways() {
    EXPECT_EQ(git_out({"for-each-ref", "--format=%(refname)", "refs/heads/develop/"}), "");
    if (github) {
      EXPECT_EQ(origin_out({"for-each-ref", "--format=%(refname)", "refs/heads/develop/"}), "");
    }
    std::string dir = ai_root + "/worktrees/" + owner_repo;
    for (const auto& n : lines_of(is_directory(dir) ? test::entries(dir) : ""))
      EXPECT_NE(n.rfind("clean-integrated-", 0), 0u) << n;
    EXPECT_FALSE(contains(git_out({"worktree", "list", "--porcelain"}), "clean-integrated-"))
        << git_out({"worktree", "list", "--porcelain"});
  }

  // What every strategy does alike to the branches it never integrates:
  // the merged ones cleaned (the canonical worktree removed), the rest
  // kept as they were with the reason the contract gives, their work in
  // place.
  void expect_not_integrated_ones(const Json& res, const Snapshot& before) {
    expect_branch(res, before, "feature/merged", {"MERGED", "cleaned", "", true, false});
    expect_branch(res, before, "feature/merged-wt", {"MERGED", "cleaned", "", true, true});
    EXPECT_FALSE(path_exists(canonical("feature-merged-wt")));
    expect_branch(res, before, "feature/merged-notes",
                  {"HUMAN_REVIEW", "kept", "untracked files in its worktree"});
    EXPECT_EQ(test::slurp(canonical("feature-merged-notes") + "/notes.txt"), "mine\n");
    expect_branch(res, before, "feature/dirty",
                  {"HUMAN_REVIEW", "kept", "uncommitted changes in its worktree"});
    EXPECT_EQ(test::slurp(canonical("feature-dirty") + "/dirty.txt"), "uncommitted\n");
    expect_branch(res, before, "feature/untracked",
                  {"HUMAN_REVIEW", "kept", "untracked files in its worktree"});
    EXPECT_EQ(test::slurp(canonical("feature-untracked") + "/notes.txt"), "not yet added\n");
    expect_branch(res, before, "feature/midmerge",
                  {"HUMAN_REVIEW", "kept", "conflicts in its worktree"});
    EXPECT_TRUE(contains(git_out({"status", "--porcelain"}, canonical("feature-midmerge")),
                         "UU shared.txt"));
    expect_branch(res, before, "feature/pr", {"PROTECTED", "kept", "open pull request #1"});
    expect_branch(res, before, "feature/elsewhere",
                  {"HUMAN_REVIEW", "kept", "not at the canonical worktree"});
    if (const Json* e = entry(res, "feature/elsewhere")) {
      std::string reason = json_str(*e, "reason");
      EXPECT_EQ(reason.rfind("checked out at ", 0), 0u) << reason;
      EXPECT_TRUE(contains(reason, "elsewhere-wt")) << reason;
      EXPECT_TRUE(contains(reason, "/worktrees/acme/widgets/feature-elsewhere")) << reason;
    }
    EXPECT_TRUE(is_directory(elsewhere));
    expect_branch(
        res, before, kWeird,
        {"HUMAN_REVIEW", "kept",
         std::string("branch name ") + kWeird + " has characters devgraph keeps out of paths"});
  }

  // The conflicting branch left exactly as it was, the conflict reported.
  void expect_conflict(const Json& res, const Snapshot& before, const std::string& reason) {
    expect_branch(res, before, "feature/conflict", {"ELIGIBLE", "conflict", reason});
    EXPECT_FALSE(path_exists(canonical("clean-integrated-feature-conflict")));
    EXPECT_EQ(tip("develop/clean-integrated-feature-conflict"), "");
  }

  // feature/clean landed on origin's main by `strategy`: verified,
  // deleted, its result on main and its files in main's tree.
  void expect_clean_landed(const Json& res, const Snapshot& before, const std::string& strategy) {
    expect_branch(res, before, "feature/clean", {"ELIGIBLE", "verified", "", true, false});
    const Json* e = entry(res, "feature/clean");
    if (!e) return;
    EXPECT_EQ(json_str(*e, "strategy"), strategy);
    EXPECT_EQ(field(*e, "commits"), 2) << dump_py(*e);
    EXPECT_EQ(field(*e, "subjects"), Json::array({"clean: one", "clean: two"})) << dump_py(*e);
    EXPECT_EQ(field(*e, "history_preserved"), strategy != "squash") << dump_py(*e);
    EXPECT_TRUE(landed(json_str(*e, "after"))) << dump_py(*e);
    EXPECT_NE(default_tip(), before.default_tip);
    std::string main = github ? "refs/heads/main" : "main";
    auto show = [&](const std::string& path) {
      return github ? origin_out({"show", main + ":" + path})
                    : git_out({"show", main + ":" + path});
    };
    EXPECT_EQ(show("clean-1.txt"), "clean one");
    EXPECT_EQ(show("clean-2.txt"), "clean two");
    EXPECT_EQ(show("shared.txt"), "main");  // main's own change kept
  }

  // The commits main gained since `from`, oldest first, as
  // "<subject>\t<parent count>".
  std::vector<std::string> gained_since(const std::string& from) {
    std::vector<std::string> out;
    std::vector<std::string> args = {"log", "--reverse", "--format=%s\t%p",
                                     from + "..refs/heads/main"};
    for (const auto& l : lines_of(github ? origin_out(args) : git_out(args))) {
      auto tab = l.find('\t');
      std::istringstream parents(l.substr(tab + 1));
      int n = 0;
      for (std::string p; parents >> p;) ++n;
      out.push_back(l.substr(0, tab) + "\t" + std::to_string(n));
    }
    return out;
  }

  // The types of the run's events.
  std::set<std::string> event_types(const Json& res) {
    std::set<std::string> types;
    for (const auto& ev : test::read_jsonl(json_str(res, "run_dir") + "/events.jsonl"))
      types.insert(json_str(ev, "type"));
    return types;
  }

  // What an unbroken rebase run over make_branch_set() ends with.
  void expect_rebase_end(const Json& res, const Snapshot& before) {
    EXPECT_EQ(res["strategy"], "rebase");
    expect_lists_every_branch(res, before);
    expect_clean_landed(res, before, "rebase");
    // The branch's two commits replayed on main once, one parent each.
    EXPECT_EQ(gained_since(before.default_tip),
              (std::vector<std::string>{"clean: one\t1", "clean: two\t1"}));
    expect_conflict(res, before, "rebase conflict");
    expect_not_integrated_ones(res, before);
    expect_no_throwaways();
    expect_nothing_lost(before, res);
  }

  test::Scratch scratch;
  std::string repo = scratch / "widgets";
  std::string remote = scratch / "remote.git";
  std::string ai_root = scratch / "ai";
  std::string gh_dir = scratch / "gh";
  std::string bin = scratch / "bin";
  std::string elsewhere = scratch / "elsewhere-wt";
  bool github = true;
  std::string owner_repo = "acme/widgets";
};

// ---- the strategies over every kind of branch --------------------------------

TEST_F(CleanCli,
       RebaseLandsTheCleanBranchAsItsOwnCommitsAndLeavesEveryOtherBranchAsTheContractSays) {
  init_github();
  make_branch_set();
  Snapshot before = snapshot();
  auto r = clean({"--strategy", "rebase"});
  Json res = finished(r);
  EXPECT_EQ(res["strategy"], "rebase");
  EXPECT_EQ(res["strategy_source"], "cli");
  EXPECT_EQ(res["delivery"], "github");
  EXPECT_EQ(res["default_branch"], "main");
  expect_lists_every_branch(res, before);
  expect_clean_landed(res, before, "rebase");
  // The branch's two commits replayed on main, one parent each.
  EXPECT_EQ(gained_since(before.default_tip),
            (std::vector<std::string>{"clean: one\t1", "clean: two\t1"}));
  expect_conflict(res, before, "rebase conflict");
  expect_not_integrated_ones(res, before);
  expect_no_throwaways();
  EXPECT_FALSE(contains(r.out, "Commit-history preservation: no")) << r.out;
  std::string dir = json_str(res, "run_dir");
  EXPECT_TRUE(contains(dir, ai_root + "/develop/acme/widgets/runs/")) << dir;
  EXPECT_TRUE(path_exists(dir + "/clean-report.md"));
  auto st = parse_json(test::slurp(dir + "/state.json"), "state");
  ASSERT_TRUE(st.ok());
  EXPECT_EQ((*st)["mode"], "clean");
  std::set<std::string> types;
  for (const auto& ev : test::read_jsonl(dir + "/events.jsonl")) types.insert(json_str(ev, "type"));
  for (const char* t :
       {"CLEAN_DISCOVERED", "STRATEGY_RESOLVED", "CLEAN_CLASSIFIED", "BRANCH_INTEGRATED",
        "REBASE_CONFLICT", "INTEGRATION_VERIFIED", "CLEAN_CLEANUP_DONE", "CLEAN_REPORT_DONE"})
    EXPECT_TRUE(types.count(t)) << t;
  expect_nothing_lost(before, res);
}

TEST_F(CleanCli, MergeLandsTheCleanBranchThroughAMergeCommitAndReportsTheConflictAsAMergeConflict) {
  init_github();
  make_branch_set();
  Snapshot before = snapshot();
  auto r = clean({"--strategy", "merge", "--yes"});
  Json res = finished(r);
  EXPECT_EQ(res["strategy"], "merge");
  EXPECT_EQ(res["strategy_source"], "cli");
  expect_lists_every_branch(res, before);
  expect_clean_landed(res, before, "merge");
  // The branch's own commits are on main now, under one merge commit.
  std::string old_tip = before.branches.at("feature/clean").tip;
  EXPECT_TRUE(landed(old_tip));
  auto gained = gained_since(before.default_tip);
  ASSERT_FALSE(gained.empty());
  EXPECT_EQ(gained.back().substr(gained.back().find('\t')), "\t2") << gained.back();
  expect_conflict(res, before, "merge conflict");
  EXPECT_TRUE(event_types(res).count("MERGE_CONFLICT"));
  EXPECT_FALSE(event_types(res).count("REBASE_CONFLICT"));
  expect_not_integrated_ones(res, before);
  expect_no_throwaways();
  EXPECT_FALSE(contains(r.out, "Commit-history preservation: no")) << r.out;
  expect_nothing_lost(before, res);
}

TEST_F(CleanCli, SquashLandsOneCommitAndSaysCommitHistoryIsNotPreserved) {
  init_github();
  make_branch_set();
  Snapshot before = snapshot();
  auto r = clean({"--strategy", "squash"});
  Json res = finished(r);
  EXPECT_EQ(res["strategy"], "squash");
  expect_lists_every_branch(res, before);
  expect_clean_landed(res, before, "squash");
  // One new commit with one parent; the branch's own commits are not on
  // main.
  auto gained = gained_since(before.default_tip);
  ASSERT_EQ(gained.size(), 1u) << ::testing::PrintToString(gained);
  EXPECT_EQ(gained[0].substr(gained[0].find('\t')), "\t1");
  EXPECT_FALSE(landed(before.branches.at("feature/clean").tip));
  EXPECT_TRUE(contains(r.out, "Commit-history preservation: no")) << r.out;
  expect_conflict(res, before, "merge conflict");
  EXPECT_TRUE(event_types(res).count("MERGE_CONFLICT"));
  expect_not_integrated_ones(res, before);
  expect_no_throwaways();
  expect_nothing_lost(before, res);
}

TEST_F(CleanCli, StrategyNoneIntegratesNothingAndCleansOnlyTheMergedBranches) {
  init_github();
  make_branch_set();
  Snapshot before = snapshot();
  auto r = clean({"--strategy", "none"});
  Json res = finished(r);
  EXPECT_EQ(res["strategy"], "none");
  expect_lists_every_branch(res, before);
  expect_branch(res, before, "feature/clean",
                {"HUMAN_REVIEW", "kept", "not integrated: strategy none"});
  expect_branch(res, before, "feature/conflict",
                {"HUMAN_REVIEW", "kept", "not integrated: strategy none"});
  expect_not_integrated_ones(res, before);
  EXPECT_EQ(default_tip(), before.default_tip);
  expect_no_throwaways();
  // Nothing eligible: the run skips integration and its verification.
  std::set<std::string> types;
  for (const auto& ev : test::read_jsonl(json_str(res, "run_dir") + "/events.jsonl"))
    types.insert(json_str(ev, "type"));
  EXPECT_FALSE(types.count("BRANCH_INTEGRATED"));
  EXPECT_TRUE(types.count("CLEAN_REPORT_DONE"));
  expect_nothing_lost(before, res);
}

// ---- landing ---------------------------------------------------------------

TEST_F(CleanCli, ProtectedMainRejectingThePushLeavesTheBranchUnverifiedAndDeletesNothing) {
  init_github();
  make_clean();
  advance_main();
  protect_main();
  Snapshot before = snapshot();
  auto r = clean({"--strategy", "rebase"});
  Json res = finished(r);
  expect_lists_every_branch(res, before);
  expect_branch(res, before, "feature/clean",
                {"ELIGIBLE", "unverified", "push to origin/main rejected"});
  EXPECT_TRUE(event_types(res).count("INTEGRATION_UNVERIFIED"));
  EXPECT_FALSE(event_types(res).count("INTEGRATION_VERIFIED"));
  EXPECT_EQ(default_tip(), before.default_tip);
  EXPECT_EQ(origin_out({"for-each-ref", "--format=%(objectname) %(refname)"}), before.origin_refs);
  expect_nothing_lost(before, res);
}

TEST_F(CleanCli, LocalDeliveryKeepsTheThrowawayForAFastForwardAndTheNextRunFinishesIt) {
  init_local();
  make_merged("feature/merged");
  make_clean();
  advance_main();
  Snapshot before = snapshot();
  Json res = finished(clean());
  EXPECT_EQ(res["delivery"], "local");
  EXPECT_TRUE(contains(json_str(res, "run_dir"), ai_root + "/develop/local/widgets/runs/"));
  expect_lists_every_branch(res, before);
  expect_branch(res, before, "feature/merged", {"MERGED", "cleaned", "", true, false});
  expect_branch(res, before, "feature/clean",
                {"ELIGIBLE", "unverified",
                 "ready for a local fast-forward: git merge --ff-only "
                 "develop/clean-integrated-feature-clean"});
  EXPECT_EQ(tip("main"), before.default_tip);  // nothing merged for the person
  std::string throwaway = tip("develop/clean-integrated-feature-clean");
  ASSERT_NE(throwaway, "");
  EXPECT_TRUE(is_directory(canonical("clean-integrated-feature-clean")));
  EXPECT_EQ(
      git_out({"log", "--reverse", "--format=%s", "main..develop/clean-integrated-feature-clean"}),
      "clean: one\nclean: two");
  expect_nothing_lost(before, res);

  // The person fast-forwards; the next run finds it landed and finishes.
  git({"merge", "-q", "--ff-only", "develop/clean-integrated-feature-clean"});
  Snapshot again = snapshot();
  Json res2 = finished(clean());
  EXPECT_NE(json_str(res2, "run_dir"), json_str(res, "run_dir"));
  expect_lists_every_branch(res2, again);
  expect_branch(res2, again, "feature/clean", {"ELIGIBLE", "verified", "", true, false});
  EXPECT_EQ(tip("main"), throwaway);
  expect_no_throwaways();
  EXPECT_FALSE(path_exists(canonical("clean-integrated-feature-clean")));
  expect_nothing_lost(again, res2);
}

// ---- which strategy --------------------------------------------------------

TEST_F(CleanCli, ProjectYamlOnTheDefaultBranchChoosesTheStrategy) {
  init_github();
  commit_project_yaml("develop:\n  clean:\n    strategy: merge\n");
  make_clean();
  advance_main();
  Snapshot before = snapshot();
  Json res = finished(clean());
  EXPECT_EQ(res["strategy"], "merge");
  EXPECT_EQ(res["strategy_source"], "repository_config");
  expect_clean_landed(res, before, "merge");
  auto gained = gained_since(before.default_tip);
  ASSERT_FALSE(gained.empty());
  EXPECT_EQ(gained.back().substr(gained.back().find('\t')), "\t2") << gained.back();
  expect_nothing_lost(before, res);
}

TEST_F(CleanCli, StrategyFlagOverridesProjectYaml) {
  init_github();
  commit_project_yaml("develop:\n  clean:\n    strategy: merge\n");
  make_clean();
  advance_main();
  Snapshot before = snapshot();
  auto r = clean({"--strategy", "squash"});
  Json res = finished(r);
  EXPECT_EQ(res["strategy"], "squash");
  EXPECT_EQ(res["strategy_source"], "cli");
  expect_clean_landed(res, before, "squash");
  EXPECT_EQ(gained_since(before.default_tip).size(), 1u);
  EXPECT_TRUE(contains(r.out, "Commit-history preservation: no")) << r.out;
  expect_nothing_lost(before, res);
}

// The contract's "GRAPH.yaml cleanup.default_strategy (rebase)" is the
// skill's own setting; which of skill_config and default it records is
// not pinned down, so either is accepted. What is pinned down: a
// project.yaml only in the working tree is never read.
TEST_F(CleanCli, WithoutCommittedConfigTheStrategyIsRebaseAndTheWorkingTreeIsNotRead) {
  init_github();
  make_clean();
  advance_main();
  test::write_text(repo + "/project.yaml", "develop:\n  clean:\n    strategy: squash\n");
  Snapshot before = snapshot();
  auto r = clean();
  Json res = finished(r);
  EXPECT_EQ(res["strategy"], "rebase");
  std::string source = json_str(res, "strategy_source");
  EXPECT_TRUE(source == "skill_config" || source == "default") << source;
  expect_clean_landed(res, before, "rebase");
  EXPECT_EQ(gained_since(before.default_tip),
            (std::vector<std::string>{"clean: one\t1", "clean: two\t1"}));
  EXPECT_TRUE(path_exists(repo + "/project.yaml"));
  expect_nothing_lost(before, res);
}

// An unknown strategy, and text that is not YAML at all.
TEST_F(CleanCli, AProjectYamlThatNamesNoStrategyIsRefusedWithExitThreeAndNothingWritten) {
  init_github();
  commit_project_yaml("develop:\n  clean:\n    strategy: octopus\n");
  make_merged("feature/merged");
  make_clean();
  advance_main();
  for (const char* text : {"", "develop: [clean: {strategy: merge\n"}) {
    SCOPED_TRACE(text);
    if (*text) commit_project_yaml(text);
    Snapshot before = snapshot();
    auto r = clean();
    expect_refused(r, "project.yaml", before);
    expect_nothing_lost(before, result_of(r));
  }
}

TEST_F(CleanCli, OriginMovedOnSinceTheLastFetchIsWhatItIntegratesOntoAndMeasuresMergedBy) {
  init_github();
  make_clean();
  // feature/landed-elsewhere is pushed, and someone else merges it into
  // origin's main and adds a commit of their own; this clone has not
  // fetched since.
  branch("feature/landed-elsewhere", "main", {{"landed.txt", "landed\n", "landed: one"}});
  git({"push", "-q", "origin", "feature/landed-elsewhere"});
  std::string other = scratch / "other";
  git({"clone", "-q", remote, other}, scratch.path());
  git({"merge", "-q", "--no-ff", "-m", "Merge landed", "origin/feature/landed-elsewhere"}, other);
  test::write_text(other + "/theirs.txt", "theirs\n");
  git({"add", "theirs.txt"}, other);
  git({"commit", "-q", "-m", "theirs: one"}, other);
  git({"push", "-q", "origin", "main"}, other);
  Snapshot before = snapshot();
  std::string moved = default_tip();
  ASSERT_NE(moved, git_out({"rev-parse", "refs/remotes/origin/main"}));

  Json res = finished(clean({"--strategy", "rebase"}));
  expect_branch(res, before, "feature/landed-elsewhere", {"MERGED", "cleaned", "", true, false});
  expect_branch(res, before, "feature/clean", {"ELIGIBLE", "verified", "", true, false});
  // Landed on top of what origin had, their commit kept.
  EXPECT_EQ(gained_since(moved), (std::vector<std::string>{"clean: one\t1", "clean: two\t1"}));
  EXPECT_EQ(origin_out({"show", "refs/heads/main:theirs.txt"}), "theirs");
  expect_nothing_lost(before, res);
}

TEST_F(CleanCli, AnotherRunHoldingTheOrchestratorLockIsRefused) {
  init_github();
  make_merged("feature/merged");
  make_clean();
  advance_main();
  std::string home = ai_root + "/develop/acme/widgets";
  ASSERT_TRUE(make_directories(home));
  int fd = ::open((home + "/orchestrator.lock").c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(::flock(fd, LOCK_EX | LOCK_NB), 0);
  Snapshot before = snapshot();
  auto r = clean();
  ::close(fd);
  expect_refused(r, "", before);
  expect_nothing_lost(before, result_of(r));
}

TEST_F(CleanCli, AMergedBranchWhoseWorktreeGitWillNotRemoveIsKept) {
  init_github();
  make_merged_with_worktree();
  git({"worktree", "lock", "--reason", "on a stick", canonical("feature-merged-wt")});
  Snapshot before = snapshot();
  Json res = finished(clean());
  expect_branch(res, before, "feature/merged-wt", {"MERGED", "kept", "", false, false});
  EXPECT_TRUE(is_directory(canonical("feature-merged-wt")));
  EXPECT_TRUE(contains(git_out({"worktree", "list", "--porcelain"}), "locked on a stick"))
      << git_out({"worktree", "list", "--porcelain"});
  expect_nothing_lost(before, res);
}

// The merged branch moves while the run integrates another one (a
// post-checkout hook, which git runs when the throwaway's worktree is
// checked out): the delete compares and refuses, the new commit is kept.
TEST_F(CleanCli, ABranchThatMovedDuringTheRunIsNotDeleted) {
  init_github();
  make_merged("feature/merged");
  make_clean();
  advance_main();
  branch("side", "main", {{"moved.txt", "moved\n", "moved: one"}});
  std::string moved = tip("side");
  git({"update-ref", "refs/test/moved", moved});
  git({"branch", "-q", "-D", "side"});
  std::string marker = scratch / "hook-ran";
  std::string hook = repo + "/.git/hooks/post-checkout";
  test::write_text(hook,
                   "#!/bin/sh\n"
                   "[ -e '" +
                       marker +
                       "' ] && exit 0\n"
                       ": > '" +
                       marker +
                       "'\n"
                       "git update-ref refs/heads/feature/merged " +
                       moved + "\n");
  ASSERT_EQ(::chmod(hook.c_str(), 0755), 0);
  Snapshot before = snapshot();
  Json res = finished(clean({"--strategy", "rebase"}));
  ASSERT_TRUE(path_exists(marker)) << "git ran no post-checkout hook: nothing moved the branch";
  const Json* e = entry(res, "feature/merged");
  ASSERT_NE(e, nullptr) << dump_py(res);
  EXPECT_EQ(json_str(*e, "outcome"), "kept") << dump_py(*e);
  EXPECT_EQ(field(*e, "deleted"), false) << dump_py(*e);
  EXPECT_EQ(tip("feature/merged"), moved);
  expect_branch(res, before, "feature/clean", {"ELIGIBLE", "verified", "", true, false});
  expect_nothing_lost(before, res);
}

TEST_F(CleanCli, GithubDeliveryReadsProjectYamlFromOriginNotFromTheLocalDefaultBranch) {
  init_github();
  make_clean();
  advance_main();
  // Committed on the local main only, never pushed.
  test::write_text(repo + "/project.yaml", "develop:\n  clean:\n    strategy: merge\n");
  git({"add", "project.yaml"});
  git({"commit", "-q", "-m", "project.yaml, not pushed"});
  Snapshot before = snapshot();
  Json res = finished(clean());
  EXPECT_EQ(res["strategy"], "rebase");
  EXPECT_NE(res["strategy_source"], "repository_config");
  expect_clean_landed(res, before, "rebase");
  expect_nothing_lost(before, res);
}

TEST_F(CleanCli, LocalDeliveryReadsProjectYamlFromTheDefaultBranch) {
  init_local();
  commit_project_yaml("develop:\n  clean:\n    strategy: squash\n");
  make_merged("feature/merged");
  make_clean();
  advance_main();
  Snapshot before = snapshot();
  auto r = clean();
  Json res = finished(r);
  EXPECT_EQ(res["delivery"], "local");
  EXPECT_EQ(res["strategy"], "squash");
  EXPECT_EQ(res["strategy_source"], "repository_config");
  expect_branch(res, before, "feature/merged", {"MERGED", "cleaned", "", true, false});
  expect_branch(res, before, "feature/clean",
                {"ELIGIBLE", "unverified", "ready for a local fast-forward"});
  if (const Json* e = entry(res, "feature/clean")) {
    EXPECT_EQ(json_str(*e, "strategy"), "squash");
    EXPECT_EQ(field(*e, "history_preserved"), false);
  }
  EXPECT_TRUE(contains(r.out, "Commit-history preservation: no")) << r.out;
  EXPECT_EQ(tip("main"), before.default_tip);
  expect_nothing_lost(before, res);
}

// The first bucket that applies wins: a merged branch with an open pull
// request, away from its canonical worktree, or with a name devgraph keeps
// out of paths is never deleted.
TEST_F(CleanCli, TheFirstBucketThatAppliesWinsSoMergedBranchesOthersOwnAreKept) {
  init_github();
  make_merged("feature/merged-pr");
  git({"push", "-q", "origin", "feature/merged-pr"});
  int pr = open_pr("feature/merged-pr");
  make_merged("feature/merged-away");
  git({"worktree", "add", "-q", elsewhere, "feature/merged-away"});
  for (const char* name : {"feature/-dash", "feature/a+b", "feature/\xc3\xbcmlaut"})
    make_merged(name);
  branch("feature/pr-dirty", "main", {{"pr-dirty.txt", "committed\n", "pr-dirty: one"}});
  git({"push", "-q", "origin", "feature/pr-dirty"});
  int pr2 = open_pr("feature/pr-dirty");
  git({"worktree", "add", "-q", canonical("feature-pr-dirty"), "feature/pr-dirty"});
  test::write_text(canonical("feature-pr-dirty") + "/pr-dirty.txt", "uncommitted\n");
  make_merged("feature/merged");
  Snapshot before = snapshot();
  Json res = finished(clean());
  expect_lists_every_branch(res, before);
  expect_branch(res, before, "feature/merged-pr",
                {"PROTECTED", "kept", "open pull request #" + std::to_string(pr)});
  expect_branch(res, before, "feature/pr-dirty",
                {"PROTECTED", "kept", "open pull request #" + std::to_string(pr2)});
  expect_branch(res, before, "feature/merged-away",
                {"HUMAN_REVIEW", "kept", "not at the canonical worktree"});
  for (const char* name : {"feature/-dash", "feature/a+b", "feature/\xc3\xbcmlaut"})
    expect_branch(
        res, before, name,
        {"HUMAN_REVIEW", "kept",
         "branch name " + std::string(name) + " has characters devgraph keeps out of paths"});
  expect_branch(res, before, "feature/merged", {"MERGED", "cleaned", "", true, false});
  expect_nothing_lost(before, res);
}

// ---- planning and refusals ---------------------------------------------------

TEST_F(CleanCli, DryRunPrintsThePlanAndWritesNothing) {
  init_github();
  make_branch_set();
  Snapshot before = snapshot();
  auto r = clean({"--dry-run"});
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  Json res = result_of(r);
  EXPECT_EQ(res["status"], "DRY_RUN") << r.out;
  EXPECT_EQ(res["strategy"], "rebase");
  expect_lists_every_branch(res, before);
  auto bucket = [&](const std::string& name) {
    const Json* e = entry(res, name);
    return e ? json_str(*e, "bucket") : std::string("(missing)");
  };
  auto outcome = [&](const std::string& name) {
    const Json* e = entry(res, name);
    return e ? json_str(*e, "outcome") : std::string("(missing)");
  };
  EXPECT_EQ(bucket("feature/clean"), "ELIGIBLE");
  EXPECT_EQ(outcome("feature/clean"), "planned");
  EXPECT_EQ(bucket("feature/conflict"), "ELIGIBLE");
  EXPECT_EQ(outcome("feature/conflict"), "planned");
  EXPECT_EQ(bucket("feature/merged"), "MERGED");
  EXPECT_EQ(bucket("feature/merged-wt"), "MERGED");
  EXPECT_EQ(bucket("feature/pr"), "PROTECTED");
  for (const char* name : {"feature/dirty", "feature/untracked", "feature/midmerge",
                           "feature/merged-notes", "feature/elsewhere", kWeird})
    EXPECT_EQ(bucket(name), "HUMAN_REVIEW") << name;
  expect_nothing_written(before);
  EXPECT_TRUE(is_directory(canonical("feature-merged-wt")));
  expect_nothing_lost(before, res);
}

TEST_F(CleanCli, TrackedChangesInThePrimaryCloneAreRefused) {
  init_github();
  make_merged("feature/merged");
  make_clean();
  advance_main();
  test::write_text(repo + "/README.md", "changed\n");
  Snapshot before = snapshot();
  auto r = clean();
  expect_refused(r, "", before);
  EXPECT_EQ(test::slurp(repo + "/README.md"), "changed\n");
  expect_nothing_lost(before, result_of(r));
}

TEST_F(CleanCli, UntrackedFilesInThePrimaryCloneAreFine) {
  init_github();
  make_merged("feature/merged");
  test::write_text(repo + "/scratch-notes.txt", "mine\n");
  Snapshot before = snapshot();
  Json res = finished(clean());
  expect_branch(res, before, "feature/merged", {"MERGED", "cleaned", "", true, false});
  EXPECT_EQ(test::slurp(repo + "/scratch-notes.txt"), "mine\n");
  expect_nothing_lost(before, res);
}

TEST_F(CleanCli, DetachedHeadInThePrimaryCloneIsRefused) {
  init_github();
  make_merged("feature/merged");
  make_clean();
  advance_main();
  git({"checkout", "-q", "--detach", "main"});
  Snapshot before = snapshot();
  auto r = clean();
  expect_refused(r, "", before);
  expect_nothing_lost(before, result_of(r));
}

TEST_F(CleanCli, ADirectoryThatIsNoRepositoryIsRefused) {
  init_github();
  make_merged("feature/merged");
  std::string plain = scratch / "plain";
  ASSERT_TRUE(make_directories(plain));
  Snapshot before = snapshot();
  auto r = clean({}, plain);
  expect_refused(r, "", before);
  auto r2 = clean({"--repo", plain});
  expect_refused(r2, "", before);
  EXPECT_EQ(test::entries(plain), "");
  expect_nothing_lost(before, result_of(r2));
}

TEST_F(CleanCli, ABareRepositoryAndALinkedWorktreeAreRefused) {
  init_github();
  make_merged("feature/merged");
  make_merged_with_worktree();
  Snapshot before = snapshot();
  expect_refused(clean({"--repo", remote}), "", before);
  auto r = clean({}, canonical("feature-merged-wt"));
  expect_refused(r, "", before);
  expect_nothing_lost(before, result_of(r));
}

TEST_F(CleanCli, AnUnknownStrategyFlagIsRefused) {
  init_github();
  make_merged("feature/merged");
  Snapshot before = snapshot();
  auto r = clean({"--strategy", "octopus"});
  expect_refused(r, "--strategy", before);
  expect_nothing_lost(before, result_of(r));
}

// ---- again, elsewhere, interrupted ---------------------------------------------

TEST_F(CleanCli, ASecondRunFindsNothingMoreToDoAndChangesNothing) {
  init_github();
  make_branch_set();
  Json first = finished(clean());
  Snapshot before = snapshot();
  Json res = finished(clean());
  EXPECT_NE(json_str(res, "run_dir"), json_str(first, "run_dir"));
  expect_lists_every_branch(res, before);
  for (const auto& e : res["branches"]) {
    EXPECT_NE(json_str(e, "outcome"), "cleaned") << dump_py(e);
    EXPECT_NE(json_str(e, "outcome"), "verified") << dump_py(e);
    EXPECT_EQ(field(e, "deleted"), false) << dump_py(e);
  }
  expect_branch(res, before, "feature/conflict", {"ELIGIBLE", "conflict", "rebase conflict"});
  EXPECT_EQ(git_out({"for-each-ref", "--format=%(objectname) %(refname)"}), before.clone_refs);
  EXPECT_EQ(origin_out({"for-each-ref", "--format=%(objectname) %(refname)"}), before.origin_refs);
  expect_no_throwaways();
  expect_nothing_lost(before, res);
}

TEST_F(CleanCli, RepoFlagCleansTheNamedCloneFromAnotherDirectory) {
  init_github();
  make_merged("feature/merged");
  make_clean();
  advance_main();
  Snapshot before = snapshot();
  Json res = finished(clean({"--repo", repo}, scratch.path()));
  expect_branch(res, before, "feature/merged", {"MERGED", "cleaned", "", true, false});
  expect_clean_landed(res, before, "rebase");
  expect_nothing_lost(before, res);
}

TEST_F(CleanCli, NoDefaultBranchOnOriginIsRefused) {
  init_github();
  make_merged("feature/merged");
  make_clean();
  // origin keeps the work under another name only: no HEAD it names, no
  // main, no master.
  git({"push", "-q", "origin", "main:trunk"});
  git({"--git-dir", remote, "update-ref", "-d", "refs/heads/main"}, scratch.path());
  git({"remote", "set-head", "origin", "-d"});
  git({"fetch", "-q", "--prune", "origin"});
  Snapshot before = snapshot();
  auto r = clean();
  expect_refused(r, "", before);
  expect_nothing_lost(before, result_of(r));
}

TEST_F(CleanCli, BranchesOfAnUnfinishedRunAreProtectedAndThatRunIsLeftAlone) {
  test::write_widgets_files(repo);
  init_local();
  for (const char* title : {"alpha", "beta", "gamma"}) {
    auto r = test::run_devgraph({"issue", "new", title, "--body", std::string("Do ") + title + "."},
                                env(), repo);
    ASSERT_EQ(r.exit_code, 0) << r.err;
  }
  // b2's developer stays blocked: the run waits for a person.
  Json sc = test::one_task_scenario();
  Json& dev = sc["personas"]["developer"];
  dev.insert(dev.begin(), Json{{"bundle", "b2"},
                               {"result",
                                {{"status", "BLOCKED"},
                                 {"summary", "cannot tell which colour the marker is"},
                                 {"evidence", Json::array()},
                                 {"blockers", Json::array({"the colour of the marker"})}}}});
  std::string scenario = scratch / "scenario.json";
  test::write_text(scenario, dump_py(sc, 2));
  auto parked_run = test::run_devgraph(
      {"run", "--agent", "sim", "--sim-scenario", scenario, "--api-backoff-seconds", "0"}, env(),
      repo);
  ASSERT_EQ(parked_run.exit_code, 2) << parked_run.out << parked_run.err;
  std::string parked = json_str(result_of(parked_run), "run_dir");
  ASSERT_TRUE(is_directory(parked));
  std::string state = test::slurp(parked + "/state.json");
  std::string events = test::slurp(parked + "/events.jsonl");
  make_merged("feature/merged");

  Snapshot before = snapshot();
  Json res = finished(clean());
  EXPECT_NE(json_str(res, "run_dir"), parked);
  size_t bundles = 0;
  for (const auto& [name, b] : before.branches) {
    if (name.rfind("develop/", 0) != 0 || name.rfind("develop/clean-integrated-", 0) == 0) continue;
    ++bundles;
    expect_branch(res, before, name,
                  {"PROTECTED", "kept", "a bundle of unfinished run " + basename_of(parked)});
  }
  EXPECT_GE(bundles, 1u) << git_out({"branch", "--list"});
  expect_branch(res, before, "feature/merged", {"MERGED", "cleaned", "", true, false});
  // `devgraph clean` never resumes, nor touches, an ordinary run.
  EXPECT_EQ(test::slurp(parked + "/state.json"), state);
  EXPECT_EQ(test::slurp(parked + "/events.jsonl"), events);
  expect_nothing_lost(before, res);
}

TEST_F(CleanCli, StoppedBySigtermItExits143AndTheNextCleanContinuesThatRun) {
  init_github();
  make_branch_set();
  Snapshot before = snapshot();
  std::string dir;
  bool sent = false;
  int st = stop_at(3, SIGTERM, {"--no-live"}, dir, sent);
  ASSERT_TRUE(sent) << "the run finished before its third event: "
                    << test::slurp(scratch / "clean.log");
  ASSERT_TRUE(WIFEXITED(st)) << st;
  EXPECT_EQ(WEXITSTATUS(st), 128 + SIGTERM) << test::slurp(scratch / "clean.log");
  std::string state = test::slurp(dir + "/state.json");

  // A plain `devgraph run` never resumes the clean run.
  std::string scenario = scratch / "scenario.json";
  test::write_text(scenario, dump_py(test::one_task_scenario(), 2));
  auto ordinary = test::run_devgraph(
      {"run", "--agent", "sim", "--sim-scenario", scenario, "--api-backoff-seconds", "0"}, env(),
      repo);
  EXPECT_EQ(test::slurp(dir + "/state.json"), state) << ordinary.out << ordinary.err;

  auto r = clean();
  Json res = finished(r);
  EXPECT_EQ(json_str(res, "run_dir"), dir) << r.out << r.err;
  expect_rebase_end(res, before);
}

// A local clone on a feature branch takes that branch as its default; its
// main is then a branch like any other to git, and merged into it. It is
// kept, as PROTECTED, never cleaned away.
TEST_F(CleanCli, ALocalCloneOnAnotherBranchKeepsItsMain) {
  init_local();
  git({"checkout", "-q", "-b", "feature/work"});
  test::write_text(repo + "/work.txt", "work\n");
  git({"add", "work.txt"});
  git({"commit", "-q", "-m", "work"});
  Snapshot before = snapshot();
  Json res = finished(clean());
  ASSERT_EQ(res["branches"].size(), 1u) << dump_py(res);
  EXPECT_EQ(res["branches"][0]["branch"], "main");
  EXPECT_EQ(res["branches"][0]["bucket"], "PROTECTED");
  EXPECT_EQ(res["branches"][0]["reason"], "named like a default branch");
  EXPECT_EQ(res["branches"][0]["deleted"], false);
  EXPECT_EQ(git_out({"rev-parse", "--verify", "-q", "refs/heads/main"}).empty(), false);
  expect_nothing_lost(before, res);
}

class CleanCliKill : public CleanCli, public ::testing::WithParamInterface<size_t> {};

// SIGKILLed (its whole process group) once its event log holds N lines,
// then run again: the next `devgraph clean` continues the same run and
// ends where an unbroken run ends, the clean branch landed once, nothing
// lost.
TEST_P(CleanCliKill, KilledAtAnEventTheNextCleanFinishesItDoingNothingTwice) {
  init_github();
  make_branch_set();
  Snapshot before = snapshot();
  std::string dir;
  bool sent = false;
  int st = stop_at(GetParam(), SIGKILL, {"--no-live"}, dir, sent);
  Json res;
  if (!sent || WIFEXITED(st)) {
    // It ended before the signal reached it: its own result is the end.
    EXPECT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0) << test::slurp(scratch / "clean.log");
    test::ProcessResult own;
    own.out = test::slurp(scratch / "clean.log");
    res = result_of(own);
  } else {
    EXPECT_TRUE(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL) << st;
    auto r = clean();
    res = finished(r);
    // A kill inside the first transaction (its event appended, state.json
    // not yet in place) leaves no run to continue: the next is a new one.
    if (path_exists(dir + "/state.json")) {
      EXPECT_EQ(json_str(res, "run_dir"), dir) << r.out << r.err;
    }
  }
  expect_rebase_end(res, before);
}

INSTANTIATE_TEST_SUITE_P(, CleanCliKill, ::testing::Values(1, 2, 3, 4, 5, 6, 7, 8, 9, 10));

}  // namespace
}  // namespace devgraph
