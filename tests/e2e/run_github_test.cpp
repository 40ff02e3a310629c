// `devgraph run` with GitHub delivery, end to end: the real binary in a
// clone whose origin is https://github.com/acme/widgets.git, rewritten by
// the clone's own `url.<bare>.insteadOf` to a bare repository in the
// scratch directory (so devgraph's git calls and every driver's push reach
// it, while the placement guard reads a GitHub origin), the fake GitHub CLI
// (tests/fixtures/bundle/fake-gh) first on PATH holding the issues and the
// pull requests, and the simulated agent playing one scenario for every
// bundle. Every test asserts on the exit code, the RESULT_JSON line,
// state.json, events.jsonl, the fake's pull requests and git.
#include <unistd.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <set>
#include <sstream>

#include "support/run_scenario.h"
#include "support/test_util.h"
#include "util/fs.h"
#include "util/json.h"

namespace devgraph {
namespace {

using test::done;
using test::file;
using test::kRunTests;
using test::lines_of;
using test::result_of;

constexpr const char* kOrigin = "https://github.com/acme/widgets.git";

// An issue as `gh issue list --json number,title,body,labels,state,...`
// prints it.
Json gh_issue(long long number, const std::string& title, const std::vector<std::string>& labels,
              const std::string& body = "") {
  Json names = Json::array();
  for (const auto& l : labels) names.push_back({{"name", l}});
  return Json{{"number", number},
              {"title", title},
              {"body", body.empty() ? "Do " + title + "." : body},
              {"labels", names},
              {"state", "OPEN"},
              {"createdAt", "2026-11-0" + std::to_string(number % 9 + 1) + "T10:00:00Z"},
              {"updatedAt", "2026-11-0" + std::to_string(number % 9 + 1) + "T10:00:00Z"}};
}

// A look file's `checks` line: one CI check in the given state, linked to
// its Actions job.
std::string checks_line(const std::string& status, const std::string& conclusion,
                        const std::string& link) {
  Json c = {{"__typename", "CheckRun"}, {"name", "test"},           {"workflowName", "CI"},
            {"status", status},         {"conclusion", conclusion}, {"detailsUrl", link}};
  return "checks=" + dump_py(Json::array({c})) + "\n";
}

// A review as `gh pr view --json reviews` prints it.
Json gh_review(const std::string& state, const std::string& body) {
  return Json{{"author", {{"login", "ann"}}}, {"state", state}, {"body", body}};
}

size_t count_prefixed(const std::string& text, const std::string& prefix) {
  size_t n = 0;
  for (const auto& l : lines_of(text)) n += l.rfind(prefix, 0) == 0;
  return n;
}

class RunGithub : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(make_directories(gh_dir));
    ASSERT_TRUE(make_directories(bin));
    test::write_widgets_files(repo);
    git({"init", "-q", "--bare", "-b", "main", remote}, scratch.path());
    git({"init", "-q", "-b", "main"});
    git({"add", "-A"});
    git({"commit", "-q", "-m", "base"});
    git({"remote", "add", "origin", kOrigin});
    git({"config", "url." + remote + ".insteadOf", kOrigin});
    git({"push", "-q", "-u", "origin", "main"});
    git({"remote", "set-head", "origin", "main"});
    ASSERT_EQ(
        ::symlink((test::test_dir() + "/fixtures/bundle/fake-gh").c_str(), (bin + "/gh").c_str()),
        0);
    test::write_text(
        scenario,
        dump_py(test::one_task_scenario(test::OneTaskScenario{0, std::nullopt, Json(), {}}), 2));
  }

  void git(const std::vector<std::string>& args, const std::string& dir = "") {
    std::vector<std::string> argv = {"git"};
    argv.insert(argv.end(), args.begin(), args.end());
    auto r = test::run_process(argv, env(), dir.empty() ? repo : dir);
    ASSERT_EQ(r.exit_code, 0) << r.err;
  }

  std::string git_out(const std::vector<std::string>& args, const std::string& dir = "") {
    std::vector<std::string> argv = {"git"};
    argv.insert(argv.end(), args.begin(), args.end());
    auto r = test::run_process(argv, env(), dir.empty() ? repo : dir);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    while (!r.out.empty() && r.out.back() == '\n') r.out.pop_back();
    return r.out;
  }

  std::map<std::string, std::string> env() const {
    const char* path = std::getenv("PATH");
    auto e = extra_env;
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

  void write_issues(const std::string& name, const Json& issues) {
    // A rename, as the fake's header asks of a file a run may be reading.
    test::write_text(gh_dir + "/" + name + ".tmp", dump_py(issues, 2) + "\n");
    ASSERT_EQ(::rename((gh_dir + "/" + name + ".tmp").c_str(), (gh_dir + "/" + name).c_str()), 0);
  }

  test::ProcessResult run(std::vector<std::string> extra = {}) {
    std::vector<std::string> args = {
        "run", "--agent", "sim", "--sim-scenario", scenario, "--api-backoff-seconds", "0"};
    args.insert(args.end(), extra.begin(), extra.end());
    return test::run_devgraph(args, env(), repo);
  }

  // The fake's pull requests: head branch -> body, and the number of each.
  struct Pr {
    int number = 0;
    std::string base, body;
  };
  std::map<std::string, Pr> pull_requests() const {
    std::map<std::string, Pr> out;
    for (int n = 1; path_exists(gh_dir + "/pr-" + std::to_string(n) + ".fields"); ++n) {
      std::string head, base;
      for (const auto& l : lines_of(test::slurp(gh_dir + "/pr-" + std::to_string(n) + ".fields"))) {
        if (l.rfind("headRefName=", 0) == 0) head = l.substr(12);
        if (l.rfind("baseRefName=", 0) == 0) base = l.substr(12);
      }
      out[head] = Pr{n, base, test::slurp(gh_dir + "/pr-" + std::to_string(n) + ".body")};
    }
    return out;
  }

  std::string gh_calls() const {
    auto t = read_file(gh_dir + "/calls.log");
    return t ? *t : std::string();
  }

  // The issues each pull request body closes, "Closes #N" lines only.
  static std::vector<long long> closes(const std::string& body) {
    std::vector<long long> out;
    for (const auto& l : lines_of(body))
      if (l.rfind("Closes #", 0) == 0) out.push_back(std::stoll(l.substr(8)));
    std::sort(out.begin(), out.end());
    return out;
  }

  // Every bundle delivered once: one pull request into main per bundle,
  // closing exactly its issues, its branch on the remote at the bundle's
  // head; no other pull request was opened.
  void expect_one_pr_per_bundle(const Json& res,
                                const std::map<std::string, std::vector<long long>>& want) {
    ASSERT_EQ(res["bundles"].size(), want.size()) << dump_py(res);
    auto prs = pull_requests();
    EXPECT_EQ(prs.size(), want.size());
    EXPECT_EQ(count_prefixed(gh_calls(), "pr\tcreate\t"), want.size()) << gh_calls();
    for (const auto& b : res["bundles"]) {
      std::string id = json_str(b, "id");
      SCOPED_TRACE(id);
      ASSERT_TRUE(want.count(id)) << dump_py(b);
      EXPECT_EQ(b["status"], "delivered") << dump_py(b);
      EXPECT_EQ(b["issues"].get<std::vector<long long>>(), want.at(id));
      std::string branch = json_str(b, "branch");
      ASSERT_TRUE(prs.count(branch)) << branch;
      const Pr& pr = prs[branch];
      EXPECT_EQ(pr.base, "main");
      EXPECT_EQ(closes(pr.body), want.at(id)) << pr.body;
      EXPECT_EQ(count_prefixed(pr.body, "Closes #"), want.at(id).size()) << pr.body;
      ASSERT_TRUE(b["pr"].is_object()) << dump_py(b);
      EXPECT_EQ(b["pr"]["number"], pr.number);
      EXPECT_EQ(git_out({"--git-dir", remote, "rev-parse", "refs/heads/" + branch}, scratch.path()),
                json_str(b, "head"));
    }
  }

  Json state_of(const Json& res) const {
    return *parse_json(test::slurp(json_str(res, "run_dir") + "/state.json"), "state");
  }

  std::vector<Json> events(const Json& res) const {
    return test::read_jsonl(json_str(res, "run_dir") + "/events.jsonl");
  }

  void expect_replays_cleanly(const Json& res) {
    auto v = test::run_devgraph({"validate", "run", json_str(res, "run_dir")}, env(), repo);
    EXPECT_EQ(v.exit_code, 0) << v.out << v.err;
  }

  std::vector<Json> events_of(const Json& res, const std::string& type) const {
    std::vector<Json> out;
    for (const auto& e : events(res))
      if (e["type"] == type) out.push_back(e);
    return out;
  }

  // A copy of the skill whose GRAPH.yaml answers `trigger` (ci_failure or
  // changes_requested) with `action`, for at most `max_cycles` cycles.
  // A copy of the shipped skill whose GRAPH.yaml has `from` replaced by `to`.
  std::string skill_edited(const std::string& from, const std::string& to) {
    std::string skill = scratch / "skill";
    std::filesystem::copy(test::source_dir() + "/skill", skill,
                          std::filesystem::copy_options::recursive);
    std::string graph = test::slurp(skill + "/GRAPH.yaml");
    EXPECT_NE(graph.find(from), std::string::npos) << graph;
    if (graph.find(from) != std::string::npos) graph.replace(graph.find(from), from.size(), to);
    test::write_text(skill + "/GRAPH.yaml", graph);
    return skill;
  }

  std::string skill_reacting(const std::string& trigger, const std::string& action,
                             int max_cycles) {
    return skill_edited("  " + trigger + ":\n    action: report\n    max_cycles: 2\n",
                        "  " + trigger + ":\n    action: " + action +
                            "\n    max_cycles: " + std::to_string(max_cycles) + "\n");
  }

  // The prompts of bundle `b` that hold `text`.
  std::vector<std::string> prompts_holding(const Json& res, const std::string& b,
                                           const std::string& text) const {
    std::vector<std::string> out;
    std::string dir = json_str(res, "run_dir") + "/bundles/" + b + "/prompts";
    for (const auto& name : lines_of(test::entries(dir))) {
      std::string body = test::slurp(dir + "/" + name);
      if (body.find(text) != std::string::npos) out.push_back(body);
    }
    return out;
  }

  // The head the first look at pull request `number` saw: what its
  // bundle delivered first.
  std::string first_inspected_head(const Json& res, long long number) const {
    for (const auto& e : events_of(res, "PR_CHECKS_INSPECTED"))
      if (e["detail"]["pr"] == number) return json_str(e["detail"], "head");
    return "";
  }

  // The one-task scenario, no latency, with a developer rule played first
  // for the repair dispatch holding `asked`: it writes `path` (`content`)
  // and answers DONE naming it. `docs`, when given, is the
  // documentation-reviewer's rule. Then alpha (#1) is the one issue.
  void repairing_developer(const std::string& asked, const std::string& path,
                           const std::string& content, const std::string& summary,
                           const Json& docs = Json()) {
    Json sc = test::one_task_scenario(test::OneTaskScenario{0, std::nullopt, Json(), {}});
    if (!docs.is_null()) sc["personas"]["documentation-reviewer"] = docs;
    Json& dev = sc["personas"]["developer"];
    dev.insert(dev.begin(), Json{{"dispatch_contains", asked},
                                 {"files", Json::array({file(path, content)})},
                                 {"result", done(summary, Json::array({path}))}});
    test::write_text(scenario, dump_py(sc, 2));
    write_issues("issues.json", Json::array({gh_issue(1, "alpha", {"devgraph"})}));
  }

  // The repairing developer of the helper's name, with a second rule for
  // the reviewer's second review ("the helper is still misnamed").
  void renaming_developer_twice() {
    repairing_developer("please rename the helper", "src/renamed.txt", "renamed\n", "renamed");
    Json sc = *parse_json(test::slurp(scenario), "scenario");
    Json& dev = sc["personas"]["developer"];
    dev.insert(dev.begin(),
               Json{{"dispatch_contains", "the helper is still misnamed"},
                    {"files", Json::array({file("src/renamed.txt", "renamed2\n")})},
                    {"result", done("renamed again", Json::array({"src/renamed.txt"}))}});
    test::write_text(scenario, dump_py(sc, 2));
  }

  // b1 parked after its first repair cycle changed nothing: one line
  // holding `reason_text`, the evidence file holding `evidence_text`, one
  // cycle of `reaction` spent, nothing new pushed, no second pull request.
  void expect_parked_for_no_progress(const test::ProcessResult& r, const std::string& reaction,
                                     const std::string& reason_text,
                                     const std::string& evidence_text) {
    ASSERT_EQ(r.exit_code, 2) << r.out << r.err;
    Json res = result_of(r);
    EXPECT_EQ(res["status"], "HUMAN_REQUIRED");
    ASSERT_EQ(res["human_required"].size(), 1u) << dump_py(res);
    EXPECT_EQ(res["human_required"][0]["bundle"], "b1");
    std::string reason = json_str(res["human_required"][0], "reason");
    EXPECT_NE(reason.find(reason_text), std::string::npos) << reason;
    std::string evidence = json_str(res, "run_dir") + "/bundles/b1/reaction-evidence.md";
    ASSERT_TRUE(path_exists(evidence));
    EXPECT_NE(test::slurp(evidence).find(evidence_text), std::string::npos)
        << test::slurp(evidence);
    Json st = state_of(res);
    EXPECT_EQ(st["prs"][0]["reactions"][reaction]["cycles"], 1) << dump_py(st["prs"]);
    std::vector<std::string> reactions;
    for (const auto& e : events_of(res, "ORCHESTRATOR_CORRECTION"))
      reactions.push_back(json_str(e["detail"], "reaction"));
    EXPECT_EQ(reactions, (std::vector<std::string>{"repair", "park_no_progress"}));
    EXPECT_EQ(
        git_out({"--git-dir", remote, "rev-parse", "refs/heads/develop/b1-alpha"}, scratch.path()),
        first_inspected_head(res, 1));
    EXPECT_EQ(count_prefixed(gh_calls(), "pr\tcreate\t"), 1u) << gh_calls();
    expect_replays_cleanly(res);
  }

  test::Scratch scratch;
  std::string repo = scratch / "widgets";
  std::string remote = scratch / "remote.git";
  std::string ai_root = scratch / "ai";
  std::string gh_dir = scratch / "gh";
  std::string bin = scratch / "bin";
  std::string scenario = scratch / "scenario.json";
  std::map<std::string, std::string> extra_env;
};

// The issues of a small GitHub repository: work (#1; #4 and #5, the two
// children of the epic #3), and what is not: #2 carries no label, #3 is the
// epic, #6 has an open pull request of someone else's that closes it.
Json the_issues(bool beta_labelled) {
  std::vector<std::string> beta;
  if (beta_labelled) beta.push_back("devgraph");
  return Json::array({gh_issue(1, "alpha", {"devgraph"}), gh_issue(2, "beta", beta),
                      gh_issue(3, "the epic", {"epic", "devgraph"}),
                      gh_issue(4, "child one", {"devgraph"}, "Part of #3\n\nThe first part."),
                      gh_issue(5, "child two", {"devgraph"}, "Part of #3\n\nThe second part."),
                      gh_issue(6, "already taken", {"devgraph"})});
}

// #2 is labelled after the run's first look at the issues and before its
// second. The fake serves issues-after-1.json from its second `issue list`
// call on: the first is the run's look before it starts anything, the
// second the intake after the first driver's exit. So #2 is found by intake
// while the run goes on, whatever the timing, and delivered in the same
// run.
TEST_F(RunGithub, EligibleIssuesGetOnePullRequestEachAndOneLabelledMidRunIsDeliveredToo) {
  write_issues("issues.json", the_issues(false));
  write_issues("issues-after-1.json", the_issues(true));
  test::write_text(gh_dir + "/prs-extra.json",
                   dump_py(Json::array({{{"number", 90},
                                         {"url", "https://github.invalid/acme/widgets/pull/90"},
                                         {"headRefName", "someone/six"},
                                         {"baseRefName", "main"},
                                         {"body", "Closes #6 at last."}}})) +
                       "\n");
  auto r = run();
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  Json res = result_of(r);
  EXPECT_EQ(res["status"], "COMPLETE");
  expect_one_pr_per_bundle(res, {{"b1", {1}}, {"b2", {4, 5}}, {"b3", {2}}});
  // Nothing closes the epic or #6, and no PR was asked to auto-merge
  // (the run's merge policy is never).
  for (const auto& [branch, pr] : pull_requests()) {
    EXPECT_EQ(pr.body.find("#3"), std::string::npos) << branch << ": " << pr.body;
    EXPECT_EQ(pr.body.find("#6"), std::string::npos) << branch << ": " << pr.body;
  }
  EXPECT_EQ(count_prefixed(gh_calls(), "pr\tmerge"), 0u);

  // The first scan saw the labelled issues only (gh is asked for the label,
  // and its answer is filtered again), said why #3 and #6 are not work, and
  // intake found #2 once it was labelled.
  auto evs = events(res);
  auto scan =
      std::find_if(evs.begin(), evs.end(), [](const Json& e) { return e["type"] == "SCAN_DONE"; });
  ASSERT_NE(scan, evs.end());
  EXPECT_EQ((*scan)["detail"]["open_issues"], 5);
  EXPECT_EQ((*scan)["detail"]["work"], Json::array({1, 4, 5}));
  std::map<long long, std::string> why;
  for (const auto& x : (*scan)["detail"]["excluded"]) why[x["issue"]] = json_str(x, "why");
  EXPECT_EQ(why.size(), 2u) << dump_py((*scan)["detail"]);
  EXPECT_NE(why[3].find("epic"), std::string::npos) << why[3];
  EXPECT_NE(why[6].find("open pull request"), std::string::npos) << why[6];
  EXPECT_NE(
      gh_calls().find("issue\tlist\t--state\topen\t--limit\t1000\t--json\t"
                      "number,title,body,labels,state,createdAt,updatedAt\t--label\tdevgraph"),
      std::string::npos)
      << gh_calls();
  size_t intake = 0, b3_formed = 0, first_done = 0;
  for (size_t i = 0; i < evs.size(); ++i) {
    if (evs[i]["type"] == "TECH_LEAD_DONE" && first_done == 0) first_done = i;
    if (evs[i]["type"] == "INTAKE_DONE" && intake == 0) intake = i;
    if (evs[i]["type"] == "BUNDLES_FORMED" && evs[i]["detail"]["bundles"] == Json::array({"b3"}))
      b3_formed = i;
  }
  EXPECT_GT(intake, first_done);
  EXPECT_GT(b3_formed, intake);
  EXPECT_EQ(evs.back()["type"], "RUN_COMPLETE");
  expect_replays_cleanly(res);
}

// FAKE_GH_FAIL_FIRST=2: the run's first look and the scan's first attempt
// fail as a network error does; the scan's back-off (a few milliseconds
// here) and its second attempt get the issues, and nothing is lost.
TEST_F(RunGithub, AGhThatFailsTwiceThenAnswersLosesNothing) {
  write_issues("issues.json", Json::array({gh_issue(1, "alpha", {"devgraph"}),
                                           gh_issue(2, "beta", {"devgraph"})}));
  extra_env = {{"FAKE_GH_FAIL_FIRST", "2"}, {"DEVGRAPH_SOURCE_BACKOFF_MS", "5"}};
  auto r = run();
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  Json res = result_of(r);
  EXPECT_EQ(res["status"], "COMPLETE");
  expect_one_pr_per_bundle(res, {{"b1", {1}}, {"b2", {2}}});
  EXPECT_EQ(lines_of(test::slurp(gh_dir + "/issue-list.failures")).size(), 2u);
  EXPECT_NE(r.err.find("GitHub did not answer yet"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("listing issues failed ("), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("error connecting to api.github.com"), std::string::npos) << r.err;
  expect_replays_cleanly(res);
}

// A gh that never answers: the run ends with exit 1 after the source's
// attempts, and what it recorded is kept, so the next run, once gh answers,
// resumes that run and delivers.
TEST_F(RunGithub, AGhThatNeverAnswersIsAnErrorAndTheNextRunResumes) {
  write_issues("issues.json", Json::array({gh_issue(1, "alpha", {"devgraph"})}));
  extra_env = {{"FAKE_GH_FAIL_FIRST", "1000"}, {"DEVGRAPH_SOURCE_BACKOFF_MS", "1"}};
  auto failed = run();
  ASSERT_EQ(failed.exit_code, 1) << failed.out << failed.err;
  Json first = result_of(failed);
  EXPECT_EQ(first["status"], "ERROR");
  EXPECT_NE(json_str(first, "summary").find("listing issues"), std::string::npos) << dump_py(first);
  std::string run_dir = json_str(first, "run_dir");
  ASSERT_FALSE(run_dir.empty()) << dump_py(first);
  EXPECT_TRUE(first["bundles"].empty());
  EXPECT_EQ(count_prefixed(gh_calls(), "pr\tcreate"), 0u);

  extra_env.clear();
  auto r = run();
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  Json res = result_of(r);
  EXPECT_EQ(res["status"], "COMPLETE");
  EXPECT_EQ(json_str(res, "run_dir"), run_dir);
  EXPECT_NE(r.err.find("resuming run " + run_dir), std::string::npos) << r.err;
  expect_one_pr_per_bundle(res, {{"b1", {1}}});
  expect_replays_cleanly(res);
}

// gh printing something other than the list asked for is refused before
// anything is written: one line, exit 1 (the issues could not be read).
TEST_F(RunGithub, GhOutputThatIsNotTheListAskedForIsOneLineAndWritesNothing) {
  test::write_text(gh_dir + "/issues.json", "{\"not\": \"an array\"}\n");
  std::string remote_refs = git_out({"--git-dir", remote, "for-each-ref"}, scratch.path());
  auto r = run();
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  ASSERT_FALSE(r.err.empty());
  EXPECT_EQ(r.err.find('\n'), r.err.size() - 1) << r.err;
  EXPECT_NE(r.err.find("reading github issues"), std::string::npos) << r.err;
  EXPECT_EQ(result_of(r)["status"], "ERROR");
  EXPECT_FALSE(path_exists(ai_root + "/develop")) << test::entries(ai_root);
  EXPECT_FALSE(path_exists(ai_root + "/worktrees"));
  EXPECT_EQ(git_out({"branch", "--list", "develop/*"}), "");
  EXPECT_EQ(git_out({"--git-dir", remote, "for-each-ref"}, scratch.path()), remote_refs);
  EXPECT_EQ(count_prefixed(gh_calls(), "pr\t"), 0u);
}

// What gh says about a pull request is data too. An answer that is not
// JSON, and one about a head branch that is not the bundle's, are one
// line each; that pull request is left as it was (no report, no merge, its
// worktree kept) and the run goes on to the end.
TEST_F(RunGithub, PullRequestAnswersThatAreNotJsonOrNotAboutTheBundlesBranchAreOneLineEach) {
  write_issues("issues.json", Json::array({gh_issue(1, "alpha", {"devgraph"}),
                                           gh_issue(2, "beta", {"devgraph"})}));
  // Whichever bundle's pull request is #1 gets an answer that is not
  // JSON, #2 one naming another head branch.
  test::write_text(gh_dir + "/pr-1.look-1", "checks=[{\"oops\n");
  test::write_text(gh_dir + "/pr-2.look-1", "headRefName=feature/theirs\n");
  auto r = run();
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  Json res = result_of(r);
  EXPECT_EQ(res["status"], "COMPLETE");
  std::string second;
  for (const auto& [head, pr] : pull_requests())
    if (pr.number == 2) second = head;
  ASSERT_FALSE(second.empty());
  size_t not_inspected = 0, left_alone = 0;
  for (const auto& l : lines_of(r.err)) {
    not_inspected += l.find("PR #1 not inspected: ") != std::string::npos &&
                     l.find("not a JSON object") != std::string::npos;
    left_alone += l.find("PR #2 left alone: its head branch feature/theirs is not " + second) !=
                  std::string::npos;
  }
  EXPECT_EQ(not_inspected, 1u) << r.err;
  EXPECT_EQ(left_alone, 1u) << r.err;
  for (const auto& e : events(res)) {
    EXPECT_NE(e["type"], "PR_CHECKS_INSPECTED") << dump_py(e);
    EXPECT_NE(e["type"], "CI_FAILURE_REPORTED") << dump_py(e);
  }
  // After the two pull requests were opened, only looks: nothing merged,
  // closed, edited or created.
  auto calls = lines_of(gh_calls());
  size_t last_create = 0;
  for (size_t i = 0; i < calls.size(); ++i)
    if (calls[i].rfind("pr\tcreate\t", 0) == 0) last_create = i;
  const std::set<std::string> looks = {"view", "list", "diff"};
  for (size_t i = last_create + 1; i < calls.size(); ++i) {
    auto tab = calls[i].find('\t');
    std::string verb = calls[i].substr(tab + 1, calls[i].find('\t', tab + 1) - tab - 1);
    EXPECT_TRUE(looks.count(verb)) << calls[i];
  }
  const Json st = state_of(res);
  for (const auto& b : st["bundles"]) {
    EXPECT_EQ(b["status"], "delivered") << dump_py(b);
    EXPECT_TRUE(is_directory(json_str(b, "worktree"))) << dump_py(b);
  }
  expect_replays_cleanly(res);
}

// One pull request watched over three runs while GitHub changes it: its
// checks pending, then failing (reported with names and links, not
// repaired: GRAPH.yaml's reactions report by default), then a person
// merges it. Auto-merge, refused when create_pr asked, is recorded and
// never asked again; the merged work's worktree is cleaned and its merge
// audited once.
TEST_F(RunGithub, APullRequestsChecksPendingThenFailingThenMergedAreInspectedReportedAndCleaned) {
  write_issues("issues.json", Json::array({gh_issue(1, "alpha", {"devgraph"})}));
  extra_env["FAKE_GH_AUTO_MERGE"] = "fail";
  const std::string link = "https://github.com/acme/widgets/actions/runs/7/job/8";
  auto check = [&](const std::string& status, const std::string& conclusion) {
    return checks_line(status, conclusion, link);
  };
  test::write_text(gh_dir + "/pr-1.look-1", check("IN_PROGRESS", ""));
  test::write_text(gh_dir + "/pr-1.look-2", check("COMPLETED", "FAILURE"));
  test::write_text(gh_dir + "/job-8.log", "FAIL: tests/b1.sh\n");

  auto r = run({"--merge-policy", "auto_when_checks_pass"});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  Json res = result_of(r);
  ASSERT_EQ(res["prs"].size(), 1u) << dump_py(res);
  EXPECT_EQ(res["prs"][0]["checks"], "pending");
  EXPECT_EQ(res["prs"][0]["auto_merge"], "unavailable");
  EXPECT_EQ(count_prefixed(gh_calls(), "pr\tmerge\t"), 1u) << gh_calls();
  std::string worktree = json_str(state_of(res)["bundles"][0], "worktree");
  ASSERT_TRUE(is_directory(worktree));

  // The second run: checks failing, reported once with the check's link.
  r = run();
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  res = result_of(r);
  ASSERT_EQ(res["prs"].size(), 1u) << dump_py(res);
  EXPECT_EQ(res["prs"][0]["checks"], "failing");
  std::vector<Json> reported;
  for (const auto& e : events(res))
    if (e["type"] == "CI_FAILURE_REPORTED") reported.push_back(e);
  ASSERT_EQ(reported.size(), 1u);
  EXPECT_EQ(reported[0]["detail"]["checks"][0]["link"], link);
  EXPECT_EQ(count_prefixed(gh_calls(), "pr\tcreate\t"), 1u) << gh_calls();
  EXPECT_TRUE(is_directory(worktree));

  // A person merges it; the third run cleans its worktree and audits it.
  git({"fetch", "-q", "origin"});
  git({"merge", "-q", "--no-ff", "--no-edit", "origin/develop/b1-alpha"});
  git({"push", "-q", "origin", "main"});
  std::string merge = git_out({"rev-parse", "HEAD"});
  test::write_text(gh_dir + "/pr-1.look-3", "state=MERGED\nmergeCommit=" + merge +
                                                "\nmergedAt=2026-12-01T10:00:00Z\n" +
                                                check("COMPLETED", "SUCCESS"));
  test::write_text(gh_dir + "/pr-1.diff", "diff --git a/src/b1.txt b/src/b1.txt\n");
  write_issues("issues.json", Json::array());  // the merge closed #1
  r = run();
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  res = result_of(r);
  ASSERT_EQ(res["cleanup"]["removed"].size(), 1u) << dump_py(res["cleanup"]);
  EXPECT_FALSE(path_exists(worktree));
  ASSERT_EQ(res["audit"]["window"].size(), 1u) << dump_py(res["audit"]);
  EXPECT_EQ(res["audit"]["window"][0]["pr"], 1);
  EXPECT_EQ(res["audit"]["window"][0]["status"], "audited") << dump_py(res["audit"]);
  EXPECT_EQ(count_prefixed(gh_calls(), "pr\tmerge\t"), 1u) << gh_calls();
  EXPECT_EQ(count_prefixed(gh_calls(), "pr\tdiff\t1"), 1u) << gh_calls();
  EXPECT_TRUE(res["bundles"].empty()) << dump_py(res["bundles"]);
  expect_replays_cleanly(res);
}

// A merged pull request whose auditor finds something Critical and
// something Medium: one remediation bundle (its own pull request) and one
// GitHub issue. Then the audit marker is put back where it stood before
// that audit, as restoring a backup would, and the same window is audited
// again: its Critical finding is remediated already and its Medium one is
// filed already, so no second remediation bundle, pull request or issue.
TEST_F(RunGithub, TheSameMergeWindowAuditedAgainFormsNoSecondRemediationBundle) {
  write_issues("issues.json", Json::array({gh_issue(1, "alpha", {"devgraph"})}));
  auto r = run();
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  const std::string home = ai_root + "/develop/acme/widgets";
  const std::string marker = test::slurp(home + "/last-audit");
  ASSERT_FALSE(marker.empty());

  git({"fetch", "-q", "origin"});
  git({"merge", "-q", "--no-ff", "--no-edit", "origin/develop/b1-alpha"});
  git({"push", "-q", "origin", "main"});
  std::string merge = git_out({"rev-parse", "HEAD"});
  test::write_text(gh_dir + "/pr-1.look-1",
                   "state=MERGED\nmergeCommit=" + merge + "\nmergedAt=2026-12-01T10:00:00Z\n");
  test::write_text(gh_dir + "/pr-1.diff", "diff --git a/src/b1.txt b/src/b1.txt\n");
  write_issues("issues.json", Json::array());  // the merge closed #1
  auto finding = [](const std::string& sev, const std::string& what) {
    return Json{{"severity", sev},     {"file", "src/b1.txt"},  {"line", 1},
                {"description", what}, {"rule", "rule-" + sev}, {"evidence", "seen"}};
  };
  Json sc = *parse_json(test::slurp(scenario), "scenario");
  sc["personas"]["merge-auditor"] = Json::array(
      {{{"result",
         {{"status", "DONE"},
          {"summary", "two"},
          {"evidence", Json::array()},
          {"findings", Json::array({finding("Critical", "secret logged"),
                                    finding("Medium", "error dropped")})}}}}});
  test::write_text(scenario, dump_py(sc, 2));

  auto remediations = [&](const Json& res) {
    std::vector<Json> out;
    const Json st = state_of(res);
    for (const auto& b : st["bundles"])
      if (b.contains("remediation")) out.push_back(b);
    return out;
  };
  r = run();
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  Json res = result_of(r);
  ASSERT_EQ(res["audit"]["window"].size(), 1u) << dump_py(res["audit"]);
  EXPECT_EQ(res["audit"]["window"][0]["status"], "audited") << dump_py(res["audit"]);
  ASSERT_EQ(remediations(res).size(), 1u) << dump_py(state_of(res)["bundles"]);
  EXPECT_EQ(count_prefixed(gh_calls(), "issue\tcreate\t"), 1u) << gh_calls();
  const size_t prs = count_prefixed(gh_calls(), "pr\tcreate\t");
  EXPECT_EQ(prs, 2u) << gh_calls();
  ASSERT_NE(test::slurp(home + "/last-audit"), marker);

  // The marker put back: the same merge is in the window again.
  test::write_text(home + "/last-audit", marker);
  std::filesystem::remove(home + "/last-audit.audited");
  r = run();
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  res = result_of(r);
  ASSERT_GE(res["audit"]["window"].size(), 1u) << dump_py(res["audit"]);
  bool pr1 = false;
  for (const auto& w : res["audit"]["window"])
    if (w["pr"] == 1) pr1 = w["status"] == "audited";
  EXPECT_TRUE(pr1) << dump_py(res["audit"]);
  EXPECT_TRUE(remediations(res).empty()) << dump_py(state_of(res)["bundles"]);
  EXPECT_TRUE(res["audit"]["issues_filed"].empty()) << dump_py(res["audit"]);
  EXPECT_EQ(count_prefixed(gh_calls(), "issue\tcreate\t"), 1u) << gh_calls();
  EXPECT_EQ(count_prefixed(gh_calls(), "pr\tcreate\t"), prs) << gh_calls();
  expect_replays_cleanly(res);
}

// GRAPH.yaml's changes_requested reaction set to repair: a review asking
// for changes reopens the delivered bundle at repair_bundle with the
// review's words (fenced as data), its developer's fix is verified,
// reviewed and pushed to the same pull request, and no second one is
// opened; the approval that follows ends the cycles.
TEST_F(RunGithub, AReviewAskingForChangesIsRepairedWithOneMoreCommitOnTheSamePullRequest) {
  std::string skill = scratch / "skill";
  std::filesystem::copy(test::source_dir() + "/skill", skill,
                        std::filesystem::copy_options::recursive);
  std::string graph = test::slurp(skill + "/GRAPH.yaml");
  const std::string from = "  changes_requested:\n    action: report\n";
  ASSERT_NE(graph.find(from), std::string::npos);
  graph.replace(graph.find(from), from.size(), "  changes_requested:\n    action: repair\n");
  test::write_text(skill + "/GRAPH.yaml", graph);
  repairing_developer("please rename the helper", "src/renamed.txt", "renamed\n", "renamed");
  test::write_text(gh_dir + "/pr-1.look-1", "reviewDecision=CHANGES_REQUESTED\n");
  test::write_text(gh_dir + "/pr-1.look-2", "reviewDecision=APPROVED\n");
  test::write_text(gh_dir + "/pr-1.reviews.json",
                   dump_py(Json::array({{{"author", {{"login", "ann"}}},
                                         {"state", "CHANGES_REQUESTED"},
                                         {"body", "please rename the helper"}}})) +
                       "\n");

  auto r = run({"--skill", skill});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  Json res = result_of(r);
  ASSERT_EQ(res["bundles"].size(), 1u) << dump_py(res);
  EXPECT_EQ(res["bundles"][0]["status"], "delivered");
  EXPECT_EQ(count_prefixed(gh_calls(), "pr\tcreate\t"), 1u) << gh_calls();
  EXPECT_EQ(pull_requests().size(), 1u);
  // The fix is on the remote branch, one commit past the first delivery.
  std::string head = json_str(res["bundles"][0], "head");
  EXPECT_EQ(
      git_out({"--git-dir", remote, "rev-parse", "refs/heads/develop/b1-alpha"}, scratch.path()),
      head);
  EXPECT_EQ(git_out({"--git-dir", remote, "show", head + ":src/renamed.txt"}, scratch.path()),
            "renamed");
  Json st = state_of(res);
  EXPECT_EQ(st["prs"][0]["reactions"]["changes_requested"]["cycles"], 1) << dump_py(st["prs"]);
  size_t reopened = 0;
  for (const auto& e : events(res))
    if (e["type"] == "ORCHESTRATOR_CORRECTION" && e["detail"]["reaction"] == "repair") {
      ++reopened;
      EXPECT_EQ(e["detail"]["lane_to"], "repair_bundle");
    }
  EXPECT_EQ(reopened, 1u);
  EXPECT_EQ(res["prs"][0]["review"], "APPROVED") << dump_py(res["prs"]);
  expect_replays_cleanly(res);
}

// GRAPH.yaml's ci_failure reaction set to repair. The repository's tests
// include tests/ci.sh, which needs src/compat.txt once the dependency cache
// (.cache/dep, ignored by git) holds version 2. The simulated documentation
// reviewer, the last persona before delivery, stands in for the
// environment moving on after the bundle's verification: it writes version
// 2 to the cache, so the delivered head fails the bundle's own test command
// as it fails on GitHub (look-1: a failing check whose job log says why).
// One repair cycle: the developer reads the job log fenced as data and adds
// src/compat.txt, one more commit goes to the same branch (the remote
// refuses anything but a fast-forward) and pull request, and look-2 sees
// the check pass.
TEST_F(RunGithub, ACiFailureTheBundlesOwnTestsReproduceIsRepairedWithOneMoreCommitOnTheSamePr) {
  test::write_text(repo + "/.gitignore", ".cache/\n");
  test::write_text(
      repo + "/tests/ci.sh",
      "if grep -qx 2 .cache/dep 2>/dev/null; then\n"
      "  [ -e src/compat.txt ] || { echo 'dependency v2 needs src/compat.txt'; exit 1; }\n"
      "fi\n");
  git({"add", "-A"});
  git({"commit", "-q", "-m", "ci check"});
  git({"push", "-q", "origin", "main"});
  git({"config", "receive.denyNonFastForwards", "true"}, remote);
  std::string skill = skill_reacting("ci_failure", "repair", 2);
  const std::string job_log = "FAIL tests/ci.sh: dependency v2 needs src/compat.txt";
  const Json docs =
      Json{{"files", Json::array({file(".cache/dep", "2\n")})}, {"result", done("docs fine")}};
  repairing_developer(job_log, "src/compat.txt", "compat\n", "compat", docs);
  const std::string link = "https://github.com/acme/widgets/actions/runs/7/job/8";
  test::write_text(gh_dir + "/pr-1.look-1", checks_line("COMPLETED", "FAILURE", link));
  test::write_text(gh_dir + "/pr-1.look-2", checks_line("COMPLETED", "SUCCESS", link));
  test::write_text(gh_dir + "/job-8.log", "test\tRun tests\t" + job_log + "\n");

  auto r = run({"--skill", skill});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  Json res = result_of(r);
  EXPECT_EQ(res["status"], "COMPLETE");
  ASSERT_EQ(res["bundles"].size(), 1u) << dump_py(res);
  EXPECT_EQ(res["bundles"][0]["status"], "delivered");
  EXPECT_EQ(count_prefixed(gh_calls(), "pr\tcreate\t"), 1u) << gh_calls();
  EXPECT_EQ(pull_requests().size(), 1u);
  EXPECT_NE(gh_calls().find("run\tview\t--job\t8\t--log-failed"), std::string::npos) << gh_calls();
  ASSERT_EQ(res["prs"].size(), 1u) << dump_py(res);
  EXPECT_EQ(res["prs"][0]["checks"], "passing") << dump_py(res["prs"]);

  // The fix is one commit on top of what was delivered first, on the
  // remote branch: no force push, no second branch.
  std::string first = first_inspected_head(res, 1);
  std::string head = json_str(res["bundles"][0], "head");
  ASSERT_FALSE(first.empty());
  ASSERT_NE(first, head);
  EXPECT_EQ(
      git_out({"--git-dir", remote, "rev-parse", "refs/heads/develop/b1-alpha"}, scratch.path()),
      head);
  EXPECT_EQ(git_out({"--git-dir", remote, "rev-parse", head + "^"}, scratch.path()), first);
  EXPECT_EQ(git_out({"--git-dir", remote, "show", head + ":src/compat.txt"}, scratch.path()),
            "compat");
  EXPECT_EQ(git_out({"--git-dir", remote, "for-each-ref", "--format=%(refname)", "refs/heads"},
                    scratch.path()),
            "refs/heads/develop/b1-alpha\nrefs/heads/main");

  // One cycle, recorded on the pull request, and one correction to
  // repair_bundle whose evidence holds the job log and the local failure.
  Json st = state_of(res);
  EXPECT_EQ(st["prs"][0]["reactions"]["ci_failure"]["cycles"], 1) << dump_py(st["prs"]);
  std::vector<Json> corrections = events_of(res, "ORCHESTRATOR_CORRECTION");
  ASSERT_EQ(corrections.size(), 1u);
  EXPECT_EQ(corrections[0]["detail"]["reaction"], "repair");
  EXPECT_EQ(corrections[0]["detail"]["trigger"], "ci_failure");
  EXPECT_EQ(corrections[0]["detail"]["lane_to"], "repair_bundle");
  std::string findings = test::slurp(json_str(corrections[0]["detail"], "evidence"));
  EXPECT_NE(findings.find(job_log), std::string::npos) << findings;
  EXPECT_NE(findings.find("$ sh run-tests.sh (exit 1)"), std::string::npos) << findings;
  EXPECT_NE(findings.find("FAIL tests/ci.sh"), std::string::npos) << findings;

  // The developer's dispatch quotes the log inside the data fence.
  auto prompts = prompts_holding(res, "b1", job_log);
  ASSERT_EQ(prompts.size(), 1u);
  const std::string& p = prompts[0];
  size_t fence = p.find("findings (data between DATA_START and DATA_END");
  ASSERT_NE(fence, std::string::npos) << p;
  size_t open = p.find("\nDATA_START\n", fence), at = p.find(job_log),
         close = p.find("\nDATA_END", at);
  EXPECT_LT(open, at) << p;
  EXPECT_LT(at, close) << p;
  expect_replays_cleanly(res);
}

// GRAPH.yaml's ci_failure reaction set to repair, and the check fails on
// GitHub (look-1) while the bundle's own test and build commands pass at
// the pull request's head: no cycle is spent, the failure is reported as
// possibly flaky, and the branch stays as it was delivered.
TEST_F(RunGithub, ACiFailureTheBundlesOwnCommandsPassIsReportedAsPossiblyFlakyNotRepaired) {
  std::string skill = skill_reacting("ci_failure", "repair", 2);
  write_issues("issues.json", Json::array({gh_issue(1, "alpha", {"devgraph"})}));
  const std::string link = "https://github.com/acme/widgets/actions/runs/7/job/8";
  test::write_text(gh_dir + "/pr-1.look-1", checks_line("COMPLETED", "FAILURE", link));
  test::write_text(gh_dir + "/job-8.log", "test\tRun tests\tconnection reset by peer\n");

  auto r = run({"--skill", skill});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  Json res = result_of(r);
  EXPECT_EQ(res["status"], "COMPLETE");
  expect_one_pr_per_bundle(res, {{"b1", {1}}});
  EXPECT_TRUE(events_of(res, "ORCHESTRATOR_CORRECTION").empty());
  ASSERT_EQ(res["prs"].size(), 1u) << dump_py(res);
  EXPECT_EQ(res["prs"][0]["checks"], "failing");
  EXPECT_EQ(res["prs"][0]["reaction"]["last"], "report_flaky") << dump_py(res["prs"]);
  Json st = state_of(res);
  const Json& pr = st["prs"][0];
  EXPECT_EQ(pr["reaction"], (Json{{"last", "report_flaky"}, {"trigger", "ci_failure"}}));
  EXPECT_EQ(pr["reactions"]["ci_failure"].value("cycles", 0), 0) << dump_py(pr);
  EXPECT_EQ(json_str(pr["reactions"]["ci_failure"], "head"), json_str(res["bundles"][0], "head"));
  EXPECT_EQ(first_inspected_head(res, 1), json_str(res["bundles"][0], "head"));
  size_t flaky = 0;
  for (const auto& e : events_of(res, "CI_FAILURE_REPORTED"))
    flaky += json_str(e.value("detail", Json::object()), "reaction") == "report_flaky";
  EXPECT_EQ(flaky, 1u);
  EXPECT_NE((r.out + r.err).find("possibly flaky or infrastructure"), std::string::npos)
      << r.out << r.err;
  expect_replays_cleanly(res);
}

// GRAPH.yaml's changes_requested reaction set to repair with one cycle.
// Every look answers CHANGES_REQUESTED; the review asking to rename the
// helper is repaired once, and the reviewer's second review (from look-2
// on) asks again: the cycles are spent, so the bundle waits for a person
// with the review in reaction-evidence.md, and no second pull request.
TEST_F(RunGithub, AReviewAskingAgainOnceTheRepairCyclesAreSpentParksTheBundleWithTheEvidence) {
  std::string skill = skill_reacting("changes_requested", "repair", 1);
  repairing_developer("please rename the helper", "src/renamed.txt", "renamed\n", "renamed");
  const Json asked = gh_review("CHANGES_REQUESTED", "please rename the helper");
  const Json again = gh_review("CHANGES_REQUESTED", "the helper is still misnamed");
  test::write_text(gh_dir + "/pr-1.look-1", "reviewDecision=CHANGES_REQUESTED\n");
  test::write_text(gh_dir + "/pr-1.look-2",
                   "reviews=" + dump_py(Json::array({asked, again})) + "\n");
  test::write_text(gh_dir + "/pr-1.reviews.json", dump_py(Json::array({asked})) + "\n");

  auto r = run({"--skill", skill});
  ASSERT_EQ(r.exit_code, 2) << r.out << r.err;
  Json res = result_of(r);
  EXPECT_EQ(res["status"], "HUMAN_REQUIRED");
  ASSERT_EQ(res["human_required"].size(), 1u) << dump_py(res);
  const Json& waiting = res["human_required"][0];
  EXPECT_EQ(waiting["bundle"], "b1");
  std::string reason = json_str(waiting, "reason");
  EXPECT_EQ(reason.find('\n'), std::string::npos) << reason;
  EXPECT_NE(reason.find("changes_requested on PR #1: the repair cycles are spent"),
            std::string::npos)
      << reason;
  std::string evidence = json_str(res, "run_dir") + "/bundles/b1/reaction-evidence.md";
  EXPECT_NE(reason.find(evidence), std::string::npos) << reason;
  ASSERT_TRUE(path_exists(evidence));
  EXPECT_NE(test::slurp(evidence).find("the helper is still misnamed"), std::string::npos)
      << test::slurp(evidence);
  EXPECT_EQ(count_prefixed(gh_calls(), "pr\tcreate\t"), 1u) << gh_calls();
  EXPECT_EQ(pull_requests().size(), 1u);

  // The one cycle was spent: its commit is on the pull request's branch.
  Json st = state_of(res);
  EXPECT_EQ(st["prs"][0]["reactions"]["changes_requested"]["cycles"], 1) << dump_py(st["prs"]);
  EXPECT_EQ(st["bundles"][0]["status"], "parked");
  std::string head =
      git_out({"--git-dir", remote, "rev-parse", "refs/heads/develop/b1-alpha"}, scratch.path());
  EXPECT_EQ(git_out({"--git-dir", remote, "rev-parse", head + "^"}, scratch.path()),
            first_inspected_head(res, 1));
  EXPECT_EQ(git_out({"--git-dir", remote, "show", head + ":src/renamed.txt"}, scratch.path()),
            "renamed");
  std::vector<std::string> reactions;
  for (const auto& e : events_of(res, "ORCHESTRATOR_CORRECTION"))
    reactions.push_back(json_str(e["detail"], "reaction"));
  EXPECT_EQ(reactions, (std::vector<std::string>{"repair", "park_exhausted"}));
  expect_replays_cleanly(res);
}

// GRAPH.yaml's changes_requested reaction set to repair with two cycles,
// and a reviewer who asks for changes again after every push: two repairs,
// each one commit, then the bundle waits for a person, and `devgraph
// inbox` lists it with its reason.
TEST_F(RunGithub, AReviewerAskingAgainAfterEveryPushParksTheBundleInTheInboxAfterMaxCycles) {
  std::string skill = skill_reacting("changes_requested", "repair", 2);
  renaming_developer_twice();
  const Json first = gh_review("CHANGES_REQUESTED", "please rename the helper");
  const Json second = gh_review("CHANGES_REQUESTED", "the helper is still misnamed");
  const Json third = gh_review("CHANGES_REQUESTED", "the helper is misnamed even now");
  test::write_text(gh_dir + "/pr-1.look-1", "reviewDecision=CHANGES_REQUESTED\n");
  test::write_text(gh_dir + "/pr-1.look-2",
                   "reviews=" + dump_py(Json::array({first, second})) + "\n");
  test::write_text(gh_dir + "/pr-1.look-3",
                   "reviews=" + dump_py(Json::array({first, second, third})) + "\n");
  test::write_text(gh_dir + "/pr-1.reviews.json", dump_py(Json::array({first})) + "\n");

  auto r = run({"--skill", skill});
  ASSERT_EQ(r.exit_code, 2) << r.out << r.err;
  Json res = result_of(r);
  EXPECT_EQ(res["status"], "HUMAN_REQUIRED");
  Json st = state_of(res);
  EXPECT_EQ(st["prs"][0]["reactions"]["changes_requested"]["cycles"], 2) << dump_py(st["prs"]);
  EXPECT_EQ(st["bundles"][0]["status"], "parked") << dump_py(st["bundles"]);
  std::vector<std::string> reactions;
  for (const auto& e : events_of(res, "ORCHESTRATOR_CORRECTION"))
    reactions.push_back(json_str(e["detail"], "reaction"));
  EXPECT_EQ(reactions, (std::vector<std::string>{"repair", "repair", "park_exhausted"}));

  auto inbox = test::run_devgraph({"inbox", "--repo", repo, "--json"}, env(), repo);
  ASSERT_EQ(inbox.exit_code, 0) << inbox.err;
  auto items = parse_json(inbox.out, "inbox");
  ASSERT_TRUE(items.ok()) << inbox.out;
  ASSERT_EQ(items->size(), 1u) << inbox.out;
  EXPECT_EQ((*items)[0]["key"], "b1") << inbox.out;
  EXPECT_NE(json_str((*items)[0], "reason").find("the repair cycles are spent"), std::string::npos)
      << inbox.out;
}

// GRAPH.yaml's changes_requested reaction set to repair. The review comes
// after the run that delivered the pull request has ended: the next run,
// with no work of its own, parks that bundle in the run that owns it, so
// `devgraph inbox` lists it. The answer reopens that run, and the next
// `devgraph run` continues it (no new run) and repairs the pull request
// with one more commit.
TEST_F(RunGithub, AReviewAfterTheDeliveringRunEndedWaitsInThatRunUntilAnsweredThenIsRepaired) {
  std::string skill = skill_reacting("changes_requested", "repair", 2);
  repairing_developer("please rename the helper", "src/renamed.txt", "renamed\n", "renamed");
  auto r = run({"--skill", skill});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  Json first = result_of(r);
  const std::string owner = json_str(first, "run_dir");
  const std::string delivered = json_str(first["bundles"][0], "head");

  // The review arrives from the next status look on.
  size_t looks = 0;
  for (const auto& l : lines_of(gh_calls()))
    looks += l.rfind("pr\tview\t1\t", 0) == 0 && l.find("statusCheckRollup") != std::string::npos;
  test::write_text(gh_dir + "/pr-1.look-" + std::to_string(looks + 1),
                   "reviewDecision=CHANGES_REQUESTED\n");
  test::write_text(
      gh_dir + "/pr-1.reviews.json",
      dump_py(Json::array({gh_review("CHANGES_REQUESTED", "please rename the helper")})) + "\n");

  r = run({"--skill", skill});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(json_str(result_of(r), "run_dir"), owner);
  EXPECT_NE((r.out + r.err).find("b1 of run " + basename_of(owner) + " waits for a person"),
            std::string::npos)
      << r.out << r.err;
  Json st = *parse_json(test::slurp(owner + "/state.json"), "state");
  EXPECT_EQ(st["status"], "human_required");
  EXPECT_EQ(st["bundles"][0]["status"], "parked");
  auto valid = test::run_devgraph({"validate", "run", owner}, env(), repo);
  EXPECT_EQ(valid.exit_code, 0) << valid.out << valid.err;
  auto inbox = test::run_devgraph({"inbox", "--repo", repo, "--json"}, env(), repo);
  ASSERT_EQ(inbox.exit_code, 0) << inbox.err;
  auto items = parse_json(inbox.out, "inbox");
  ASSERT_TRUE(items.ok()) << inbox.out;
  ASSERT_EQ(items->size(), 1u) << inbox.out;
  EXPECT_EQ((*items)[0]["key"], "b1");
  EXPECT_EQ((*items)[0]["run_dir"], owner);
  EXPECT_NE(json_str((*items)[0], "reason").find("changes_requested on PR #1"), std::string::npos)
      << inbox.out;
  EXPECT_EQ(
      git_out({"--git-dir", remote, "rev-parse", "refs/heads/develop/b1-alpha"}, scratch.path()),
      delivered);

  auto a = test::run_devgraph({"answer", "b1", "--text", "go ahead"}, env(), repo);
  ASSERT_EQ(a.exit_code, 0) << a.out << a.err;
  r = run({"--skill", skill});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_EQ(json_str(result_of(r), "run_dir"), owner);
  std::string head =
      git_out({"--git-dir", remote, "rev-parse", "refs/heads/develop/b1-alpha"}, scratch.path());
  EXPECT_EQ(git_out({"--git-dir", remote, "rev-parse", head + "^"}, scratch.path()), delivered);
  EXPECT_EQ(git_out({"--git-dir", remote, "show", head + ":src/renamed.txt"}, scratch.path()),
            "renamed");
  EXPECT_EQ(count_prefixed(gh_calls(), "pr\tcreate\t"), 1u) << gh_calls();
  valid = test::run_devgraph({"validate", "run", owner}, env(), repo);
  EXPECT_EQ(valid.exit_code, 0) << valid.out << valid.err;
}

// The reviewer who asks again after every push, with two repair cycles,
// asks the third time after the delivering run has ended: the next run
// parks the bundle in its own run with the cycles spent, and `devgraph
// inbox` lists it.
TEST_F(RunGithub, CyclesSpentBeforeTheDeliveringRunEndedParkTheBundleThereWhenTheReviewerAsksAgain) {
  std::string skill = skill_reacting("changes_requested", "repair", 2);
  renaming_developer_twice();
  const Json first = gh_review("CHANGES_REQUESTED", "please rename the helper");
  const Json second = gh_review("CHANGES_REQUESTED", "the helper is still misnamed");
  const Json third = gh_review("CHANGES_REQUESTED", "the helper is misnamed even now");
  test::write_text(gh_dir + "/pr-1.look-1", "reviewDecision=CHANGES_REQUESTED\n");
  test::write_text(gh_dir + "/pr-1.look-2",
                   "reviews=" + dump_py(Json::array({first, second})) + "\n");
  test::write_text(gh_dir + "/pr-1.reviews.json", dump_py(Json::array({first})) + "\n");

  auto r = run({"--skill", skill});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  const std::string owner = json_str(result_of(r), "run_dir");
  Json st = *parse_json(test::slurp(owner + "/state.json"), "state");
  EXPECT_EQ(st["prs"][0]["reactions"]["changes_requested"]["cycles"], 2) << dump_py(st["prs"]);

  size_t looks = 0;
  for (const auto& l : lines_of(gh_calls()))
    looks += l.rfind("pr\tview\t1\t", 0) == 0 && l.find("statusCheckRollup") != std::string::npos;
  test::write_text(gh_dir + "/pr-1.look-" + std::to_string(looks + 1),
                   "reviews=" + dump_py(Json::array({first, second, third})) + "\n");
  r = run({"--skill", skill});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  st = *parse_json(test::slurp(owner + "/state.json"), "state");
  EXPECT_EQ(st["status"], "human_required");
  EXPECT_EQ(st["bundles"][0]["status"], "parked");
  auto inbox = test::run_devgraph({"inbox", "--repo", repo, "--json"}, env(), repo);
  ASSERT_EQ(inbox.exit_code, 0) << inbox.err;
  auto items = parse_json(inbox.out, "inbox");
  ASSERT_TRUE(items.ok()) << inbox.out;
  ASSERT_EQ(items->size(), 1u) << inbox.out;
  EXPECT_EQ((*items)[0]["key"], "b1") << inbox.out;
  EXPECT_NE(json_str((*items)[0], "reason").find("the repair cycles are spent"), std::string::npos)
      << inbox.out;
  std::string evidence = owner + "/bundles/b1/reaction-evidence.md";
  EXPECT_NE(test::slurp(evidence).find("the helper is misnamed even now"), std::string::npos);
  EXPECT_EQ(count_prefixed(gh_calls(), "pr\tcreate\t"), 1u) << gh_calls();
  auto valid = test::run_devgraph({"validate", "run", owner}, env(), repo);
  EXPECT_EQ(valid.exit_code, 0) << valid.out << valid.err;
}

// GRAPH.yaml's changes_requested reaction set to repair with two cycles.
// The developer's answer to the review rewrites src/b1.txt as it was, so
// the repair commits nothing and the pull request's head and diff stay as
// they were while its review still asks for changes: the bundle parks
// after the first cycle, without spending the second.
TEST_F(RunGithub, ARepairCycleThatChangesNothingParksTheBundleWithoutSpendingTheNextCycle) {
  std::string skill = skill_reacting("changes_requested", "repair", 2);
  repairing_developer("please rename the helper", "src/b1.txt", "b1\n", "looked at it");
  test::write_text(gh_dir + "/pr-1.look-1", "reviewDecision=CHANGES_REQUESTED\n");
  test::write_text(
      gh_dir + "/pr-1.reviews.json",
      dump_py(Json::array({gh_review("CHANGES_REQUESTED", "please rename the helper")})) + "\n");

  expect_parked_for_no_progress(run({"--skill", skill}), "changes_requested",
                                "the last repair cycle changed nothing",
                                "please rename the helper");
}

// GRAPH.yaml's ci_failure reaction set to repair with two cycles, in a
// repository with no test or build command (.devgraph/commands.json names
// none), so the failing check (every look from look-1 on) cannot be tried
// locally and a cycle is spent on it. The developer rewrites src/b1.txt
// as it was: nothing is committed, and the check fails as before at the
// same head, so the bundle parks after the first cycle without spending
// the second.
TEST_F(RunGithub, ACiRepairThatChangesNothingParksTheBundleWhileTheSameHeadStillFails) {
  test::write_text(repo + "/.devgraph/commands.json", "{}\n");
  git({"commit", "-q", "-am", "no commands"});
  git({"push", "-q", "origin", "main"});
  std::string skill = skill_reacting("ci_failure", "repair", 2);
  const std::string job_log = "FAIL tests/b1.sh on the CI runner";
  repairing_developer(job_log, "src/b1.txt", "b1\n", "looked at it");
  const std::string link = "https://github.com/acme/widgets/actions/runs/7/job/8";
  test::write_text(gh_dir + "/pr-1.look-1", checks_line("COMPLETED", "FAILURE", link));
  test::write_text(gh_dir + "/job-8.log", "test\tRun tests\t" + job_log + "\n");

  expect_parked_for_no_progress(run({"--skill", skill}), "ci_failure",
                                "ci_failure on PR #1: the last repair cycle changed nothing",
                                job_log);
}

// The delivered pull request is merged on the remote (look-2 says so)
// while its worktree holds one more local commit nobody pushed: the next
// run's clean-up preserves the worktree and its branch, saying why.
TEST_F(RunGithub, AMergedPullRequestsWorktreeWithACommitNeverPushedIsPreservedWithItsBranch) {
  write_issues("issues.json", Json::array({gh_issue(1, "alpha", {"devgraph"})}));
  auto r = run();
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  Json res = result_of(r);
  expect_one_pr_per_bundle(res, {{"b1", {1}}});
  std::string delivered = json_str(res["bundles"][0], "head");
  std::string worktree = json_str(state_of(res)["bundles"][0], "worktree");
  ASSERT_TRUE(is_directory(worktree));

  // A person merges the pull request, and someone commits in the worktree
  // without pushing.
  git({"fetch", "-q", "origin"});
  git({"merge", "-q", "--no-ff", "--no-edit", "origin/develop/b1-alpha"});
  git({"push", "-q", "origin", "main"});
  std::string merge = git_out({"rev-parse", "HEAD"});
  test::write_text(worktree + "/notes.txt", "not pushed\n");
  git({"add", "notes.txt"}, worktree);
  git({"commit", "-q", "-m", "local only"}, worktree);
  std::string local = git_out({"rev-parse", "HEAD"}, worktree);
  test::write_text(gh_dir + "/pr-1.look-2",
                   "state=MERGED\nmergeCommit=" + merge + "\nmergedAt=2026-12-01T10:00:00Z\n");
  test::write_text(gh_dir + "/pr-1.diff", "diff --git a/src/b1.txt b/src/b1.txt\n");
  write_issues("issues.json", Json::array());  // the merge closed #1

  r = run();
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  res = result_of(r);
  EXPECT_TRUE(res["cleanup"]["removed"].empty()) << dump_py(res["cleanup"]);
  ASSERT_EQ(res["cleanup"]["preserved"].size(), 1u) << dump_py(res["cleanup"]);
  const Json& kept = res["cleanup"]["preserved"][0];
  EXPECT_EQ(kept["path"], worktree);
  EXPECT_EQ(kept["branch"], "develop/b1-alpha");
  EXPECT_EQ(kept["why"], "commits the remote does not have");
  std::vector<Json> done_events = events_of(res, "CLEANUP_DONE");
  ASSERT_EQ(done_events.size(), 1u);
  EXPECT_EQ(done_events[0]["detail"]["preserved"], res["cleanup"]["preserved"]);
  EXPECT_TRUE(done_events[0]["detail"]["removed"].empty());
  // The worktree, its commit and its branch are as they were; the remote's
  // branch is still the delivered head.
  ASSERT_TRUE(is_directory(worktree));
  EXPECT_EQ(git_out({"rev-parse", "HEAD"}, worktree), local);
  EXPECT_EQ(test::slurp(worktree + "/notes.txt"), "not pushed\n");
  EXPECT_EQ(git_out({"rev-parse", "refs/heads/develop/b1-alpha"}), local);
  EXPECT_EQ(
      git_out({"--git-dir", remote, "rev-parse", "refs/heads/develop/b1-alpha"}, scratch.path()),
      delivered);
  expect_replays_cleanly(res);
}

// A planner's question in its own words that only a comment on the GitHub
// issue answers: context recovery reads the issue's comments (`gh issue
// view --json comments`) and hands the planner the comment's line; the
// planner, told, plans, and the pull request is opened with no person.
TEST_F(RunGithub, APlannersQuestionAnIssueCommentAnswersIsAnsweredFromTheComment) {
  Json asks = {{"call", 1},
               {"result",
                {{"status", "NEEDS_CONTEXT"},
                 {"summary", "which date format?"},
                 {"evidence", Json::array()},
                 {"missing_context", Json::array({"Which date format should the report use?"})}}}};
  Json sc = test::one_task_scenario(test::OneTaskScenario{0, std::nullopt, asks, {}});
  // The plan comes only once the comment's line is in the prompt.
  sc["personas"]["planner"][1]["dispatch_contains"] = "issue #1, comment 2 by @ann";
  test::write_text(scenario, dump_py(sc, 2));
  write_issues("issues.json", Json::array({gh_issue(1, "alpha", {"devgraph"})}));
  test::write_text(gh_dir + "/issue-1.comments.json",
                   dump_py(Json::array(
                       {{{"author", {{"login", "bob"}}}, {"body", "+1, thanks"}},
                        {{"author", {{"login", "ann"}}},
                         {"body", "Dates in the report: ISO 8601 (YYYY-MM-DD)."}}})) +
                       "\n");
  auto r = run();
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  Json res = result_of(r);
  EXPECT_EQ(res["status"], "COMPLETE");
  EXPECT_TRUE(res["human_required"].empty()) << dump_py(res["human_required"]);
  EXPECT_EQ(count_prefixed(gh_calls(), "pr\tcreate\t"), 1u) << gh_calls();
  EXPECT_GE(count_prefixed(gh_calls(), "issue\tview\t1\t--json\tnumber,comments"), 1u)
      << gh_calls();
  EXPECT_FALSE(prompts_holding(res, "b1",
                               "issue #1, comment 2 by @ann:1: Dates in the report: ISO 8601")
                   .empty());
  expect_replays_cleanly(res);
}

// The developer also leaves an unreported scratch file at the root, the
// most common thing an agent leaves behind: sent back once, it leaves it
// again, so it is moved into the bundle's quarantine with its bytes, kept
// off the pushed branch, and named in the pull request's body.
TEST_F(RunGithub, AScratchFileIsQuarantinedAndNamedInThePullRequestBody) {
  Json sc = test::one_task_scenario(test::OneTaskScenario{0, std::nullopt, Json(), {}});
  sc["personas"]["developer"].back()["files"].push_back(file("notes-T1.md", "- try the helper\n"));
  test::write_text(scenario, dump_py(sc, 2));
  write_issues("issues.json", Json::array({gh_issue(1, "alpha", {"devgraph"})}));
  auto r = run();
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  Json res = result_of(r);
  expect_one_pr_per_bundle(res, {{"b1", {1}}});
  const std::string bundle_dir = json_str(res, "run_dir") + "/bundles/b1";
  EXPECT_EQ(test::slurp(bundle_dir + "/quarantine/files/notes-T1.md"), "- try the helper\n");
  auto prs = pull_requests();
  ASSERT_EQ(prs.size(), 1u);
  const std::string& body = prs.begin()->second.body;
  EXPECT_NE(body.find("Kept out of this pull request"), std::string::npos) << body;
  EXPECT_NE(body.find("notes-T1.md"), std::string::npos) << body;
  const std::string branch = prs.begin()->first;
  EXPECT_EQ(git_out({"--git-dir", remote, "ls-tree", "-r", "--name-only", "refs/heads/" + branch},
                    scratch.path())
                .find("notes-T1.md"),
            std::string::npos);
  EXPECT_EQ(events_of(res, "STRAY_SENT_BACK").size(), 1u);
  for (const auto& e : events_of(res, "FOOTPRINT_VIOLATION")) ADD_FAILURE() << dump_py(e);
  expect_replays_cleanly(res);
}

// The merge policy is GRAPH.yaml's `delivery.github.merge`: set to
// auto_when_checks_pass, the pull request is asked to merge itself once its
// checks pass, without a flag; `--merge-policy never` on a fresh run of the
// same graph overrides it and asks nothing.
TEST_F(RunGithub, TheGraphsMergePolicyAsksForAutoMergeAndTheFlagOverridesIt) {
  std::string skill = skill_edited("\n    merge: never\n", "\n    merge: auto_when_checks_pass\n");
  write_issues("issues.json", Json::array({gh_issue(1, "alpha", {"devgraph"})}));
  auto r = run({"--skill", skill});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  Json res = result_of(r);
  EXPECT_EQ(state_of(res)["merge_policy"], "auto_when_checks_pass");
  ASSERT_EQ(res["prs"].size(), 1u) << dump_py(res);
  EXPECT_EQ(res["prs"][0]["auto_merge"], "enabled");
  EXPECT_EQ(count_prefixed(gh_calls(), "pr\tmerge\t"), 1u) << gh_calls();
  EXPECT_FALSE(events_of(res, "AUTO_MERGE_ENABLED").empty());

  write_issues("issues.json", Json::array({gh_issue(2, "beta", {"devgraph"})}));
  r = run({"--skill", skill, "--new", "--merge-policy", "never"});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  res = result_of(r);
  EXPECT_EQ(state_of(res)["merge_policy"], "never");
  EXPECT_EQ(count_prefixed(gh_calls(), "pr\tmerge\t"), 1u) << gh_calls();
  EXPECT_TRUE(events_of(res, "AUTO_MERGE_ENABLED").empty());
}

// Auto-merge, refused when create_pr first asked (FAKE_GH_AUTO_MERGE=fail),
// and a review asking for changes repaired by one cycle (GRAPH.yaml's
// changes_requested set to repair): the repair's delivery to the same pull
// request does not ask GitHub again, and the refusal's words are kept.
TEST_F(RunGithub, AutoMergeRefusedAtCreationIsNotAskedAgainWhenARepairDeliversOnceMore) {
  std::string skill = skill_reacting("changes_requested", "repair", 2);
  repairing_developer("please rename the helper", "src/renamed.txt", "renamed\n", "renamed");
  extra_env["FAKE_GH_AUTO_MERGE"] = "fail";
  test::write_text(gh_dir + "/pr-1.look-1", "reviewDecision=CHANGES_REQUESTED\n");
  test::write_text(gh_dir + "/pr-1.look-2", "reviewDecision=APPROVED\n");
  test::write_text(
      gh_dir + "/pr-1.reviews.json",
      dump_py(Json::array({gh_review("CHANGES_REQUESTED", "please rename the helper")})) + "\n");

  auto r = run({"--skill", skill, "--merge-policy", "auto_when_checks_pass"});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  Json res = result_of(r);
  EXPECT_EQ(res["status"], "COMPLETE");
  ASSERT_EQ(res["prs"].size(), 1u) << dump_py(res);
  EXPECT_EQ(res["prs"][0]["auto_merge"], "unavailable");
  EXPECT_EQ(res["prs"][0]["review"], "APPROVED");
  EXPECT_EQ(state_of(res)["prs"][0]["reactions"]["changes_requested"]["cycles"], 1);
  EXPECT_EQ(count_prefixed(gh_calls(), "pr\tcreate\t"), 1u) << gh_calls();
  EXPECT_EQ(count_prefixed(gh_calls(), "pr\tmerge\t"), 1u) << gh_calls();
  std::vector<Json> refused = events_of(res, "AUTO_MERGE_UNAVAILABLE");
  ASSERT_FALSE(refused.empty());
  EXPECT_NE(dump_py(refused[0]["detail"]).find("Auto merge is not allowed for this repository"),
            std::string::npos)
      << dump_py(refused[0]);
  expect_replays_cleanly(res);
}

// Two bundles wait for a person (tests/support/run_scenario.h
// two_waiting_scenario). A plain `devgraph run` before the answers starts a
// run for new issues only: no bundle for theirs, no persona, no pull
// request, their branches and worktrees kept, both listed, exit 2. After
// the answers the next run continues the waiting run and opens one pull
// request per bundle.
TEST_F(RunGithub, BundlesWaitingForAPersonStayTheirRunsUntilAnsweredThenThatRunDeliversBoth) {
  test::write_text(
      scenario,
      dump_py(test::two_waiting_scenario(test::OneTaskScenario{0, std::nullopt, Json(), {}}), 2));
  write_issues("issues.json", Json::array({gh_issue(1, "alpha", {"devgraph"}),
                                           gh_issue(2, "beta", {"devgraph"})}));
  auto first = run();
  ASSERT_EQ(first.exit_code, 2) << first.out << first.err;
  Json res = result_of(first);
  ASSERT_EQ(res["human_required"].size(), 2u) << dump_py(res);
  Json st = state_of(res);
  std::vector<std::string> worktrees;
  for (const auto& b : st["bundles"]) worktrees.push_back(json_str(b, "worktree"));
  ASSERT_EQ(worktrees.size(), 2u);
  std::string branches_before = git_out({"branch", "--list", "develop/*"});
  std::string calls_before = gh_calls();
  EXPECT_EQ(count_prefixed(calls_before, "pr\tcreate\t"), 0u);

  auto plain = run();
  ASSERT_EQ(plain.exit_code, 2) << plain.out << plain.err;
  Json p = result_of(plain);
  EXPECT_EQ(p["status"], "HUMAN_REQUIRED");
  EXPECT_NE(json_str(p, "run_dir"), json_str(res, "run_dir"));
  EXPECT_TRUE(p["bundles"].empty()) << dump_py(p);
  EXPECT_EQ(p["waiting_elsewhere"].size(), 2u) << dump_py(p);
  EXPECT_NE(plain.out.find("waiting for a person in run " + json_str(st, "run_id") + ": b1 ("),
            std::string::npos)
      << plain.out;
  EXPECT_EQ(git_out({"branch", "--list", "develop/*"}), branches_before);
  for (const auto& w : worktrees) EXPECT_TRUE(is_directory(w)) << w;
  EXPECT_EQ(count_prefixed(gh_calls(), "pr\tcreate\t"), 0u) << gh_calls();
  auto inbox = test::run_devgraph({"inbox", "--json"}, env(), repo);
  ASSERT_EQ(inbox.exit_code, 0) << inbox.err;
  EXPECT_EQ(parse_json(inbox.out, "inbox")->size(), 2u) << inbox.out;

  for (const char* key : {"b1", "b2/T1"}) {
    auto a = test::run_devgraph({"answer", key, "--text", "XYZZY is meant"}, env(), repo);
    ASSERT_EQ(a.exit_code, 0) << a.err;
  }
  auto again = run();
  ASSERT_EQ(again.exit_code, 0) << again.out << again.err;
  Json done_res = result_of(again);
  EXPECT_EQ(done_res["status"], "COMPLETE") << again.out;
  EXPECT_EQ(json_str(done_res, "run_dir"), json_str(res, "run_dir"));
  expect_one_pr_per_bundle(done_res, {{"b1", {1}}, {"b2", {2}}});
  expect_replays_cleanly(done_res);
}

}  // namespace
}  // namespace devgraph
