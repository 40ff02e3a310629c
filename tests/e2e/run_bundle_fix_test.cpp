// `devgraph run-bundle` end to end, the fix loop inside repair_bundle: a
// final review's blocking gaps (a severity and a file) are closed one commit
// per gap, re-reviewed by a separate persona, and a loop that cannot finish
// is diagnosed and routed: a wait for a person, an appeal, or the bundle
// sent back to planning. The fixture is tests/support/run_bundle_fixture.h.
#include <gtest/gtest.h>

#include <sys/stat.h>

#include "support/run_bundle_fixture.h"
#include "support/run_scenario.h"
#include "support/test_util.h"
#include "util/fs.h"
#include "util/json.h"

namespace devgraph {
namespace {

using test::count_of;
using test::done;
using test::file;
using test::fixed_gap_one;
using test::one_gap;
using test::red;
using RunBundle = test::RunBundleFixture;

// Findings with a severity and a file are a review the fix loop reads: the
// fixer closes the gap (one commit), a separate re-review ships, and the
// bundle goes on through bundle_verify and another final review.
TEST_F(RunBundle, BlockingReviewGapsRunTheFixLoopInsideTheRepair) {
  one_task();
  prepend("code-reviewer", {{"call", 1}, {"result", one_gap("the greeting has no full stop")}});
  prepend("code-reviewer",
          {{"dispatch_contains", "review 1 of a fix loop"}, {"result", done("ships")}});
  Json fixed = fixed_gap_one("added the full stop");
  prepend("developer", {{"task", ""},
                        {"dispatch_contains", "Fix loop 1 of"},
                        {"files", Json::array({file("docs/greeting.md", "hello.\n")})},
                        {"result", fixed}});
  auto r = run();
  expect_done(r);
  EXPECT_EQ(calls("code-reviewer - launch"), 3u);  // the review, the loop's, the last
  EXPECT_EQ(find("REVIEW_FINDINGS").size(), 1u);
  EXPECT_EQ(find("BUNDLE_REPAIR_COMMITTED").size(), 1u);
  EXPECT_EQ(find("REVIEW_APPROVED").size(), 1u);
  EXPECT_TRUE(find("FIX_DIAGNOSED").empty());
  std::string gaps =
      git({"log", "--format=%(trailers:key=Devgraph-Fix-Gap,valueonly)", "main..HEAD"});
  EXPECT_NE(gaps.find("docs/greeting.md|"), std::string::npos) << gaps;
  EXPECT_EQ(files_of("HEAD"), "docs/greeting.md\n");
  Json fx = Json::parse(test::slurp(bundle_dir + "/fix-1/fix.json"));
  EXPECT_EQ(fx["end"], "ship");
  EXPECT_EQ(fx["gaps"][0]["status"], "fixed");
}

// A driver killed in the loop's second loop replays the first from its
// kept answers: no persona of loop 1 runs again, and the bundle delivers.
TEST_F(RunBundle, ADriverKilledInTheSecondFixLoopReplaysTheFirstWithoutRelaunching) {
  one_task();
  prepend("code-reviewer", {{"call", 1}, {"result", one_gap("no full stop")}});
  prepend("code-reviewer",
          {{"dispatch_contains", "review 2 of a fix loop"}, {"result", done("ships")}});
  prepend("code-reviewer",
          {{"dispatch_contains", "review 1 of a fix loop"}, {"result", one_gap("no capital")}});
  Json fixed = fixed_gap_one("fixed");
  for (const char* n : {"1", "2"})
    prepend("developer",
            {{"task", ""},
             {"dispatch_contains", std::string("Fix loop ") + n + " of"},
             {"files", Json::array({file("docs/greeting.md", std::string("Hello ") + n + ".\n")})},
             {"result", fixed}});
  // Killed once loop 2's fixer has answered.
  auto r = run({}, {{"DEVGRAPH_BUNDLE_CRASH_AT", "saved:b1/developer@2"}});
  ASSERT_EQ(r.exit_code, -1) << r.out << r.err;
  EXPECT_EQ(calls("developer - launch"), 2u);
  r = run();
  expect_done(r);
  // Loop 1's fixer and re-review were read back from their kept answers,
  // loop 2's fixer from its saved result: no fixer ran again.
  EXPECT_EQ(calls("developer - launch"), 2u);
  EXPECT_EQ(calls("code-reviewer - launch"), 4u);  // the review, the loop's two, the last
  Json fx = Json::parse(test::slurp(bundle_dir + "/fix-1/fix.json"));
  EXPECT_EQ(fx["end"], "ship");
  EXPECT_EQ(fx["loops"], 2);
}

// A loop that cannot finish is diagnosed, and the bundle waits for a
// person with the diagnosis, still in progress: nothing is delivered.
TEST_F(RunBundle, AFixLoopThatCannotFinishWaitsWithItsDiagnosis) {
  one_task();
  prepend("code-reviewer", {{"result", one_gap("the greeting is rude", "Critical")}});
  prepend("developer", {{"task", ""},
                        {"dispatch_contains", "Fix loop"},
                        {"files", Json::array({file("docs/greeting.md", "kinder\n")})},
                        {"result", done("tried", Json::array({"docs/greeting.md"}))}});
  Json rules_out = {{"model-capacity", "the fixer did what it was told"},
                    {"missing-context", "nothing was missing"},
                    {"env-tool-failure", "the tests ran"},
                    {"overdesigned-plan", "one file"}};
  prepend("diagnostician",
          {{"task", ""}, {"result", [&] {
                            Json d = done("two readings");
                            d["diagnosis"] = {
                                {"cause", "ambiguous-spec"},
                                {"new_evidence", "the reviewer wants formal, the spec says kind"},
                                {"readings", {"formal", "kind"}},
                                {"rules_out", rules_out}};
                            return d;
                          }()}});
  auto r = run();
  expect_blocked(r, "which reading is meant");
  auto diagnosed = find("FIX_DIAGNOSED");
  ASSERT_EQ(diagnosed.size(), 1u);
  Json d = events()[diagnosed[0]]["detail"];
  EXPECT_EQ(d["cause"], "ambiguous-spec");
  EXPECT_EQ(d["end"], "needs_person");
  Json c = state()["bundles_runtime"]["b1"];
  EXPECT_EQ(c["node"], "awaiting_human");
  EXPECT_EQ(c["status"], "waiting_human");
  std::string record = test::slurp(bundle_dir + "/fix-1/diagnosis.md");
  EXPECT_NE(record.find("the greeting is rude"), std::string::npos) << record;
  EXPECT_TRUE(find("BRANCH_READY").empty());
}

// A copy of the shipped skill with `edits` (old text, new text) made to its
// GRAPH.yaml; the path to pass as --skill.
std::string skill_with(const test::Scratch& s,
                       const std::vector<std::pair<std::string, std::string>>& edits) {
  std::string skill = s / "skill";
  auto cp = test::run_process({"cp", "-r", test::source_dir() + "/skill", skill});
  EXPECT_EQ(cp.exit_code, 0) << cp.err;
  std::string graph = test::slurp(skill + "/GRAPH.yaml");
  for (const auto& [from, to] : edits) {
    auto at = graph.find(from);
    EXPECT_NE(at, std::string::npos) << from;
    if (at != std::string::npos) graph.replace(at, from.size(), to);
  }
  test::write_text(skill + "/GRAPH.yaml", graph);
  return skill;
}

// The diagnosis persona's answer: an overdesigned plan, the other four
// causes ruled out.
Json overdesigned(const std::string& machinery) {
  Json d = done("the plan builds more than the issue asks");
  d["diagnosis"] = {{"cause", "overdesigned-plan"},
                    {"new_evidence", "the same gap came back after a fix that did what it said"},
                    {"machinery", {machinery}},
                    {"rules_out",
                     {{"model-capacity", "the fix was right for the design it was given"},
                      {"missing-context", "nothing was asked for"},
                      {"ambiguous-spec", "the issue reads one way"},
                      {"env-tool-failure", "the tests ran"}}}};
  return d;
}

// A fix loop whose review gives back the same gap: the diagnosis follows
// at once (the fixer did its part, committed).
void same_gap_twice(test::RunBundleFixture& f, const std::string& gap) {
  f.prepend("code-reviewer", {{"call", 1}, {"result", one_gap(gap, "Critical")}});
  f.prepend("code-reviewer", {{"dispatch_contains", "review 1 of a fix loop"},
                              {"result", one_gap(gap, "Critical")}});
  f.prepend("developer", {{"task", ""},
                          {"dispatch_contains", "Fix loop 1 of"},
                          {"files", Json::array({file("docs/greeting.md", "hello.\n")})},
                          {"result", fixed_gap_one("cached the greeting")}});
}

// An overdesigned-plan diagnosis sends the bundle back to plan_bundle: the
// planner is told what to leave out and which task ids are taken, the
// committed task stays on the branch, the new plan's task runs, and the
// bundle is delivered once its review passes.
TEST_F(RunBundle, AnOverdesignedPlanIsPlannedAgainWithoutItsMachineryAndDelivered) {
  one_task();
  same_gap_twice(*this, "the greeting cache is never invalidated");
  prepend("diagnostician", {{"task", ""}, {"result", overdesigned("the greeting cache")}});
  Json tasks = {{"bundle", "b1"},
                {"tasks",
                 {{{"id", "T9"},
                   {"title", "plain greeting"},
                   {"depends_on", Json::array()},
                   {"files", {"src/T9.txt", "tests/T9.sh"}}}}}};
  prepend("planner",
          {{"dispatch_contains", "Plan it again without: the greeting cache"},
           {"files", Json::array({file("docs/develop/plans/b1.md", "# Plan b1, again\n"),
                                  file("docs/develop/plans/b1.tasks.json", dump_py(tasks, 2))})},
           {"result", done("planned again")}});
  // Its first answer reuses the committed task's id: refused by the plan
  // check, and planned once more.
  Json reused = tasks;
  reused["tasks"][0]["id"] = "T1";
  prepend("planner",
          {{"call", 2},
           {"files", Json::array({file("docs/develop/plans/b1.tasks.json", dump_py(reused, 2))})},
           {"result", done("planned again, reusing T1")}});
  prepend("tdd-writer",
          {{"task", "T9"},
           {"files", Json::array({file("tests/T9.sh", "grep -qx plain src/T9.txt\n")})},
           {"result", red("red test for T9", "sh tests/T9.sh")}});
  prepend("developer", {{"task", "T9"},
                        {"files", Json::array({file("src/T9.txt", "plain\n")})},
                        {"result", done("wrote T9")}});
  auto r = run();
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  Json res = result_of(r);
  EXPECT_EQ(res["status"], "DONE") << res.dump();
  EXPECT_EQ(res["tasks_completed"], 2);
  auto diagnosed = find("FIX_DIAGNOSED");
  ASSERT_EQ(diagnosed.size(), 1u);
  EXPECT_EQ(events()[diagnosed[0]]["detail"]["cause"], "overdesigned-plan");
  EXPECT_EQ(events()[diagnosed[0]]["detail"]["end"], "replan");
  auto replanned = find("BUNDLE_REPLANNED");
  ASSERT_EQ(replanned.size(), 1u);
  EXPECT_EQ(events()[replanned[0]]["detail"]["without"], Json::array({"the greeting cache"}));
  EXPECT_EQ(find("PLAN_DONE").size(), 2u);
  EXPECT_EQ(calls("planner - launch"), 3u);
  bool refused = false;
  for (const auto& e : events())
    refused |=
        e["type"] == "BLOCKED" &&
        e["detail"].dump().find("reuses task ids of the earlier plan (T1)") != std::string::npos;
  EXPECT_TRUE(refused);
  // Both plans' tasks are committed on the branch, each once; the run's
  // bundle lists the new plan's.
  EXPECT_EQ(task_cursor("T1")["status"], "complete");
  EXPECT_EQ(task_cursor("T9")["status"], "complete");
  std::string trailers = task_trailers();
  EXPECT_EQ(count_of(trailers, "b1/T1\n"), 1u) << trailers;
  EXPECT_EQ(count_of(trailers, "b1/T9\n"), 1u) << trailers;
  EXPECT_EQ(state()["bundles"][0]["tasks"][0]["id"], "T9");
  EXPECT_NE(git({"log", "--format=%s", "main..HEAD"}).find("docs(b1): plan (planned again)"),
            std::string::npos);
  EXPECT_EQ(find("BRANCH_READY").size(), 1u);
  EXPECT_EQ(git({"status", "--porcelain"}), "");
}

// fix.max_replans bounds it: past it, the overdesigned plan waits for a
// person, and the planner is not dispatched again.
TEST_F(RunBundle, AnOverdesignedPlanPastMaxReplansWaitsForAPerson) {
  one_task();
  std::string skill = skill_with(s, {{"  max_replans: 1\n", "  max_replans: 0\n"}});
  same_gap_twice(*this, "the greeting cache is never invalidated");
  prepend("diagnostician", {{"task", ""}, {"result", overdesigned("the greeting cache")}});
  auto r = run({"--skill", skill});
  expect_blocked(r, "max_replans");
  EXPECT_TRUE(find("BUNDLE_REPLANNED").empty());
  EXPECT_EQ(calls("planner - launch"), 1u);
  EXPECT_EQ(state()["bundles_runtime"]["b1"]["node"], "awaiting_human");
}

// fix.reviewer_backend and fix.final_gate_backend hold in the bundle lane:
// the bundle runs on claude, its loop's re-review and final gate on codex
// (a fake on PATH), each a launch of its own, both in the bundle's ledger.
// The final gate disagrees with the re-review's SHIP: an appeal, the
// bundle waits, and neither verdict is taken over the other.
TEST_F(RunBundle, TheLoopsReReviewAndFinalGateRunOnTheirOwnBackend) {
  one_task();
  std::string skill = skill_with(s, {{"  reviewer_backend: null\n", "  reviewer_backend: codex\n"},
                                     {"  final_gate: false\n", "  final_gate: true\n"}});
  std::string bin = s / "bin";
  ASSERT_TRUE(make_directories(bin).ok());
  // codex exec --json: the final gate holds a gap, the re-review ships.
  std::string gap =
      R"({\"status\": \"DONE_WITH_CONCERNS\", \"summary\": \"one gap\", \"evidence\": [], )"
      R"(\"findings\": [{\"severity\": \"Important\", \"file\": \"docs/greeting.md\", )"
      R"(\"description\": \"the gate wants a capital\"}]})";
  std::string ships = R"({\"status\": \"DONE\", \"summary\": \"ships\", \"evidence\": []})";
  test::write_text(bin + "/codex",
                   "#!/bin/sh\n"
                   "case \"$*\" in\n"
                   "  *'You are the final gate'*) role=final; r='" +
                       gap +
                       "' ;;\n"
                       "  *) role=review; r='" +
                       ships +
                       "' ;;\n"
                       "esac\n"
                       "echo $role >> \"$FAKE_STATE/codex.log\"\n"
                       "n=$(wc -l < \"$FAKE_STATE/codex.log\")\n"
                       "echo '{\"type\":\"thread.started\",\"thread_id\":\"th-'$n'\"}'\n"
                       "printf '%s\\n' '{\"type\":\"item.completed\",\"item\":{\"id\":\"i1\","
                       "\"type\":\"agent_message\",\"text\":\"RESULT_JSON: '\"$r\"'\"}}'\n"
                       "echo '{\"type\":\"turn.completed\",\"usage\":{\"input_tokens\":10,"
                       "\"cached_input_tokens\":0,\"output_tokens\":5}}'\n");
  ASSERT_EQ(::chmod((bin + "/codex").c_str(), 0755), 0);
  prepend("code-reviewer", {{"call", 1}, {"result", one_gap("the greeting has no full stop")}});
  prepend("developer", {{"task", ""},
                        {"dispatch_contains", "Fix loop 1 of"},
                        {"files", Json::array({file("docs/greeting.md", "hello.\n")})},
                        {"result", fixed_gap_one("added the full stop")}});
  const char* path = std::getenv("PATH");
  auto r = run({"--skill", skill}, {{"PATH", bin + ":" + (path ? path : "/usr/bin:/bin")}});
  expect_blocked(r, "appeal");
  EXPECT_EQ(test::slurp(fake_state + "/codex.log"), "review\nfinal\n");
  // Claude ran the bundle's own review only, never the loop's.
  EXPECT_EQ(calls("code-reviewer - launch"), 1u);
  Json fx = Json::parse(test::slurp(bundle_dir + "/fix-1/fix.json"));
  EXPECT_EQ(fx["end"], "appeal");
  auto diagnosed = find("FIX_DIAGNOSED");
  ASSERT_EQ(diagnosed.size(), 1u);
  EXPECT_EQ(events()[diagnosed[0]]["detail"]["end"], "appeal");
  EXPECT_EQ(state()["bundles_runtime"]["b1"]["node"], "awaiting_human");
  std::string record = test::slurp(bundle_dir + "/fix-1/diagnosis.md");
  EXPECT_NE(record.find("## Appeal"), std::string::npos) << record;
  EXPECT_NE(record.find("the gate wants a capital"), std::string::npos) << record;
  size_t on_codex = 0;
  for (const auto& line : test::read_jsonl(bundle_dir + "/ledger.jsonl"))
    on_codex += line.value("backend", "") == "codex";
  EXPECT_EQ(on_codex, 2u);
}

}  // namespace
}  // namespace devgraph
