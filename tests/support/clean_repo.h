// What the end-to-end tests of `devgraph clean` share: a real primary clone
// in a scratch directory, its branches made with git, one of each kind the
// contract sorts (merged already, cleanly integrable, conflicting, checked
// out with uncommitted or untracked work, with an open pull request, checked
// out away from the canonical worktree, with characters devgraph keeps out
// of paths, with a merge stopped in its worktree), the real binary run in
// it, and the checks every such test makes: the exit code, the RESULT_JSON
// line, git, and that nothing was lost.
//
// Contract:
// - GitHub delivery (init_github) is a clone whose origin is
//   https://github.com/acme/widgets.git, rewritten by the clone's own
//   `url.<bare>.insteadOf` to a bare repository beside it (as in
//   run_github_test.cpp), with the fake GitHub CLI
//   (tests/fixtures/bundle/fake-gh) first on PATH and its files in
//   `gh_dir`; local delivery (init_local) is a clone without origin. Each
//   test starts with one of the two; the primary clone is on main after
//   every builder.
// - env() is the environment every git and devgraph process of the test
//   gets: AI_ROOT inside the scratch directory, the fake gh first on PATH,
//   git's identity, no background gc or maintenance.
// - snapshot() records what the checkers compare with; expect_nothing_lost
//   fails the test for every commit reachable from a ref of the clone or
//   of origin before the run and from none after it, but for the commits
//   of a branch the run reports verified by a rebase or a squash with the
//   very tip, count and subjects the branch had, whose result landed on the
//   default branch. expect_nothing_written fails it for any ref changed
//   and anything under AI_ROOT that appeared or went.
// - The CleanCli suite spans several test files, and GoogleTest wants one
//   fixture class for a suite: each file names this one
//   (`using CleanCli = test::CleanRepo;`), never a class of its own.
// - stop_at never waits on a timer: it is woken by inotify and a pidfd, and
//   its deadline is only a failure condition.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <map>
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "support/test_util.h"
#include "util/json.h"

namespace devgraph::test {

// origin's URL as the clone names it (GitHub delivery).
inline constexpr const char* kCleanOrigin = "https://github.com/acme/widgets.git";

// The branch with a character devgraph keeps out of paths (git allows it).
inline constexpr const char* kWeird = "feature/we'ird";

bool contains(const std::string& text, const std::string& part);

// object[key], null when the key is missing (a const Json's operator[]
// must never see a missing key).
Json field(const Json& object, const char* key);

// Every path under `dir`, relative to it, one per line, sorted: what a
// test compares to prove that nothing was written there.
std::string tree_of(const std::string& dir);

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

class CleanRepo : public ::testing::Test {
 protected:
  void SetUp() override;

  // ---- the repositories ------------------------------------------------

  // A primary clone of a bare origin holding main, the origin named as a
  // GitHub repository: placement gives acme/widgets, delivery github.
  void init_github();
  // A repository without origin: local/widgets, delivery local.
  void init_local();
  void base_commit();

  struct Change {
    std::string path, content, subject;
  };
  // Branch `name` cut from `start`, one commit per change; the primary
  // clone is back on main afterwards.
  void branch(const std::string& name, const std::string& start,
              const std::vector<Change>& changes);
  void publish_main();
  // The canonical worktree of the branch whose slug is `slug`.
  std::string canonical(const std::string& slug) const;

  // Merged already: a commit merged into main (and main published).
  void make_merged(const std::string& name);
  // Merged already, checked out, clean, at the canonical worktree.
  void make_merged_with_worktree();
  // Merged already, but its canonical worktree holds an untracked file:
  // the work there is at risk, so it is for a person, never removed.
  void make_merged_with_untracked_worktree();
  // Two commits touching files main never touches: integrable once main
  // moves on (advance_main).
  void make_clean();
  // Changes the line of shared.txt that advance_main changes too.
  void make_conflict();
  // main moves on: shared.txt's line changes, published.
  void advance_main();
  // Checked out at the canonical worktree with a tracked file changed.
  void make_dirty();
  // Checked out at the canonical worktree with only an untracked file.
  void make_untracked();
  // Pushed, with open pull request #1 (the fake's files, as its header
  // describes them).
  void make_pr();
  // Declares the next open pull request, from `head` into main, in the
  // fake's files; its number.
  int open_pr(const std::string& head);
  // Checked out, clean, away from the canonical worktree.
  void make_elsewhere();
  void make_weird();
  // Checked out at the canonical worktree with a merge of
  // feature/conflict stopped on a conflict (after advance_main).
  void make_midmerge();
  // Every kind of branch at once (GitHub delivery).
  void make_branch_set();
  // origin refuses every push to main, as a protected default branch does.
  void protect_main();
  // project.yaml committed on main (and published).
  void commit_project_yaml(const std::string& text);

  // ---- processes ---------------------------------------------------------

  std::map<std::string, std::string> env() const;
  ProcessResult git_may_fail(const std::vector<std::string>& args, const std::string& dir = "");
  void git(const std::vector<std::string>& args, const std::string& dir = "");
  // git's stdout without its trailing newlines.
  std::string git_out(const std::vector<std::string>& args, const std::string& dir = "");
  // git in the bare origin.
  std::string origin_out(const std::vector<std::string>& args);
  // The tip of refs/heads/<name> in the clone, "" when there is none.
  std::string tip(const std::string& name);
  // The default branch's tip where delivery lands: origin's main (github)
  // or the clone's main (local).
  std::string default_tip();
  // True when `sha` is reachable from the default branch where delivery
  // lands.
  bool landed(const std::string& sha);
  // `devgraph clean EXTRA` in `cwd` (default: the primary clone).
  ProcessResult clean(std::vector<std::string> extra = {}, const std::string& cwd = "");
  // A clean run that finished: exit 0, COMPLETE, and a run devgraph
  // validate accepts.
  Json finished(const ProcessResult& r);
  // Starts `devgraph clean ARGS` in the background and sends `sig` to its
  // process group once its run's events.jsonl holds `line` lines (woken by
  // inotify, never by a timer); waits for it and for every process it
  // started in a group of its own (the test adopts them). Returns its wait
  // status; `dir` is the run's directory, `sent` whether the signal went
  // (the run may have finished first). Its output is in scratch/clean.log.
  int stop_at(size_t line, int sig, const std::vector<std::string>& args, std::string& dir,
              bool& sent);

  // ---- checkers ------------------------------------------------------------

  Snapshot snapshot();
  // Nothing lost (see the contract above).
  void expect_nothing_lost(const Snapshot& before, const Json& res);
  // Nothing written: no ref of the clone or origin changed, nothing under
  // AI_ROOT appeared or went (no run directory above all).
  void expect_nothing_written(const Snapshot& before);
  // A refusal: exit 3, one line on stderr holding `words`, RESULT_JSON
  // status ERROR, nothing written.
  void expect_refused(const ProcessResult& r, const std::string& words, const Snapshot& before);
  // The report's entry for branch `name`, nullptr when there is none.
  static const Json* entry(const Json& res, const std::string& name);
  // The report lists every local branch but main (and devgraph's own
  // throwaways) once, sorted by name.
  void expect_lists_every_branch(const Json& res, const Snapshot& before);
  // One branch's entry and git state as `w` says: bucket, outcome, reason,
  // deleted (the ref gone) or kept at the very same tip, its canonical
  // worktree removed or not.
  void expect_branch(const Json& res, const Snapshot& before, const std::string& name,
                     const Want& w);
  // No throwaway branch or worktree left, here or on origin.
  void expect_no_throwaways();
  // What every strategy does alike to the branches of make_branch_set() it
  // never integrates: the merged ones cleaned (the canonical worktree
  // removed), the rest kept as they were with the reason the contract
  // gives, their work in place.
  void expect_not_integrated_ones(const Json& res, const Snapshot& before);
  // The conflicting branch left exactly as it was, the conflict reported.
  void expect_conflict(const Json& res, const Snapshot& before, const std::string& reason);
  // feature/clean landed on the default branch by `strategy`: verified,
  // deleted, its result on main and its files in main's tree.
  void expect_clean_landed(const Json& res, const Snapshot& before, const std::string& strategy);
  // The commits main gained since `from`, oldest first, as
  // "<subject>\t<parent count>".
  std::vector<std::string> gained_since(const std::string& from);
  // The types of the run's events.
  std::set<std::string> event_types(const Json& res);
  // What an unbroken rebase run over make_branch_set() ends with.
  void expect_rebase_end(const Json& res, const Snapshot& before);

  Scratch scratch;
  std::string repo = scratch / "widgets";
  std::string remote = scratch / "remote.git";
  std::string ai_root = scratch / "ai";
  std::string gh_dir = scratch / "gh";
  std::string bin = scratch / "bin";
  std::string elsewhere = scratch / "elsewhere-wt";
  bool github = true;
  std::string owner_repo = "acme/widgets";
};

}  // namespace devgraph::test
