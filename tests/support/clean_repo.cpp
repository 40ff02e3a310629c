#include "support/clean_repo.h"

#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <sstream>

#include "support/kill_harness.h"
#include "support/run_scenario.h"
#include "util/fs.h"

namespace devgraph::test {

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

Json field(const Json& object, const char* key) {
  return object.is_object() && object.contains(key) ? object[key] : Json();
}

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

void CleanRepo::SetUp() {
  ASSERT_TRUE(make_directories(gh_dir));
  ASSERT_TRUE(make_directories(bin));
  ASSERT_TRUE(make_directories(repo));
  ASSERT_EQ(::symlink((test_dir() + "/fixtures/bundle/fake-gh").c_str(), (bin + "/gh").c_str()), 0);
}

void CleanRepo::init_github() {
  github = true;
  owner_repo = "acme/widgets";
  git({"init", "-q", "--bare", "-b", "main", remote}, scratch.path());
  git({"init", "-q", "-b", "main"});
  base_commit();
  git({"remote", "add", "origin", kCleanOrigin});
  git({"config", "url." + remote + ".insteadOf", kCleanOrigin});
  git({"push", "-q", "-u", "origin", "main"});
  git({"remote", "set-head", "origin", "main"});
}

void CleanRepo::init_local() {
  github = false;
  owner_repo = "local/widgets";
  git({"init", "-q", "-b", "main"});
  base_commit();
}

void CleanRepo::base_commit() {
  write_text(repo + "/README.md", "widgets\n");
  write_text(repo + "/shared.txt", "line\n");
  git({"add", "-A"});
  git({"commit", "-q", "-m", "base"});
}

void CleanRepo::branch(const std::string& name, const std::string& start,
                       const std::vector<Change>& changes) {
  git({"checkout", "-q", "-b", name, start});
  for (const auto& c : changes) {
    write_text(repo + "/" + c.path, c.content);
    git({"add", "--", c.path});
    git({"commit", "-q", "-m", c.subject});
  }
  git({"checkout", "-q", "main"});
}

void CleanRepo::publish_main() {
  if (github) git({"push", "-q", "origin", "main"});
}

std::string CleanRepo::canonical(const std::string& slug) const {
  return ai_root + "/worktrees/" + owner_repo + "/" + slug;
}

void CleanRepo::make_merged(const std::string& name) {
  branch(name, "main", {{basename_of(name) + ".txt", name + "\n", name + ": one"}});
  git({"merge", "-q", "--no-ff", "-m", "Merge " + name, name});
  publish_main();
}

void CleanRepo::make_merged_with_worktree() {
  make_merged("feature/merged-wt");
  git({"worktree", "add", "-q", canonical("feature-merged-wt"), "feature/merged-wt"});
}

void CleanRepo::make_merged_with_untracked_worktree() {
  make_merged("feature/merged-notes");
  git({"worktree", "add", "-q", canonical("feature-merged-notes"), "feature/merged-notes"});
  write_text(canonical("feature-merged-notes") + "/notes.txt", "mine\n");
}

void CleanRepo::make_clean() {
  branch(
      "feature/clean", "main",
      {{"clean-1.txt", "clean one\n", "clean: one"}, {"clean-2.txt", "clean two\n", "clean: two"}});
}

void CleanRepo::make_conflict() {
  branch("feature/conflict", "main", {{"shared.txt", "branch\n", "conflict: change shared"}});
}

void CleanRepo::advance_main() {
  write_text(repo + "/shared.txt", "main\n");
  git({"add", "shared.txt"});
  git({"commit", "-q", "-m", "main: change shared"});
  publish_main();
}

void CleanRepo::make_dirty() {
  branch("feature/dirty", "main", {{"dirty.txt", "committed\n", "dirty: one"}});
  git({"worktree", "add", "-q", canonical("feature-dirty"), "feature/dirty"});
  write_text(canonical("feature-dirty") + "/dirty.txt", "uncommitted\n");
}

void CleanRepo::make_untracked() {
  branch("feature/untracked", "main", {{"untracked.txt", "committed\n", "untracked: one"}});
  git({"worktree", "add", "-q", canonical("feature-untracked"), "feature/untracked"});
  write_text(canonical("feature-untracked") + "/notes.txt", "not yet added\n");
}

void CleanRepo::make_pr() {
  branch("feature/pr", "main", {{"pr.txt", "pr\n", "pr: one"}});
  git({"push", "-q", "origin", "feature/pr"});
  open_pr("feature/pr");
}

int CleanRepo::open_pr(const std::string& head) {
  int n = 1;
  while (path_exists(gh_dir + "/pr-" + std::to_string(n) + ".fields")) ++n;
  std::string num = std::to_string(n);
  write_text(gh_dir + "/pr-" + num + ".fields",
             "number=" + num + "\nurl=https://github.invalid/acme/widgets/pull/" + num +
                 "\nheadRefName=" + head + "\nbaseRefName=main\ntitle=" + head +
                 "\nautoMerge=false\n");
  write_text(gh_dir + "/pr-" + num + ".body", "A pull request.\n");
  auto heads = read_file(gh_dir + "/heads");
  write_text(gh_dir + "/heads", (heads ? *heads : "") + num + " " + head + "\n");
  write_text(gh_dir + "/counter", num + "\n");
  return n;
}

void CleanRepo::make_elsewhere() {
  branch("feature/elsewhere", "main", {{"elsewhere.txt", "elsewhere\n", "elsewhere: one"}});
  git({"worktree", "add", "-q", elsewhere, "feature/elsewhere"});
}

void CleanRepo::make_weird() {
  branch(kWeird, "main", {{"weird.txt", "weird\n", "weird: one"}});
}

void CleanRepo::make_midmerge() {
  branch("feature/midmerge", "main", {{"shared.txt", "midmerge\n", "midmerge: change shared"}});
  git({"worktree", "add", "-q", canonical("feature-midmerge"), "feature/midmerge"});
  auto r = git_may_fail({"merge", "feature/conflict"}, canonical("feature-midmerge"));
  ASSERT_NE(r.exit_code, 0) << "the merge was meant to stop on a conflict: " << r.out;
}

void CleanRepo::make_branch_set() {
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

void CleanRepo::protect_main() {
  std::string hook = remote + "/hooks/pre-receive";
  write_text(hook,
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

void CleanRepo::commit_project_yaml(const std::string& text) {
  write_text(repo + "/project.yaml", text);
  git({"add", "project.yaml"});
  git({"commit", "-q", "-m", "project.yaml"});
  publish_main();
}

std::map<std::string, std::string> CleanRepo::env() const {
  const char* path = std::getenv("PATH");
  // No background gc or maintenance: a detached git would outlive the
  // command that started it (and the kill tests wait for every process).
  auto e = quiet_git_env();
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

ProcessResult CleanRepo::git_may_fail(const std::vector<std::string>& args,
                                      const std::string& dir) {
  std::vector<std::string> argv = {"git"};
  argv.insert(argv.end(), args.begin(), args.end());
  return run_process(argv, env(), dir.empty() ? repo : dir);
}

void CleanRepo::git(const std::vector<std::string>& args, const std::string& dir) {
  auto r = git_may_fail(args, dir);
  ASSERT_EQ(r.exit_code, 0) << "git " << args[0] << ": " << r.err;
}

std::string CleanRepo::git_out(const std::vector<std::string>& args, const std::string& dir) {
  auto r = git_may_fail(args, dir);
  EXPECT_EQ(r.exit_code, 0) << "git " << args[0] << ": " << r.err;
  while (!r.out.empty() && r.out.back() == '\n') r.out.pop_back();
  return r.out;
}

std::string CleanRepo::origin_out(const std::vector<std::string>& args) {
  std::vector<std::string> a = {"--git-dir", remote};
  a.insert(a.end(), args.begin(), args.end());
  return git_out(a, scratch.path());
}

std::string CleanRepo::tip(const std::string& name) {
  auto r = git_may_fail({"rev-parse", "-q", "--verify", "refs/heads/" + name + "^{commit}"});
  if (r.exit_code != 0) return "";
  while (!r.out.empty() && r.out.back() == '\n') r.out.pop_back();
  return r.out;
}

std::string CleanRepo::default_tip() {
  if (!github) return tip("main");
  auto r = git_may_fail({"--git-dir", remote, "rev-parse", "-q", "--verify", "refs/heads/main"},
                        scratch.path());
  while (!r.out.empty() && r.out.back() == '\n') r.out.pop_back();
  return r.exit_code == 0 ? r.out : std::string();
}

bool CleanRepo::landed(const std::string& sha) {
  if (sha.empty()) return false;
  auto r = github ? git_may_fail({"--git-dir", remote, "merge-base", "--is-ancestor", sha,
                                  "refs/heads/main"},
                                 scratch.path())
                  : git_may_fail({"merge-base", "--is-ancestor", sha, "refs/heads/main"});
  return r.exit_code == 0;
}

ProcessResult CleanRepo::clean(std::vector<std::string> extra, const std::string& cwd) {
  std::vector<std::string> args = {"clean"};
  args.insert(args.end(), extra.begin(), extra.end());
  return run_devgraph(args, env(), cwd.empty() ? repo : cwd);
}

Json CleanRepo::finished(const ProcessResult& r) {
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  Json res = result_of(r);
  EXPECT_EQ(res["status"], "COMPLETE") << r.out;
  std::string dir = json_str(res, "run_dir");
  EXPECT_TRUE(is_directory(dir)) << dir;
  if (is_directory(dir)) {
    auto v = run_devgraph({"validate", "run", dir}, env(), repo);
    EXPECT_EQ(v.exit_code, 0) << v.out << v.err;
  }
  return res;
}

int CleanRepo::stop_at(size_t line, int sig, const std::vector<std::string>& args, std::string& dir,
                       bool& sent) {
  adopt_orphans();
  std::string home = ai_root + "/develop/" + owner_repo;
  auto run_dir = [&] {
    auto names = names_in(home + "/runs");
    return names.empty() ? std::string() : home + "/runs/" + names.back();
  };
  std::vector<std::string> argv = {"clean"};
  argv.insert(argv.end(), args.begin(), args.end());
  Background bg;
  start_background(bg, argv, env(), repo, scratch / "clean.log");
  Watch watch;
  EXPECT_TRUE(watch.ok());
  auto why = wait_until(
      watch, bg.pidfd,
      [&] {
        std::vector<std::string> dirs = {scratch.path(),   ai_root, ai_root + "/develop",
                                         dirname_of(home), home,    home + "/runs"};
        if (std::string d = run_dir(); !d.empty()) dirs.push_back(d);
        return dirs;
      },
      [&] { return event_lines(run_dir()) >= line; },
      std::chrono::steady_clock::now() + std::chrono::seconds(60));
  sent = why == Waited::kReached;
  if (sent) ::kill(-bg.pid, sig);
  int st = bg.wait();
  // Until every adopted process has gone (ECHILD).
  while (::waitpid(-1, nullptr, 0) > 0 || errno == EINTR) {
  }
  dir = run_dir();
  return st;
}

Snapshot CleanRepo::snapshot() {
  Snapshot s;
  for (const auto& c : lines_of(git_out({"rev-list", "--all"}))) s.commits.insert(c);
  s.clone_refs = git_out({"for-each-ref", "--format=%(objectname) %(refname)"});
  if (github) {
    for (const auto& c : lines_of(origin_out({"rev-list", "--all"}))) s.commits.insert(c);
    s.origin_refs = origin_out({"for-each-ref", "--format=%(objectname) %(refname)"});
  }
  std::string base = github ? "refs/remotes/origin/main" : "refs/heads/main";
  bool has_base = git_may_fail({"rev-parse", "-q", "--verify", base}).exit_code == 0;
  for (const auto& ref : lines_of(git_out({"for-each-ref", "--format=%(refname)", "refs/heads"}))) {
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

void CleanRepo::expect_nothing_lost(const Snapshot& before, const Json& res) {
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
      EXPECT_TRUE(in) << name
                      << " is verified but its result is not on the default branch: " << dump_py(e);
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

void CleanRepo::expect_nothing_written(const Snapshot& before) {
  EXPECT_EQ(git_out({"for-each-ref", "--format=%(objectname) %(refname)"}), before.clone_refs);
  if (github) {
    EXPECT_EQ(origin_out({"for-each-ref", "--format=%(objectname) %(refname)"}),
              before.origin_refs);
  }
  EXPECT_FALSE(path_exists(ai_root + "/develop/" + owner_repo + "/runs"))
      << tree_of(ai_root + "/develop");
  EXPECT_EQ(tree_of(ai_root), before.ai_tree);
}

void CleanRepo::expect_refused(const ProcessResult& r, const std::string& words,
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

const Json* CleanRepo::entry(const Json& res, const std::string& name) {
  if (!res.contains("branches") || !res["branches"].is_array()) return nullptr;
  for (const auto& e : res["branches"])
    if (json_str(e, "branch") == name) return &e;
  return nullptr;
}

void CleanRepo::expect_lists_every_branch(const Json& res, const Snapshot& before) {
  std::vector<std::string> want, got;
  for (const auto& [name, b] : before.branches)
    if (name != "main" && name.rfind("develop/clean-integrated-", 0) != 0) want.push_back(name);
  ASSERT_TRUE(res.contains("branches") && res["branches"].is_array()) << dump_py(res);
  for (const auto& e : res["branches"]) got.push_back(json_str(e, "branch"));
  EXPECT_EQ(got, want) << dump_py(res["branches"]);
}

void CleanRepo::expect_branch(const Json& res, const Snapshot& before, const std::string& name,
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

void CleanRepo::expect_no_throwaways() {
  EXPECT_EQ(git_out({"for-each-ref", "--format=%(refname)", "refs/heads/develop/"}), "");
  if (github) {
    EXPECT_EQ(origin_out({"for-each-ref", "--format=%(refname)", "refs/heads/develop/"}), "");
  }
  std::string dir = ai_root + "/worktrees/" + owner_repo;
  for (const auto& n : lines_of(is_directory(dir) ? entries(dir) : ""))
    EXPECT_NE(n.rfind("clean-integrated-", 0), 0u) << n;
  EXPECT_FALSE(contains(git_out({"worktree", "list", "--porcelain"}), "clean-integrated-"))
      << git_out({"worktree", "list", "--porcelain"});
}

void CleanRepo::expect_not_integrated_ones(const Json& res, const Snapshot& before) {
  expect_branch(res, before, "feature/merged", {"MERGED", "cleaned", "", true, false});
  expect_branch(res, before, "feature/merged-wt", {"MERGED", "cleaned", "", true, true});
  EXPECT_FALSE(path_exists(canonical("feature-merged-wt")));
  expect_branch(res, before, "feature/merged-notes",
                {"HUMAN_REVIEW", "kept", "untracked files in its worktree"});
  EXPECT_EQ(slurp(canonical("feature-merged-notes") + "/notes.txt"), "mine\n");
  expect_branch(res, before, "feature/dirty",
                {"HUMAN_REVIEW", "kept", "uncommitted changes in its worktree"});
  EXPECT_EQ(slurp(canonical("feature-dirty") + "/dirty.txt"), "uncommitted\n");
  expect_branch(res, before, "feature/untracked",
                {"HUMAN_REVIEW", "kept", "untracked files in its worktree"});
  EXPECT_EQ(slurp(canonical("feature-untracked") + "/notes.txt"), "not yet added\n");
  expect_branch(res, before, "feature/midmerge",
                {"HUMAN_REVIEW", "kept", "conflicts in its worktree"});
  EXPECT_TRUE(
      contains(git_out({"status", "--porcelain"}, canonical("feature-midmerge")), "UU shared.txt"));
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

void CleanRepo::expect_conflict(const Json& res, const Snapshot& before,
                                const std::string& reason) {
  expect_branch(res, before, "feature/conflict", {"ELIGIBLE", "conflict", reason});
  EXPECT_FALSE(path_exists(canonical("clean-integrated-feature-conflict")));
  EXPECT_EQ(tip("develop/clean-integrated-feature-conflict"), "");
}

void CleanRepo::expect_clean_landed(const Json& res, const Snapshot& before,
                                    const std::string& strategy) {
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
    return github ? origin_out({"show", main + ":" + path}) : git_out({"show", main + ":" + path});
  };
  EXPECT_EQ(show("clean-1.txt"), "clean one");
  EXPECT_EQ(show("clean-2.txt"), "clean two");
  EXPECT_EQ(show("shared.txt"), "main");  // main's own change kept
}

std::vector<std::string> CleanRepo::gained_since(const std::string& from) {
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

std::set<std::string> CleanRepo::event_types(const Json& res) {
  std::set<std::string> types;
  for (const auto& ev : read_jsonl(json_str(res, "run_dir") + "/events.jsonl"))
    types.insert(json_str(ev, "type"));
  return types;
}

void CleanRepo::expect_rebase_end(const Json& res, const Snapshot& before) {
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

}  // namespace devgraph::test
