#include "clean/clean_run.h"

#include <limits.h>
#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <map>
#include <set>

#include "board/snapshot.h"
#include "bundle/crash_points.h"
#include "clean/plan.h"
#include "contracts/schema.h"
#include "gh/gh.h"
#include "git/git.h"
#include "git/repo.h"
#include "graph/graph.h"
#include "guard/guard.h"
#include "lane/lane.h"
#include "lane/routes.h"
#include "metrics/metrics.h"
#include "proc/command.h"
#include "proc/stop_signals.h"
#include "skill/skill.h"
#include "store/run_store.h"
#include "util/clock.h"
#include "util/fs.h"
#include "util/text.h"

namespace devgraph::clean {
namespace {

constexpr int kUsage = 3;

Error usage_error(const std::string& why) {
  return fail(ErrorKind::usage, why, kUsage);
}

std::string trimmed(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == '\r' || s.back() == ' ')) s.pop_back();
  return s;
}

std::vector<std::string> split(const std::string& text, char sep) {
  std::vector<std::string> out;
  size_t at = 0;
  while (at < text.size()) {
    size_t end = text.find(sep, at);
    if (end == std::string::npos) end = text.size();
    out.push_back(text.substr(at, end - at));
    at = end + 1;
  }
  return out;
}

// The path with every symbolic link resolved, or as it is when it does not
// exist: git may name a worktree either way.
std::string real_or_same(const std::string& path) {
  char buf[PATH_MAX];
  return ::realpath(path.c_str(), buf) ? std::string(buf) : path;
}

// A run directory's state, when it holds one that parses as an object.
std::optional<Json> state_of(const std::string& dir) {
  auto st = read_run_state(dir);
  if (!st || !st->is_object()) return std::nullopt;
  return std::move(*st);
}

// What the whole run works from, settled before anything is written.
struct Context {
  std::string top;             // the primary clone
  std::string identity;        // owner/repo
  std::string delivery;        // github | local
  std::string default_branch;  // main
  std::string default_ref;     // origin/main or main
  std::string current;         // the branch checked out in the primary clone
  std::string worktrees_dir;   // <root>/<owner>/<repo>
  std::string develop_home;
  Strategy strategy;
  std::map<std::string, long long> open_prs;        // head branch -> number
  std::map<std::string, std::string> run_branches;  // branch -> unfinished run id
};

class Cleaner {
 public:
  Cleaner(CommandRunner& runner, const Context& ctx, RunStore& store, const CleanRequest& req,
          const Graph& graph)
      : runner_(runner), ctx_(ctx), store_(store), req_(req), walker_(graph) {}

  // Walks the lane from wherever the run stands to complete.
  Status walk();
  // Discovery and classification alone, for a dry run.
  Expected<Json> plan();

 private:
  CommandRunner& runner_;
  const Context& ctx_;
  RunStore& store_;
  const CleanRequest& req_;
  lane::Walker walker_;  // every move is a route of GRAPH.yaml's
  // `integrated:<branch>`: an integration recorded, not yet landed.
  bundle::EnvCrashPoints crash_;

  void say(const std::string& l) const {
    if (req_.on_line) req_.on_line(l);
  }

  // git in `dir`; a stop signal ends it and is an interrupted error.
  Expected<CommandResult> git(const std::string& dir, const std::vector<std::string>& args) {
    DG_TRY(CommandResult r, git::run_git(runner_, dir, args, std::chrono::minutes(5), true));
    if (r.interrupted())
      return fail(ErrorKind::interrupted, "stopped by " + stop_signal_name(r.interrupted_by),
                  128 + r.interrupted_by);
    return r;
  }
  // git that must succeed: its output, else an error quoting git.
  Expected<std::string> git_ok(const std::string& dir, const std::vector<std::string>& args) {
    DG_TRY(CommandResult r, git(dir, args));
    if (!r.ok()) return fail("git " + args[0] + ": " + last_line(r.err.empty() ? r.out : r.err));
    return trimmed(r.out);
  }
  Expected<bool> is_ancestor(const std::string& a, const std::string& b) {
    DG_TRY(CommandResult r, git(ctx_.top, {"merge-base", "--is-ancestor", a, b}));
    if (r.exit_code == 0) return true;
    if (r.exit_code == 1) return false;
    return fail("git merge-base: " + last_line(r.err));
  }
  Expected<std::optional<std::string>> ref_sha(const std::string& ref) {
    DG_TRY(CommandResult r, git(ctx_.top, {"rev-parse", "-q", "--verify", ref + "^{commit}"}));
    if (!r.ok()) return std::optional<std::string>();
    return std::optional<std::string>(trimmed(r.out));
  }
  Status fetch() {
    if (ctx_.delivery != "github") return {};
    DG_TRY(CommandResult r, git(ctx_.top, {"fetch", "--prune", "-q", "origin"}));
    if (!r.ok()) return fail(ErrorKind::transient, "git fetch origin: " + last_line(r.err));
    return {};
  }

  Expected<Json> discover();
  Expected<Json> facts_of(const std::string& branch, const std::string& tip,
                          const std::map<std::string, std::string>& worktrees);
  Status integrate(Json& b);
  Status discard_throwaway(const std::string& branch);
  Expected<bool> registered_worktree(const std::string& dir);
  Expected<CommandResult> remove_worktree(const std::string& dir);
  Status verify(Json& b);
  Status cleanup(Json& b);
  Status remove_throwaway(const std::string& branch, bool branch_too);
  Status leave_unlanded(Json& b);
  Status cleanup_orphans(Json& clean);
  Expected<std::optional<Json>> earlier_integration(const std::string& branch,
                                                    const std::string& tip);
  std::string throwaway_dir(const std::string& branch) const {
    return ctx_.worktrees_dir + "/" + throwaway_slug(branch);
  }
  Expected<Json> read_clean() {
    DG_TRY(Json st, store_.read());
    Json c = st.contains("clean") ? st["clean"] : Json::object();
    if (!c.contains("branches") || !c["branches"].is_array()) c["branches"] = Json::array();
    return c;
  }
  Status record(std::string_view event, Json detail, const Json& clean) {
    EventRequest e{std::string(event), std::move(detail), Json::object(), [&](Json& s) -> Status {
                     s["clean"] = clean;
                     return {};
                   }};
    DG_TRY(auto c, store_.event(e));
    (void)c;
    return {};
  }
  // Moves the run from `from` by GRAPH.yaml's `route`.
  Status go(const std::string& from, std::string_view route, std::string_view event, Json detail,
            const Json& clean) {
    DG_TRY(std::string node, walker_.next(from, route));
    GoRequest g{node, std::string(event), Json::object(), std::move(detail),
                [&](Json& s) -> Status {
                  s["clean"] = clean;
                  return {};
                }};
    DG_TRY(auto c, store_.go(g));
    (void)c;
    return {};
  }
};

// Every local branch the clean lane may look at, with what git says of it.
Expected<Json> Cleaner::discover() {
  DG_CHECK(fetch());
  DG_TRY(std::string refs,
         git_ok(ctx_.top, {"for-each-ref", "--format=%(refname)%00%(objectname)", "refs/heads/"}));
  auto repo = git::make_repo_queries(runner_, ctx_.top);
  DG_TRY(auto wts, repo->worktrees());
  std::map<std::string, std::string> worktrees;
  for (const auto& w : wts)
    if (!w.branch.empty()) worktrees[w.branch] = w.path;
  Json branches = Json::array();
  for (const auto& line : split(refs, '\n')) {
    auto nul = line.find('\0');
    if (nul == std::string::npos || line.rfind("refs/heads/", 0) != 0) continue;
    std::string name = line.substr(11, nul - 11);
    std::string tip = line.substr(nul + 1);
    if (name == ctx_.default_branch || name == ctx_.current) continue;
    if (name.rfind("develop/clean-integrated-", 0) == 0) continue;  // devgraph's own
    DG_TRY(Json f, facts_of(name, tip, worktrees));
    branches.push_back(std::move(f));
  }
  std::sort(branches.begin(), branches.end(), [](const Json& a, const Json& b) {
    return json_str(a, "branch") < json_str(b, "branch");
  });
  return branches;
}

Expected<Json> Cleaner::facts_of(const std::string& name, const std::string& tip,
                                 const std::map<std::string, std::string>& worktrees) {
  BranchFacts f;
  f.branch = name;
  f.tip = tip;
  f.canonical = ctx_.worktrees_dir + "/" + guard::branch_slug(name);
  if (auto it = worktrees.find(name); it != worktrees.end()) {
    f.worktree = it->second;
    if (real_or_same(f.worktree) == real_or_same(f.canonical)) f.worktree = f.canonical;
  }
  if (auto it = ctx_.open_prs.find(name); it != ctx_.open_prs.end()) f.pr = it->second;
  if (auto it = ctx_.run_branches.find(name); it != ctx_.run_branches.end())
    f.unfinished_run = it->second;
  if (!f.worktree.empty() && is_directory(f.worktree)) {
    DG_TRY(CommandResult st,
           git(f.worktree, {"status", "--porcelain=v1", "-z", "--untracked-files=all"}));
    if (!st.ok()) return fail("git status in " + f.worktree + ": " + last_line(st.err));
    for (const auto& e : split(st.out, '\0')) {
      if (e.size() < 3) continue;
      std::string xy = e.substr(0, 2);
      if (xy == "??")
        f.untracked = true;
      else if (xy == "DD" || xy == "AA" || xy.find('U') != std::string::npos)
        f.conflicts = true;
      else
        f.dirty = true;
    }
    for (const char* marker : {"MERGE_HEAD", "rebase-merge", "rebase-apply", "CHERRY_PICK_HEAD"}) {
      DG_TRY(std::string p, git_ok(f.worktree, {"rev-parse", "--git-path", marker}));
      if (path_exists(p[0] == '/' ? p : join_path(f.worktree, p))) f.conflicts = true;
    }
  }
  DG_TRY(f.merged, is_ancestor(tip, ctx_.default_ref));
  Classified c = classify(f, ctx_.strategy.name);
  Json subjects = Json::array();
  long long commits = 0;
  if (!f.merged) {
    DG_TRY(std::string log, git_ok(ctx_.top, {"log", "--reverse", "--format=%s",
                                              ctx_.default_ref + ".." + tip, "--"}));
    for (const auto& s : split(log, '\n')) {
      subjects.push_back(s);
      ++commits;
    }
  }
  bool integrate = c.bucket == Bucket::eligible;
  return Json{{"branch", name},
              {"bucket", bucket_name(c.bucket)},
              {"reason", c.reason},
              {"outcome", c.bucket == Bucket::merged ? "pending"
                          : integrate                ? "planned"
                                                     : "kept"},
              {"strategy", integrate ? ctx_.strategy.name : ""},
              {"before", tip},
              {"after", ""},
              {"commits", commits},
              {"subjects", subjects},
              {"history_preserved", !(integrate && ctx_.strategy.name == "squash")},
              {"worktree", f.worktree},
              {"canonical", f.canonical},
              {"throwaway", ""},
              {"deleted", false},
              {"worktree_removed", false}};
}

Expected<Json> Cleaner::plan() {
  DG_TRY(Json branches, discover());
  return Json{{"strategy", ctx_.strategy.name},
              {"strategy_source", ctx_.strategy.source},
              {"branches", std::move(branches)}};
}

// The integration an earlier clean run left for a person to land: the same
// branch at the same tip, and its throwaway still at the result.
Expected<std::optional<Json>> Cleaner::earlier_integration(const std::string& branch,
                                                           const std::string& tip) {
  DG_TRY(auto at, ref_sha("refs/heads/" + throwaway_branch(branch)));
  if (!at) return std::optional<Json>();
  for (const auto& dir : runs_newest_first(ctx_.develop_home)) {
    auto st = state_of(dir);
    if (!st || json_str(*st, "mode") != "clean" || dir == store_.run_dir()) continue;
    const Json c = (*st).contains("clean") ? (*st)["clean"] : Json::object();
    if (!c.is_object() || !c.contains("branches") || !c["branches"].is_array()) continue;
    for (const auto& b : c["branches"])
      if (json_str(b, "branch") == branch && json_str(b, "before") == tip &&
          json_str(b, "after") == *at && !json_str(b, "strategy").empty())
        return std::optional<Json>(b);
  }
  return std::optional<Json>();
}

// A throwaway nobody recorded (a run killed while building it): its
// worktree emptied and removed, its branch deleted. It holds nothing but
// what the source branch and the default branch hold.
Status Cleaner::discard_throwaway(const std::string& branch) {
  const std::string dir = throwaway_dir(branch);
  const std::string tb = throwaway_branch(branch);
  DG_TRY(bool registered, registered_worktree(dir));
  if (registered) {
    // A kill inside `git worktree add` leaves it locked ("initializing").
    DG_TRY(CommandResult u, git(ctx_.top, {"worktree", "unlock", dir}));
    (void)u;
    // git runs in it only when it is a worktree (a .git file of its own):
    // never in a directory git would take for a repository above it.
    if (path_exists(dir + "/.git") && !is_directory(dir + "/.git")) {
      DG_TRY(CommandResult a, git(dir, {"rebase", "--abort"}));
      DG_TRY(CommandResult m, git(dir, {"merge", "--abort"}));
      (void)a;
      (void)m;
      DG_CHECK(git_ok(dir, {"reset", "-q", "--hard"}));
      DG_CHECK(git_ok(dir, {"clean", "-q", "-fdx"}));
      DG_CHECK(git_ok(ctx_.top, {"worktree", "remove", dir}));
    }
  }
  DG_CHECK(git_ok(ctx_.top, {"worktree", "prune"}));
  DG_TRY(registered, registered_worktree(dir));
  if (registered) return fail(ErrorKind::refused, dir + " is still a worktree after clean-up");
  // A directory a killed `worktree add` made before it wrote anything.
  if (is_directory(dir) && ::rmdir(dir.c_str()) != 0)
    return fail(ErrorKind::refused,
                dir + " is in the way and is not a worktree of this repository");
  DG_TRY(auto at, ref_sha("refs/heads/" + tb));
  if (at) DG_CHECK(git_ok(ctx_.top, {"update-ref", "-d", "refs/heads/" + tb, *at}));
  return {};
}

Expected<bool> Cleaner::registered_worktree(const std::string& dir) {
  DG_TRY(std::string list, git_ok(ctx_.top, {"worktree", "list", "--porcelain"}));
  const std::string want = real_or_same(dir);
  for (const auto& l : split(list, '\n'))
    if (l.rfind("worktree ", 0) == 0 && real_or_same(l.substr(9)) == want) return true;
  return false;
}

// `git worktree remove` of a worktree whose branch is proven: git refuses
// one with changes. The one refusal overridden is of a worktree a killed
// removal left half deleted: nothing in it but tracked files gone, each
// one in the proven commit.
Expected<CommandResult> Cleaner::remove_worktree(const std::string& dir) {
  DG_TRY(CommandResult rm, git(ctx_.top, {"worktree", "remove", dir}));
  if (rm.ok() || !path_exists(dir + "/.git") || is_directory(dir + "/.git")) return rm;
  DG_TRY(CommandResult st, git(dir, {"status", "--porcelain=v1", "-z", "--untracked-files=all"}));
  if (!st.ok()) return rm;
  for (const auto& e : split(st.out, '\0'))
    if (e.size() >= 3 && e.substr(0, 2) != " D" && e.substr(0, 2) != "D ") return rm;
  return git(ctx_.top, {"worktree", "remove", "--force", dir});
}

Status Cleaner::integrate(Json& b) {
  const std::string name = json_str(b, "branch");
  const std::string tip = json_str(b, "before");
  const std::string strategy = json_str(b, "strategy");
  const std::string tb = throwaway_branch(name);
  const std::string dir = throwaway_dir(name);
  // The source must still be where discover found it.
  DG_TRY(auto now, ref_sha("refs/heads/" + name));
  if (!now || *now != tip) {
    b["outcome"] = "kept";
    b["bucket"] = "HUMAN_REVIEW";
    b["reason"] = "the branch moved while it was being cleaned";
    return {};
  }
  DG_TRY(auto earlier, earlier_integration(name, tip));
  if (earlier && json_str(*earlier, "strategy") == strategy) {
    b["after"] = json_str(*earlier, "after");
    b["throwaway"] = tb;
    b["outcome"] = "integrated";
    say(name + ": the integration an earlier clean run built is reused");
    return {};
  }
  if (auto d = discard_throwaway(name); !d) {
    if (d.error().kind == ErrorKind::interrupted) return d.error();
    b["outcome"] = "kept";
    b["bucket"] = "HUMAN_REVIEW";
    b["reason"] = "cannot set up its integration: " + d.error().message;
    return {};
  }
  DG_CHECK(fetch());
  DG_TRY(auto base, ref_sha(ctx_.default_ref));
  if (!base) return fail(ctx_.default_ref + " is gone");
  DG_CHECK(make_directories(ctx_.worktrees_dir));
  DG_CHECK(git_ok(ctx_.top,
                  {"worktree", "add", "-q", "-b", tb, dir, strategy == "rebase" ? tip : *base}));
  bool conflict = false;
  std::string failure;
  if (strategy == "rebase") {
    DG_TRY(CommandResult r, git(dir, {"rebase", "-q", *base}));
    if (!r.ok()) {
      DG_TRY(CommandResult u, git(dir, {"diff", "--name-only", "--diff-filter=U"}));
      conflict = !trimmed(u.out).empty();
      failure = last_line(r.err.empty() ? r.out : r.err);
      DG_TRY(CommandResult a, git(dir, {"rebase", "--abort"}));
      (void)a;
    }
  } else if (strategy == "merge") {
    DG_TRY(CommandResult r, git(dir, {"merge", "-q", "--no-ff", "--no-edit", "-m",
                                      "Merge branch '" + name + "' (devgraph clean)", tip}));
    if (!r.ok()) {
      DG_TRY(CommandResult u, git(dir, {"diff", "--name-only", "--diff-filter=U"}));
      conflict = !trimmed(u.out).empty();
      failure = last_line(r.err.empty() ? r.out : r.err);
      DG_TRY(CommandResult a, git(dir, {"merge", "--abort"}));
      (void)a;
    }
  } else {  // squash
    DG_TRY(CommandResult r, git(dir, {"merge", "-q", "--squash", tip}));
    if (!r.ok()) {
      DG_TRY(CommandResult u, git(dir, {"diff", "--name-only", "--diff-filter=U"}));
      conflict = !trimmed(u.out).empty();
      failure = last_line(r.err.empty() ? r.out : r.err);
    } else {
      DG_TRY(CommandResult staged, git(dir, {"diff", "--cached", "--quiet"}));
      if (staged.exit_code == 1) {
        std::string body = "Squashed from " + name + " at " + tip + ", " +
                           std::to_string(b.value("commits", 0)) + " commit(s):\n";
        for (const auto& s : b.value("subjects", Json::array()))
          body += "- " + s.get<std::string>() + "\n";
        DG_TRY(CommandResult c, git(dir, {"commit", "-q", "-m",
                                          name + " (squashed by devgraph clean)", "-m", body}));
        if (!c.ok()) failure = last_line(c.err.empty() ? c.out : c.err);
      }
    }
  }
  if (!failure.empty()) {
    DG_CHECK(discard_throwaway(name));
    b["outcome"] = conflict ? "conflict" : "kept";
    b["reason"] = conflict ? strategy == "rebase" ? "rebase conflict" : "merge conflict"
                           : strategy + " failed: " + failure;
    return {};
  }
  DG_TRY(std::string after, git_ok(dir, {"rev-parse", "HEAD"}));
  b["after"] = after;
  b["throwaway"] = tb;
  b["outcome"] = "integrated";
  return {};
}

// Lands the integration (github: a plain push) and proves it is on the
// default branch.
Status Cleaner::verify(Json& b) {
  const std::string after = json_str(b, "after");
  const std::string tb = throwaway_branch(json_str(b, "branch"));
  DG_TRY(bool landed, is_ancestor(after, ctx_.default_ref));
  if (!landed && ctx_.delivery == "github") {
    DG_TRY(CommandResult p,
           git(ctx_.top, {"push", "-q", "origin", after + ":refs/heads/" + ctx_.default_branch}));
    DG_CHECK(fetch());
    DG_TRY(landed, is_ancestor(after, ctx_.default_ref));
    if (!landed) {
      b["outcome"] = "unverified";
      b["reason"] = "push to origin/" + ctx_.default_branch +
                    " rejected: " + last_line(p.err.empty() ? p.out : p.err);
      return {};
    }
  }
  if (!landed) {
    b["outcome"] = "unverified";
    b["reason"] = "ready for a local fast-forward: git merge --ff-only " + tb;
    return {};
  }
  b["outcome"] = "verified";
  b["reason"] = "";
  return {};
}

// Deletes what was proven, the worktree first, each step checked again.
Status Cleaner::cleanup(Json& b) {
  const std::string name = json_str(b, "branch");
  const std::string outcome = json_str(b, "outcome");
  const std::string tip = json_str(b, "before");
  if (outcome == "unverified") return leave_unlanded(b);
  if (outcome != "pending" && outcome != "verified") return {};
  // Proven again now: merged at discover, or the integration on the default branch.
  DG_TRY(bool proven,
         is_ancestor(outcome == "pending" ? tip : json_str(b, "after"), ctx_.default_ref));
  if (!proven) {
    b["outcome"] = "kept";
    b["reason"] = "no longer proven on " + ctx_.default_ref;
    return {};
  }
  const std::string wt = json_str(b, "worktree");
  if (!wt.empty() && is_directory(wt)) {
    DG_TRY(CommandResult rm, remove_worktree(wt));
    if (!rm.ok()) {
      b["outcome"] = "kept";
      b["reason"] = "git worktree remove refused: " + last_line(rm.err);
      return {};
    }
  }
  if (!wt.empty()) b["worktree_removed"] = true;
  DG_TRY(auto at, ref_sha("refs/heads/" + name));
  if (at && *at != tip) {
    b["outcome"] = "kept";
    b["reason"] = "the branch moved to " + at->substr(0, 12) + " while it was being cleaned";
    return {};
  }
  if (at) {
    DG_TRY(CommandResult d, git(ctx_.top, {"update-ref", "-d", "refs/heads/" + name, tip}));
    if (!d.ok()) {
      b["outcome"] = "kept";
      b["reason"] = "git update-ref -d refused: " + last_line(d.err);
      return {};
    }
  }
  b["deleted"] = true;
  if (outcome == "pending") b["outcome"] = "cleaned";
  // The throwaway, its work landed.
  if (outcome == "verified") DG_CHECK(remove_throwaway(name, true));
  return {};
}

// The throwaway's worktree, and with `branch_too` its branch (at whatever
// commit it is: it is devgraph's own, and holds nothing the source branch
// does not). Each step is skipped when already done.
Status Cleaner::remove_throwaway(const std::string& branch, bool branch_too) {
  const std::string dir = throwaway_dir(branch);
  const std::string tb = throwaway_branch(branch);
  if (is_directory(dir)) {
    DG_TRY(CommandResult rm, remove_worktree(dir));
    if (!rm.ok()) return fail("git worktree remove " + dir + ": " + last_line(rm.err));
  }
  if (!branch_too) return {};
  DG_TRY(auto t, ref_sha("refs/heads/" + tb));
  if (t) DG_CHECK(git_ok(ctx_.top, {"update-ref", "-d", "refs/heads/" + tb, *t}));
  return {};
}

// An integration that did not land. github: the default branch refused the
// push, so the throwaway serves nothing and goes, worktree and branch (the
// source branch stays, as it was). local: the branch stays for the
// person's fast-forward, which needs no worktree.
Status Cleaner::leave_unlanded(Json& b) {
  const std::string name = json_str(b, "branch");
  const bool github = ctx_.delivery == "github";
  DG_CHECK(remove_throwaway(name, github));
  b["throwaway_worktree_removed"] = true;
  if (github) {
    b["throwaway_removed"] = true;
    b["throwaway"] = "";
  }
  return {};
}

// Throwaways whose source is gone and whose work is on the default branch
// (an integration a person landed, its source then cleaned as merged).
Status Cleaner::cleanup_orphans(Json& clean) {
  DG_TRY(std::string refs, git_ok(ctx_.top, {"for-each-ref", "--format=%(refname)%00%(objectname)",
                                             "refs/heads/develop/clean-integrated-"}));
  std::set<std::string> live;
  for (const auto& b : clean["branches"])
    if (json_str(b, "outcome") == "unverified")
      live.insert(throwaway_branch(json_str(b, "branch")));
  Json removed = clean.value("throwaways_removed", Json::array());
  for (const auto& line : split(refs, '\n')) {
    auto nul = line.find('\0');
    if (nul == std::string::npos) continue;
    std::string tb = line.substr(11, nul - 11);
    std::string sha = line.substr(nul + 1);
    if (live.count(tb)) continue;
    DG_TRY(bool landed, is_ancestor(sha, ctx_.default_ref));
    if (!landed) continue;
    std::string dir = ctx_.worktrees_dir + "/" + tb.substr(8);
    if (is_directory(dir)) {
      DG_TRY(CommandResult rm, remove_worktree(dir));
      if (!rm.ok()) continue;
    }
    DG_CHECK(git_ok(ctx_.top, {"update-ref", "-d", "refs/heads/" + tb, sha}));
    removed.push_back(tb);
  }
  clean["throwaways_removed"] = removed;
  return {};
}

Status Cleaner::walk() {
  while (true) {
    DG_TRY(Json st, store_.read());
    const std::string node = json_str(st, "node");
    DG_TRY(Json clean, read_clean());
    namespace route = lane::route;
    namespace event = lane::event;
    if (std::find(walker_.graph().terminal_states.begin(), walker_.graph().terminal_states.end(),
                  node) != walker_.graph().terminal_states.end())
      return {};
    if (node == "clean_discover") {
      DG_TRY(Json branches, discover());
      clean["strategy"] = ctx_.strategy.name;
      clean["strategy_source"] = ctx_.strategy.source;
      clean["branches"] = branches;
      DG_CHECK(record(event::kStrategyResolved,
                      Json{{"strategy", ctx_.strategy.name}, {"source", ctx_.strategy.source}},
                      clean));
      DG_CHECK(go(node, route::kNext, event::kCleanDiscovered, Json{{"branches", branches.size()}},
                  clean));
    } else if (node == "clean_classify") {
      std::map<std::string, int> counts;
      bool candidates = false;
      for (const auto& b : clean["branches"]) {
        ++counts[json_str(b, "bucket")];
        candidates = candidates || json_str(b, "outcome") == "planned";
      }
      Json detail = Json::object();
      for (const auto& [k, v] : counts) detail[k] = v;
      DG_CHECK(go(node, candidates ? route::kIntegrationCandidates : route::kNoCandidates,
                  event::kCleanClassified, detail, clean));
    } else if (node == "clean_integrate") {
      for (auto& b : clean["branches"]) {
        if (json_str(b, "outcome") == "integrated") {
          // Recorded by a run that stopped before it landed it: landed
          // now, before the next integration is cut from the default
          // branch (verify pushes only what is not there yet).
          DG_CHECK(verify(b));
          b["outcome"] = "integrated";
          b["reason"] = "";
          continue;
        }
        if (json_str(b, "outcome") != "planned") continue;
        say("integrating " + json_str(b, "branch") + " by " + json_str(b, "strategy"));
        DG_CHECK(integrate(b));
        std::string outcome = json_str(b, "outcome");
        std::string_view what = outcome == "integrated" ? event::kBranchIntegrated
                                : outcome == "conflict"
                                    ? (json_str(b, "strategy") == "rebase" ? event::kRebaseConflict
                                                                           : event::kMergeConflict)
                                    : event::kNote;
        DG_CHECK(record(what,
                        Json{{"branch", json_str(b, "branch")},
                             {"strategy", json_str(b, "strategy")},
                             {"outcome", outcome},
                             {"after", json_str(b, "after")},
                             {"reason", json_str(b, "reason")}},
                        clean));
        // Landed at once, so the next integration is cut from a default
        // branch that holds this one.
        if (outcome == "integrated") {
          crash_.reach("integrated", json_str(b, "branch"));
          DG_CHECK(verify(b));
          b["outcome"] = "integrated";
          b["reason"] = "";
        }
      }
      DG_CHECK(go(node, route::kNext, event::kNote, Json{{"integrated", true}}, clean));
    } else if (node == "clean_verify_integration") {
      DG_CHECK(fetch());
      for (auto& b : clean["branches"]) {
        std::string outcome = json_str(b, "outcome");
        if (outcome != "integrated" && outcome != "unverified") continue;
        DG_CHECK(verify(b));
        outcome = json_str(b, "outcome");
        DG_CHECK(record(
            outcome == "verified" ? event::kIntegrationVerified : event::kIntegrationUnverified,
            Json{{"branch", json_str(b, "branch")},
                 {"after", json_str(b, "after")},
                 {"reason", json_str(b, "reason")}},
            clean));
      }
      DG_CHECK(go(node, route::kNext, event::kNote, Json{{"verified", true}}, clean));
    } else if (node == "clean_cleanup") {
      DG_CHECK(fetch());
      long long deleted = 0;
      for (auto& b : clean["branches"]) {
        DG_CHECK(cleanup(b));
        deleted += b.value("deleted", false) ? 1 : 0;
      }
      DG_CHECK(cleanup_orphans(clean));
      DG_CHECK(go(node, route::kNext, event::kCleanCleanupDone, Json{{"deleted", deleted}}, clean));
    } else if (node == "clean_report") {
      DG_CHECK(write_file_atomic(
          store_.run_dir() + "/clean-report.md",
          "# devgraph clean: " + ctx_.identity + "\n\n" + render_report(clean, false)));
      DG_CHECK(go(node, route::kNext, event::kCleanReportDone, Json{{"report", "clean-report.md"}},
                  clean));
    } else {
      return fail(ErrorKind::internal, "a clean run at node '" + node + "' cannot go on");
    }
  }
}

Json branch_entries(const Json& clean) {
  Json out = Json::array();
  for (const auto& b : clean.value("branches", Json::array())) {
    Json e = b;
    e.erase("canonical");
    out.push_back(std::move(e));
  }
  return out;
}

// The checks that come before anything is written.
Expected<Context> settle(CommandRunner& runner, const CleanRequest& req, const Graph& graph) {
  Context ctx;
  std::string repo = absolute_path(req.repo);
  if (!is_directory(repo)) return usage_error("--repo " + req.repo + ": no such directory");
  auto plain = [&](const std::vector<std::string>& args) -> Expected<CommandResult> {
    return git::run_git(runner, repo, args, std::chrono::seconds(30));
  };
  DG_TRY(CommandResult bare, plain({"rev-parse", "--is-bare-repository"}));
  if (!bare.ok()) return usage_error(repo + " is not a git repository");
  if (trimmed(bare.out) == "true")
    return usage_error(repo + " is a bare repository; run devgraph clean in a clone");
  auto place = guard::resolve_placement(repo, std::nullopt, guard::Roots::from_env());
  if (!place) return usage_error(place.error().message);
  if (place->checkout_kind.value_or("") != "primary" || !place->primary_top)
    return usage_error(repo + " is a linked worktree; run devgraph clean in the primary clone");
  ctx.top = *place->primary_top;
  ctx.identity = place->owner + "/" + place->repo;
  ctx.delivery = place->delivery;
  ctx.worktrees_dir = place->worktrees_dir;
  ctx.develop_home = place->develop_home;
  DG_TRY(CommandResult head,
         git::run_git(runner, ctx.top, {"symbolic-ref", "-q", "--short", "HEAD"}));
  if (!head.ok())
    return usage_error(ctx.top + " has a detached HEAD; check a branch out in the primary clone");
  ctx.current = trimmed(head.out);
  DG_TRY(CommandResult dirty,
         git::run_git(runner, ctx.top, {"status", "--porcelain", "--untracked-files=no"}));
  if (!dirty.ok()) return fail("git status: " + last_line(dirty.err));
  if (!trimmed(dirty.out).empty())
    return usage_error(ctx.top + " has uncommitted changes; commit or stash them first");
  if (ctx.delivery == "github") {
    DG_TRY(CommandResult f, git::run_git(runner, ctx.top, {"fetch", "--prune", "-q", "origin"},
                                         std::chrono::minutes(2)));
    if (!f.ok()) return fail(ErrorKind::transient, "git fetch origin: " + last_line(f.err));
  }
  auto queries = git::make_repo_queries(runner, ctx.top);
  auto def = queries->default_branch(ctx.delivery == "github");
  if (!def) return usage_error("no default branch: " + def.error().message);
  ctx.default_branch = *def;
  ctx.default_ref = ctx.delivery == "github" ? "origin/" + ctx.default_branch : ctx.default_branch;
  DG_TRY(CommandResult v,
         git::run_git(runner, ctx.top,
                      {"rev-parse", "-q", "--verify", ctx.default_ref + "^{commit}"}));
  if (!v.ok()) return usage_error("no default branch: " + ctx.default_ref + " does not exist");

  // The strategy: the command line, the repository's project.yaml on the
  // default branch (never the working tree), GRAPH.yaml, rebase.
  std::optional<std::string> configured;
  DG_TRY(CommandResult has,
         git::run_git(runner, ctx.top, {"cat-file", "-e", ctx.default_ref + ":project.yaml"}));
  if (has.ok()) {
    DG_TRY(CommandResult text,
           git::run_git(runner, ctx.top, {"show", ctx.default_ref + ":project.yaml"}));
    if (!text.ok()) return usage_error("project.yaml: " + last_line(text.err));
    auto s = project_strategy(text.out);
    if (!s) return usage_error(s.error().message);
    configured = *s;
  }
  auto strategy = resolve_strategy(req.strategy, configured, graph.cleanup.default_strategy);
  if (!strategy) return usage_error(strategy.error().message);
  ctx.strategy = *strategy;

  // Branches the main graph owns: an open pull request's head, a bundle of
  // an unfinished run.
  if (ctx.delivery == "github") {
    auto gh = gh::make_gh(runner, ctx.top);
    auto prs = gh->list_open_prs();
    if (!prs) return fail("reading open pull requests: " + prs.error().message);
    for (const auto& p : *prs) ctx.open_prs[p.head] = p.number;
  }
  for (const auto& dir : runs_newest_first(ctx.develop_home)) {
    auto st = state_of(dir);
    if (!st || json_str(*st, "mode") == "clean") continue;
    std::string status = json_str(*st, "status");
    if (status != "running" && status != "handoff" && status != "human_required") continue;
    // state.bundles is a list of {"id", "branch", ...}.
    if (!(*st).contains("bundles") || !(*st)["bundles"].is_array()) continue;
    for (const auto& b : (*st)["bundles"]) {
      std::string branch = b.is_object() ? json_str(b, "branch") : "";
      if (!branch.empty()) ctx.run_branches.emplace(branch, json_str(*st, "run_id"));
    }
  }
  return ctx;
}

}  // namespace

Expected<CleanReport> run_clean(const CleanRequest& req) {
  DG_TRY(auto skill, locate_skill(req.skill));
  DG_TRY(auto graph, Graph::load(skill));
  DG_TRY(auto schema, Schema::load(state_schema_path(skill)));
  DG_TRY(auto stops, StopSignals::watch());
  RealCommandRunner runner;
  DG_TRY(Context ctx, settle(runner, req, graph));
  auto line = [&](const std::string& l) {
    if (req.on_line) req.on_line(l);
  };

  if (req.dry_run) {
    RunStore unused(ctx.develop_home + "/runs/dry-run", graph, schema);  // never written
    Cleaner c(runner, ctx, unused, req, graph);
    DG_TRY(Json clean, c.plan());
    CleanReport rep;
    rep.report = render_report(clean, true);
    rep.result = Json{{"status", "DRY_RUN"},
                      {"strategy", ctx.strategy.name},
                      {"strategy_source", ctx.strategy.source},
                      {"delivery", ctx.delivery},
                      {"default_branch", ctx.default_branch},
                      {"branches", branch_entries(clean)}};
    return rep;
  }

  DG_CHECK(make_directories(ctx.develop_home));
  std::string lock_path = ctx.develop_home + "/orchestrator.lock";
  DG_TRY(auto lock, FileLock::try_acquire(lock_path));
  if (!lock) {
    std::string holder;
    if (auto note = read_file(lock_path)) holder = trimmed(*note);
    return usage_error("another devgraph run holds " + ctx.identity +
                       (holder.empty() ? std::string() : " (" + holder + ")"));
  }
  std::ignore = lock->write_note("pid " + std::to_string(::getpid()));

  // The newest unfinished clean run, or a new one.
  std::string run_dir;
  if (!req.fresh)
    for (const auto& dir : runs_newest_first(ctx.develop_home)) {
      auto st = state_of(dir);
      if (!st || json_str(*st, "mode") != "clean") continue;
      std::string status = json_str(*st, "status");
      if (status != "running" && status != "handoff") continue;
      if (json_str(*st, "repo") != ctx.identity)
        return usage_error("run " + dir + " belongs to " + json_str(*st, "repo") + ", not " +
                           ctx.identity + "; start a new one with --new");
      run_dir = dir;
      break;
    }
  if (run_dir.empty() && req.confirm) {
    RunStore unused(ctx.develop_home + "/runs/plan", graph, schema);  // never written
    Cleaner c(runner, ctx, unused, req, graph);
    DG_TRY(Json clean, c.plan());
    if (!req.confirm(render_report(clean, true))) {
      CleanReport rep;
      rep.report = "nothing changed\n";
      rep.result = Json{{"status", "DECLINED"}, {"branches", branch_entries(clean)}};
      return rep;
    }
  }
  std::string fresh;
  if (run_dir.empty()) {
    DG_TRY(fresh, new_run_dir(ctx.develop_home, system_clock().wall()));
  }
  RunStore store(run_dir.empty() ? fresh : run_dir, graph, schema);
  if (run_dir.empty()) {
    InitRequest init;
    init.repo = ctx.identity;
    init.default_branch = ctx.default_branch;
    init.merge = Json{{"mode", "clean"},
                      {"node", graph.clean_entrypoint},
                      {"delivery", ctx.delivery},
                      {"clean",
                       {{"strategy", ctx.strategy.name},
                        {"strategy_source", ctx.strategy.source},
                        {"branches", Json::array()}}}};
    DG_TRY(auto c, store.init(init));
    (void)c;
    line("new clean run " + store.run_dir());
  } else {
    DG_TRY(auto r, store.resume());
    (void)r;
    line("resuming clean run " + run_dir);
  }

  if (req.on_run_dir) req.on_run_dir(store.run_dir());
  Cleaner cleaner(runner, ctx, store, req, graph);
  auto walked = cleaner.walk();
  // What any run leaves when it stops: its session record and its board
  // as one file (GRAPH.yaml observability.snapshot_on_terminal). Neither
  // is a failure of the clean.
  auto leave_traces = [&] {
    auto rec = metrics::record(store.run_dir(), std::nullopt, std::nullopt);
    if (!rec) line("session metrics not recorded: " + rec.error().message);
    if (std::string to = graph.observability.snapshot_path(store.run_dir()); !to.empty()) {
      if (auto w = board::write_run_snapshot(store.run_dir(), to); !w)
        line("board snapshot not written: " + w.error().message);
      else
        line("board snapshot at " + to);
    }
  };
  CleanReport rep;
  if (!walked) {
    if (walked.error().kind != ErrorKind::interrupted) return walked.error();
    DG_TRY(auto h, store.handoff(walked.error().message));
    (void)h;
    leave_traces();
    DG_TRY(Json st, store.read());
    rep.exit_code = walked.error().exit_code;
    rep.result = Json{{"status", "HANDOFF"},
                      {"run_dir", store.run_dir()},
                      {"run_id", json_str(st, "run_id")},
                      {"reason", walked.error().message}};
    return rep;
  }
  leave_traces();
  DG_TRY(Json st, store.read());
  Json clean = st.contains("clean") ? st["clean"] : Json::object();
  rep.report = render_report(clean, false);
  rep.result = Json{{"status", "COMPLETE"},
                    {"run_dir", store.run_dir()},
                    {"run_id", json_str(st, "run_id")},
                    {"strategy", json_str(clean, "strategy")},
                    {"strategy_source", json_str(clean, "strategy_source")},
                    {"delivery", ctx.delivery},
                    {"default_branch", ctx.default_branch},
                    {"branches", branch_entries(clean)}};
  (void)stops;
  return rep;
}

}  // namespace devgraph::clean
