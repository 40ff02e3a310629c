// `devgraph clean` end to end over every kind of branch the contract sorts
// (tests/support/clean_repo.h builds them): each strategy, landing by
// github and local delivery, which strategy applies, the buckets and their
// precedence, the plan, a second run. Every test asserts on the exit code,
// the RESULT_JSON line and git, and checks that no commit reachable before
// the run is lost, but for the commits of a branch proven landed by a
// rebase or a squash.
#include <gtest/gtest.h>

#include <set>
#include <string>
#include <vector>

#include "support/clean_repo.h"
#include "support/run_scenario.h"
#include "support/test_util.h"
#include "util/fs.h"
#include "util/json.h"

namespace devgraph {
namespace {

using CleanCli = test::CleanRepo;
using test::contains;
using test::field;
using test::kWeird;
using test::result_of;
using test::Snapshot;

// ---- the strategies over every kind of branch --------------------------------

TEST_F(CleanCli,
       RebaseLandsTheCleanBranchAsItsOwnCommitsAndLeavesEveryOtherBranchAsTheContractSays) {
  init_github();
  make_branch_set();
  Snapshot before = snapshot();
  auto r = clean({"--strategy", "rebase"});
  Json res = finished(r);
  EXPECT_EQ(res["strategy_source"], "cli");
  EXPECT_EQ(res["delivery"], "github");
  EXPECT_EQ(res["default_branch"], "main");
  // Every branch where the contract puts it, nothing lost.
  expect_rebase_end(res, before);
  EXPECT_FALSE(contains(r.out, "Commit-history preservation: no")) << r.out;
  std::string dir = json_str(res, "run_dir");
  EXPECT_TRUE(contains(dir, ai_root + "/develop/acme/widgets/runs/")) << dir;
  EXPECT_TRUE(path_exists(dir + "/clean-report.md"));
  auto st = parse_json(test::slurp(dir + "/state.json"), "state");
  ASSERT_TRUE(st.ok());
  EXPECT_EQ((*st)["mode"], "clean");
  std::set<std::string> types = event_types(res);
  for (const char* t :
       {"CLEAN_DISCOVERED", "STRATEGY_RESOLVED", "CLEAN_CLASSIFIED", "BRANCH_INTEGRATED",
        "REBASE_CONFLICT", "INTEGRATION_VERIFIED", "CLEAN_CLEANUP_DONE", "CLEAN_REPORT_DONE"})
    EXPECT_TRUE(types.count(t)) << t;
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

// The default branch refuses the push (protected): the source branch is
// kept as it was, unverified, and the throwaway built to land it goes,
// branch and worktree, whatever the strategy.
class CleanRejected : public test::CleanRepo, public ::testing::WithParamInterface<const char*> {};

TEST_P(CleanRejected, ProtectedMainRejectingThePushKeepsTheBranchAndRemovesTheThrowaway) {
  init_github();
  make_clean();
  advance_main();
  protect_main();
  Snapshot before = snapshot();
  auto r = clean({"--strategy", GetParam()});
  Json res = finished(r);
  expect_lists_every_branch(res, before);
  expect_branch(res, before, "feature/clean",
                {"ELIGIBLE", "unverified", "push to origin/main rejected"});
  EXPECT_TRUE(event_types(res).count("INTEGRATION_UNVERIFIED"));
  EXPECT_FALSE(event_types(res).count("INTEGRATION_VERIFIED"));
  EXPECT_EQ(default_tip(), before.default_tip);
  EXPECT_EQ(origin_out({"for-each-ref", "--format=%(objectname) %(refname)"}), before.origin_refs);
  EXPECT_EQ(tip("feature/clean"), before.branches.at("feature/clean").tip);
  expect_no_throwaways();
  EXPECT_FALSE(path_exists(canonical("clean-integrated-feature-clean")));
  EXPECT_TRUE(contains(r.out, "removed develop/clean-integrated-feature-clean and its worktree"))
      << r.out;
  expect_nothing_lost(before, res);
}

INSTANTIATE_TEST_SUITE_P(EveryStrategy, CleanRejected,
                         ::testing::Values("rebase", "merge", "squash"));

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
  // The fast-forward needs the branch, not its worktree.
  EXPECT_FALSE(path_exists(canonical("clean-integrated-feature-clean")));
  EXPECT_FALSE(contains(git_out({"worktree", "list", "--porcelain"}), "clean-integrated-"));
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

// ---- the plan --------------------------------------------------------------

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

// ---- again, elsewhere ------------------------------------------------------

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

}  // namespace
}  // namespace devgraph
