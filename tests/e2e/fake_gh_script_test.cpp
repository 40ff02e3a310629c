// The fake GitHub CLI of the end-to-end tests (tests/fixtures/bundle/fake-gh)
// itself, for what monitoring, clean-up and the audit read from it: look
// files that change a pull request between two status looks, the merged
// list, reviews, diffs, failed jobs' logs, labels and created issues. Each
// test runs the script as a process with FAKE_GH_DIR in a scratch
// directory, in a clone whose origin has the pull requests' branches, and
// reads what it prints as JSON; the last ones read it through gh.h as
// devgraph does, so the two agree on gh's shapes.
#include <unistd.h>

#include <gtest/gtest.h>

#include <cstdlib>
#include <map>
#include <string>
#include <vector>

#include "gh/gh.h"
#include "gh/pr_status.h"
#include "proc/command.h"
#include "support/test_util.h"
#include "util/json.h"

namespace devgraph {
namespace {

using Argv = std::vector<std::string>;

const std::string kStatusFields =
    "number,state,headRefName,headRefOid,mergeCommit,reviewDecision,statusCheckRollup";

class FakeGhScript : public ::testing::Test {
 protected:
  void SetUp() override {
    const std::map<std::string, std::string> id = {{"GIT_AUTHOR_NAME", "t"},
                                                   {"GIT_AUTHOR_EMAIL", "t@example.invalid"},
                                                   {"GIT_COMMITTER_NAME", "t"},
                                                   {"GIT_COMMITTER_EMAIL", "t@example.invalid"}};
    for (const Argv& argv :
         {Argv{"git", "init", "-q", "--bare", "-b", "main", remote},
          Argv{"git", "init", "-q", "-b", "main", repo},
          Argv{"git", "-C", repo, "commit", "-q", "--allow-empty", "-m", "x"},
          Argv{"git", "-C", repo, "remote", "add", "origin", remote},
          Argv{"git", "-C", repo, "push", "-q", "origin", "main:develop/b1", "main:develop/b2"}}) {
      auto r = test::run_process(argv, id);
      ASSERT_EQ(r.exit_code, 0) << argv[3] << ": " << r.err;
    }
    auto head = test::run_process({"git", "-C", repo, "rev-parse", "HEAD"});
    ASSERT_EQ(head.exit_code, 0);
    pushed = head.out.substr(0, 40);
    test::write_text(s / "body.md", "Closes #12\n");
  }

  test::ProcessResult gh(const Argv& args) {
    Argv argv = {fake};
    argv.insert(argv.end(), args.begin(), args.end());
    return test::run_process(argv, {{"FAKE_GH_DIR", gh_dir}}, repo);
  }

  // The script's answer, which must succeed and be JSON.
  Json gh_json(const Argv& args) {
    auto r = gh(args);
    EXPECT_EQ(r.exit_code, 0) << args[0] << " " << args[1] << ": " << r.err;
    auto j = parse_json(r.out, "fake gh");
    EXPECT_TRUE(j.ok()) << (j.ok() ? "" : j.error().message) << "\n" << r.out;
    return j.ok() ? *j : Json();
  }

  void open_prs() {
    for (const char* b : {"develop/b1", "develop/b2"}) {
      auto r = gh({"pr", "create", "--base", "main", "--head", b, "--title", "t", "--body-file",
                   s / "body.md"});
      ASSERT_EQ(r.exit_code, 0) << r.err;
    }
  }

  void write_gh(const std::string& name, const std::string& text) {
    test::write_text(gh_dir + "/" + name, text);
  }

  // `pr list --state S --json number`: the numbers listed.
  std::vector<long long> listed(const std::string& state) {
    std::vector<long long> numbers;
    for (const Json& pr : gh_json({"pr", "list", "--state", state, "--json", "number"}))
      numbers.push_back(pr.at("number").get<long long>());
    return numbers;
  }

  test::Scratch s;
  const std::string remote = s / "remote.git", repo = s / "repo", gh_dir = s / "gh";
  const std::string fake = test::test_dir() + "/fixtures/bundle/fake-gh";
  std::string pushed;  // the sha of both branches
};

TEST_F(FakeGhScript, WithoutLookFilesAPullRequestIsOpenWithItsPushedHeadAndNoChecks) {
  open_prs();
  Json pr = gh_json({"pr", "view", "1", "--json", kStatusFields + ",mergedAt,reviews"});
  EXPECT_EQ(pr, (Json{{"number", 1},
                      {"state", "OPEN"},
                      {"headRefName", "develop/b1"},
                      {"headRefOid", pushed},
                      {"mergeCommit", nullptr},
                      {"reviewDecision", ""},
                      {"statusCheckRollup", Json::array()},
                      {"mergedAt", nullptr},
                      {"reviews", Json::array()}}));
  // A headRefOid of pr-N.fields wins over the pushed branch.
  write_gh("pr-2.fields",
           test::slurp(gh_dir + "/pr-2.fields") + "headRefOid=" + std::string(40, 'f') + "\n");
  EXPECT_EQ(gh_json({"pr", "view", "2", "--json", "headRefOid"}).at("headRefOid"),
            std::string(40, 'f'));
}

TEST_F(FakeGhScript, LookFilesChangeAPullRequestFromTheirStatusLookOn) {
  open_prs();
  const std::string failing =
      R"([{"__typename":"CheckRun","name":"ci","workflowName":"CI","status":"COMPLETED",)"
      R"("conclusion":"FAILURE","detailsUrl":"https://github.com/o/r/actions/runs/1/job/2"}])";
  write_gh("pr-1.look-1",
           "checks=[{\"__typename\":\"CheckRun\",\"name\":\"ci\",\"status\":\"IN_PROGRESS\","
           "\"conclusion\":\"\"}]\n");
  write_gh("pr-1.look-2", "checks=" + failing + "\nreviewDecision=CHANGES_REQUESTED\n");
  write_gh("pr-1.look-4",
           "state=MERGED\nmergeCommit=" + std::string(40, 'm') +
               "\nmergedAt=2026-11-04T12:00:00Z\nheadRefOid=" + std::string(40, 'h') + "\n");
  const Argv look = {"pr", "view", "1", "--json", kStatusFields};

  // Before any status look, no file applies.
  EXPECT_EQ(gh_json({"pr", "view", "1", "--json", "state,reviewDecision"}),
            (Json{{"state", "OPEN"}, {"reviewDecision", ""}}));
  // Any call asking for statusCheckRollup is a status look.
  Json pending = gh_json({"pr", "view", "1", "--json", "state,statusCheckRollup"});
  EXPECT_EQ(pending.at("statusCheckRollup").at(0).at("status"), "IN_PROGRESS");
  auto first = gh::parse_pr_status(dump_py(gh_json(look)));  // status look 2
  ASSERT_TRUE(first.ok()) << first.error().message;
  EXPECT_EQ(first->verdict, gh::ChecksVerdict::failing);
  EXPECT_EQ(first->review_decision, "CHANGES_REQUESTED");
  ASSERT_EQ(first->failing().size(), 1u);
  EXPECT_EQ(first->failing()[0].name, "CI / ci");
  EXPECT_EQ(first->failing()[0].link, "https://github.com/o/r/actions/runs/1/job/2");
  EXPECT_EQ(first->head_commit, pushed);
  EXPECT_FALSE(first->merge_commit.has_value());

  // Other calls see the looks made so far and count none.
  for (int i = 0; i < 3; ++i)
    EXPECT_EQ(gh_json({"pr", "view", "1", "--json", "state,reviewDecision"}),
              (Json{{"state", "OPEN"}, {"reviewDecision", "CHANGES_REQUESTED"}}));
  auto third = gh::parse_pr_status(dump_py(gh_json(look)));  // status look 3: no look-3
  ASSERT_TRUE(third.ok()) << third.error().message;
  EXPECT_EQ(third->state, "OPEN");
  EXPECT_EQ(third->verdict, gh::ChecksVerdict::failing);
  // A look of another pull request, or of this one by branch, counts for
  // neither.
  gh_json({"pr", "view", "2", "--json", kStatusFields});
  gh_json({"pr", "view", "develop/b1", "--json", kStatusFields});
  auto fourth = gh::parse_pr_status(dump_py(gh_json(look)));  // status look 4
  ASSERT_TRUE(fourth.ok()) << fourth.error().message;
  EXPECT_EQ(fourth->state, "MERGED");
  EXPECT_EQ(fourth->merge_commit, std::optional<std::string>(std::string(40, 'm')));
  EXPECT_EQ(fourth->head_commit, std::string(40, 'h'));
  EXPECT_EQ(fourth->review_decision, "CHANGES_REQUESTED") << "kept from look-2";
  EXPECT_EQ(gh_json({"pr", "view", "1", "--json", "mergedAt"}).at("mergedAt"),
            "2026-11-04T12:00:00Z");
  auto two = gh::parse_pr_status(dump_py(gh_json({"pr", "view", "2", "--json", kStatusFields})));
  ASSERT_TRUE(two.ok()) << two.error().message;
  EXPECT_EQ(two->state, "OPEN");
  EXPECT_EQ(two->verdict, gh::ChecksVerdict::none);
}

TEST_F(FakeGhScript, APullRequestMergedByALookFileLeavesTheOpenListForTheMergedList) {
  open_prs();
  write_gh("pr-1.look-1", "state=MERGED\nmergeCommit=" + std::string(40, 'm') +
                              "\nmergedAt=2026-11-04T12:00:00Z\n");
  write_gh("pr-2.look-1", "state=CLOSED\n");
  EXPECT_EQ(listed("open"), (std::vector<long long>{2, 1})) << "no status look yet";
  EXPECT_TRUE(listed("merged").empty());

  gh_json({"pr", "view", "1", "--json", kStatusFields});
  EXPECT_EQ(listed("open"), (std::vector<long long>{2}));
  Json merged = gh_json({"pr", "list", "--state", "merged", "--limit", "200", "--json",
                         "number,title,url,headRefName,baseRefName,mergeCommit,mergedAt"});
  EXPECT_EQ(merged, Json::array({{{"number", 1},
                                  {"title", "t"},
                                  {"url", "https://github.invalid/owner/repo/pull/1"},
                                  {"headRefName", "develop/b1"},
                                  {"baseRefName", "main"},
                                  {"mergeCommit", {{"oid", std::string(40, 'm')}}},
                                  {"mergedAt", "2026-11-04T12:00:00Z"}}}));

  gh_json({"pr", "view", "2", "--json", kStatusFields});
  EXPECT_TRUE(listed("open").empty()) << "closed is not open either";
  EXPECT_EQ(listed("merged"), (std::vector<long long>{1})) << "nor merged";

  // A state=MERGED line of pr-N.fields, as older tests write, counts too.
  write_gh("pr-2.look-1", "");
  write_gh("pr-2.fields", test::slurp(gh_dir + "/pr-2.fields") +
                              "state=MERGED\nmergeCommit=abc\nmergedAt=2026-11-05T00:00:00Z\n");
  EXPECT_EQ(listed("merged"), (std::vector<long long>{2, 1}));
}

TEST_F(FakeGhScript, ALookFileWithAnUnknownKeyOrStateFailsLoudly) {
  open_prs();
  write_gh("pr-1.look-1", "stat=MERGED\n");
  auto r = gh({"pr", "view", "1", "--json", kStatusFields});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("unknown key stat"), std::string::npos) << r.err;
  write_gh("pr-1.look-1", "state=merged\n");
  r = gh({"pr", "view", "1", "--json", kStatusFields});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("state=merged"), std::string::npos) << r.err;
}

// pr-1.reviews.json holds one review; look-2 brings a second one, as a
// reviewer's answer to a pushed repair arrives between two looks.
TEST_F(FakeGhScript, AReviewsLineOfALookFileReplacesTheReviewsFromThatLookOn) {
  open_prs();
  const Json first = Json::array(
      {{{"author", {{"login", "ann"}}}, {"state", "CHANGES_REQUESTED"}, {"body", "rename it"}}});
  Json both = first;
  both.push_back(
      {{"author", {{"login", "ann"}}}, {"state", "CHANGES_REQUESTED"}, {"body", "still"}});
  write_gh("pr-1.reviews.json", dump_py(first, 2) + "\n");
  write_gh("pr-1.look-2", "reviews=" + dump_py(both) + "\n");
  const Argv reviews = {"pr", "view", "1", "--json", "number,reviews"};
  EXPECT_EQ(gh_json(reviews).at("reviews"), first) << "no status look yet";
  gh_json({"pr", "view", "1", "--json", kStatusFields});  // status look 1
  EXPECT_EQ(gh_json(reviews).at("reviews"), first);
  gh_json({"pr", "view", "1", "--json", kStatusFields});  // status look 2
  EXPECT_EQ(gh_json(reviews).at("reviews"), both);
  EXPECT_EQ(gh_json({"pr", "view", "2", "--json", "reviews"}).at("reviews"), Json::array());
}

TEST_F(FakeGhScript, AHeadRefNameLineOfALookFileRenamesTheHeadFromThatLookOn) {
  open_prs();
  write_gh("pr-1.look-2", "headRefName=feature/theirs\n");
  const Argv head = {"pr", "view", "1", "--json", "number,headRefName"};
  const std::string before = gh_json(head).at("headRefName").get<std::string>();
  EXPECT_NE(before, "feature/theirs");
  gh_json({"pr", "view", "1", "--json", kStatusFields});  // status look 1
  EXPECT_EQ(gh_json(head).at("headRefName"), before);
  EXPECT_EQ(gh_json({"pr", "view", "1", "--json", kStatusFields}).at("headRefName"),
            "feature/theirs");  // status look 2
  EXPECT_EQ(gh_json(head).at("headRefName"), "feature/theirs");
}

TEST_F(FakeGhScript, ServesReviewsDiffsAndFailedJobLogsFromTheTestsFiles) {
  open_prs();
  const Json reviews = Json::array(
      {{{"author", {{"login", "ann"}}},
        {"state", "CHANGES_REQUESTED"},
        {"body", "Fix \"this\" \\ now\n"},
        {"submittedAt", "2026-11-04T10:00:00Z"}},
       {{"author", nullptr}, {"state", "COMMENTED"}, {"body", ""}, {"submittedAt", nullptr}}});
  write_gh("pr-1.reviews.json", dump_py(reviews, 2) + "\n");
  EXPECT_EQ(gh_json({"pr", "view", "1", "--json", "number,reviews"}),
            (Json{{"number", 1}, {"reviews", reviews}}));
  EXPECT_EQ(gh_json({"pr", "view", "2", "--json", "reviews"}).at("reviews"), Json::array());

  const std::string diff = "diff --git a/x b/x\n--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+\"b\" \\ c\n";
  write_gh("pr-1.diff", diff);
  auto d = gh({"pr", "diff", "1"});
  EXPECT_EQ(d.exit_code, 0) << d.err;
  EXPECT_EQ(d.out, diff);
  auto none = gh({"pr", "diff", "2"});
  EXPECT_EQ(none.exit_code, 1);
  EXPECT_NE(none.err.find("Could not resolve to a PullRequest with the number of 2"),
            std::string::npos)
      << none.err;

  write_gh("job-222.log", "test\tRun tests\tFAIL x_test\n");
  auto log = gh({"run", "view", "--job", "222", "--log-failed"});
  EXPECT_EQ(log.exit_code, 0) << log.err;
  EXPECT_EQ(log.out, "test\tRun tests\tFAIL x_test\n");
  auto missing = gh({"run", "view", "--job", "333", "--log-failed"});
  EXPECT_EQ(missing.exit_code, 1);
  EXPECT_NE(missing.err.find("HTTP 404"), std::string::npos) << missing.err;
  EXPECT_EQ(gh({"run", "view", "--job", "222", "--verbose"}).exit_code, 2);
}

TEST_F(FakeGhScript, CreatesIssuesOnlyWithExistingLabelsAndListsThemAfterTheTestsIssues) {
  const std::string fields = "number,title,body,labels,state,createdAt,updatedAt";
  const std::string body = "Part of #3\n\tA \"finding\" with a back\\slash \x01 and $(x)\n";
  test::write_text(s / "finding.md", body);
  const std::string title = "audit: \"quoted\" \\ $(title)";
  auto refused = gh(
      {"issue", "create", "--title", title, "--body-file", s / "finding.md", "--label", "audit"});
  EXPECT_EQ(refused.exit_code, 1);
  EXPECT_NE(refused.err.find("could not add label: 'audit' not found"), std::string::npos)
      << refused.err;

  ASSERT_EQ(gh({"label", "create", "audit", "--color", "d73a4a", "--description", "d"}).exit_code,
            0);
  auto again = gh({"label", "create", "audit", "--color", "ffffff"});
  EXPECT_EQ(again.exit_code, 1);
  EXPECT_NE(again.err.find("already exists"), std::string::npos) << again.err;
  ASSERT_EQ(gh({"label", "create", "audit", "--force"}).exit_code, 0);
  ASSERT_EQ(gh({"label", "create", "P1", "--color", "ffffff", "--force"}).exit_code, 0);
  EXPECT_EQ(test::slurp(gh_dir + "/labels"), "audit\nP1\n");

  auto first = gh({"issue", "create", "--title", title, "--body-file", s / "finding.md", "--label",
                   "audit", "--label", "P1"});
  ASSERT_EQ(first.exit_code, 0) << first.err;
  EXPECT_EQ(first.out, "https://github.invalid/owner/repo/issues/1001\n");
  auto second = gh({"issue", "create", "--title", "plain", "--body-file", s / "finding.md"});
  ASSERT_EQ(second.exit_code, 0) << second.err;
  EXPECT_EQ(second.out, "https://github.invalid/owner/repo/issues/1002\n");

  // The test's own issues first, as they are, then the created ones.
  test::write_text(gh_dir + "/issues.json",
                   "[\n  {\"number\": 5, \"title\": \"mine\", \"body\": \"\", \"labels\": [],\n"
                   "   \"state\": \"CLOSED\", \"createdAt\": \"2026-11-01T00:00:00Z\",\n"
                   "   \"updatedAt\": \"\"}\n]\n");
  Json all = gh_json({"issue", "list", "--state", "open", "--limit", "1000", "--json", fields});
  ASSERT_EQ(all.size(), 3u) << dump_py(all);
  EXPECT_EQ(all[0].at("number"), 5);
  EXPECT_EQ(all[1].at("number"), 1002);
  EXPECT_EQ(all[1].at("labels"), Json::array());
  EXPECT_EQ(all[2], (Json{{"number", 1001},
                          {"title", title},
                          {"body", body},
                          {"labels", Json::array({{{"name", "audit"}}, {{"name", "P1"}}})},
                          {"state", "OPEN"},
                          {"createdAt", "2030-01-01T00:00:01Z"},
                          {"updatedAt", "2030-01-01T00:00:01Z"}}));
  Json audit = gh_json({"issue", "list", "--state", "all", "--label", "audit", "--json", fields});
  ASSERT_EQ(audit.size(), 2u) << "the test's file is served as it is; created ones by label";
  EXPECT_EQ(audit[1].at("number"), 1001);
  Json closed = gh_json({"issue", "list", "--state", "closed", "--json", "number"});
  ASSERT_EQ(closed.size(), 1u);
  EXPECT_EQ(closed[0].at("number"), 5);

  // Without a file of the test's, the created ones alone.
  ASSERT_EQ(::unlink((gh_dir + "/issues.json").c_str()), 0);
  Json created = gh_json({"issue", "list", "--label", "P1", "--json", "number,title"});
  EXPECT_EQ(created, Json::array({{{"number", 1001}, {"title", title}}}));
  EXPECT_EQ(gh_json({"issue", "list", "--label", "none", "--json", "number"}), Json::array());
  EXPECT_EQ(test::slurp(gh_dir + "/issue-counter"), "1002\n");
}

// Through gh.h, as devgraph reads the script: the shapes agree.
TEST_F(FakeGhScript, DevgraphReadsWhatTheScriptAnswers) {
  open_prs();
  ASSERT_EQ(::setenv("FAKE_GH_DIR", gh_dir.c_str(), 1), 0);
  RealCommandRunner runner;
  auto g = gh::make_gh(runner, repo, fake);
  write_gh("pr-2.look-1", "state=MERGED\nmergeCommit=" + std::string(40, 'm') +
                              "\nmergedAt=2026-11-04T12:00:00Z\n");
  write_gh("pr-2.reviews.json",
           R"([{"author": {"login": "ann"}, "state": "APPROVED", "body": "ok",)"
           R"( "submittedAt": "2026-11-04T10:00:00Z"}])");
  write_gh("pr-2.diff", "+x\n");
  write_gh("job-7.log", "boom\n");

  auto status = g->pr_status(2);
  ASSERT_TRUE(status.ok()) << status.error().message;
  EXPECT_EQ(status->state, "MERGED");
  auto merged = g->list_merged_prs();
  ASSERT_TRUE(merged.ok()) << merged.error().message;
  ASSERT_EQ(merged->size(), 1u);
  EXPECT_EQ((*merged)[0].number, 2);
  EXPECT_EQ((*merged)[0].merge_commit, std::string(40, 'm'));
  auto open = g->list_open_prs();
  ASSERT_TRUE(open.ok()) << open.error().message;
  ASSERT_EQ(open->size(), 1u);
  EXPECT_EQ((*open)[0].number, 1);
  auto reviews = g->pr_reviews(2);
  ASSERT_TRUE(reviews.ok()) << reviews.error().message;
  ASSERT_EQ(reviews->size(), 1u);
  EXPECT_EQ((*reviews)[0].author, "ann");
  EXPECT_EQ(*g->pr_diff(2), "+x\n");
  auto log = g->failed_job_log("https://github.com/o/r/actions/runs/1/job/7#step:3:1");
  ASSERT_TRUE(log.ok()) << log.error().message;
  EXPECT_EQ(*log, "boom\n");

  auto refused = g->create_issue({"audit: t", s / "body.md", {"audit"}});
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().kind, gh::kFailed);
  EXPECT_EQ(refused.error().message,
            "gh issue create failed: could not add label: 'audit' not found");
  ASSERT_TRUE(g->ensure_label("audit", "d73a4a", "Findings").ok());
  ASSERT_TRUE(g->ensure_label("audit", "d73a4a", "Findings").ok()) << "--force: no refusal";
  auto n = g->create_issue({"audit: t", s / "body.md", {"audit"}});
  ASSERT_TRUE(n.ok()) << n.error().message;
  EXPECT_EQ(*n, 1001);
  auto labeled = g->list_labeled_issues("audit");
  ASSERT_TRUE(labeled.ok()) << labeled.error().message;
  ASSERT_EQ(labeled->size(), 1u);
  EXPECT_EQ((*labeled)[0].number, 1001);
  EXPECT_EQ((*labeled)[0].body, "Closes #12\n");
  EXPECT_EQ((*labeled)[0].state, "open");
  auto open_issues = g->list_open_issues("audit");
  ASSERT_TRUE(open_issues.ok()) << open_issues.error().message;
  EXPECT_EQ(open_issues->size(), 1u);
}

}  // namespace
}  // namespace devgraph
