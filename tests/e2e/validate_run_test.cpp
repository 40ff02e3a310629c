// `devgraph validate run` on runs written by the reference checkpoint
// writer (when it is available) and on hand-broken copies of them.
#include <gtest/gtest.h>
#include <unistd.h>

#include "support/test_util.h"
#include "util/json.h"

namespace devgraph {
namespace {

using Steps = std::vector<std::vector<std::string>>;

// Runs every step (RUN_DIR first, then the checkpoint words) through the
// reference checkpoint writer in one Python process: its start-up costs
// far more than the steps.
void reference_checkpoint(const test::Scratch& home, const Steps& steps) {
  Json jobs = Json::array();
  for (const auto& s : steps) jobs.push_back(s);
  const std::string driver =
      "import contextlib, io, json, sys\n"
      "sys.path.insert(0, sys.argv[1])\n"
      "import checkpoint\n"
      "for argv in json.load(sys.stdin):\n"
      "    with contextlib.redirect_stdout(io.StringIO()):\n"
      "        checkpoint.main(argv)\n";
  auto r = test::run_process({"python3", "-c", driver, test::reference_dir() + "/runtime"},
                             {{"HOME", home.path()}}, "", dump_py(jobs));
  ASSERT_EQ(r.exit_code, 0) << r.err;
}

Steps move(const std::string& bundle, const std::string& task, const std::string& node,
           const std::string& event) {
  std::vector<std::string> s = {"move", "--bundle", bundle};
  if (!task.empty()) s.insert(s.end(), {"--task", task});
  s.insert(s.end(), {"--node", node, "--event", event});
  return {s};
}

Steps go(const std::string& node, const std::string& event) {
  return {{"go", "--node", node, "--event", event}};
}

Steps operator+(Steps a, const Steps& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

// One bundle, two tasks, a human detour, a footprint recovery, a bundle
// repair, a capacity handoff and resume, then the tail of the round.
Steps full_run() {
  Steps s = {{"init", "--repo", "/src/app", "--default-branch", "main"}};
  s = s + go("bundle", "SCAN_DONE") + go("bundle_scheduler", "BUNDLES_FORMED");
  s = s + move("B1", "", "plan_bundle", "BUNDLE_STARTED");
  s.push_back({"event", "--event", "PERSONA_DISPATCHED", "--detail",
               R"({"persona": "tech-lead", "agent_handle": "h1", "bundle": "B1"})"});
  s = s + move("B1", "", "task_scheduler", "PLAN_DONE");
  s = s + move("B1", "T1", "write_tdd", "TASK_STARTED") +
      move("B1", "T2", "write_tdd", "TASK_STARTED");
  s = s + move("B1", "T1", "implement", "TDD_DONE") +
      move("B1", "T2", "awaiting_human", "AWAITING_HUMAN");
  s = s + move("B1", "T1", "verify", "IMPLEMENT_DONE");
  s.push_back({"signal", "--type", "result", "--count", "31"});
  s.push_back({"handoff", "--reason", "capacity"});
  s.push_back({"resume"});
  s = s + move("B1", "T2", "write_tdd", "RECOVERED");
  s = s + move("B1", "T1", "blocker_recovery", "FOOTPRINT_VIOLATION") +
      move("B1", "T1", "verify", "RECOVERED");
  s = s + move("B1", "T1", "commit_task", "TASK_COMMITTED");
  s = s + move("B1", "T2", "implement", "TDD_DONE") +
      move("B1", "T2", "repair_task", "CONCERN_TRIAGED");
  s = s + move("B1", "T2", "verify", "TASK_REPAIR_DONE") +
      move("B1", "T2", "commit_task", "TASK_COMMITTED");
  s = s + move("B1", "", "bundle_verify", "BUNDLE_TASKS_COMPLETE");
  s = s + move("B1", "", "repair_bundle", "BUNDLE_VERIFY_FAILED");
  s = s + move("B1", "", "bundle_verify", "BUNDLE_REPAIR_COMMITTED");
  s = s + move("B1", "", "final_review", "BUNDLE_VERIFY_PASSED");
  s = s + move("B1", "", "documentation_review", "REVIEW_APPROVED");
  s = s + move("B1", "", "create_pr", "PR_CREATED");
  s.push_back({"event", "--event", "TECH_LEAD_DONE", "--detail", R"({"bundle": "B1"})"});
  s = s + go("monitor_prs", "ALL_BUNDLES_COMPLETE") + go("cleanup_merged", "PR_CHECKS_INSPECTED");
  s = s + go("audit_merged", "CLEANUP_DONE") + go("scan", "AUDIT_DONE") +
      go("complete", "RUN_COMPLETE");
  return s;
}

Steps initial() {
  return {{"init", "--repo", "/src/app", "--default-branch", "main"}};
}

Steps clean_run() {
  Steps s = {{"init", "--repo", "/src/app", "--default-branch", "main", "--merge",
              R"({"node": "clean_discover", "mode": "clean"})"}};
  s = s + go("clean_classify", "CLEAN_DISCOVERED") + go("clean_integrate", "CLEAN_CLASSIFIED");
  s = s + go("clean_verify_integration", "BRANCH_INTEGRATED");
  s = s + go("clean_cleanup", "INTEGRATION_VERIFIED") + go("clean_report", "CLEAN_CLEANUP_DONE");
  return s + go("complete", "CLEAN_REPORT_DONE");
}

// A version-3 run named its events freely and used node names that are
// retired now; neither is a problem for it.
Steps version3_run() {
  Steps s = {{"init", "--repo", "/src/app", "--default-branch", "main", "--merge",
              R"({"graph_version": 3})"}};
  s = s + go("reconcile", "RECONCILED_STUFF") + go("bundle", "BUNDLED");
  s.push_back({"event", "--event", "WHATEVER_V3_SAID"});
  return s;
}

// Moves the reference writer records without complaint although the graph
// does not allow them.
Steps illegal_run() {
  Steps s = initial() + go("bundle", "SCAN_DONE") + go("bundle_scheduler", "BUNDLES_FORMED");
  s = s + move("B1", "", "plan_bundle", "BUNDLE_STARTED") +
      move("B1", "", "task_scheduler", "PLAN_DONE");
  s = s + move("B1", "T1", "write_tdd", "TASK_STARTED");
  s = s + move("B1", "T1", "commit_task", "TASK_COMMITTED");  // skipped implement and verify
  s = s + move("B1", "T2", "verify", "TASK_STARTED");         // a task born mid-lane
  s = s + move("B1", "", "write_tdd", "NOTE");                // a bundle cursor in the task lane
  s = s + go("monitor_prs", "ALL_BUNDLES_COMPLETE");
  s = s + go("implement", "NOTE");  // the orchestrator in the task lane
  return s + move("B1", "T3", "nowhere", "TASK_STARTED");
}

// The reference runs are written once for the whole suite, in one Python
// process; a test that breaks a run works on its own copy.
class ValidateRun : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    if (test::reference_dir().empty()) return;
    runs_ = new test::Scratch();
    test::Scratch home;
    Steps all;
    for (const auto& [name, steps] :
         std::vector<std::pair<std::string, Steps>>{{"full", full_run()},
                                                    {"clean", clean_run()},
                                                    {"v3", version3_run()},
                                                    {"illegal", illegal_run()},
                                                    {"init", initial()}})
      for (auto step : steps) {
        step.insert(step.begin(), *runs_ / name);
        all.push_back(step);
      }
    reference_checkpoint(home, all);
  }
  static void TearDownTestSuite() {
    delete runs_;
    runs_ = nullptr;
  }
  void SetUp() override {
    if (test::reference_dir().empty()) GTEST_SKIP() << "reference runtime not available";
  }
  // A private copy of one of the suite's runs.
  std::string copy_of(const std::string& name) {
    std::string dir = scratch_ / name;
    auto r = test::run_process({"cp", "-r", *runs_ / name, dir});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return dir;
  }
  test::ProcessResult validate(const std::string& run_dir) {
    return test::run_devgraph({"validate", "run", run_dir});
  }
  static test::Scratch* runs_;
  test::Scratch scratch_;
};

test::Scratch* ValidateRun::runs_ = nullptr;

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t nl = text.find('\n', pos);
    out.push_back(text.substr(pos, nl - pos));
    pos = nl == std::string::npos ? text.size() : nl + 1;
  }
  return out;
}

std::string join_lines(const std::vector<std::string>& lines) {
  std::string out;
  for (const auto& l : lines) out += l + "\n";
  return out;
}

TEST_F(ValidateRun, ReferenceRunReplaysCleanlyAndIsLeftUntouched) {
  std::string run = *runs_ / "full";
  std::string state = test::slurp(run + "/state.json");
  std::string events = test::slurp(run + "/events.jsonl");
  auto r = validate(run);
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_EQ(r.out, "OK: run replays cleanly: 34 events, 3 cursors agree with state.json\n");
  EXPECT_EQ(test::slurp(run + "/state.json"), state);
  EXPECT_EQ(test::slurp(run + "/events.jsonl"), events);
}

TEST_F(ValidateRun, CleanupRunAndOlderGraphVersion) {
  auto c = validate(*runs_ / "clean");
  EXPECT_EQ(c.exit_code, 0) << c.out;
  auto old = validate(*runs_ / "v3");
  EXPECT_EQ(old.exit_code, 0) << old.out;
}

TEST_F(ValidateRun, IllegalMovesTheReferenceWriterAccepted) {
  auto r = validate(*runs_ / "illegal");
  EXPECT_EQ(r.exit_code, 1);
  std::vector<std::string> want = {
      "ERROR: seq 7 TASK_COMMITTED: task cursor B1/T1 moved write_tdd -> commit_task, which is not "
      "a route of write_tdd",
      "ERROR: seq 8 TASK_STARTED: task cursor B1/T2 starts at verify; the task lane is entered at "
      "write_tdd",
      "ERROR: seq 9 NOTE: bundle cursor B1 moved to write_tdd, which is in the task lane (a bundle "
      "cursor stays in bundle or shared)",
      "ERROR: seq 11 NOTE: orchestrator moved to implement, which is in the task lane (the "
      "orchestrator's cursor stays out of the bundle and task lanes)",
      "ERROR: seq 12 TASK_STARTED: task cursor B1/T3 moved to unknown node nowhere",
  };
  EXPECT_EQ(lines_of(r.out), want) << r.out;
}

TEST_F(ValidateRun, CrashBetweenAppendAndSave) {
  std::string run = copy_of("full");
  // The writer appended one more event and died before saving state.json.
  std::string events = test::slurp(run + "/events.jsonl");
  test::write_text(run + "/events.jsonl",
                   events + R"({"ts": "2026-01-01T00:00:00+00:00", "seq": 35, "type": "NOTE", )"
                            R"("node": "complete", "detail": {}})"
                            "\n");
  auto r = validate(run);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(
      r.out,
      "ERROR: 1 event(s) from seq 35 are past state.event_seq 34 (appended but state.json was "
      "not saved after them)\n");

  // ... or the last line was torn half-way.
  test::write_text(run + "/events.jsonl", events + R"({"ts": "2026-01-01T00:00:00+00:00", "se)");
  auto torn = validate(run);
  EXPECT_EQ(torn.exit_code, 1);
  EXPECT_EQ(torn.out,
            "ERROR: events.jsonl line 35: not a JSON object (a torn or hand-edited write)\n");
}

TEST_F(ValidateRun, LostAndDuplicatedLinesAndAStateThatDisagrees) {
  std::string run = copy_of("full");
  auto lines = lines_of(test::slurp(run + "/events.jsonl"));
  ASSERT_EQ(lines.size(), 34u);
  // Line 18 (seq 18) moved B1/T1 to commit_task; drop it and repeat seq 20.
  std::vector<std::string> edited(lines.begin(), lines.begin() + 17);
  edited.insert(edited.end(), lines.begin() + 18, lines.begin() + 20);
  edited.push_back(lines[19]);
  edited.insert(edited.end(), lines.begin() + 20, lines.end());
  test::write_text(run + "/events.jsonl", join_lines(edited));
  auto r = validate(run);
  EXPECT_EQ(r.exit_code, 1);
  std::vector<std::string> want = {
      "ERROR: seq 19 follows seq 17: seq 18 is missing",
      "ERROR: seq 20 (line 20) follows seq 20: duplicate or out of order, not replayed",
      "ERROR: cursor B1/T1: state.json has it at commit_task but the log leaves it at verify",
      "ERROR: cursor B1/T1: state.json status is complete but the log makes it active",
  };
  EXPECT_EQ(lines_of(r.out), want) << r.out;
}

TEST_F(ValidateRun, StateMustKeepItsContract) {
  std::string run = copy_of("init");
  std::string state = test::slurp(run + "/state.json");
  size_t at = state.find("\"status\": \"running\"");
  ASSERT_NE(at, std::string::npos);
  state.replace(at, 19, "\"status\": \"weird\"");
  test::write_text(run + "/state.json", state);
  auto r = validate(run);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(
      r.out,
      "ERROR: state.json ['status']: 'weird' is not one of ['running', 'handoff', 'complete', "
      "'human_required']\n");
}

TEST_F(ValidateRun, MissingOrCorruptFilesAreOneLine) {
  auto none = validate(scratch_ / "no-such-run");
  EXPECT_EQ(none.exit_code, 1);
  EXPECT_EQ(none.out, "ERROR: " + (scratch_ / "no-such-run") + ": not a run directory\n");
  std::string run = copy_of("init");
  std::string state = test::slurp(run + "/state.json");
  test::write_text(run + "/state.json", "{\"run_id\": ");
  auto corrupt = validate(run);
  EXPECT_EQ(corrupt.exit_code, 1);
  EXPECT_EQ(lines_of(corrupt.out).size(), 1u) << corrupt.out;
  EXPECT_NE(corrupt.out.find("state.json is not valid JSON"), std::string::npos) << corrupt.out;
  test::write_text(run + "/state.json", state);
  ASSERT_EQ(::unlink((run + "/events.jsonl").c_str()), 0);
  auto no_log = validate(run);
  EXPECT_EQ(no_log.exit_code, 1);
  EXPECT_EQ(no_log.out, "ERROR: cannot read " + run + "/events.jsonl: No such file or directory\n");
}

}  // namespace
}  // namespace devgraph
