// gh.h: the argv each call runs and how gh's answers are read, against a
// runner that answers without starting anything; once against the fake
// GitHub CLI script the e2e tests use, through a real runner; and FakeGh,
// the in-memory GitHub other unit tests deliver to.
#include "gh/gh.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <deque>
#include <tuple>

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
  for (int i = 0; i < 13; ++i)
    f.runner.answers.push_back(fail("cannot run gh: No such file or directory"));
  auto found = f.gh->find_pr("develop/b1");
  auto created = f.gh->create_pr({"main", "develop/b1", "t", "/b.md"});
  auto merged = f.gh->enable_auto_merge(3);
  auto issues = f.gh->list_open_issues(std::nullopt);
  auto prs = f.gh->list_open_prs();
  ASSERT_FALSE(found.ok());
  ASSERT_FALSE(created.ok());
  ASSERT_FALSE(merged.ok());
  ASSERT_FALSE(issues.ok());
  ASSERT_FALSE(prs.ok());
  for (const Error* e :
       {&found.error(), &created.error(), &merged.error(), &issues.error(), &prs.error()}) {
    EXPECT_EQ(e->kind, kNotInstalled);
    EXPECT_NE(e->message.find("No such file or directory"), std::string::npos) << e->message;
  }
  std::vector<Error> errors;
  auto keep = [&](const auto& result) {
    ASSERT_FALSE(result.ok());
    errors.push_back(result.error());
  };
  keep(f.gh->pr_status(3));
  keep(f.gh->list_merged_prs());
  keep(f.gh->pr_reviews(3));
  keep(f.gh->pr_diff(3));
  keep(f.gh->failed_job_log("https://github.com/o/r/actions/runs/1/job/2"));
  keep(f.gh->ensure_label("audit", "ffffff", "d"));
  keep(f.gh->create_issue({"t", "/b.md", {"audit"}}));
  keep(f.gh->list_labeled_issues("audit"));
  ASSERT_EQ(errors.size(), 8u);
  EXPECT_EQ(f.runner.answers.size(), 0u) << "every call ran gh";
  for (const Error& e : errors) {
    EXPECT_EQ(e.kind, kNotInstalled) << e.message;
    EXPECT_NE(e.message.find("No such file or directory"), std::string::npos) << e.message;
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
  f.runner.answers.push_back(CommandResult{-1, 15, true, false, "[", ""});
  f.runner.answers.push_back(CommandResult{-1, 15, true, false, "[", ""});
  auto issues = f.gh->list_open_issues(std::nullopt);
  ASSERT_FALSE(issues.ok());
  EXPECT_EQ(issues.error().kind, kTimedOut);
  EXPECT_NE(issues.error().message.find("gh issue list timed out"), std::string::npos)
      << issues.error().message;
  auto prs = f.gh->list_open_prs();
  ASSERT_FALSE(prs.ok());
  EXPECT_EQ(prs.error().kind, kTimedOut);
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

TEST(Gh, PrStatusRunsPrViewForTheNumberAndReadsItWhole) {
  Fixture f;
  Json answer = {{"number", 7},
                 {"state", "OPEN"},
                 {"headRefName", "develop/b1"},
                 {"headRefOid", std::string(40, 'a')},
                 {"mergeCommit", nullptr},
                 {"reviewDecision", "CHANGES_REQUESTED"},
                 {"statusCheckRollup", Json::array({{{"__typename", "CheckRun"},
                                                     {"name", "test"},
                                                     {"status", "COMPLETED"},
                                                     {"conclusion", "FAILURE"},
                                                     {"detailsUrl", "https://ci.invalid/1"}}})}};
  f.runner.exits(0, answer.dump());
  auto s = f.gh->pr_status(7);
  ASSERT_TRUE(s.ok()) << s.error().message;
  EXPECT_EQ(f.runner.specs[0].argv,
            (Argv{"gh", "pr", "view", "7", "--json",
                  "number,state,headRefName,headRefOid,mergeCommit,reviewDecision,"
                  "statusCheckRollup"}));
  EXPECT_EQ(s->verdict, ChecksVerdict::failing);
  EXPECT_EQ(s->review_decision, "CHANGES_REQUESTED");
  // About another pull request, refused, or not JSON: errors of their kind.
  answer["number"] = 8;
  f.runner.exits(0, answer.dump());
  s = f.gh->pr_status(7);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().kind, kMalformed);
  EXPECT_NE(s.error().message.find("answered about #8"), std::string::npos);
  f.runner.exits(1, "", "GraphQL: Could not resolve to a PullRequest with the number of 9.");
  s = f.gh->pr_status(9);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().kind, kFailed);
  EXPECT_NE(s.error().message.find("Could not resolve"), std::string::npos);
  f.runner.exits(0, "<html>");
  s = f.gh->pr_status(7);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().kind, kMalformed);
  size_t before = f.runner.specs.size();
  s = f.gh->pr_status(0);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().kind, kBadRequest);
  EXPECT_EQ(f.runner.specs.size(), before) << "gh is not run for a number that is no PR";
}

TEST(Gh, NoCallRunsAShellApiJqOrATemplate) {
  Fixture f;
  f.runner.exits(1, "", "no pull requests found for branch \"x\"");
  // The results are not what this test is about: only the argv is.
  (void)f.gh->find_pr("x");
  (void)f.gh->create_pr({"main", "x", "t", "/b.md"});
  (void)f.gh->enable_auto_merge(1);
  (void)f.gh->list_open_issues(std::nullopt);
  (void)f.gh->list_open_issues("bug");
  (void)f.gh->list_open_prs();
  (void)f.gh->pr_status(3);
  (void)f.gh->list_merged_prs();
  (void)f.gh->pr_reviews(3);
  (void)f.gh->pr_diff(3);
  (void)f.gh->failed_job_log("https://github.com/o/r/actions/runs/1/job/2");
  (void)f.gh->ensure_label("audit", "ffffff", "d");
  (void)f.gh->create_issue({"t", "/b.md", {"audit"}});
  (void)f.gh->list_labeled_issues("audit");
  ASSERT_EQ(f.runner.specs.size(), 14u);
  for (const auto& s : f.runner.specs) {
    EXPECT_EQ(s.argv[0], "gh");
    EXPECT_TRUE(s.argv[1] == "pr" || s.argv[1] == "issue" || s.argv[1] == "label" ||
                s.argv[1] == "run")
        << s.argv[1];
    EXPECT_EQ(s.env.at("GH_PROMPT_DISABLED"), "1");
    for (const auto& a : s.argv) {
      EXPECT_NE(a, "--jq");
      EXPECT_NE(a, "-q");
      EXPECT_NE(a, "--template");
      EXPECT_NE(a, "-t");
      EXPECT_NE(a, "api");
    }
  }
}

// ---------------------------------------------------------------------------
// Open issues and open pull requests

// An issue as gh 2.23 writes it in `gh issue list --json ...`.
Json gh_issue(long long number, const std::string& title, const std::string& body,
              std::vector<std::string> labels, const std::string& state = "OPEN") {
  Json j = {{"body", body},
            {"createdAt", "2026-11-02T09:15:00Z"},
            {"labels", Json::array()},
            {"number", number},
            {"state", state},
            {"title", title},
            {"updatedAt", "2026-11-03T10:00:00Z"}};
  for (const auto& name : labels)
    j["labels"].push_back(
        {{"id", "LA_kwDO" + name}, {"name", name}, {"description", ""}, {"color", "d73a4a"}});
  return j;
}

TEST(Gh, ListOpenIssuesRunsIssueListWithTheFieldsItReads) {
  Fixture f;
  f.runner.exits(0, "[]\n");
  f.runner.exits(0, "[]\n");
  auto all = f.gh->list_open_issues(std::nullopt);
  ASSERT_TRUE(all.ok()) << all.error().message;
  EXPECT_TRUE(all->empty());
  auto labelled = f.gh->list_open_issues("devgraph ready");
  ASSERT_TRUE(labelled.ok()) << labelled.error().message;
  ASSERT_EQ(f.runner.specs.size(), 2u);
  EXPECT_EQ(f.runner.specs[0].argv,
            (Argv{"gh", "issue", "list", "--state", "open", "--limit", "1000", "--json",
                  "number,title,body,labels,state,createdAt,updatedAt"}));
  EXPECT_EQ(
      f.runner.specs[1].argv,
      (Argv{"gh", "issue", "list", "--state", "open", "--limit", "1000", "--json",
            "number,title,body,labels,state,createdAt,updatedAt", "--label", "devgraph ready"}));
  for (const auto& s : f.runner.specs) {
    EXPECT_EQ(s.cwd, "/repo/worktree");
    EXPECT_EQ(s.timeout, std::chrono::minutes(5));
    EXPECT_EQ(s.input, "");
    EXPECT_EQ(s.env.at("GH_PROMPT_DISABLED"), "1");
    EXPECT_EQ(s.env.at("GH_NO_UPDATE_NOTIFIER"), "1");
  }
}

TEST(Gh, ListOpenIssuesReadsEveryFieldOfEachIssueInGhsOrder) {
  Fixture f;
  Json answer = Json::array(
      {gh_issue(12, "Add a --dry-run flag", "Part of #3\n\nIt should print `$(rm -rf /)`.\n",
                {"enhancement", "priority: P1", "P2"}),
       gh_issue(7, "Crash on empty input", "", {})});
  f.runner.exits(0, dump_py(answer) + "\n");
  auto got = f.gh->list_open_issues(std::nullopt);
  ASSERT_TRUE(got.ok()) << got.error().message;
  ASSERT_EQ(got->size(), 2u);
  const issues::Issue& a = (*got)[0];
  EXPECT_EQ(a.number, 12);
  EXPECT_EQ(a.title, "Add a --dry-run flag");
  EXPECT_EQ(a.body, "Part of #3\n\nIt should print `$(rm -rf /)`.\n");
  EXPECT_EQ(a.state, "open");
  EXPECT_EQ(a.labels, (Argv{"enhancement", "priority: P1", "P2"}));
  EXPECT_EQ(a.parent, std::optional<long long>(3));
  EXPECT_EQ(a.priority, "P1");
  EXPECT_EQ(a.created, "2026-11-02T09:15:00Z");
  EXPECT_EQ(a.updated, "2026-11-03T10:00:00Z");
  EXPECT_FALSE(a.branch.has_value());
  EXPECT_FALSE(a.head.has_value());
  const issues::Issue& b = (*got)[1];
  EXPECT_EQ(b.number, 7);
  EXPECT_EQ(b.body, "");
  EXPECT_TRUE(b.labels.empty());
  EXPECT_FALSE(b.parent.has_value());
  EXPECT_EQ(b.priority, "");
}

TEST(Gh, ListOpenIssuesLeavesOutIssuesThatAreClosedOrLackTheLabel) {
  // gh was asked for open issues with the label; what it answers is
  // checked again rather than trusted.
  Fixture f;
  Json answer = Json::array({gh_issue(1, "a", "", {"Ready"}), gh_issue(2, "b", "", {"other"}),
                             gh_issue(3, "c", "", {"ready"}, "CLOSED"),
                             gh_issue(4, "d", "", {"bug", "READY"})});
  f.runner.exits(0, dump_py(answer));
  f.runner.exits(0, dump_py(answer));
  auto labelled = f.gh->list_open_issues("ready");
  ASSERT_TRUE(labelled.ok()) << labelled.error().message;
  ASSERT_EQ(labelled->size(), 2u);
  EXPECT_EQ((*labelled)[0].number, 1);
  EXPECT_EQ((*labelled)[1].number, 4);
  auto all = f.gh->list_open_issues(std::nullopt);
  ASSERT_TRUE(all.ok()) << all.error().message;
  ASSERT_EQ(all->size(), 3u);
  EXPECT_EQ((*all)[2].number, 4);
}

TEST(Gh, ListOpenIssuesMalformedAnswerIsAnErrorAndNeverAPartialList) {
  const Json good = gh_issue(1, "a", "", {"x"});
  auto with = [&](const char* key, Json value) {
    Json j = good;
    j[key] = std::move(value);
    return dump_py(Json::array({good, j}));
  };
  auto without = [&](const char* key) {
    Json j = good;
    j.erase(key);
    return dump_py(Json::array({good, j}));
  };
  for (std::string answer : {std::string(""),
                             std::string("not json"),
                             std::string("{}"),
                             std::string("null"),
                             dump_py(good),
                             std::string("[1]"),
                             std::string("[[]]"),
                             without("number"),
                             with("number", "1"),
                             with("number", 0),
                             with("number", -4),
                             with("number", 1.5),
                             without("title"),
                             with("title", nullptr),
                             without("body"),
                             with("body", 3),
                             without("labels"),
                             with("labels", "x"),
                             with("labels", Json::array({"x"})),
                             with("labels", Json::array({Json::object()})),
                             with("labels", Json::array({{{"name", 1}}})),
                             without("state"),
                             with("state", "MERGED"),
                             with("state", true),
                             without("createdAt"),
                             with("createdAt", ""),
                             without("updatedAt"),
                             with("updatedAt", 5)}) {
    Fixture f;
    f.runner.exits(0, answer);
    auto issues = f.gh->list_open_issues(std::nullopt);
    ASSERT_FALSE(issues.ok()) << answer;
    EXPECT_EQ(issues.error().kind, kMalformed) << answer;
    EXPECT_EQ(issues.error().message.rfind("gh issue list", 0), 0u) << issues.error().message;
    EXPECT_EQ(issues.error().message.find('\n'), std::string::npos) << issues.error().message;
  }
}

TEST(Gh, ListOpenIssuesMalformedMessageNamesTheElementAndTheField) {
  Fixture f;
  Json bad = gh_issue(2, "b", "", {});
  bad["title"] = 9;
  f.runner.exits(0, dump_py(Json::array({gh_issue(1, "a", "", {}), bad})));
  auto issues = f.gh->list_open_issues("x");
  ASSERT_FALSE(issues.ok());
  EXPECT_EQ(issues.error().message,
            "gh issue list --label x answered an issue (element 1) whose \"title\" is not a "
            "string: 9");
}

TEST(Gh, ListOutputCutShortIsMalformed) {
  Fixture f;
  f.runner.answers.push_back(CommandResult{0, 0, false, true, "}]", ""});
  auto issues = f.gh->list_open_issues(std::nullopt);
  ASSERT_FALSE(issues.ok());
  EXPECT_EQ(issues.error().kind, kMalformed);
  EXPECT_NE(issues.error().message.find("more than"), std::string::npos) << issues.error().message;
}

TEST(Gh, ListOpenIssuesRefusesALabelGhWouldMisreadWithoutRunningGh) {
  Fixture f;
  for (std::string label : {"", "--web", "-R", "a,b", "say \"hi\"", "two\nlines"}) {
    auto issues = f.gh->list_open_issues(label);
    ASSERT_FALSE(issues.ok()) << label;
    EXPECT_EQ(issues.error().kind, kBadRequest);
    EXPECT_EQ(issues.error().message.find('\n'), std::string::npos) << issues.error().message;
  }
  EXPECT_TRUE(f.runner.specs.empty());
}

TEST(Gh, ListOpenIssuesFailureQuotesGhsLastStderrLineAndIsNotRetried) {
  Fixture f;
  f.runner.exits(1, "", "error connecting to api.github.com\ncheck your internet connection\n");
  f.runner.exits(0, "[]");
  auto issues = f.gh->list_open_issues("bug");
  ASSERT_FALSE(issues.ok());
  EXPECT_EQ(issues.error().kind, kFailed);
  EXPECT_EQ(issues.error().message,
            "gh issue list --label bug failed: check your internet connection");
  EXPECT_EQ(f.runner.specs.size(), 1u) << "the caller retries, with its back-off";
}

TEST(Gh, ListOpenPrsRunsPrListAndReadsWhatEachBodyCloses) {
  Fixture f;
  f.runner.exits(0, R"([{"baseRefName": "main", "body": "Closes #12\r\nfixes o/r#4, fixes #3",)"
                    R"( "headRefName": "develop/b2", "number": 9,)"
                    R"( "url": "https://github.com/o/r/pull/9"},)"
                    R"( {"baseRefName": "main", "body": "", "headRefName": "fork-branch",)"
                    R"( "number": 5, "url": "https://github.com/o/r/pull/5"}])"
                    "\n");
  auto prs = f.gh->list_open_prs();
  ASSERT_TRUE(prs.ok()) << prs.error().message;
  ASSERT_EQ(f.runner.specs.size(), 1u);
  EXPECT_EQ(f.runner.specs[0].argv, (Argv{"gh", "pr", "list", "--state", "open", "--limit", "1000",
                                          "--json", "number,url,headRefName,baseRefName,body"}));
  EXPECT_EQ(f.runner.specs[0].cwd, "/repo/worktree");
  EXPECT_EQ(f.runner.specs[0].timeout, std::chrono::minutes(5));
  ASSERT_EQ(prs->size(), 2u);
  const OpenPr& a = (*prs)[0];
  EXPECT_EQ(a.number, 9);
  EXPECT_EQ(a.url, "https://github.com/o/r/pull/9");
  EXPECT_EQ(a.head, "develop/b2");
  EXPECT_EQ(a.base, "main");
  EXPECT_EQ(a.closes, (std::vector<long long>{12, 3}));
  EXPECT_EQ((*prs)[1].number, 5);
  EXPECT_TRUE((*prs)[1].closes.empty());
}

TEST(Gh, ListOpenPrsMalformedAnswerIsAnErrorAndNeverAPartialList) {
  const Json good = {{"baseRefName", "main"},
                     {"body", "Fixes #1"},
                     {"headRefName", "h"},
                     {"number", 1},
                     {"url", "https://github.com/o/r/pull/1"}};
  auto with = [&](const char* key, Json value) {
    Json j = good;
    j[key] = std::move(value);
    return dump_py(Json::array({good, j}));
  };
  auto without = [&](const char* key) {
    Json j = good;
    j.erase(key);
    return dump_py(Json::array({good, j}));
  };
  for (std::string answer :
       {std::string(""), std::string("{}"), dump_py(good), std::string("[\"x\"]"),
        without("number"), with("number", "1"), with("number", 0), without("url"), with("url", ""),
        without("headRefName"), with("headRefName", 1), without("baseRefName"),
        with("baseRefName", ""), without("body"), with("body", nullptr)}) {
    Fixture f;
    f.runner.exits(0, answer);
    auto prs = f.gh->list_open_prs();
    ASSERT_FALSE(prs.ok()) << answer;
    EXPECT_EQ(prs.error().kind, kMalformed) << answer;
    EXPECT_EQ(prs.error().message.rfind("gh pr list", 0), 0u) << prs.error().message;
    EXPECT_EQ(prs.error().message.find('\n'), std::string::npos) << prs.error().message;
  }
}

TEST(Gh, ListOpenPrsFailureQuotesGhsLastStderrLine) {
  Fixture f;
  f.runner.exits(1, "", "HTTP 401: Bad credentials (https://api.github.com/graphql)\n");
  auto prs = f.gh->list_open_prs();
  ASSERT_FALSE(prs.ok());
  EXPECT_EQ(prs.error().kind, kFailed);
  EXPECT_EQ(prs.error().message,
            "gh pr list failed: HTTP 401: Bad credentials (https://api.github.com/graphql)");
  EXPECT_EQ(f.runner.specs.size(), 1u);
}

// ---------------------------------------------------------------------------
// Merged pull requests, reviews, diffs, job logs, labels and created issues

Json gh_merged_pr(long long number, const std::string& sha) {
  return Json{{"baseRefName", "main"},
              {"headRefName", "develop/b" + std::to_string(number)},
              {"mergeCommit", {{"oid", sha}}},
              {"mergedAt", "2026-11-04T12:00:00Z"},
              {"number", number},
              {"title", "feat(b" + std::to_string(number) + "): \"quoted\""},
              {"url", "https://github.com/o/r/pull/" + std::to_string(number)}};
}

TEST(Gh, ListMergedPrsRunsPrListMergedAndReadsEachPullRequest) {
  Fixture f;
  f.runner.exits(0, dump_py(Json::array({gh_merged_pr(9, std::string(40, 'b')),
                                         gh_merged_pr(4, std::string(40, 'c'))})) +
                        "\n");
  auto prs = f.gh->list_merged_prs();
  ASSERT_TRUE(prs.ok()) << prs.error().message;
  ASSERT_EQ(f.runner.specs.size(), 1u);
  EXPECT_EQ(f.runner.specs[0].argv,
            (Argv{"gh", "pr", "list", "--state", "merged", "--limit", "200", "--json",
                  "number,title,url,headRefName,baseRefName,mergeCommit,mergedAt"}));
  EXPECT_EQ(f.runner.specs[0].cwd, "/repo/worktree");
  EXPECT_EQ(f.runner.specs[0].timeout, std::chrono::minutes(5));
  ASSERT_EQ(prs->size(), 2u);
  const MergedPr& a = (*prs)[0];
  EXPECT_EQ(a.number, 9);
  EXPECT_EQ(a.title, "feat(b9): \"quoted\"");
  EXPECT_EQ(a.url, "https://github.com/o/r/pull/9");
  EXPECT_EQ(a.head, "develop/b9");
  EXPECT_EQ(a.base, "main");
  EXPECT_EQ(a.merge_commit, std::string(40, 'b'));
  EXPECT_EQ(a.merged_at, "2026-11-04T12:00:00Z");
  EXPECT_EQ((*prs)[1].number, 4);
  EXPECT_EQ((*prs)[1].merge_commit, std::string(40, 'c'));
}

TEST(Gh, ListMergedPrsMalformedAnswerIsAnErrorAndNeverAPartialList) {
  const Json good = gh_merged_pr(1, "abc");
  auto with = [&](const char* key, Json value) {
    Json j = good;
    j[key] = std::move(value);
    return dump_py(Json::array({good, j}));
  };
  auto without = [&](const char* key) {
    Json j = good;
    j.erase(key);
    return dump_py(Json::array({good, j}));
  };
  for (std::string answer : {std::string(""),
                             std::string("{}"),
                             dump_py(good),
                             std::string("[7]"),
                             without("number"),
                             with("number", 0),
                             without("title"),
                             with("title", nullptr),
                             without("url"),
                             with("url", ""),
                             without("headRefName"),
                             with("headRefName", ""),
                             without("baseRefName"),
                             with("baseRefName", 3),
                             without("mergeCommit"),
                             with("mergeCommit", nullptr),
                             with("mergeCommit", "abc"),
                             with("mergeCommit", Json::object()),
                             with("mergeCommit", {{"oid", ""}}),
                             with("mergeCommit", {{"oid", 5}}),
                             without("mergedAt"),
                             with("mergedAt", ""),
                             with("mergedAt", nullptr)}) {
    Fixture f;
    f.runner.exits(0, answer);
    auto prs = f.gh->list_merged_prs();
    ASSERT_FALSE(prs.ok()) << answer;
    EXPECT_EQ(prs.error().kind, kMalformed) << answer;
    EXPECT_EQ(prs.error().message.rfind("gh pr list --state merged", 0), 0u) << prs.error().message;
    EXPECT_EQ(prs.error().message.find('\n'), std::string::npos) << prs.error().message;
  }
}

TEST(Gh, ListMergedPrsMalformedMessageNamesTheElementAndTheField) {
  Fixture f;
  Json bad = gh_merged_pr(2, "abc");
  bad["mergeCommit"] = nullptr;
  f.runner.exits(0, dump_py(Json::array({gh_merged_pr(3, "def"), bad})));
  auto prs = f.gh->list_merged_prs();
  ASSERT_FALSE(prs.ok());
  EXPECT_EQ(prs.error().message,
            "gh pr list --state merged answered a merged pull request (element 1) whose "
            "\"mergeCommit\" is not an object with an \"oid\": null");
}

TEST(Gh, ListMergedPrsFailureQuotesGhsLastStderrLine) {
  Fixture f;
  f.runner.exits(1, "", "HTTP 502: Bad Gateway\nerror connecting to api.github.com\n");
  auto prs = f.gh->list_merged_prs();
  ASSERT_FALSE(prs.ok());
  EXPECT_EQ(prs.error().kind, kFailed);
  EXPECT_EQ(prs.error().message,
            "gh pr list --state merged failed: error connecting to api.github.com");
}

// A review as gh writes it in `gh pr view --json reviews`.
Json gh_review(Json author, const std::string& state, const std::string& body) {
  return Json{{"id", "PRR_kwDO"},
              {"author", std::move(author)},
              {"authorAssociation", "MEMBER"},
              {"body", body},
              {"submittedAt", "2026-11-04T10:00:00Z"},
              {"includesCreatedEdit", false},
              {"reactionGroups", Json::array()},
              {"state", state},
              {"commit", {{"oid", std::string(40, 'a')}}}};
}

TEST(Gh, PrReviewsRunsPrViewForReviewsAndReadsThemInGhsOrder) {
  Fixture f;
  Json answer = {{"number", 7},
                 {"reviews", Json::array({gh_review({{"login", "ann"}}, "CHANGES_REQUESTED",
                                                    "Please \"fix\" the $(tests)\n\\n"),
                                          gh_review(nullptr, "COMMENTED", ""),
                                          gh_review({{"login", "bob"}}, "APPROVED", "ok")})}};
  f.runner.exits(0, dump_py(answer) + "\n");
  auto reviews = f.gh->pr_reviews(7);
  ASSERT_TRUE(reviews.ok()) << reviews.error().message;
  ASSERT_EQ(f.runner.specs.size(), 1u);
  EXPECT_EQ(f.runner.specs[0].argv, (Argv{"gh", "pr", "view", "7", "--json", "number,reviews"}));
  EXPECT_EQ(f.runner.specs[0].cwd, "/repo/worktree");
  ASSERT_EQ(reviews->size(), 3u);
  EXPECT_EQ((*reviews)[0].author, "ann");
  EXPECT_EQ((*reviews)[0].state, "CHANGES_REQUESTED");
  EXPECT_EQ((*reviews)[0].body, "Please \"fix\" the $(tests)\n\\n");
  EXPECT_EQ((*reviews)[1].author, "") << "a deleted account is a null author";
  EXPECT_EQ((*reviews)[1].state, "COMMENTED");
  EXPECT_EQ((*reviews)[2].author, "bob");
  EXPECT_EQ((*reviews)[2].body, "ok");

  f.runner.exits(0, R"({"number": 7, "reviews": []})");
  auto none = f.gh->pr_reviews(7);
  ASSERT_TRUE(none.ok()) << none.error().message;
  EXPECT_TRUE(none->empty());
}

TEST(Gh, IssueCommentsRunIssueViewAndAreReadInGhsOrder) {
  Fixture f;
  Json answer = {{"number", 7},
                 {"comments", Json::array({{{"author", {{"login", "ann"}}},
                                            {"authorAssociation", "MEMBER"},
                                            {"body", "Dates: ISO 8601 $(please)\n"},
                                            {"createdAt", "2026-11-04T10:00:00Z"}},
                                           {{"author", nullptr}, {"body", "gone"}}})}};
  f.runner.exits(0, dump_py(answer) + "\n");
  auto comments = f.gh->issue_comments(7);
  ASSERT_TRUE(comments.ok()) << comments.error().message;
  ASSERT_EQ(f.runner.specs.size(), 1u);
  EXPECT_EQ(f.runner.specs[0].argv,
            (Argv{"gh", "issue", "view", "7", "--json", "number,comments"}));
  ASSERT_EQ(comments->size(), 2u);
  EXPECT_EQ((*comments)[0].author, "ann");
  EXPECT_EQ((*comments)[0].body, "Dates: ISO 8601 $(please)\n");
  EXPECT_EQ((*comments)[1].author, "");

  for (std::string bad : {std::string(R"({"number": 8, "comments": []})"),
                          std::string(R"({"number": 7})"),
                          std::string(R"({"number": 7, "comments": [{"author": null}]})"),
                          std::string(R"({"number": 7, "comments": [{"author": 3, "body": ""}]})"),
                          std::string("[]")}) {
    f.runner.exits(0, bad);
    auto c = f.gh->issue_comments(7);
    ASSERT_FALSE(c.ok()) << bad;
    EXPECT_EQ(c.error().kind, kMalformed) << bad;
    EXPECT_EQ(c.error().message.rfind("gh issue view 7 --json comments", 0), 0u)
        << c.error().message;
  }
  f.runner.exits(1, "", "GraphQL: Could not resolve to an issue with the number of 9.\n");
  auto refused = f.gh->issue_comments(9);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().kind, kFailed);
  size_t before = f.runner.specs.size();
  auto none = f.gh->issue_comments(0);
  ASSERT_FALSE(none.ok());
  EXPECT_EQ(none.error().kind, kBadRequest);
  EXPECT_EQ(f.runner.specs.size(), before) << "gh is not run for a number that is no issue";
}

TEST(Gh, PrReviewsMalformedAnswerIsAnError) {
  const Json good = gh_review({{"login", "ann"}}, "APPROVED", "ok");
  auto with = [&](const char* key, Json value) {
    Json j = good;
    j[key] = std::move(value);
    return dump_py(Json{{"number", 7}, {"reviews", Json::array({good, j})}});
  };
  auto without = [&](const char* key) {
    Json j = good;
    j.erase(key);
    return dump_py(Json{{"number", 7}, {"reviews", Json::array({good, j})}});
  };
  for (std::string answer :
       {std::string(""), std::string("[]"), std::string(R"({"reviews": []})"),
        std::string(R"({"number": "7", "reviews": []})"), std::string(R"({"number": 7})"),
        std::string(R"({"number": 7, "reviews": {}})"),
        std::string(R"({"number": 7, "reviews": [1]})"), without("author"), with("author", "ann"),
        with("author", Json::object()), with("author", {{"login", 3}}), without("state"),
        with("state", "LGTM"), with("state", nullptr), without("body"), with("body", nullptr)}) {
    Fixture f;
    f.runner.exits(0, answer);
    auto reviews = f.gh->pr_reviews(7);
    ASSERT_FALSE(reviews.ok()) << answer;
    EXPECT_EQ(reviews.error().kind, kMalformed) << answer;
    EXPECT_EQ(reviews.error().message.rfind("gh pr view 7 --json reviews", 0), 0u)
        << reviews.error().message;
    EXPECT_EQ(reviews.error().message.find('\n'), std::string::npos) << reviews.error().message;
  }
}

TEST(Gh, PrReviewsAboutAnotherPullRequestRefusedOrNotAPullRequestAreErrors) {
  Fixture f;
  f.runner.exits(0, R"({"number": 8, "reviews": []})");
  auto other = f.gh->pr_reviews(7);
  ASSERT_FALSE(other.ok());
  EXPECT_EQ(other.error().kind, kMalformed);
  EXPECT_EQ(other.error().message, "gh pr view 7 --json reviews answered about #8");
  f.runner.exits(1, "", "GraphQL: Could not resolve to a PullRequest with the number of 9.\n");
  auto refused = f.gh->pr_reviews(9);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().kind, kFailed);
  EXPECT_EQ(refused.error().message,
            "gh pr view 9 --json reviews failed: GraphQL: Could not resolve to a PullRequest "
            "with the number of 9.");
  size_t before = f.runner.specs.size();
  for (long long n : {0LL, -2LL}) {
    auto bad = f.gh->pr_reviews(n);
    ASSERT_FALSE(bad.ok());
    EXPECT_EQ(bad.error().kind, kBadRequest);
  }
  EXPECT_EQ(f.runner.specs.size(), before) << "gh is not run for a number that is no PR";
}

TEST(Gh, PrDiffRunsPrDiffAndAnswersWhatGhPrints) {
  Fixture f;
  const std::string diff =
      "diff --git a/x b/x\nindex 1..2 100644\n--- a/x\n+++ b/x\n@@ -1 +1 @@\n-old\n+new \"$(x)\"\n";
  f.runner.exits(0, diff);
  auto got = f.gh->pr_diff(12);
  ASSERT_TRUE(got.ok()) << got.error().message;
  EXPECT_EQ(*got, diff);
  ASSERT_EQ(f.runner.specs.size(), 1u);
  EXPECT_EQ(f.runner.specs[0].argv, (Argv{"gh", "pr", "diff", "12"}));
  EXPECT_EQ(f.runner.specs[0].cwd, "/repo/worktree");
  EXPECT_EQ(f.runner.specs[0].timeout, std::chrono::minutes(5));
}

TEST(Gh, PrDiffLongerThanTheBoundIsCutWithALastLineSayingSo) {
  Fixture f;
  std::string line = "+" + std::string(99, 'x') + "\n";  // 100 bytes
  std::string diff;
  while (diff.size() <= kMaxTextBytes) diff += line;
  f.runner.exits(0, diff);
  auto got = f.gh->pr_diff(3);
  ASSERT_TRUE(got.ok()) << got.error().message;
  const std::string mark = "[diff cut at " + std::to_string(kMaxTextBytes) + " bytes]\n";
  ASSERT_EQ(got->size(), kMaxTextBytes + 1 + mark.size()) << "cut mid-line: a newline, the mark";
  EXPECT_EQ(got->substr(0, kMaxTextBytes), diff.substr(0, kMaxTextBytes));
  EXPECT_EQ(got->substr(kMaxTextBytes), "\n" + mark);

  // Exactly the bound: kept whole.
  std::string exact(kMaxTextBytes - 1, 'y');
  exact += "\n";
  f.runner.exits(0, exact);
  EXPECT_EQ(*f.gh->pr_diff(3), exact);

  // A cut that would split a character keeps the character out.
  std::string wide(kMaxTextBytes - 1, 'z');
  wide += "\xc3\xa9\n";  // é straddles the bound
  EXPECT_EQ(bounded_diff(wide), std::string(kMaxTextBytes - 1, 'z') + "\n[diff cut at " +
                                    std::to_string(kMaxTextBytes - 1) + " bytes]\n");
}

TEST(Gh, PrDiffRefusedTooLongOrNotAPullRequestAreErrors) {
  Fixture f;
  f.runner.exits(1, "",
                 "could not find pull request diff: HTTP 406: Sorry, the diff exceeded "
                 "the maximum number of lines (20000)\n");
  auto refused = f.gh->pr_diff(4);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().kind, kFailed);
  EXPECT_EQ(refused.error().message,
            "gh pr diff 4 failed: could not find pull request diff: HTTP 406: Sorry, the diff "
            "exceeded the maximum number of lines (20000)");
  f.runner.answers.push_back(CommandResult{0, 0, false, true, "+tail only\n", ""});
  auto cut = f.gh->pr_diff(4);
  ASSERT_FALSE(cut.ok());
  EXPECT_EQ(cut.error().kind, kMalformed);
  EXPECT_NE(cut.error().message.find("more than 16 MiB"), std::string::npos) << cut.error().message;
  size_t before = f.runner.specs.size();
  auto bad = f.gh->pr_diff(0);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().kind, kBadRequest);
  EXPECT_EQ(f.runner.specs.size(), before);
}

TEST(Gh, FailedJobLogRunsRunViewForTheJobOfTheLink) {
  Fixture f;
  for (const char* link : {"https://github.com/o/r/actions/runs/111/job/222",
                           "https://github.com/o/r/actions/runs/111/job/222?pr=7",
                           "https://github.com/o/r/actions/runs/111/job/222#step:4:12"}) {
    f.runner.exits(0, "test\tRun tests\t2026-11-04T10:00:00Z FAIL: x_test\n");
    auto log = f.gh->failed_job_log(link);
    ASSERT_TRUE(log.ok()) << link << ": " << log.error().message;
    EXPECT_EQ(*log, "test\tRun tests\t2026-11-04T10:00:00Z FAIL: x_test\n");
    EXPECT_EQ(f.runner.specs.back().argv,
              (Argv{"gh", "run", "view", "--job", "222", "--log-failed"}))
        << link;
    EXPECT_EQ(f.runner.specs.back().cwd, "/repo/worktree");
  }
  EXPECT_EQ(actions_job_id("https://github.com/acme/widgets/actions/runs/9/job/12345678901"),
            std::optional<std::string>("12345678901"));
}

TEST(Gh, FailedJobLogKeepsTheLogsLastBytes) {
  Fixture f;
  std::string log = "first line\n" + std::string(kMaxTextBytes, 'e') + "\nlast line\n";
  f.runner.exits(0, log);
  auto got = f.gh->failed_job_log("https://github.com/o/r/actions/runs/1/job/2");
  ASSERT_TRUE(got.ok()) << got.error().message;
  ASSERT_EQ(got->size(), kMaxTextBytes);
  EXPECT_EQ(*got, log.substr(log.size() - kMaxTextBytes));
  EXPECT_EQ(got->substr(got->size() - 11), "\nlast line\n");
  // The tail does not start inside a character.
  std::string wide = "\xc3\xa9" + std::string(kMaxTextBytes - 1, 'w');
  EXPECT_EQ(bounded_log(wide), std::string(kMaxTextBytes - 1, 'w'));
  EXPECT_EQ(bounded_log("short\n"), "short\n");
}

TEST(Gh, FailedJobLogRefusesALinkThatNamesNoActionsJobWithoutRunningGh) {
  Fixture f;
  for (std::string link :
       {"", "https://github.com/o/r/actions/runs/1", "https://github.com/o/r/actions/runs/1/job/",
        "https://github.com/o/r/actions/runs/1/job/x2",
        "https://github.com/o/r/actions/runs/1/job/-2",
        "https://github.com/o/r/actions/runs/x/job/2", "https://github.com//r/actions/runs/1/job/2",
        "https://github.com/o/r/actions/runs/1/job/2/", "https://github.com/o/r/pull/3/checks",
        "https://ci.invalid/o/r/actions/runs/1/job/2", "http://github.com/o/r/actions/runs/1/job/2",
        "https://github.com/o/r/actions/runs/1/job/02",
        "--log https://github.com/o/r/actions/runs/1/job/2",
        "https://github.com/o/r/x/actions/runs/1/job/2"}) {
    auto log = f.gh->failed_job_log(link);
    ASSERT_FALSE(log.ok()) << link;
    EXPECT_EQ(log.error().kind, kBadRequest) << link;
    EXPECT_EQ(log.error().message.find('\n'), std::string::npos) << log.error().message;
  }
  EXPECT_TRUE(f.runner.specs.empty());
}

TEST(Gh, FailedJobLogRefusalQuotesGhsLastStderrLine) {
  Fixture f;
  f.runner.exits(1, "",
                 "failed to get job: HTTP 404: Not Found "
                 "(https://api.github.com/repos/o/r/actions/jobs/2)\n");
  auto log = f.gh->failed_job_log("https://github.com/o/r/actions/runs/1/job/2");
  ASSERT_FALSE(log.ok());
  EXPECT_EQ(log.error().kind, kFailed);
  EXPECT_EQ(log.error().message,
            "gh run view --job 2 failed: failed to get job: HTTP 404: Not Found "
            "(https://api.github.com/repos/o/r/actions/jobs/2)");
}

TEST(Gh, EnsureLabelRunsLabelCreateWithForce) {
  Fixture f;
  auto st = f.gh->ensure_label("devgraph: audit", "d73a4a", "Findings of devgraph's \"audit\"");
  ASSERT_TRUE(st.ok()) << st.error().message;
  ASSERT_EQ(f.runner.specs.size(), 1u);
  EXPECT_EQ(f.runner.specs[0].argv,
            (Argv{"gh", "label", "create", "devgraph: audit", "--color", "d73a4a", "--description",
                  "Findings of devgraph's \"audit\"", "--force"}));
  EXPECT_EQ(f.runner.specs[0].cwd, "/repo/worktree");
  f.runner.exits(1, "", "HTTP 422: Validation Failed (https://api.github.com/repos/o/r/labels)\n");
  auto refused = f.gh->ensure_label("x", "nothex", "");
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().kind, kFailed);
  EXPECT_EQ(refused.error().message,
            "gh label create x failed: HTTP 422: Validation Failed "
            "(https://api.github.com/repos/o/r/labels)");
}

TEST(Gh, EnsureLabelRefusesWhatGhWouldReadAsAFlagWithoutRunningGh) {
  Fixture f;
  for (const auto& [name, color, description] :
       std::vector<std::tuple<std::string, std::string, std::string>>{
           {"", "ffffff", "d"},
           {"--force", "ffffff", "d"},
           {"a", "-c", "d"},
           {"a", "ffffff", "-d"},
           {"two\nlines", "ffffff", "d"},
           {"a", "ffffff", "two\nlines"}}) {
    auto st = f.gh->ensure_label(name, color, description);
    ASSERT_FALSE(st.ok()) << name << " " << color << " " << description;
    EXPECT_EQ(st.error().kind, kBadRequest);
    EXPECT_EQ(st.error().message.find('\n'), std::string::npos) << st.error().message;
  }
  EXPECT_TRUE(f.runner.specs.empty());
}

TEST(Gh, CreateIssueRunsIssueCreateAndReadsTheNumberFromTheUrl) {
  Fixture f;
  f.runner.exits(0, "https://github.com/o/r/issues/123\n", "\nCreating issue in o/r\n\n");
  auto n = f.gh->create_issue(
      {"audit: a \"finding\" $(x)", "/runs/r1/finding.md", {"devgraph: audit", "P1"}});
  ASSERT_TRUE(n.ok()) << n.error().message;
  EXPECT_EQ(*n, 123);
  ASSERT_EQ(f.runner.specs.size(), 1u);
  EXPECT_EQ(f.runner.specs[0].argv,
            (Argv{"gh", "issue", "create", "--title", "audit: a \"finding\" $(x)", "--body-file",
                  "/runs/r1/finding.md", "--label", "devgraph: audit", "--label", "P1"}));
  EXPECT_EQ(f.runner.specs[0].cwd, "/repo/worktree");
  EXPECT_EQ(f.runner.specs[0].timeout, std::chrono::minutes(5));
  f.runner.exits(0, "https://github.invalid/owner/repo/issues/1001");
  auto unlabelled = f.gh->create_issue({"t", "/b.md", {}});
  ASSERT_TRUE(unlabelled.ok()) << unlabelled.error().message;
  EXPECT_EQ(*unlabelled, 1001);
  EXPECT_EQ(f.runner.specs[1].argv,
            (Argv{"gh", "issue", "create", "--title", "t", "--body-file", "/b.md"}));
}

TEST(Gh, CreateIssueAnswerWithoutAnIssueUrlIsMalformed) {
  for (std::string out :
       {"", "\n", "created\n", "https://github.com/o/r/pull/5\n",
        "https://github.com/o/r/issues/\n", "https://github.com/o/r/issues/abc\n",
        "https://github.com/o/r/issues/0\n", "https://github.com/o/r/issues/12/\n",
        "https://github.com/o/r/issues/12\nthanks\n", "issues/12\n",
        "https://github.com/o/r/issues/99999999999999999999\n"}) {
    Fixture f;
    f.runner.exits(0, out);
    auto n = f.gh->create_issue({"t", "/b.md", {}});
    ASSERT_FALSE(n.ok()) << out;
    EXPECT_EQ(n.error().kind, kMalformed) << out;
    EXPECT_EQ(n.error().message.rfind("gh issue create answered", 0), 0u) << n.error().message;
    EXPECT_EQ(n.error().message.find('\n'), std::string::npos) << n.error().message;
  }
}

TEST(Gh, CreateIssueRefusalQuotesGhsLastStderrLine) {
  Fixture f;
  f.runner.exits(1, "", "\nCreating issue in o/r\n\ncould not add label: 'audit' not found\n");
  auto n = f.gh->create_issue({"t", "/b.md", {"audit"}});
  ASSERT_FALSE(n.ok());
  EXPECT_EQ(n.error().kind, kFailed);
  EXPECT_EQ(n.error().message, "gh issue create failed: could not add label: 'audit' not found");
}

TEST(Gh, CreateIssueRefusesWhatGhWouldMisreadWithoutRunningGh) {
  Fixture f;
  for (const NewIssue& issue :
       {NewIssue{"", "/b.md", {}}, NewIssue{"t", "", {}}, NewIssue{"--web", "/b.md", {}},
        NewIssue{"two\nlines", "/b.md", {}}, NewIssue{"t", "-", {}},
        NewIssue{"t", "/b.md", {"ok", ""}}, NewIssue{"t", "/b.md", {"-R"}},
        NewIssue{"t", "/b.md", {"a,b"}}, NewIssue{"t", "/b.md", {"say \"hi\""}},
        NewIssue{"t", "/b.md", {"two\nlines"}}}) {
    auto n = f.gh->create_issue(issue);
    ASSERT_FALSE(n.ok()) << issue.title;
    EXPECT_EQ(n.error().kind, kBadRequest);
    EXPECT_EQ(n.error().message.find('\n'), std::string::npos) << n.error().message;
  }
  EXPECT_TRUE(f.runner.specs.empty());
}

TEST(Gh, ListLabeledIssuesRunsIssueListForEveryStateAndKeepsThoseWithTheLabel) {
  Fixture f;
  Json answer = Json::array({gh_issue(9, "open one", "Part of #2\n", {"Audit", "P0"}),
                             gh_issue(8, "closed one", "", {"audit"}, "CLOSED"),
                             gh_issue(7, "other", "", {"bug"})});
  f.runner.exits(0, dump_py(answer) + "\n");
  auto issues = f.gh->list_labeled_issues("audit");
  ASSERT_TRUE(issues.ok()) << issues.error().message;
  ASSERT_EQ(f.runner.specs.size(), 1u);
  EXPECT_EQ(f.runner.specs[0].argv,
            (Argv{"gh", "issue", "list", "--state", "all", "--label", "audit", "--limit", "1000",
                  "--json", "number,title,body,labels,state,createdAt,updatedAt"}));
  EXPECT_EQ(f.runner.specs[0].cwd, "/repo/worktree");
  ASSERT_EQ(issues->size(), 2u);
  EXPECT_EQ((*issues)[0].number, 9);
  EXPECT_EQ((*issues)[0].state, "open");
  EXPECT_EQ((*issues)[0].parent, std::optional<long long>(2));
  EXPECT_EQ((*issues)[0].priority, "P0");
  EXPECT_EQ((*issues)[1].number, 8);
  EXPECT_EQ((*issues)[1].state, "closed");
}

TEST(Gh, ListLabeledIssuesMalformedRefusedOrMisreadLabelAreErrors) {
  Fixture f;
  Json bad = gh_issue(2, "b", "", {"audit"});
  bad.erase("createdAt");
  f.runner.exits(0, dump_py(Json::array({gh_issue(1, "a", "", {"audit"}), bad})));
  auto malformed = f.gh->list_labeled_issues("audit");
  ASSERT_FALSE(malformed.ok());
  EXPECT_EQ(malformed.error().kind, kMalformed);
  EXPECT_EQ(malformed.error().message,
            "gh issue list --state all --label audit answered an issue (element 1) without "
            "\"createdAt\"");
  f.runner.exits(1, "", "HTTP 401: Bad credentials (https://api.github.com/graphql)\n");
  auto refused = f.gh->list_labeled_issues("audit");
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().kind, kFailed);
  EXPECT_EQ(refused.error().message,
            "gh issue list --state all --label audit failed: HTTP 401: Bad credentials "
            "(https://api.github.com/graphql)");
  size_t before = f.runner.specs.size();
  for (std::string label : {"", "--web", "a,b", "say \"hi\"", "two\nlines"}) {
    auto issues = f.gh->list_labeled_issues(label);
    ASSERT_FALSE(issues.ok()) << label;
    EXPECT_EQ(issues.error().kind, kBadRequest);
    EXPECT_EQ(issues.error().message.find('\n'), std::string::npos) << issues.error().message;
  }
  EXPECT_EQ(f.runner.specs.size(), before);
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

// The fake script's `gh issue list`: issues.json as the test wrote it, and
// FAKE_GH_FAIL_FIRST failures before that.
TEST(Gh, RealRunnerListsTheFakeGhScriptsIssuesOnceItStopsFailing) {
  test::Scratch s;
  const std::string gh_dir = s / "gh";
  ASSERT_EQ(::setenv("FAKE_GH_DIR", gh_dir.c_str(), 1), 0);
  ASSERT_EQ(::setenv("FAKE_GH_FAIL_FIRST", "2", 1), 0);
  RealCommandRunner runner;
  auto gh = make_gh(runner, s.path(), test::test_dir() + "/fixtures/bundle/fake-gh");

  for (int i = 0; i < 2; ++i) {
    auto failed = gh->list_open_issues("ready");
    ASSERT_FALSE(failed.ok());
    EXPECT_EQ(failed.error().kind, kFailed);
    EXPECT_EQ(failed.error().message,
              "gh issue list --label ready failed: error connecting to api.github.com");
  }
  auto none = gh->list_open_issues("ready");
  ASSERT_TRUE(none.ok()) << none.error().message;
  EXPECT_TRUE(none->empty()) << "no issues.json: no issues";

  Json issues = Json::array({gh_issue(3, "Third", "Part of #1\n", {"ready", "P2"}),
                             gh_issue(2, "Second", "", {"bug"}),
                             gh_issue(1, "First", "", {"ready"}, "CLOSED")});
  test::write_text(gh_dir + "/issues.json", dump_py(issues, 2) + "\n");
  auto ready = gh->list_open_issues("ready");
  ASSERT_TRUE(ready.ok()) << ready.error().message;
  ASSERT_EQ(ready->size(), 1u) << "the fake ignores --label; devgraph filters";
  EXPECT_EQ((*ready)[0].number, 3);
  EXPECT_EQ((*ready)[0].parent, std::optional<long long>(1));
  EXPECT_EQ((*ready)[0].priority, "P2");

  // Labelled while a run goes on: the file is replaced, and read again.
  issues[1]["labels"].push_back({{"name", "Ready"}});
  test::write_text(gh_dir + "/issues.json", dump_py(issues));
  auto now = gh->list_open_issues("ready");
  ASSERT_TRUE(now.ok()) << now.error().message;
  ASSERT_EQ(now->size(), 2u);
  EXPECT_EQ((*now)[1].number, 2);
  auto all = gh->list_open_issues(std::nullopt);
  ASSERT_TRUE(all.ok()) << all.error().message;
  EXPECT_EQ(all->size(), 2u);

  EXPECT_EQ(test::slurp(gh_dir + "/issue-list.failures"), "failed\nfailed\n");
  const std::string list =
      "issue\tlist\t--state\topen\t--limit\t1000\t--json\t"
      "number,title,body,labels,state,createdAt,updatedAt";
  EXPECT_EQ(test::slurp(gh_dir + "/calls.log"),
            list + "\t--label\tready\n" + list + "\t--label\tready\n" + list +
                "\t--label\tready\n" + list + "\t--label\tready\n" + list + "\t--label\tready\n" +
                list + "\n");
  ASSERT_EQ(::unsetenv("FAKE_GH_FAIL_FIRST"), 0);
}

// The fake script's `gh pr list`: its own open pull requests, newest first,
// bodies escaped whatever they hold, then prs-extra.json's entries.
TEST(Gh, RealRunnerListsTheFakeGhScriptsOpenPullRequests) {
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
                           Argv{"git", "-C", repo, "push", "-q", "origin", "main:develop/b1",
                                "main:develop/b2", "main:develop/b3"}}) {
    auto r = test::run_process(argv, id);
    ASSERT_EQ(r.exit_code, 0) << argv[3] << ": " << r.err;
  }
  const std::string tricky =
      "Closes #12\n\n\tA \"quoted\" back\\slash, $(not run) `nor this` * ? [a]\r\n"
      "caf\xc3\xa9 \x01\x1f\x7f and fixes #4\n";
  test::write_text(s / "b1.md", "Fixes #1\n");
  test::write_text(s / "b2.md", tricky);
  test::write_text(s / "b3.md", "");
  ASSERT_EQ(::setenv("FAKE_GH_DIR", gh_dir.c_str(), 1), 0);
  RealCommandRunner runner;
  const std::string fake = test::test_dir() + "/fixtures/bundle/fake-gh";
  auto gh = make_gh(runner, repo, fake);
  auto none = gh->list_open_prs();
  ASSERT_TRUE(none.ok()) << none.error().message;
  EXPECT_TRUE(none->empty());
  for (const char* b : {"b1", "b2", "b3"})
    ASSERT_TRUE(
        gh->create_pr({"main", std::string("develop/") + b, "t", s / (std::string(b) + ".md")})
            .ok());
  // Merged: no longer open.
  std::string fields = test::slurp(gh_dir + "/pr-1.fields");
  test::write_text(gh_dir + "/pr-1.fields", fields + "state=MERGED\n");
  test::write_text(gh_dir + "/prs-extra.json",
                   "[\n  {\"baseRefName\": \"main\", \"body\": \"Resolves #30\",\n"
                   "   \"headRefName\": \"someone/else\", \"number\": 40,\n"
                   "   \"url\": \"https://github.invalid/owner/repo/pull/40\"}\n]\n");

  auto prs = gh->list_open_prs();
  ASSERT_TRUE(prs.ok()) << prs.error().message;
  ASSERT_EQ(prs->size(), 3u);
  EXPECT_EQ((*prs)[0].number, 3);
  EXPECT_EQ((*prs)[0].head, "develop/b3");
  EXPECT_TRUE((*prs)[0].closes.empty());
  EXPECT_EQ((*prs)[1].number, 2);
  EXPECT_EQ((*prs)[1].url, "https://github.invalid/owner/repo/pull/2");
  EXPECT_EQ((*prs)[1].base, "main");
  EXPECT_EQ((*prs)[1].closes, (std::vector<long long>{12, 4}));
  EXPECT_EQ((*prs)[2].number, 40);
  EXPECT_EQ((*prs)[2].head, "someone/else");
  EXPECT_EQ((*prs)[2].closes, (std::vector<long long>{30}));

  // Bodies come back as they went in, and merging keeps a test's state line.
  auto raw =
      test::run_process({fake, "pr", "list", "--state", "open", "--json", "number,body"}, {}, repo);
  ASSERT_EQ(raw.exit_code, 0) << raw.err;
  auto listed = parse_json(raw.out, "gh pr list");
  ASSERT_TRUE(listed.ok()) << listed.error().message << "\n" << raw.out;
  EXPECT_EQ(listed->at(1).at("body").get<std::string>(), tricky);
  EXPECT_EQ(listed->at(0).at("body").get<std::string>(), "");
  ASSERT_TRUE(gh->enable_auto_merge(1)->enabled);
  EXPECT_NE(test::slurp(gh_dir + "/pr-1.fields").find("autoMerge=true\nstate=MERGED\n"),
            std::string::npos);
  EXPECT_EQ(gh->list_open_prs()->size(), 3u);
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

issues::Issue issue(long long number, std::vector<std::string> labels, std::string state = "open") {
  issues::Issue i;
  i.number = number;
  i.title = "issue " + std::to_string(number);
  i.labels = std::move(labels);
  i.state = std::move(state);
  return i;
}

TEST(FakeGh, ListsTheOpenIssuesWithTheLabelInTheirOrder) {
  test::FakeGh gh;
  gh.issues = {issue(5, {"Ready"}), issue(4, {}), issue(3, {"ready"}, "closed"),
               issue(2, {"ready", "P0"})};
  auto all = gh.list_open_issues(std::nullopt);
  ASSERT_TRUE(all.ok());
  ASSERT_EQ(all->size(), 3u);
  EXPECT_EQ((*all)[0].number, 5);
  EXPECT_EQ((*all)[1].number, 4);
  EXPECT_EQ((*all)[2].number, 2);
  auto ready = gh.list_open_issues("READY");
  ASSERT_TRUE(ready.ok());
  ASSERT_EQ(ready->size(), 2u);
  EXPECT_EQ((*ready)[1].labels, (Argv{"ready", "P0"}));
  gh.issues[1].labels.push_back("ready");  // labelled between two calls
  EXPECT_EQ(gh.list_open_issues("ready")->size(), 3u);
  auto bad = gh.list_open_issues("a,b");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().kind, kBadRequest);
  EXPECT_EQ(gh.calls, (Argv{"list_open_issues", "list_open_issues READY", "list_open_issues ready",
                            "list_open_issues a,b"}));
}

TEST(FakeGh, ListsTheOpenPullRequestsNewestFirstWithWhatTheyClose) {
  test::Scratch s;
  test::write_text(s / "b1.md", "Closes #12\nfixes o/r#4\n");
  test::write_text(s / "b2.md", "Part of #3\n");
  test::write_text(s / "b3.md", "Resolves: #7 and fixes #8\n");
  test::FakeGh gh;
  ASSERT_TRUE(gh.create_pr({"main", "develop/b1", "t", s / "b1.md"}).ok());
  ASSERT_TRUE(gh.create_pr({"main", "develop/b2", "t", s / "b2.md"}).ok());
  ASSERT_TRUE(gh.create_pr({"main", "develop/b3", "t", s / "b3.md"}).ok());
  gh.prs.at(2).open = false;
  auto prs = gh.list_open_prs();
  ASSERT_TRUE(prs.ok());
  ASSERT_EQ(prs->size(), 2u);
  EXPECT_EQ((*prs)[0].number, 3);
  EXPECT_EQ((*prs)[0].head, "develop/b3");
  EXPECT_EQ((*prs)[0].base, "main");
  EXPECT_EQ((*prs)[0].url, "https://github.invalid/owner/repo/pull/3");
  EXPECT_EQ((*prs)[0].closes, (std::vector<long long>{7, 8}));
  EXPECT_EQ((*prs)[1].number, 1);
  EXPECT_EQ((*prs)[1].closes, (std::vector<long long>{12}));
}

TEST(FakeGh, ScriptedListFailuresComeBackOnceInOrder) {
  test::FakeGh gh;
  gh.issues = {issue(1, {})};
  gh.issue_list_failures.push_back(
      Error{"gh issue list failed: error connecting to api.github.com", 1, kFailed});
  gh.issue_list_failures.push_back(Error{"gh issue list timed out after 300 s", 1, kTimedOut});
  gh.pr_list_failures.push_back(Error{"gh pr list answered nonsense", 1, kMalformed});
  auto first = gh.list_open_issues(std::nullopt);
  ASSERT_FALSE(first.ok());
  EXPECT_EQ(first.error().kind, kFailed);
  auto second = gh.list_open_issues(std::nullopt);
  ASSERT_FALSE(second.ok());
  EXPECT_EQ(second.error().kind, kTimedOut);
  auto third = gh.list_open_issues(std::nullopt);
  ASSERT_TRUE(third.ok());
  EXPECT_EQ(third->size(), 1u);
  auto prs = gh.list_open_prs();
  ASSERT_FALSE(prs.ok());
  EXPECT_EQ(prs.error().kind, kMalformed);
  EXPECT_TRUE(gh.list_open_prs().ok());
  EXPECT_EQ(gh.count("list_open_issues"), 3u);
  EXPECT_EQ(gh.count("list_open_prs"), 2u);
}

TEST(FakeGh, ListsMergedPullRequestsNewestFirst) {
  test::Scratch s;
  test::write_text(s / "body.md", "x\n");
  test::FakeGh gh;
  ASSERT_TRUE(gh.create_pr({"main", "develop/b1", "feat(b1): t", s / "body.md"}).ok());
  ASSERT_TRUE(gh.create_pr({"main", "develop/b2", "feat(b2): u", s / "body.md"}).ok());
  ASSERT_TRUE(gh.create_pr({"main", "develop/b3", "feat(b3): v", s / "body.md"}).ok());
  EXPECT_TRUE(gh.list_merged_prs()->empty());
  gh.merged_prs.push_back(
      {2, "older", "https://github.invalid/owner/repo/pull/2", "x", "main", "c0", "2026-01-01Z"});
  ASSERT_TRUE(gh.merge(3, "c3", "2026-11-04T12:00:00Z"));
  ASSERT_TRUE(gh.merge(1, "c1"));
  EXPECT_FALSE(gh.merge(9, "c9"));
  auto merged = gh.list_merged_prs();
  ASSERT_TRUE(merged.ok());
  ASSERT_EQ(merged->size(), 3u);
  EXPECT_EQ((*merged)[0].number, 3);
  EXPECT_EQ((*merged)[0].title, "feat(b3): v");
  EXPECT_EQ((*merged)[0].head, "develop/b3");
  EXPECT_EQ((*merged)[0].base, "main");
  EXPECT_EQ((*merged)[0].url, "https://github.invalid/owner/repo/pull/3");
  EXPECT_EQ((*merged)[0].merge_commit, "c3");
  EXPECT_EQ((*merged)[0].merged_at, "2026-11-04T12:00:00Z");
  EXPECT_EQ((*merged)[1].title, "older");
  EXPECT_EQ((*merged)[2].merge_commit, "c1");
  auto open = gh.list_open_prs();
  ASSERT_EQ(open->size(), 1u) << "a merged pull request is no longer open";
  EXPECT_EQ((*open)[0].number, 2);
}

TEST(FakeGh, AnswersTheReviewsDiffsAndJobLogsItHolds) {
  test::Scratch s;
  test::write_text(s / "body.md", "x\n");
  test::FakeGh gh;
  ASSERT_TRUE(gh.create_pr({"main", "develop/b1", "t", s / "body.md"}).ok());
  gh.reviews[5] = {{"ann", "CHANGES_REQUESTED", "fix it"}, {"", "COMMENTED", ""}};
  auto reviews = gh.pr_reviews(5);
  ASSERT_TRUE(reviews.ok());
  ASSERT_EQ(reviews->size(), 2u);
  EXPECT_EQ((*reviews)[0].body, "fix it");
  auto none = gh.pr_reviews(1);
  ASSERT_TRUE(none.ok()) << "a pull request without reviews";
  EXPECT_TRUE(none->empty());
  auto unknown = gh.pr_reviews(9);
  ASSERT_FALSE(unknown.ok());
  EXPECT_EQ(unknown.error().kind, kFailed);
  EXPECT_NE(unknown.error().message.find("Could not resolve"), std::string::npos);

  gh.diffs[1] = "+a\n";
  gh.diffs[2] = std::string(kMaxTextBytes + 10, 'd');
  EXPECT_EQ(*gh.pr_diff(1), "+a\n");
  auto cut = gh.pr_diff(2);
  ASSERT_TRUE(cut.ok());
  EXPECT_EQ(cut->substr(kMaxTextBytes),
            "\n[diff cut at " + std::to_string(kMaxTextBytes) + " bytes]\n");
  auto no_diff = gh.pr_diff(3);
  ASSERT_FALSE(no_diff.ok());
  EXPECT_EQ(no_diff.error().kind, kFailed);

  gh.job_logs["https://github.com/o/r/actions/runs/1/job/2"] = "boom\n";
  EXPECT_EQ(*gh.failed_job_log("https://github.com/o/r/actions/runs/1/job/2?pr=1"), "boom\n")
      << "the same job, whatever follows its link";
  auto other = gh.failed_job_log("https://github.com/o/r/actions/runs/1/job/3");
  ASSERT_FALSE(other.ok());
  EXPECT_EQ(other.error().kind, kFailed);
  EXPECT_NE(other.error().message.find("HTTP 404"), std::string::npos);
  auto bad = gh.failed_job_log("https://ci.invalid/1");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().kind, kBadRequest);
  EXPECT_EQ(gh.calls, (Argv{"create_pr main develop/b1", "pr_reviews 5", "pr_reviews 1",
                            "pr_reviews 9", "pr_diff 1", "pr_diff 2", "pr_diff 3",
                            "failed_job_log https://github.com/o/r/actions/runs/1/job/2?pr=1",
                            "failed_job_log https://github.com/o/r/actions/runs/1/job/3",
                            "failed_job_log https://ci.invalid/1"}));
  EXPECT_EQ(gh.count("pr_reviews"), 3u);
  EXPECT_EQ(gh.count("failed_job_log"), 3u);
}

TEST(FakeGh, CreatesIssuesWithKnownLabelsAndListsThemByLabel) {
  test::Scratch s;
  test::write_text(s / "finding.md", "Part of #3\nA \"finding\".\n");
  test::FakeGh gh;
  gh.issues = {issue(7, {"audit"}, "closed"), issue(6, {"bug"})};
  gh.last_issue_number = 40;
  auto refused = gh.create_issue({"audit: x", s / "finding.md", {"audit"}});
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().kind, kFailed);
  EXPECT_EQ(refused.error().message,
            "gh issue create failed: could not add label: 'audit' not found");
  EXPECT_EQ(gh.issues.size(), 2u) << "a refused issue is not created";

  ASSERT_TRUE(gh.ensure_label("audit", "d73a4a", "findings").ok());
  ASSERT_TRUE(gh.ensure_label("Audit", "ffffff", "again").ok());
  ASSERT_TRUE(gh.ensure_label("P1", "ffffff", "").ok());
  EXPECT_EQ(gh.labels, (Argv{"audit", "P1"}));
  auto first = gh.create_issue({"audit: x", s / "finding.md", {"audit", "P1"}});
  ASSERT_TRUE(first.ok()) << first.error().message;
  EXPECT_EQ(*first, 41);
  auto second = gh.create_issue({"audit: y", s / "finding.md", {"AUDIT"}});
  ASSERT_TRUE(second.ok()) << second.error().message;
  EXPECT_EQ(*second, 42);
  auto plain = gh.create_issue({"plain", s / "finding.md", {}});
  ASSERT_TRUE(plain.ok());
  EXPECT_EQ(*plain, 43);
  EXPECT_EQ(gh.last_issue_number, 43);

  auto audit = gh.list_labeled_issues("audit");
  ASSERT_TRUE(audit.ok());
  ASSERT_EQ(audit->size(), 3u);
  EXPECT_EQ((*audit)[0].number, 42);
  EXPECT_EQ((*audit)[1].number, 41);
  EXPECT_EQ((*audit)[1].title, "audit: x");
  EXPECT_EQ((*audit)[1].body, "Part of #3\nA \"finding\".\n");
  EXPECT_EQ((*audit)[1].state, "open");
  EXPECT_EQ((*audit)[1].labels, (Argv{"audit", "P1"}));
  EXPECT_EQ((*audit)[1].parent, std::optional<long long>(3));
  EXPECT_EQ((*audit)[1].priority, "P1");
  EXPECT_EQ((*audit)[1].created, gh.now);
  EXPECT_EQ((*audit)[2].number, 7) << "closed ones too";
  EXPECT_EQ(gh.list_open_issues(std::nullopt)->size(), 4u) << "created issues are open issues";

  auto missing = gh.create_issue({"t", s / "missing.md", {}});
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().kind, kFailed);
  for (const gh::NewIssue& bad :
       {gh::NewIssue{"", s / "finding.md", {}}, gh::NewIssue{"--web", s / "finding.md", {}},
        gh::NewIssue{"t", "-", {}}, gh::NewIssue{"t", s / "finding.md", {"a,b"}}}) {
    auto n = gh.create_issue(bad);
    ASSERT_FALSE(n.ok());
    EXPECT_EQ(n.error().kind, kBadRequest);
  }
  EXPECT_FALSE(gh.ensure_label("--force", "ffffff", "").ok());
  EXPECT_FALSE(gh.list_labeled_issues("").ok());
  EXPECT_EQ(gh.last_issue_number, 43);
  EXPECT_EQ(gh.count("create_issue"), 9u);
  EXPECT_EQ(gh.calls[0], "create_issue audit: x");
  EXPECT_EQ(gh.calls[1], "ensure_label audit");
  EXPECT_EQ(gh.count("list_labeled_issues audit"), 1u);
}

TEST(FakeGh, ScriptedFailuresOfTheMonitoringAndAuditCallsComeBackOnce) {
  test::Scratch s;
  test::write_text(s / "body.md", "x\n");
  test::FakeGh gh;
  gh.labels = {"audit"};
  gh.diffs[1] = "+a\n";
  gh.reviews[1] = {};
  gh.job_logs["https://github.com/o/r/actions/runs/1/job/2"] = "log";
  const Error e{"gh failed: HTTP 502", 1, kFailed};
  gh.merged_list_failures.push_back(e);
  gh.review_failures.push_back(e);
  gh.diff_failures.push_back(e);
  gh.job_log_failures.push_back(e);
  gh.label_failures.push_back(e);
  gh.issue_create_failures.push_back(e);
  gh.labeled_list_failures.push_back(e);
  const std::string link = "https://github.com/o/r/actions/runs/1/job/2";
  EXPECT_FALSE(gh.list_merged_prs().ok());
  EXPECT_TRUE(gh.list_merged_prs().ok());
  EXPECT_FALSE(gh.pr_reviews(1).ok());
  EXPECT_TRUE(gh.pr_reviews(1).ok());
  EXPECT_FALSE(gh.pr_diff(1).ok());
  EXPECT_TRUE(gh.pr_diff(1).ok());
  EXPECT_FALSE(gh.failed_job_log(link).ok());
  EXPECT_TRUE(gh.failed_job_log(link).ok());
  EXPECT_FALSE(gh.ensure_label("new", "ffffff", "").ok());
  EXPECT_EQ(gh.labels, (Argv{"audit"})) << "a scripted failure creates nothing";
  EXPECT_TRUE(gh.ensure_label("new", "ffffff", "").ok());
  auto failed = gh.create_issue({"t", s / "body.md", {"audit"}});
  ASSERT_FALSE(failed.ok());
  EXPECT_EQ(failed.error().message, "gh failed: HTTP 502");
  EXPECT_TRUE(gh.issues.empty());
  EXPECT_EQ(*gh.create_issue({"t", s / "body.md", {"audit"}}), 1001);
  EXPECT_FALSE(gh.list_labeled_issues("audit").ok());
  EXPECT_EQ(gh.list_labeled_issues("audit")->size(), 1u);
  EXPECT_EQ(gh.count(""), 14u);
}

}  // namespace
}  // namespace devgraph::gh
