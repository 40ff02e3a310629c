// gh.h: the argv each call runs and how gh's answers are read, against a
// runner that answers without starting anything; once against the fake
// GitHub CLI script the e2e tests use, through a real runner; and FakeGh,
// the in-memory GitHub other unit tests deliver to.
#include "gh/gh.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <deque>

#include "support/fake_gh.h"
#include "support/test_util.h"

namespace devgraph::gh {
namespace {

using Argv = std::vector<std::string>;

// Answers each command with the next scripted result and keeps every spec.
class ScriptedRunner final : public CommandRunner {
 public:
  std::deque<Expected<CommandResult>> answers;
  std::vector<CommandSpec> specs;

  Expected<CommandResult> run(const CommandSpec& spec) override {
    specs.push_back(spec);
    if (answers.empty()) return CommandResult{0, 0, false, false, "", ""};
    auto a = std::move(answers.front());
    answers.pop_front();
    return a;
  }

  void exits(int code, std::string out, std::string err = "") {
    answers.push_back(CommandResult{code, 0, false, false, std::move(out), std::move(err)});
  }
};

struct Fixture {
  ScriptedRunner runner;
  std::unique_ptr<Gh> gh = make_gh(runner, "/repo/worktree");
};

TEST(Gh, FindPrRunsPrViewForTheBranchInTheDirectory) {
  Fixture f;
  f.runner.exits(0, R"({"number": 7, "url": "https://github.com/o/r/pull/7",)"
                    R"( "autoMergeRequest": null})");
  auto pr = f.gh->find_pr("develop/b1");
  ASSERT_TRUE(pr.ok()) << pr.error().message;
  ASSERT_EQ(f.runner.specs.size(), 1u);
  const CommandSpec& s = f.runner.specs[0];
  EXPECT_EQ(s.argv,
            (Argv{"gh", "pr", "view", "develop/b1", "--json", "number,url,autoMergeRequest"}));
  EXPECT_EQ(s.cwd, "/repo/worktree");
  EXPECT_EQ(s.timeout, std::chrono::minutes(5));
  EXPECT_EQ(s.input, "");
  EXPECT_EQ(s.env.at("GH_PROMPT_DISABLED"), "1");
  EXPECT_EQ(s.env.at("GH_NO_UPDATE_NOTIFIER"), "1");
}

TEST(Gh, FindPrReadsNumberUrlAndAutoMerge) {
  Fixture f;
  f.runner.exits(0, R"({"number": 7, "url": "https://github.com/o/r/pull/7",)"
                    R"( "autoMergeRequest": null})");
  f.runner.exits(0, R"({"autoMergeRequest": {"mergeMethod": "MERGE"}, "number": 12,)"
                    R"( "url": "https://github.com/o/r/pull/12"})"
                    "\n");
  auto off = f.gh->find_pr("a");
  ASSERT_TRUE(off.ok() && off->has_value());
  EXPECT_EQ((*off)->number, 7);
  EXPECT_EQ((*off)->url, "https://github.com/o/r/pull/7");
  EXPECT_FALSE((*off)->auto_merge);
  auto on = f.gh->find_pr("b");
  ASSERT_TRUE(on.ok() && on->has_value());
  EXPECT_EQ((*on)->number, 12);
  EXPECT_TRUE((*on)->auto_merge);
}

TEST(Gh, FindPrIsNulloptWhenGhFindsNoPullRequest) {
  Fixture f;
  f.runner.exits(1, "", "no pull requests found for branch \"develop/b1\"\n");
  auto pr = f.gh->find_pr("develop/b1");
  ASSERT_TRUE(pr.ok()) << pr.error().message;
  EXPECT_FALSE(pr->has_value());
}

TEST(Gh, FindPrFailureIsAnErrorQuotingGhsLastStderrLine) {
  // Any other refusal is not "no pull request": a caller must not open a
  // second one because gh could not look.
  Fixture f;
  f.runner.exits(1, "", "error connecting to api.github.com\ncheck your internet connection\n");
  auto pr = f.gh->find_pr("develop/b1");
  ASSERT_FALSE(pr.ok());
  EXPECT_EQ(pr.error().kind, kFailed);
  EXPECT_NE(pr.error().message.find("gh pr view develop/b1"), std::string::npos);
  EXPECT_NE(pr.error().message.find("check your internet connection"), std::string::npos)
      << pr.error().message;
  EXPECT_EQ(pr.error().message.find('\n'), std::string::npos);
}

TEST(Gh, FindPrMalformedAnswerIsAnError) {
  for (std::string answer :
       {"", "not json", "[1]", R"({"url": "u", "autoMergeRequest": null})",
        R"({"number": "7", "url": "u", "autoMergeRequest": null})",
        R"({"number": 0, "url": "u", "autoMergeRequest": null})",
        R"({"number": 7, "autoMergeRequest": null})",
        R"({"number": 7, "url": "", "autoMergeRequest": null})", R"({"number": 7, "url": "u"})",
        R"({"number": 7, "url": "u", "autoMergeRequest": true})"}) {
    Fixture f;
    f.runner.exits(0, answer);
    auto pr = f.gh->find_pr("develop/b1");
    ASSERT_FALSE(pr.ok()) << answer;
    EXPECT_EQ(pr.error().kind, kMalformed) << answer;
    EXPECT_EQ(pr.error().message.find('\n'), std::string::npos) << pr.error().message;
  }
}

TEST(Gh, FindPrRefusesABranchThatWouldReadAsAFlag) {
  Fixture f;
  for (std::string branch : {"", "--web", "-R"}) {
    auto pr = f.gh->find_pr(branch);
    ASSERT_FALSE(pr.ok()) << branch;
    EXPECT_EQ(pr.error().kind, kBadRequest);
  }
  EXPECT_TRUE(f.runner.specs.empty());
}

TEST(Gh, GhThatCannotStartIsNotInstalledForEveryCall) {
  Fixture f;
  for (int i = 0; i < 3; ++i)
    f.runner.answers.push_back(fail("cannot run gh: No such file or directory"));
  auto found = f.gh->find_pr("develop/b1");
  auto created = f.gh->create_pr({"main", "develop/b1", "t", "/b.md"});
  auto merged = f.gh->enable_auto_merge(3);
  ASSERT_FALSE(found.ok());
  ASSERT_FALSE(created.ok());
  ASSERT_FALSE(merged.ok());
  for (const Error* e : {&found.error(), &created.error(), &merged.error()}) {
    EXPECT_EQ(e->kind, kNotInstalled);
    EXPECT_NE(e->message.find("No such file or directory"), std::string::npos) << e->message;
  }
}

TEST(Gh, TimeoutIsAnErrorOfItsOwnKind) {
  Fixture f;
  f.runner.answers.push_back(CommandResult{-1, 15, true, false, "", ""});
  f.runner.answers.push_back(CommandResult{-1, 9, true, false, "", ""});
  auto found = f.gh->find_pr("develop/b1");
  ASSERT_FALSE(found.ok());
  EXPECT_EQ(found.error().kind, kTimedOut);
  auto merged = f.gh->enable_auto_merge(3);
  ASSERT_FALSE(merged.ok()) << "a timed-out merge may or may not have enabled auto-merge";
  EXPECT_EQ(merged.error().kind, kTimedOut);
}

TEST(Gh, CreatePrRunsPrCreateWithBaseHeadTitleAndBodyFile) {
  Fixture f;
  f.runner.exits(0, "https://github.com/o/r/pull/7\n");
  auto st = f.gh->create_pr({"main", "develop/b1", "feat(b1): a $(title) with 'quotes'",
                             "/runs/r1/bundles/b1/pr-body.md"});
  ASSERT_TRUE(st.ok()) << st.error().message;
  ASSERT_EQ(f.runner.specs.size(), 1u);
  EXPECT_EQ(f.runner.specs[0].argv,
            (Argv{"gh", "pr", "create", "--base", "main", "--head", "develop/b1", "--title",
                  "feat(b1): a $(title) with 'quotes'", "--body-file",
                  "/runs/r1/bundles/b1/pr-body.md"}));
  EXPECT_EQ(f.runner.specs[0].cwd, "/repo/worktree");
  EXPECT_EQ(f.runner.specs[0].timeout, std::chrono::minutes(5));
}

TEST(Gh, CreatePrFailureCarriesGhsLastStderrLine) {
  Fixture f;
  f.runner.exits(1, "",
                 "\nCreating pull request for develop/b1 into main\n\npull request create failed: "
                 "GraphQL: Head sha can't be blank (createPullRequest)\n\n");
  auto st = f.gh->create_pr({"main", "develop/b1", "t", "/b.md"});
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.error().kind, kFailed);
  EXPECT_NE(st.error().message.find(
                "pull request create failed: GraphQL: Head sha can't be blank (createPullRequest)"),
            std::string::npos)
      << st.error().message;
  EXPECT_EQ(st.error().message.find('\n'), std::string::npos);
}

TEST(Gh, CreatePrRefusalThatEndsInAUrlKeepsTheLineThatIntroducesIt) {
  Fixture f;
  f.runner.exits(1, "",
                 "a pull request for branch \"develop/b1\" into branch \"main\" already exists:\n"
                 "https://github.com/o/r/pull/7\n");
  auto st = f.gh->create_pr({"main", "develop/b1", "t", "/b.md"});
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.error().message.find("into branch \"main\" already exists: "
                                    "https://github.com/o/r/pull/7"),
            std::string::npos)
      << st.error().message;
}

TEST(Gh, CreatePrRefusesAMissingFieldWithoutRunningGh) {
  Fixture f;
  for (const CreateRequest& q : {CreateRequest{"", "h", "t", "f"}, CreateRequest{"b", "", "t", "f"},
                                 CreateRequest{"b", "h", "", "f"}, CreateRequest{"b", "h", "t", ""},
                                 CreateRequest{"b", "--fill", "t", "f"}}) {
    auto st = f.gh->create_pr(q);
    ASSERT_FALSE(st.ok());
    EXPECT_EQ(st.error().kind, kBadRequest);
  }
  EXPECT_TRUE(f.runner.specs.empty());
}

TEST(Gh, EnableAutoMergeRunsPrMergeAutoAndSaysEnabled) {
  Fixture f;
  f.runner.exits(0, "");
  auto m = f.gh->enable_auto_merge(7);
  ASSERT_TRUE(m.ok()) << m.error().message;
  EXPECT_TRUE(m->enabled);
  EXPECT_EQ(m->reason, "");
  ASSERT_EQ(f.runner.specs.size(), 1u);
  EXPECT_EQ(f.runner.specs[0].argv, (Argv{"gh", "pr", "merge", "7", "--auto", "--merge"}));
}

TEST(Gh, RefusedAutoMergeIsUnavailableWithGhsReason) {
  Fixture f;
  f.runner.exits(1, "",
                 "GraphQL: Auto merge is not allowed for this repository "
                 "(enablePullRequestAutoMerge)\n");
  f.runner.exits(1, "", "");
  auto m = f.gh->enable_auto_merge(7);
  ASSERT_TRUE(m.ok()) << m.error().message;
  EXPECT_FALSE(m->enabled);
  EXPECT_EQ(m->reason,
            "GraphQL: Auto merge is not allowed for this repository (enablePullRequestAutoMerge)");
  auto silent = f.gh->enable_auto_merge(7);
  ASSERT_TRUE(silent.ok());
  EXPECT_FALSE(silent->enabled);
  EXPECT_EQ(silent->reason, "exit 1");
}

TEST(Gh, EnableAutoMergeRefusesANumberThatIsNoPullRequest) {
  Fixture f;
  for (long long n : {0LL, -3LL}) {
    auto m = f.gh->enable_auto_merge(n);
    ASSERT_FALSE(m.ok());
    EXPECT_EQ(m.error().kind, kBadRequest);
  }
  EXPECT_TRUE(f.runner.specs.empty());
}

TEST(Gh, NoCallRunsAShellApiOrJq) {
  Fixture f;
  f.runner.exits(1, "", "no pull requests found for branch \"x\"");
  (void)f.gh->find_pr("x");
  (void)f.gh->create_pr({"main", "x", "t", "/b.md"});
  (void)f.gh->enable_auto_merge(1);
  ASSERT_EQ(f.runner.specs.size(), 3u);
  for (const auto& s : f.runner.specs) {
    EXPECT_EQ(s.argv[0], "gh");
    EXPECT_EQ(s.argv[1], "pr");
    for (const auto& a : s.argv) {
      EXPECT_NE(a, "--jq");
      EXPECT_NE(a, "api");
    }
  }
}

// The fake GitHub CLI of the e2e tests (tests/fixtures/bundle/fake-gh),
// through a real runner: a pull request for a pushed branch is opened,
// found, and set to auto-merge.
TEST(Gh, RealRunnerAgainstTheFakeGhScript) {
  test::Scratch s;
  const std::string remote = s / "remote.git", repo = s / "repo", gh_dir = s / "gh";
  const std::map<std::string, std::string> id = {{"GIT_AUTHOR_NAME", "t"},
                                                 {"GIT_AUTHOR_EMAIL", "t@example.invalid"},
                                                 {"GIT_COMMITTER_NAME", "t"},
                                                 {"GIT_COMMITTER_EMAIL", "t@example.invalid"}};
  for (const Argv& argv : {Argv{"git", "init", "-q", "--bare", "-b", "main", remote},
                           Argv{"git", "init", "-q", "-b", "main", repo},
                           Argv{"git", "-C", repo, "commit", "-q", "--allow-empty", "-m", "x"},
                           Argv{"git", "-C", repo, "remote", "add", "origin", remote},
                           Argv{"git", "-C", repo, "push", "-q", "origin", "main:develop/b1"}}) {
    auto r = test::run_process(argv, id);
    ASSERT_EQ(r.exit_code, 0) << argv[3] << ": " << r.err;
  }
  test::write_text(s / "body.md", "Closes #12\n");
  ASSERT_EQ(::setenv("FAKE_GH_DIR", gh_dir.c_str(), 1), 0);
  RealCommandRunner runner;
  auto gh = make_gh(runner, repo, test::test_dir() + "/fixtures/bundle/fake-gh");

  auto none = gh->find_pr("develop/b1");
  ASSERT_TRUE(none.ok()) << none.error().message;
  EXPECT_FALSE(none->has_value());
  auto unpushed = gh->create_pr({"main", "develop/b2", "t", s / "body.md"});
  ASSERT_FALSE(unpushed.ok());
  EXPECT_EQ(unpushed.error().kind, kFailed);
  EXPECT_NE(unpushed.error().message.find("Head sha can't be blank"), std::string::npos)
      << unpushed.error().message;

  ASSERT_TRUE(gh->create_pr({"main", "develop/b1", "feat(b1): t", s / "body.md"}).ok());
  auto found = gh->find_pr("develop/b1");
  ASSERT_TRUE(found.ok() && found->has_value()) << (found.ok() ? "none" : found.error().message);
  EXPECT_EQ((*found)->number, 1);
  EXPECT_EQ((*found)->url, "https://github.invalid/owner/repo/pull/1");
  EXPECT_FALSE((*found)->auto_merge);
  auto again = gh->create_pr({"main", "develop/b1", "feat(b1): t", s / "body.md"});
  ASSERT_FALSE(again.ok());
  EXPECT_NE(again.error().message.find("already exists"), std::string::npos);

  auto merged = gh->enable_auto_merge(1);
  ASSERT_TRUE(merged.ok() && merged->enabled);
  EXPECT_TRUE((*gh->find_pr("develop/b1"))->auto_merge);
  auto unknown = gh->enable_auto_merge(9);
  ASSERT_TRUE(unknown.ok());
  EXPECT_FALSE(unknown->enabled);
  EXPECT_NE(unknown->reason.find("could not resolve"), std::string::npos) << unknown->reason;
}

TEST(Gh, RealRunnerWithoutTheProgramIsNotInstalled) {
  RealCommandRunner runner;
  test::Scratch s;
  auto gh = make_gh(runner, s.path(), s / "no-such-gh");
  auto pr = gh->find_pr("develop/b1");
  ASSERT_FALSE(pr.ok());
  EXPECT_EQ(pr.error().kind, kNotInstalled);
}

// ---------------------------------------------------------------------------
// FakeGh

TEST(FakeGh, OpensFindsAndAutoMergesPullRequestsInMemory) {
  test::Scratch s;
  test::write_text(s / "body.md", "Closes #12\n");
  test::FakeGh gh;
  EXPECT_FALSE(gh.find_pr("develop/b1")->has_value());
  ASSERT_TRUE(gh.create_pr({"main", "develop/b1", "feat(b1): t", s / "body.md"}).ok());
  ASSERT_TRUE(gh.create_pr({"main", "develop/b2", "feat(b2): u", s / "body.md"}).ok());
  auto pr = gh.find_pr("develop/b2");
  ASSERT_TRUE(pr.ok() && pr->has_value());
  EXPECT_EQ((*pr)->number, 2);
  EXPECT_EQ((*pr)->url, "https://github.invalid/owner/repo/pull/2");
  EXPECT_FALSE((*pr)->auto_merge);
  EXPECT_EQ(gh.prs.at(1).title, "feat(b1): t");
  EXPECT_EQ(gh.prs.at(1).body, "Closes #12\n");
  EXPECT_EQ(gh.prs.at(1).base, "main");

  auto m = gh.enable_auto_merge(2);
  ASSERT_TRUE(m.ok() && m->enabled);
  EXPECT_TRUE((*gh.find_pr("develop/b2"))->auto_merge);
  EXPECT_FALSE(gh.prs.at(1).auto_merge);
  EXPECT_EQ(gh.calls,
            (Argv{"find_pr develop/b1", "create_pr main develop/b1", "create_pr main develop/b2",
                  "find_pr develop/b2", "enable_auto_merge 2", "find_pr develop/b2"}));
  EXPECT_EQ(gh.count("create_pr"), 2u);
}

TEST(FakeGh, RefusesASecondPullRequestForTheSameHeadAndAMissingBody) {
  test::Scratch s;
  test::write_text(s / "body.md", "x\n");
  test::FakeGh gh;
  ASSERT_TRUE(gh.create_pr({"main", "develop/b1", "t", s / "body.md"}).ok());
  auto again = gh.create_pr({"main", "develop/b1", "t", s / "body.md"});
  ASSERT_FALSE(again.ok());
  EXPECT_EQ(again.error().kind, kFailed);
  EXPECT_NE(again.error().message.find("already exists"), std::string::npos);
  auto no_body = gh.create_pr({"main", "develop/b3", "t", s / "missing.md"});
  ASSERT_FALSE(no_body.ok());
  EXPECT_EQ(gh.prs.size(), 1u);
}

TEST(FakeGh, ScriptedFailuresComeBackOnceInOrderAndAreRecorded) {
  test::Scratch s;
  test::write_text(s / "body.md", "x\n");
  test::FakeGh gh;
  gh.find_failures.push_back(Error{"gh pr view timed out", 1, kTimedOut});
  gh.create_failures.push_back(Error{"gh pr create failed: HTTP 502", 1, kFailed});
  gh.merge_failures.push_back(Error{"cannot run gh", 1, kNotInstalled});

  auto found = gh.find_pr("develop/b1");
  ASSERT_FALSE(found.ok());
  EXPECT_EQ(found.error().kind, kTimedOut);
  EXPECT_TRUE(gh.find_pr("develop/b1").ok());

  auto created = gh.create_pr({"main", "develop/b1", "t", s / "body.md"});
  ASSERT_FALSE(created.ok());
  EXPECT_EQ(created.error().message, "gh pr create failed: HTTP 502");
  EXPECT_TRUE(gh.prs.empty()) << "a scripted failure opens nothing";
  ASSERT_TRUE(gh.create_pr({"main", "develop/b1", "t", s / "body.md"}).ok());

  auto merged = gh.enable_auto_merge(1);
  ASSERT_FALSE(merged.ok());
  EXPECT_EQ(merged.error().kind, kNotInstalled);
  EXPECT_FALSE(gh.prs.at(1).auto_merge);
  EXPECT_EQ(gh.count(""), 5u);
}

TEST(FakeGh, RefusedAutoMergeIsUnavailableWithTheReason) {
  test::Scratch s;
  test::write_text(s / "body.md", "x\n");
  test::FakeGh gh;
  gh.refuse_auto_merge = "Auto merge is not allowed for this repository";
  ASSERT_TRUE(gh.create_pr({"main", "develop/b1", "t", s / "body.md"}).ok());
  auto m = gh.enable_auto_merge(1);
  ASSERT_TRUE(m.ok());
  EXPECT_FALSE(m->enabled);
  EXPECT_EQ(m->reason, "Auto merge is not allowed for this repository");
  EXPECT_FALSE(gh.prs.at(1).auto_merge);
  auto unknown = gh.enable_auto_merge(5);
  ASSERT_TRUE(unknown.ok());
  EXPECT_FALSE(unknown->enabled);
}

}  // namespace
}  // namespace devgraph::gh
