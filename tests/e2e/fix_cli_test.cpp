// `devgraph fix` end to end: the real binary on a real repository, its
// branch in a linked worktree, the simulated agent playing the fixer, the
// re-reviewer and the diagnosis persona (each call a process of its own).
// The scenarios tell the dispatches apart by their text ("Fix loop 2 of",
// "review 1 of a fix loop") and the fixer's setting by the model the
// escalation raised it to.
#include <gtest/gtest.h>

#include "support/test_util.h"
#include "util/clock.h"
#include "util/fs.h"
#include "util/json.h"

namespace devgraph {
namespace {

Json file(const std::string& path, const std::string& content) {
  return Json{{"path", path}, {"content", content}};
}

Json result(const std::string& status, const std::string& summary) {
  return Json{{"status", status}, {"summary", summary}, {"evidence", Json::array()}};
}

Json finding(const std::string& file, const std::string& description,
             const std::string& severity = "Important") {
  return Json{{"severity", severity}, {"file", file}, {"line", 1}, {"description", description}};
}

// A review's answer: findings, or none (SHIP).
Json review(Json findings) {
  Json r = result(findings.empty() ? "DONE" : "DONE_WITH_CONCERNS", "reviewed");
  r["findings"] = std::move(findings);
  return r;
}

Json diagnosis(const std::string& cause, Json extra = Json::object()) {
  Json rules_out = Json::object();
  for (const char* c : {"model-capacity", "missing-context", "ambiguous-spec", "env-tool-failure",
                        "overdesigned-plan"})
    if (cause != c) rules_out[c] = std::string("the record shows nothing of ") + c;
  Json d = {
      {"cause", cause}, {"new_evidence", "review 2 names a new gap"}, {"rules_out", rules_out}};
  for (auto& [k, v] : extra.items()) d[k] = v;
  Json r = result("DONE", cause);
  r["diagnosis"] = d;
  return r;
}

class FixCli : public ::testing::Test {
 protected:
  test::Scratch s;
  std::string repo = s / "repo";
  std::string worktree = s / "wt/feature";
  std::string out_dir = s / "out";
  std::string scenario_path = s / "scenario.json";
  std::map<std::string, std::string> env;
  Json rules = Json::object();  // persona -> rules

  void SetUp() override {
    ASSERT_TRUE(make_directories(repo).ok());
    sh(repo, {"git", "init", "-q", "-b", "main"});
    sh(repo, {"git", "config", "user.name", "Test"});
    sh(repo, {"git", "config", "user.email", "test@example.invalid"});
    test::write_text(repo + "/check.sh", "exit 0\n");
    test::write_text(repo + "/docs/limits.md", "The limit is LIMIT-TEXT-42 per minute.\n");
    sh(repo, {"git", "add", "--", "check.sh", "docs/limits.md"});
    sh(repo, {"git", "commit", "-q", "-m", "base"});
    sh(repo, {"git", "worktree", "add", "-q", "-b", "feature", worktree, "main"});
    test::write_text(worktree + "/src/a.txt", "a\n");
    sh(worktree, {"git", "add", "--", "src/a.txt"});
    sh(worktree, {"git", "commit", "-q", "-m", "feature"});
    env = {{"AI_ROOT", s / "ai"}, {"DEVELOP_HOME_ROOT", s / "develop"}};
  }

  static void sh(const std::string& cwd, const std::vector<std::string>& argv) {
    auto r = test::run_process(argv, {}, cwd);
    ASSERT_EQ(r.exit_code, 0) << argv[0] << " " << argv[1] << ": " << r.err;
  }

  void rule(const std::string& persona, Json r) { rules[persona].push_back(std::move(r)); }
  // A rule played when the dispatch holds `text`.
  void when(const std::string& persona, const std::string& text, Json r) {
    r["dispatch_contains"] = text;
    rule(persona, std::move(r));
  }

  test::ProcessResult fix(std::vector<std::string> extra = {}) {
    Json sc = {{"default", {{"result", result("BLOCKED", "no rule for this call")}}},
               {"personas", rules}};
    test::write_text(scenario_path, dump_py(sc, 2));
    std::vector<std::string> args = {
        "fix",   "--worktree", worktree, "--agent", "sim",        "--sim-scenario", scenario_path,
        "--out", out_dir,      "--base", "main",    "--validate", "sh check.sh"};
    args.insert(args.end(), extra.begin(), extra.end());
    return test::run_devgraph(args, env);
  }

  static Json result_of(const test::ProcessResult& r) {
    auto pos = r.out.rfind("RESULT_JSON: ");
    if (pos == std::string::npos) return Json();
    return Json::parse(r.out.substr(pos + 13, r.out.find('\n', pos) - pos - 13));
  }
  Json saved(int loop, const std::string& what) const {
    return Json::parse(test::slurp(out_dir + "/loop-" + std::to_string(loop) + "/" + what));
  }
  std::string git(const std::vector<std::string>& args) const {
    std::vector<std::string> argv = {"git", "-C", worktree};
    argv.insert(argv.end(), args.begin(), args.end());
    return test::run_process(argv).out;
  }
};

TEST_F(FixCli, AReviewFileIsFixedOneCommitPerGapAndTheReReviewShips) {
  test::write_text(s / "review.md",
                   "Verdict: FIX-FIRST\n"
                   "- [HIGH] a.txt says a, not alpha — src/a.txt:1\n"
                   "- [CRITICAL] b.txt is missing — src/b.txt\n"
                   "- [LOW] the name could be longer — src/a.txt:1\n");
  Json fixed = result("DONE", "fixed both");
  fixed["fixes"] = Json::array(
      {{{"gap", 1}, {"status", "fixed"}, {"files", {"src/a.txt"}}, {"evidence", "alpha"}},
       {{"gap", 2}, {"status", "fixed"}, {"files", {"src/b.txt"}}, {"evidence", "beta"}}});
  when("developer", "Fix loop 1 of",
       {{"files", Json::array({file("src/a.txt", "alpha\n"), file("src/b.txt", "beta\n")})},
        {"result", fixed}});
  when("code-reviewer", "review 1 of a fix loop", {{"result", review(Json::array())}});
  auto r = fix({"--review", s / "review.md"});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  Json res = result_of(r);
  EXPECT_EQ(res["end"], "ship");
  EXPECT_EQ(res["loops"], 1);
  // One commit per gap, each holding only its gap's file.
  EXPECT_EQ(git({"log", "--format=%s", "main..HEAD"}),
            "fix: b.txt is missing\nfix: a.txt says a, not alpha\nfeature\n");
  EXPECT_EQ(git({"show", "--name-only", "--format=", "HEAD"}), "src/b.txt\n");
  EXPECT_EQ(git({"show", "--name-only", "--format=", "HEAD~1"}), "src/a.txt\n");
  EXPECT_EQ(git({"status", "--porcelain"}), "");
  ASSERT_EQ(res["gaps"].size(), 2u);  // the blocking ones
  for (const auto& g : res["gaps"]) EXPECT_EQ(g["status"], "fixed") << g.dump();
  // devgraph ran the validation itself.
  EXPECT_EQ(saved(1, "validation.json")[0]["exit"], 0);
  // The re-reviewer is another launch and another session than the fixer.
  Json fixer = saved(1, "fixer.json"), reviewer = saved(1, "review.json");
  EXPECT_NE(fixer["handle"], reviewer["handle"]);
  EXPECT_NE(fixer["session_id"], reviewer["session_id"]);
  EXPECT_FALSE(fixer["session_id"].get<std::string>().empty());
  EXPECT_FALSE(path_exists(out_dir + "/diagnosis.md"));  // SHIP writes no record
}

TEST_F(FixCli, APlainBranchGetsItsCanonicalWorktreeAndOneCommitPerGap) {
  sh(repo, {"git", "branch", "plain", "main"});
  test::write_text(s / "review.md", "- [HIGH] c.txt is missing — src/c.txt\n");
  Json fixed = result("DONE", "added c");
  fixed["fixes"] = Json::array({{{"gap", 1}, {"status", "fixed"}, {"files", {"src/c.txt"}}}});
  when("developer", "Fix loop 1 of",
       {{"files", Json::array({file("src/c.txt", "c\n")})}, {"result", fixed}});
  when("code-reviewer", "review 1 of a fix loop", {{"result", review(Json::array())}});
  Json sc = {{"default", {{"result", result("BLOCKED", "no rule")}}}, {"personas", rules}};
  test::write_text(scenario_path, dump_py(sc, 2));
  auto r = test::run_devgraph({"fix", "--branch", "plain", "--repo", repo, "--agent", "sim",
                               "--sim-scenario", scenario_path, "--review", s / "review.md"},
                              env);
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  Json res = result_of(r);
  EXPECT_EQ(res["end"], "ship");
  auto log = test::run_process({"git", "-C", repo, "log", "--format=%s", "main..plain"});
  EXPECT_EQ(log.out, "fix: c.txt is missing\n");
  // Fixed in a linked worktree of its own, never in the primary clone.
  EXPECT_FALSE(path_exists(repo + "/src/c.txt"));
  auto list = test::run_process({"git", "-C", repo, "worktree", "list", "--porcelain"});
  EXPECT_NE(list.out.find("branch refs/heads/plain"), std::string::npos) << list.out;
  // The loop's files went to the branch's place in the develop home.
  EXPECT_NE(res["dir"].get<std::string>().find("/fix/plain/"), std::string::npos) << res.dump();
}

TEST_F(FixCli, FixFirstTwiceThenTheDiagnosisAsksAPersonWhichReadingIsMeant) {
  // No review file: the reviewer runs first. Each review finds a new gap.
  when("code-reviewer", "review 0 of", {{"result", review({finding("src/a.txt", "gap one")})}});
  when("code-reviewer", "review 1 of", {{"result", review({finding("src/a.txt", "gap two")})}});
  when("code-reviewer", "review 2 of", {{"result", review({finding("src/a.txt", "gap three")})}});
  rule("developer", {{"files", Json::array({file("src/a.txt", "tried\n")})},
                     {"result", [] {
                        Json d = result("DONE", "tried");
                        d["fixes"] = Json::array({{{"gap", 1}, {"files", {"src/a.txt"}}}});
                        return d;
                      }()}});
  rule("diagnostician",
       {{"result", diagnosis("ambiguous-spec",
                             {{"readings", {"retry on every error", "retry on timeouts only"}}})}});
  auto r = fix();
  ASSERT_EQ(r.exit_code, 2) << r.out << r.err;
  Json res = result_of(r);
  EXPECT_EQ(res["end"], "needs_person");
  EXPECT_EQ(res["loops"], 2);
  EXPECT_EQ(res["why_stopped"], "fix loop exhausted (2/2)");
  EXPECT_EQ(res["cause"], "ambiguous-spec");
  EXPECT_NE(res["question"].get<std::string>().find("retry on timeouts only"), std::string::npos);
  std::string record = test::slurp(out_dir + "/diagnosis.md");
  EXPECT_NE(record.find("gap three"), std::string::npos) << record;
  EXPECT_NE(record.find("ambiguous-spec"), std::string::npos) << record;
  EXPECT_NE(record.find("attempts=2/2"), std::string::npos) << record;
  // The first review's gap is reported as the last review shows it, not
  // as the fixer claimed.
  ASSERT_EQ(res["gaps"].size(), 1u);
  EXPECT_EQ(res["gaps"][0]["status"], "fixed");  // "gap one" is gone from review 2
}

TEST_F(FixCli, ABlockedReviewIsDiagnosedAndAnOverdesignedPlanGoesBackToPlanning) {
  Json blocked = result("BLOCKED", "cannot review");
  blocked["blockers"] = Json::array({"the diff is a plugin registry no story asks for"});
  when("code-reviewer", "review 0 of", {{"result", blocked}});
  rule("diagnostician",
       {{"result", diagnosis("overdesigned-plan", {{"machinery", {"the plugin registry"}}})}});
  auto r = fix();
  ASSERT_EQ(r.exit_code, 2) << r.out << r.err;
  Json res = result_of(r);
  EXPECT_EQ(res["end"], "replan");
  EXPECT_EQ(res["route"], "back to planning without the plugin registry");
  EXPECT_NE(res["why_stopped"].get<std::string>().find("BLOCKED"), std::string::npos);
  EXPECT_EQ(res["loops"], 0);  // nothing was fixed from a review that could not judge
  EXPECT_EQ(git({"log", "--format=%s", "main..HEAD"}), "feature\n");
}

TEST_F(FixCli, TheSameGapsTwiceAreNoNewEvidenceSoNoRaise) {
  when("code-reviewer", "review 0 of", {{"result", review({finding("src/a.txt", "gap one")})}});
  when("code-reviewer", "review 1 of", {{"result", review({finding("src/a.txt", "gap one")})}});
  rule("developer", {{"result", result("DONE", "looked, changed nothing")}});
  rule("diagnostician", {{"result", diagnosis("model-capacity")}});
  auto r = fix({"--model", "sim-1"});
  ASSERT_EQ(r.exit_code, 2) << r.out << r.err;
  Json res = result_of(r);
  EXPECT_EQ(res["why_stopped"], "the same gaps twice: no progress");
  EXPECT_EQ(res["end"], "needs_person");
  EXPECT_NE(res["route"].get<std::string>().find("no new evidence"), std::string::npos)
      << res.dump();
  EXPECT_EQ(res["raises_used"], 0);
  EXPECT_EQ(res["model"], "sim-1");
  EXPECT_NE(r.err.find("diagnosis_refused"), std::string::npos);
  EXPECT_EQ(r.err.find("\"raised\""), std::string::npos);
}

TEST_F(FixCli, ModelCapacityRaisesTheModelOneStepAtATimeAndTheThirdRaiseNeedsAPerson) {
  // Every review finds a new gap (new evidence), so the diagnosis is
  // model capacity each time; the fixer's setting shows in its argv.
  for (int i = 0; i <= 3; ++i)
    when("code-reviewer", "review " + std::to_string(i) + " of",
         {{"result", review({finding("src/a.txt", "gap " + std::to_string(i))})}});
  for (const char* m : {"sim-1", "sim-2", "sim-3"})
    rule("developer", {{"setting", m},
                       {"files", Json::array({file("src/a.txt", std::string(m) + "\n")})},
                       {"result", [&] {
                          Json d = result("DONE", std::string("tried at ") + m);
                          d["fixes"] = Json::array({{{"gap", 1}, {"files", {"src/a.txt"}}}});
                          return d;
                        }()}});
  rule("diagnostician", {{"result", diagnosis("model-capacity")}});
  auto r = fix({"--model", "sim-1", "--max-loops", "1"});
  ASSERT_EQ(r.exit_code, 2) << r.out << r.err;
  Json res = result_of(r);
  EXPECT_EQ(res["end"], "needs_person");
  EXPECT_EQ(res["raises_used"], 2);
  EXPECT_EQ(res["model"], "sim-3");
  EXPECT_NE(res["question"].get<std::string>().find("past the cap"), std::string::npos);
  for (int loop = 1; loop <= 3; ++loop) {
    std::string m = "sim-" + std::to_string(loop);
    EXPECT_EQ(saved(loop, "fixer.json")["model"], m);
    // The sim agent answered as that model: the setting was in its argv.
    EXPECT_EQ(saved(loop, "fixer.json")["result"]["summary"], "tried at " + m);
  }
  EXPECT_FALSE(path_exists(out_dir + "/loop-4/fixer.json"));

  // The branch has spent its two raises. A person's recorded decision for
  // exactly the next step allows one more; the re-review then ships.
  rules["code-reviewer"] = Json::array();
  when("code-reviewer", "review 0 of", {{"result", review({finding("src/a.txt", "gap 0")})}});
  when("code-reviewer", "review 1 of", {{"result", review({finding("src/a.txt", "gap 1")})}});
  when("code-reviewer", "review 2 of", {{"result", review(Json::array())}});
  rule("developer", {{"setting", "sim-4"},
                     {"files", Json::array({file("src/a.txt", "sim-4\n")})},
                     {"result", [] {
                        Json d = result("DONE", "tried at sim-4");
                        d["fixes"] = Json::array({{{"gap", 1}, {"files", {"src/a.txt"}}}});
                        return d;
                      }()}});
  Json decision = {{"from", "sim-3"},
                   {"to", "sim-4"},
                   {"reason", "the parser needs the larger model"},
                   {"approver", "a person"},
                   {"at", "2026-12-01T10:00:00+00:00"}};
  Json wrong = decision;
  wrong["to"] = "sim-5";
  test::write_text(s / "wrong.json", dump_py(wrong));
  test::write_text(s / "decision.json", dump_py(decision));
  out_dir = s / "out2";
  r = fix({"--model", "sim-3", "--max-loops", "1", "--raise-decision", s / "wrong.json"});
  ASSERT_EQ(r.exit_code, 2) << r.out << r.err;  // a decision for another step allows nothing
  EXPECT_EQ(result_of(r)["model"], "sim-3");
  out_dir = s / "out3";
  r = fix({"--model", "sim-3", "--max-loops", "1", "--raise-decision", s / "decision.json"});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  res = result_of(r);
  EXPECT_EQ(res["model"], "sim-4");
  EXPECT_EQ(res["raises_used"], 3);
  EXPECT_EQ(saved(2, "fixer.json")["result"]["summary"], "tried at sim-4");
}

TEST_F(FixCli, MissingContextIsGatheredAndTheFixerTriesAgainAtTheSameModel) {
  when("code-reviewer", "review 0 of", {{"result", review({finding("src/a.txt", "wrong limit")})}});
  when("code-reviewer", "review 1 of", {{"result", review({finding("src/a.txt", "wrong limit")})}});
  when("code-reviewer", "review 2 of", {{"result", review(Json::array())}});
  Json fixed = result("DONE", "used the documented limit");
  fixed["fixes"] = Json::array({{{"gap", 1}, {"files", {"src/a.txt"}}}});
  when("developer", "LIMIT-TEXT-42",
       {{"files", Json::array({file("src/a.txt", "42\n")})}, {"result", fixed}});
  Json asks = result("NEEDS_CONTEXT", "which limit?");
  asks["missing_context"] = Json::array({"docs/limits.md"});
  rule("developer", {{"result", asks}});
  auto r = fix({"--model", "sim-2"});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  Json res = result_of(r);
  EXPECT_EQ(res["end"], "ship");
  EXPECT_EQ(res["cause"], "missing-context");
  EXPECT_EQ(res["decided_by"], "code");
  EXPECT_EQ(res["raises_used"], 0);
  EXPECT_EQ(saved(2, "fixer.json")["model"], "sim-2");  // the same model
  EXPECT_NE(test::slurp(out_dir + "/context-2.md").find("LIMIT-TEXT-42"), std::string::npos);
}

TEST_F(FixCli, AValidationCommandThatCannotRunIsAnEnvironmentFailureReportedWithItsError) {
  when("code-reviewer", "review 0 of", {{"result", review({finding("src/a.txt", "gap one")})}});
  when("code-reviewer", "review 1 of", {{"result", review({finding("src/a.txt", "gap one")})}});
  rule("developer", {{"result", result("DONE", "tried")}});
  auto r = fix({"--validate", "no-such-tool-xyz --check"});
  ASSERT_EQ(r.exit_code, 2) << r.out << r.err;
  Json res = result_of(r);
  EXPECT_EQ(res["end"], "blocked");
  EXPECT_EQ(res["cause"], "env-tool-failure");
  EXPECT_NE(res["route"].get<std::string>().find("no-such-tool-xyz"), std::string::npos)
      << res.dump();
}

TEST_F(FixCli, AFinalGateThatDisagreesParksAnAppealAndNeitherVerdictWins) {
  test::write_text(s / "review.md", "- [HIGH] a.txt says a — src/a.txt:1\n");
  Json fixed = result("DONE", "fixed");
  fixed["fixes"] = Json::array({{{"gap", 1}, {"files", {"src/a.txt"}}}});
  when("developer", "Fix loop 1 of",
       {{"files", Json::array({file("src/a.txt", "alpha\n")})}, {"result", fixed}});
  when("code-reviewer", "You are the final gate",
       {{"result",
         review({finding("src/a.txt", "alpha is not what the criteria ask for", "Critical")})}});
  when("code-reviewer", "review 1 of a fix loop", {{"result", review(Json::array())}});
  auto r = fix({"--review", s / "review.md", "--final-gate"});
  ASSERT_EQ(r.exit_code, 2) << r.out << r.err;
  Json res = result_of(r);
  EXPECT_EQ(res["end"], "appeal");
  EXPECT_EQ(res["verdict"], "SHIP");  // the ordinary review's, kept as it was
  std::string record = test::slurp(out_dir + "/diagnosis.md");
  EXPECT_NE(record.find("## Appeal"), std::string::npos) << record;
  EXPECT_NE(record.find("alpha is not what the criteria ask for"), std::string::npos) << record;
  EXPECT_NE(record.find("FIX-FIRST"), std::string::npos) << record;
  // The fix itself stays committed; nothing was undone or pushed.
  EXPECT_EQ(git({"log", "--format=%s", "-1"}), "fix: a.txt says a\n");
}

TEST_F(FixCli, ARedValidationIsAGapOfItsOwnAndAnUnfixedGapIsNotFixed) {
  // The validation fails whatever the fixer does; the fixer finds nothing
  // and changes nothing; the re-reviewer, shown the red validation, lists
  // no gap of its own.
  test::write_text(worktree + "/check.sh", "echo RED-CHECK-OUTPUT\nexit 1\n");
  sh(worktree, {"git", "commit", "-q", "-am", "a failing check"});
  test::write_text(s / "review.md", "- [HIGH] the parser drops the last line — src/a.txt:1\n");
  rule("developer", {{"result", result("DONE", "could not find the bug")}});
  when("code-reviewer", "RED-CHECK-OUTPUT", {{"result", review(Json::array())}});
  rule("code-reviewer", {{"result", result("BLOCKED", "the validation was not shown")}});
  auto r = fix({"--review", s / "review.md", "--max-loops", "1"});
  ASSERT_EQ(r.exit_code, 2) << r.out << r.err;  // never SHIP
  Json res = result_of(r);
  EXPECT_NE(res["end"], "ship");
  EXPECT_EQ(res["verdict"], "FIX-FIRST");
  EXPECT_NE(res["status"], "DONE");
  // The red validation is a gap of its own, in the record too.
  EXPECT_NE(test::slurp(out_dir + "/diagnosis.md").find("`sh check.sh` exited 1"),
            std::string::npos);
  // Nothing was committed for the parser gap: not "fixed".
  ASSERT_EQ(res["gaps"].size(), 1u);
  EXPECT_EQ(res["gaps"][0]["status"], "unverified") << res.dump();
  EXPECT_EQ(res["gaps"][0]["commits"], Json::array());
  // The re-reviewer was pointed at the given review's gaps, and they are there.
  std::string gaps = test::slurp(out_dir + "/loop-0/gaps.md");
  EXPECT_NE(gaps.find("the parser drops the last line"), std::string::npos) << gaps;
}

TEST_F(FixCli, TheNextFixerIsShownTheRedValidationAsData) {
  test::write_text(worktree + "/check.sh", "echo RED-CHECK-OUTPUT\nexit 1\n");
  sh(worktree, {"git", "commit", "-q", "-am", "a failing check"});
  test::write_text(s / "review.md", "- [HIGH] the parser drops the last line — src/a.txt:1\n");
  // Loop 2's fixer sees the check's output; it repairs the check.
  when("developer", "RED-CHECK-OUTPUT",
       {{"files", Json::array({file("check.sh", "exit 0\n")})},
        {"result", [] {
           Json d = result("DONE", "the check is green");
           d["fixes"] = Json::array({{{"gap", 1}, {"files", {"check.sh"}}}});
           return d;
         }()}});
  rule("developer", {{"result", result("DONE", "could not find the bug")}});
  rule("code-reviewer", {{"result", review(Json::array())}});
  auto r = fix({"--review", s / "review.md"});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  Json res = result_of(r);
  EXPECT_EQ(res["end"], "ship");
  EXPECT_EQ(res["loops"], 2);
  std::string dispatch_gaps = test::slurp(out_dir + "/loop-2/gaps-to-fix.md");
  EXPECT_NE(dispatch_gaps.find("`sh check.sh` exited 1"), std::string::npos) << dispatch_gaps;
}

TEST_F(FixCli, AFixTheRepositorysHookRefusesIsNotShippedAndTheNextFixerSeesTheHooksOutput) {
  // The repository's pre-commit hook refuses a staged file with a tab.
  ASSERT_TRUE(write_file_atomic(repo + "/.git/hooks/pre-commit",
                                "#!/bin/sh\n"
                                "tab=$(printf '\\t')\n"
                                "for f in $(git diff --cached --name-only); do\n"
                                "  if grep -q \"$tab\" \"$f\"; then echo \"HOOK: $f has a tab\"; "
                                "exit 1; fi\n"
                                "done\n",
                                0755)
                  .ok());
  test::write_text(s / "review.md", "- [HIGH] a.txt says a, not alpha — src/a.txt:1\n");
  Json fixed = result("DONE", "alpha");
  fixed["fixes"] = Json::array({{{"gap", 1}, {"files", {"src/a.txt"}}}});
  when("developer", "HOOK: src/a.txt has a tab",
       {{"files", Json::array({file("src/a.txt", "alpha\n")})}, {"result", fixed}});
  when("developer", "Fix loop 1 of",
       {{"files", Json::array({file("src/a.txt", "al\tpha\n")})}, {"result", fixed}});
  rule("code-reviewer", {{"result", review(Json::array())}});
  auto r = fix({"--review", s / "review.md"});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  Json res = result_of(r);
  EXPECT_EQ(res["end"], "ship");
  EXPECT_EQ(res["loops"], 2) << "the refused commit held the first loop back";
  EXPECT_NE(r.err.find("hook_refused"), std::string::npos) << r.err;
  // The second fixer got the hook's words, fenced as data, and its fix is
  // the one on the branch.
  std::string gaps = test::slurp(out_dir + "/loop-2/gaps-to-fix.md");
  EXPECT_NE(gaps.find("hook refused the commit"), std::string::npos) << gaps;
  EXPECT_EQ(git({"show", "HEAD:src/a.txt"}), "alpha\n");
  EXPECT_EQ(git({"grep", "-c", "\t", "HEAD", "--", "src/a.txt"}), "");
  EXPECT_EQ(git({"status", "--porcelain"}), "");
}

TEST_F(FixCli, TwoRunsInOneSecondKeepRecordDirectoriesOfTheirOwn) {
  test::write_text(s / "review.md", "- [HIGH] gap one — src/a.txt:1\n");
  rule("developer", {{"result", result("DONE", "could not find it")}});
  rule("code-reviewer", {{"result", review({finding("src/a.txt", "gap one")})}});
  std::vector<std::string> args = {"fix",        "--worktree", worktree,      "--agent",
                                   "sim",        "--sim-scenario", scenario_path, "--base",
                                   "main",       "--review",   s / "review.md", "--max-loops", "1"};
  test::write_text(scenario_path,
                   dump_py(Json{{"default", {{"result", result("BLOCKED", "no rule")}}},
                                {"personas", rules}}));
  auto first = test::run_devgraph(args, env);
  ASSERT_EQ(first.exit_code, 2) << first.out << first.err;
  std::string record = result_of(first)["record"].get<std::string>();
  std::string home = dirname_of(dirname_of(record));
  // The directories the next minute's runs would be named for already
  // exist, with another run's files.
  auto now = std::chrono::system_clock::now();
  std::vector<std::string> taken;
  for (int i = 0; i < 60; ++i) {
    std::string d = home + "/" + utc_stamp(now + std::chrono::seconds(i));
    if (path_exists(d)) continue;
    test::write_text(d + "/fix.json", "{\"sentinel\": true}\n");
    taken.push_back(d);
  }
  auto second = test::run_devgraph(args, env);
  ASSERT_EQ(second.exit_code, 2) << second.out << second.err;
  std::string second_record = result_of(second)["record"].get<std::string>();
  EXPECT_NE(second_record, record);
  EXPECT_TRUE(path_exists(record));
  for (const auto& d : taken) {
    EXPECT_EQ(test::slurp(d + "/fix.json"), "{\"sentinel\": true}\n") << d;
    EXPECT_FALSE(path_exists(d + "/diagnosis.md")) << d;
  }
}

TEST_F(FixCli, TheNextRunStartsAtTheStepTheRaisesReached) {
  for (int i = 0; i <= 3; ++i)
    when("code-reviewer", "review " + std::to_string(i) + " of",
         {{"result", review({finding("src/a.txt", "gap " + std::to_string(i))})}});
  for (const char* m : {"sim-1", "sim-2", "sim-3"})
    rule("developer", {{"setting", m},
                       {"files", Json::array({file("src/a.txt", std::string(m) + "\n")})},
                       {"result", [&] {
                          Json d = result("DONE", std::string("tried at ") + m);
                          d["fixes"] = Json::array({{{"gap", 1}, {"files", {"src/a.txt"}}}});
                          return d;
                        }()}});
  rule("diagnostician", {{"result", diagnosis("model-capacity")}});
  auto r = fix({"--model", "sim-1", "--max-loops", "1"});
  ASSERT_EQ(r.exit_code, 2) << r.out << r.err;
  ASSERT_EQ(result_of(r)["model"], "sim-3");
  // The next run, no --model: it starts at sim-3 and asks for sim-3 -> sim-4.
  out_dir = s / "out2";
  r = fix({"--max-loops", "1"});
  ASSERT_EQ(r.exit_code, 2) << r.out << r.err;
  Json res = result_of(r);
  EXPECT_EQ(saved(1, "fixer.json")["model"], "sim-3");
  EXPECT_EQ(res["model"], "sim-3");
  ASSERT_TRUE(res.contains("raise_needed")) << res.dump();
  EXPECT_EQ(res["raise_needed"]["from"], "sim-3");
  EXPECT_EQ(res["raise_needed"]["to"], "sim-4");
}

TEST_F(FixCli, ARefusedSecondDiagnosisNamesNoEarlierCauseAndTheBudgetCountsTheGrantedLoop) {
  // Review 1 finds a new gap (a raise is evidenced), review 2 the same one
  // again (no new evidence: the second diagnosis is refused).
  when("code-reviewer", "review 0 of", {{"result", review({finding("src/a.txt", "gap 0")})}});
  when("code-reviewer", "review 1 of", {{"result", review({finding("src/a.txt", "gap 1")})}});
  when("code-reviewer", "review 2 of", {{"result", review({finding("src/a.txt", "gap 1")})}});
  rule("developer", {{"result", result("DONE", "tried")}});
  rule("diagnostician", {{"result", diagnosis("model-capacity")}});
  auto r = fix({"--model", "sim-1", "--max-loops", "1"});
  ASSERT_EQ(r.exit_code, 2) << r.out << r.err;
  Json res = result_of(r);
  EXPECT_EQ(res["loops"], 2);
  EXPECT_EQ(res["raises_used"], 1);
  EXPECT_FALSE(res.contains("cause")) << res.dump();
  std::string record = test::slurp(out_dir + "/diagnosis.md");
  EXPECT_NE(record.find("## Cause\nnot diagnosed"), std::string::npos) << record;
  EXPECT_NE(record.find("attempts=2/2"), std::string::npos) << record;
}

TEST_F(FixCli, BadInputIsOneLineAndNothingRuns) {
  auto both = test::run_devgraph({"fix", "--worktree", worktree, "--branch", "feature"}, env);
  EXPECT_EQ(both.exit_code, 3);
  EXPECT_NE(both.err.find("one of --worktree"), std::string::npos) << both.err;
  // The primary clone is never a place to fix in.
  auto primary = test::run_devgraph(
      {"fix", "--worktree", repo, "--agent", "sim", "--sim-scenario", scenario_path}, env);
  EXPECT_EQ(primary.exit_code, 3) << primary.err;
  EXPECT_NE(primary.err.find("placement guard"), std::string::npos) << primary.err;
  test::write_text(s / "bad.md", "Verdict: SHIP\n- [HIGH] still broken — src/a.txt\n");
  auto bad = test::run_devgraph({"fix", "--worktree", worktree, "--agent", "sim", "--sim-scenario",
                                 scenario_path, "--review", s / "bad.md"},
                                env);
  EXPECT_EQ(bad.exit_code, 3);
  EXPECT_EQ(bad.err.find('\n'), bad.err.size() - 1) << bad.err;
  // Each refusal is one line naming what is wrong, and nothing is written.
  test::write_text(s / "half.json", dump_py(Json{{"from", "sim-1"}, {"to", "sim-2"}}));
  test::write_text(scenario_path, "{}");
  const std::vector<std::pair<std::vector<std::string>, std::string>> refusals = {
      {{"--criteria", s / "none.md"}, "--criteria"},
      {{"--max-loops", "0"}, "--max-loops"},
      {{"--base", "no-such-ref"}, "--base no-such-ref"},
      {{"--raise-decision", s / "none.json"}, "--raise-decision"},
      {{"--raise-decision", s / "half.json"}, "reason"},
      {{"--agent", "nope"}, "--agent"},
  };
  for (const auto& [extra, words] : refusals) {
    std::vector<std::string> args = {"fix",         "--worktree", worktree,
                                     "--agent",     "sim",        "--sim-scenario",
                                     scenario_path, "--out",      out_dir};
    args.insert(args.end(), extra.begin(), extra.end());
    auto r = test::run_devgraph(args, env);
    EXPECT_EQ(r.exit_code, 3) << words << ": " << r.err;
    EXPECT_EQ(r.out, "") << words;
    EXPECT_EQ(r.err.find('\n'), r.err.size() - 1) << r.err;
    EXPECT_NE(r.err.find(words), std::string::npos) << r.err;
  }
  auto no_scenario = test::run_devgraph({"fix", "--worktree", worktree, "--agent", "sim"}, env);
  EXPECT_EQ(no_scenario.exit_code, 3);
  EXPECT_NE(no_scenario.err.find("--sim-scenario"), std::string::npos) << no_scenario.err;
  EXPECT_FALSE(path_exists(out_dir));
  EXPECT_FALSE(path_exists(s / "develop"));
  EXPECT_EQ(git({"log", "--format=%s", "main..HEAD"}), "feature\n");
  EXPECT_EQ(git({"status", "--porcelain"}), "");
}

}  // namespace
}  // namespace devgraph
