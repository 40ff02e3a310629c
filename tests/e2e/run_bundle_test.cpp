// `devgraph run-bundle` end to end, failure paths first: the real binary, a
// real git repository and worktree, a real test command (a shell script that
// runs tests/*.sh), and a fake `claude` (tests/fixtures/bundle/
// fake-claude-sim) that takes the claude backend's argv, reads the persona
// and the task from the prompt, and lets `devgraph sim-agent` play a
// per-test scenario: which files each persona writes, what it answers, or
// how it fails. Every test asserts on the exit code, the RESULT_JSON line,
// state.json, events.jsonl, the result files and git.
#include <gtest/gtest.h>

#include <ctime>

#include <algorithm>
#include <functional>
#include <map>
#include <set>
#include <sstream>

#include "bundle/run.h"
#include "support/build_paths.h"
#include "support/run_bundle_fixture.h"
#include "support/run_scenario.h"
#include "support/test_util.h"
#include "util/fs.h"
#include "util/json.h"

namespace devgraph {
namespace {

using test::count_of;
using test::default_plan;
using test::done;
using test::file;
using test::PlannedTask;
using test::red;
using RunBundle = test::RunBundleFixture;

TEST_F(RunBundle, HappyPathCommitsEveryTaskOnceAndReadiesTheBranch) {
  auto r = run();
  expect_done(r);
  Json res = result_of(r);
  EXPECT_EQ(res["tasks_completed"], 3);
  EXPECT_EQ(res["branch"], "develop/b1");
  EXPECT_EQ(res["head"], git({"rev-parse", "HEAD"}).substr(0, 40));
  // Each task's commit holds exactly its own files.
  for (const auto& t : plan) {
    auto files = files_of(commit_of(t.id));
    EXPECT_EQ(files, t.impl() + "\n" + t.test() + "\n") << t.id;
  }
  // T1 and T2 ran side by side; T3 started only after both were committed.
  auto started3 = find("TASK_STARTED", {{"task", "T3"}});
  auto started2 = find("TASK_STARTED", {{"task", "T2"}});
  auto committed1 = find("TASK_COMMITTED", {{"task", "T1"}});
  auto committed2 = find("TASK_COMMITTED", {{"task", "T2"}});
  ASSERT_EQ(started3.size(), 1u);
  ASSERT_EQ(committed1.size(), 1u);
  ASSERT_EQ(committed2.size(), 1u);
  EXPECT_LT(started2[0], committed1[0]);
  EXPECT_GT(started3[0], committed1[0]);
  EXPECT_GT(started3[0], committed2[0]);
  // Persona results on disk, and the gates in order.
  for (const auto& t : plan)
    for (const char* p : {"tdd-writer", "developer", "tester", "adversarial-tester"}) {
      EXPECT_EQ(saved(p, t.id)["result"]["status"], "DONE") << p << " " << t.id;
      // The CLI's own output, kept beside its result.
      EXPECT_NE(
          test::slurp(bundle_dir + "/tasks/" + t.id + "/" + p + ".output.log").find("RESULT_JSON"),
          std::string::npos)
          << p << " " << t.id;
    }
  EXPECT_EQ(saved("code-reviewer")["node"], "final_review");
  auto passed = find("BUNDLE_VERIFY_PASSED");
  auto approved = find("REVIEW_APPROVED");
  ASSERT_EQ(passed.size(), 1u);
  ASSERT_EQ(approved.size(), 1u);
  EXPECT_LT(passed[0], approved[0]);
  EXPECT_TRUE(find("MALFORMED_RESULT").empty());
  EXPECT_EQ(res["persona_runs"], 1 + 3 * 4 + 2);
}

// Holds every completion back until nothing is running, then hands them
// over together: the driver sees simultaneous completions, in the order
// the runtime reported them.
class BatchingLauncher final : public bundle::Launcher {
 public:
  explicit BatchingLauncher(std::unique_ptr<bundle::Launcher> inner) : inner_(std::move(inner)) {}
  Expected<std::uint64_t> launch(const agents::LaunchRequest& r) override {
    return inner_->launch(r);
  }
  std::optional<bundle::LaunchEvent> next() override {
    if (queue_.empty())
      while (auto ev = inner_->next()) queue_.push_back(std::move(*ev));
    return poll();
  }
  std::optional<bundle::LaunchEvent> poll() override {
    if (queue_.empty()) return std::nullopt;
    auto ev = std::move(queue_.front());
    queue_.erase(queue_.begin());
    return ev;
  }
  size_t outstanding() const override { return inner_->outstanding() + queue_.size(); }
  int persona_runs() const override { return inner_->persona_runs(); }
  void stop_all() override { inner_->stop_all(); }

 private:
  std::unique_ptr<bundle::Launcher> inner_;
  std::vector<bundle::LaunchEvent> queue_;
};

TEST_F(RunBundle, TheLongestChainIsServedFirstWhenCompletionsCoincide) {
  // Two side tasks listed first, then the head of a two-task chain: in
  // plan (and arrival) order the side tasks would start, advance and
  // commit before the chain's head; served by the length of the chain
  // ahead, T1 goes first at every step.
  plan = {{"S1", "side one", "one", {}, {}},
          {"S2", "side two", "two", {}, {}},
          {"T1", "chain head", "head", {}, {}},
          {"T2", "chain tail", "tail", {"T1"}, {}}};
  scenario = base_scenario();
  test::write_text(scenario_path, dump_py(scenario, 2));
  ::setenv("FAKE_SCENARIO", scenario_path.c_str(), 1);
  ::setenv("FAKE_STATE", fake_state.c_str(), 1);
  ::setenv("DEVGRAPH_BIN", DEVGRAPH_BIN, 1);
  bundle::RunBundleRequest req;
  req.run_dir = run_dir;
  req.bundle = "b1";
  req.skill = test::source_dir() + "/skill";
  req.agent_bin = test::test_dir() + "/fixtures/bundle/fake-claude-sim";
  req.max_parallel = 3;
  req.wrap_launcher = [](std::unique_ptr<bundle::Launcher> inner) {
    return std::unique_ptr<bundle::Launcher>(new BatchingLauncher(std::move(inner)));
  };
  auto report = bundle::run_bundle(req);
  ASSERT_EQ(report.exit_code, 0) << report.result.dump();
  auto order = [&](const std::string& type) {
    std::vector<std::string> ids;
    for (size_t i : find(type)) ids.push_back(events()[i]["detail"].value("task", ""));
    return ids;
  };
  auto started = order("TASK_STARTED");
  auto tdd_done = order("TDD_DONE");
  auto committed = order("TASK_COMMITTED");
  ASSERT_EQ(started.size(), 4u);
  EXPECT_EQ(started[0], "T1") << testing::PrintToString(started);
  ASSERT_GE(tdd_done.size(), 3u);
  EXPECT_EQ(tdd_done[0], "T1") << testing::PrintToString(tdd_done);
  ASSERT_EQ(committed.size(), 4u);
  EXPECT_EQ(committed[0], "T1") << testing::PrintToString(committed);
  // T2 starts as soon as T1 is committed, before the side tasks' commits.
  size_t t2_start = find("TASK_STARTED", {{"task", "T2"}}).at(0);
  size_t s1_commit = find("TASK_COMMITTED", {{"task", "S1"}}).at(0);
  EXPECT_LT(t2_start, s1_commit);
}

TEST_F(RunBundle, MalformedResultIsResumedOnceThenAccepted) {
  one_task();
  Json rule = {{"task", "T1"},
               {"call", 1},
               {"fail", "malformed"},
               {"files", Json::array({file("src/T1.txt", "hello\n")})},
               {"resume_result", done("wrote T1 (resumed)")}};
  prepend("developer", rule);
  auto r = run();
  expect_done(r);
  EXPECT_EQ(calls("developer T1 launch"), 1u);
  EXPECT_EQ(calls("developer T1 resume"), 1u);
  EXPECT_EQ(find("MALFORMED_RESULT", {{"persona", "developer"}, {"task", "T1"}}).size(), 1u);
  EXPECT_EQ(saved("developer", "T1")["result"]["summary"], "wrote T1 (resumed)");
  EXPECT_EQ(saved("developer", "T1")["outcome"], "result");
  EXPECT_TRUE(find("BLOCKED").empty());
}

TEST_F(RunBundle, MalformedAgainAfterTheResumeBlocksTheTask) {
  prepend("developer", {{"task", "T1"},
                        {"fail", "malformed"},
                        {"files", Json::array({file("src/T1.txt", "hello\n")})}});
  auto r = run();
  expect_blocked(r, "T1");
  // Three launches (the first and two transient retries), each resumed once.
  EXPECT_EQ(calls("developer T1 launch"), 3u);
  EXPECT_EQ(calls("developer T1 resume"), 3u);
  EXPECT_EQ(find("MALFORMED_RESULT", {{"task", "T1"}}).size(), 3u);
  // Each blocked attempt enters blocker_recovery; the first two come back
  // to implement (retry_previous), the third finds the budget spent.
  auto blocked = find("BLOCKED", {{"task", "T1"}});
  ASSERT_EQ(blocked.size(), 3u);
  EXPECT_EQ(events()[blocked[2]]["detail"]["retry"], 3);
  EXPECT_EQ(events()[blocked[0]]["detail"]["lane_to"], "blocker_recovery");
  auto recovered = find("RECOVERED", {{"task", "T1"}});
  ASSERT_EQ(recovered.size(), 2u);
  EXPECT_EQ(events()[recovered[0]]["detail"]["lane_to"], "implement");
  auto waiting = find("AWAITING_HUMAN", {{"task", "T1"}});
  ASSERT_EQ(waiting.size(), 1u);
  EXPECT_EQ(events()[waiting[0]]["detail"]["lane_from"], "blocker_recovery");
  Json saved_result = saved("developer", "T1");
  EXPECT_EQ(saved_result["outcome"], "malformed_result");
  EXPECT_EQ(saved_result["result"]["status"], "BLOCKED");
  EXPECT_EQ(saved_result["result"]["blockers"], Json::array({"malformed_result"}));
  Json c = task_cursor("T1");
  EXPECT_EQ(c["node"], "awaiting_human");
  EXPECT_EQ(c["status"], "waiting_human");
  // T2 was independent and finished with only its own files; T3 never began.
  EXPECT_EQ(task_cursor("T2")["status"], "complete");
  EXPECT_EQ(files_of(commit_of("T2")), "src/T2.txt\ntests/T2.sh\n");
  EXPECT_TRUE(find("TASK_STARTED", {{"task", "T3"}}).empty());
  EXPECT_EQ(count_of(task_trailers(), "b1/"), 1u);
  // T1's uncommitted work is still there for the human.
  EXPECT_NE(git({"status", "--porcelain"}).find("src/T1.txt"), std::string::npos);
}

TEST_F(RunBundle, CliErrorBacksOffWhileAnotherTaskFinishes) {
  // T1's test writer fails like an overloaded API for as long as T2 has not
  // been committed (the fake reads events.jsonl), so the order is fixed by
  // what happens, not by timing: T1 backs off, 50 ms doubling, while T2 runs
  // its whole lane and commits; then T1's retry succeeds.
  two_tasks();
  auto r = run({}, {{"FAKE_FAIL_PERSONA", "tdd-writer"},
                    {"FAKE_FAIL_TASK", "T1"},
                    {"FAKE_FAIL_UNTIL_FILE", run_dir + "/events.jsonl"},
                    {"FAKE_FAIL_UNTIL_MATCH", "TASK_COMMITTED.*\"b1/T2\""}});
  expect_done(r);
  auto backoffs = find("NOTE", {{"topic", "cli_error_backoff"}, {"task", "T1"}});
  ASSERT_GE(backoffs.size(), 1u);
  EXPECT_EQ(calls("tdd-writer T1 failed"), backoffs.size());
  auto evs = events();
  for (size_t i = 0; i < backoffs.size(); ++i) {
    const Json& d = evs[backoffs[i]]["detail"];
    EXPECT_EQ(d["attempt"], static_cast<int>(i + 1));
    EXPECT_NEAR(d["delay_s"].get<double>(), 0.05 * static_cast<double>(1 << i), 1e-9) << i;
    EXPECT_NE(d["error"].get<std::string>().find("API Error"), std::string::npos);
  }
  // One dispatch per attempt: the first and one per back-off.
  auto dispatched = find("PERSONA_DISPATCHED", {{"persona", "tdd-writer"}, {"task", "T1"}});
  EXPECT_EQ(dispatched.size(), backoffs.size() + 1);
  // Order: T1 backed off, T2 committed meanwhile, then T1's test writer
  // finished; the timestamps agree with the sequence numbers.
  auto t2_committed = find("TASK_COMMITTED", {{"task", "T2"}});
  auto t1_tdd = find("TDD_DONE", {{"task", "T1"}});
  ASSERT_EQ(t2_committed.size(), 1u);
  ASSERT_EQ(t1_tdd.size(), 1u);
  EXPECT_LT(backoffs[0], t2_committed[0]);
  EXPECT_LT(t2_committed[0], t1_tdd[0]);
  std::string ts_backoff = evs[backoffs[0]]["ts"], ts_commit = evs[t2_committed[0]]["ts"],
              ts_done = evs[t1_tdd[0]]["ts"];
  EXPECT_LE(ts_backoff, ts_commit);
  EXPECT_LE(ts_commit, ts_done);
  // The runtime's own log has every back-off.
  size_t logged = 0;
  for (const auto& rec : log())
    logged += rec["event"] == "backoff" && rec.value("task", Json()) == "T1";
  EXPECT_EQ(logged, backoffs.size());
}

TEST_F(RunBundle, UsageLimitResettingTomorrowWaitsForAHumanWithoutRelaunching) {
  // A usage limit whose reset lies beyond the runtime's longest pause comes
  // back as a provider_limit blocker. Relaunching would hit the same limit
  // at once (and did, in a loop): the task waits for a human instead.
  two_tasks();
  const long long tomorrow = static_cast<long long>(::time(nullptr)) + 30 * 3600;
  auto r =
      run({}, {{"FAKE_FAIL_PERSONA", "tdd-writer"},
               {"FAKE_FAIL_TASK", "T1"},
               {"FAKE_FAIL_MESSAGE", "Claude AI usage limit reached|" + std::to_string(tomorrow)}});
  expect_blocked(r, "T1");
  EXPECT_EQ(calls("tdd-writer T1 failed"), 1u) << "relaunched into the same limit";
  EXPECT_EQ(task_cursor("T1")["status"], "waiting_human");
  Json saved_result = saved("tdd-writer", "T1");
  EXPECT_EQ(saved_result["outcome"], "provider_limit");
  EXPECT_EQ(saved_result["result"]["blockers"], Json::array({"provider_limit"}));
}

TEST_F(RunBundle, HangingPersonaTimesOutAndSpendsTheRetryBudget) {
  // T2's test writer is blocked twice, then hangs on every later attempt.
  // Only the transient-retry budget stops it: the third attempt times out
  // and the task waits for a human. (Relaunching a timed-out persona for
  // free would loop here until the test's own timeout.) One persona timeout
  // of 3 s is all the test waits: three times the time an ordinary launch
  // takes under the sanitizers on a loaded machine.
  two_tasks();
  prepend("tdd-writer", {{"task", "T2"}, {"after_call", 2}, {"fail", "hang"}});
  prepend("tdd-writer", {{"task", "T2"},
                         {"call", 2},
                         {"result",
                          {{"status", "BLOCKED"},
                           {"summary", "the runner is busy"},
                           {"evidence", Json::array()},
                           {"blockers", Json::array({"a runner is busy"})}}}});
  prepend("tdd-writer", {{"task", "T2"},
                         {"call", 1},
                         {"result",
                          {{"status", "BLOCKED"},
                           {"summary", "no fixture"},
                           {"evidence", Json::array()},
                           {"blockers", Json::array({"a fixture is missing"})}}}});
  auto r = run({"--persona-timeout-seconds", "3"});
  expect_blocked(r, "T2");
  EXPECT_NE(result_of(r)["blockers"][0].get<std::string>().find("timeout"), std::string::npos)
      << result_of(r)["blockers"].dump();
  EXPECT_EQ(calls("tdd-writer T2 launch"), 3u);
  auto blocked = find("BLOCKED", {{"task", "T2"}});
  ASSERT_EQ(blocked.size(), 3u);
  EXPECT_EQ(events()[blocked[1]]["detail"]["retry"], 2);
  EXPECT_EQ(events()[blocked[2]]["detail"]["retry"], 3);
  EXPECT_EQ(find("RECOVERED", {{"task", "T2"}}).size(), 2u);
  Json saved_result = saved("tdd-writer", "T2");
  EXPECT_EQ(saved_result["outcome"], "timeout");
  EXPECT_EQ(saved_result["result"]["status"], "BLOCKED");
  EXPECT_EQ(saved_result["result"]["blockers"], Json::array({"timeout"}));
  int timed_out = 0;
  for (const auto& rec : log())
    timed_out += rec["event"] == "finished" && rec.value("timed_out", false);
  EXPECT_EQ(timed_out, 1);
  auto waiting = find("AWAITING_HUMAN", {{"task", "T2"}});
  ASSERT_EQ(waiting.size(), 1u);
  EXPECT_EQ(task_cursor("T2")["status"], "waiting_human");
  // T1 went on and committed only its own files.
  EXPECT_EQ(task_cursor("T1")["status"], "complete");
  EXPECT_EQ(files_of(commit_of("T1")), "src/T1.txt\ntests/T1.sh\n");
}

TEST_F(RunBundle, ReportedWriteOutsideTheFootprintExtendsItWhenNobodyClaimsThePath) {
  two_tasks();
  prepend(
      "developer",
      {{"task", "T1"},
       {"files", Json::array({file("src/T1.txt", "hello\n"), file("docs/T1.md", "Say hello.\n")})},
       {"result", done("wrote T1 and its note", Json::array({"src/T1.txt", "docs/T1.md"}))}});
  auto r = run();
  expect_done(r);
  // The violation goes through blocker_recovery, which extends the
  // footprint (no other task claims the note) and sends the cursor on.
  auto violation = find("FOOTPRINT_VIOLATION", {{"task", "T1"}});
  ASSERT_EQ(violation.size(), 1u);
  EXPECT_EQ(events()[violation[0]]["detail"]["outside"], Json::array({"docs/T1.md"}));
  EXPECT_EQ(events()[violation[0]]["detail"]["conflicts"], Json::array());
  auto recovered = find("RECOVERED", {{"task", "T1"}});
  ASSERT_EQ(recovered.size(), 1u);
  EXPECT_GT(recovered[0], violation[0]);
  EXPECT_EQ(events()[recovered[0]]["detail"]["footprint_extended"], Json::array({"docs/T1.md"}));
  EXPECT_EQ(files_of(commit_of("T1")), "docs/T1.md\nsrc/T1.txt\ntests/T1.sh\n");
  // T2, in flight beside T1, never took the note it did not write, whichever
  // of the two reached its commit first.
  EXPECT_EQ(files_of(commit_of("T2")), "src/T2.txt\ntests/T2.sh\n");
  EXPECT_TRUE(find("RECOVERED", {{"task", "T2"}}).empty());
  EXPECT_TRUE(find("FOOTPRINT_VIOLATION", {{"task", "T2"}}).empty());
  auto valid = test::run_devgraph({"validate", "run", run_dir});
  EXPECT_EQ(valid.exit_code, 0) << valid.out << valid.err;
}

TEST_F(RunBundle, AnUnreportedScratchFileIsQuarantinedWithItsBytesAndTheBundleIsDelivered) {
  one_task();
  prepend("developer",
          {{"task", "T1"},
           {"files", Json::array({file("src/T1.txt", "hello\n"), file("notes-T1.md", "scratch\n")})},
           {"result", done("wrote T1", Json::array({"src/T1.txt"}))}});
  prepend("code-reviewer", {{"dispatch_contains", "notes-T1.md"},
                            {"result", done("told of notes-T1.md", Json::array())}});
  auto r = run();
  expect_done(r);
  EXPECT_TRUE(find("FOOTPRINT_VIOLATION", {{"task", "T1"}}).empty());
  EXPECT_TRUE(find("AWAITING_HUMAN", {}).empty());
  // Never committed, not in the worktree any more, kept byte for byte.
  EXPECT_EQ(git({"log", "--format=%H", "main..HEAD", "--", "notes-T1.md"}), "");
  EXPECT_FALSE(path_exists(worktree + "/notes-T1.md"));
  std::string dir = run_dir + "/bundles/b1/quarantine";
  EXPECT_EQ(test::slurp(dir + "/files/notes-T1.md"), "scratch\n");
  Json index = *parse_json(test::slurp(dir + "/index.json"), "index");
  ASSERT_EQ(index.size(), 1u) << index.dump();
  EXPECT_EQ(index[0]["path"], "notes-T1.md");
  EXPECT_EQ(index[0]["attributed_to"], "T1");
  // The final review was told (its rule answers only a dispatch naming the
  // file), and the ready branch's event names it.
  Json review = *parse_json(test::slurp(run_dir + "/bundles/b1/code-reviewer.result.json"), "r");
  EXPECT_EQ(review["result"]["summary"], "told of notes-T1.md") << review.dump();
  auto ready = find("BRANCH_READY", {});
  ASSERT_EQ(ready.size(), 1u);
  EXPECT_EQ(events()[ready[0]]["detail"]["quarantined"], Json::array({"notes-T1.md"}));
  auto valid = test::run_devgraph({"validate", "run", run_dir});
  EXPECT_EQ(valid.exit_code, 0) << valid.out << valid.err;
}

TEST_F(RunBundle, ATrackedFileEditedOutsideEveryFootprintWaitsForAHumanAndIsNeverCommitted) {
  one_task();
  prepend("developer",
          {{"task", "T1"},
           {"files", Json::array({file("src/T1.txt", "hello\n"), file("README.md", "changed\n")})},
           {"result", done("wrote T1", Json::array({"src/T1.txt"}))}});
  auto r = run();
  expect_blocked(r, "footprint violation");
  auto violation = find("FOOTPRINT_VIOLATION", {{"task", "T1"}});
  ASSERT_EQ(violation.size(), 1u);
  Json d = events()[violation[0]]["detail"];
  EXPECT_EQ(d["outside"], Json::array({"README.md"}));
  EXPECT_EQ(d["unlisted"], Json::array({"README.md"}));
  Json c = task_cursor("T1");
  EXPECT_EQ(c["status"], "waiting_human");
  EXPECT_EQ(c["footprint_outside"], Json::array({"README.md"}));
  EXPECT_NE(result_of(r)["blockers"][0].get<std::string>().find("reported by no writer of T1"),
            std::string::npos)
      << result_of(r)["blockers"].dump();
  // Nothing committed; the edit is still in the worktree for the person,
  // and nothing went to the quarantine.
  EXPECT_EQ(count_of(task_trailers(), "b1/"), 0u);
  EXPECT_EQ(test::slurp(worktree + "/README.md"), "changed\n");
  EXPECT_FALSE(path_exists(run_dir + "/bundles/b1/quarantine"));
  auto valid = test::run_devgraph({"validate", "run", run_dir});
  EXPECT_EQ(valid.exit_code, 0) << valid.out << valid.err;
}

TEST_F(RunBundle, FilesGitIgnoresNeverReachACommit) {
  // The repository ignores build/ in .gitignore and *.log in
  // .git/info/exclude; the planner and the developer write such files and
  // report them.
  one_task();
  test::write_text(repo + "/.gitignore", "build/\n");
  sh(repo, {"git", "add", "--", ".gitignore"});
  sh(repo, {"git", "commit", "-q", "-m", "ignore build output"});
  sh(worktree, {"git", "merge", "-q", "--ff-only", "main"});
  std::string exclude = git({"rev-parse", "--git-path", "info/exclude"});
  exclude.erase(exclude.find_last_not_of('\n') + 1);
  if (exclude[0] != '/') exclude = worktree + "/" + exclude;
  ASSERT_TRUE(make_directories(exclude.substr(0, exclude.rfind('/'))).ok());
  test::write_text(exclude, "*.log\n");
  Json planner = scenario["personas"]["planner"][0];
  planner["files"].push_back(file("build/plan-notes.txt", "scratch\n"));
  planner["files"].push_back(file("planner.log", "thinking\n"));
  planner["result"]["artifacts"] = Json::array({"build/plan-notes.txt", "planner.log"});
  scenario["personas"]["planner"][0] = planner;
  prepend("developer",
          {{"task", "T1"},
           {"files", Json::array({file("src/T1.txt", "hello\n"), file("build/T1.o", "obj\n"),
                                  file("T1.log", "ran\n")})},
           {"result", done("wrote T1", Json::array({"src/T1.txt", "build/T1.o", "T1.log"}))}});
  auto r = run();
  expect_done(r);
  std::string committed = git({"log", "--name-only", "--format=", "main..HEAD"});
  for (const char* path : {"build/", ".log"})
    EXPECT_EQ(committed.find(path), std::string::npos) << path << "\n" << committed;
  EXPECT_EQ(files_of(commit_of("T1")), "src/T1.txt\ntests/T1.sh\n");
  EXPECT_TRUE(find("FOOTPRINT_VIOLATION").empty());
  std::string ignored = git({"status", "--porcelain", "--ignored", "--untracked-files=all"});
  for (const char* path : {"build/plan-notes.txt", "planner.log", "build/T1.o", "T1.log"})
    EXPECT_NE(ignored.find("!! " + std::string(path)), std::string::npos) << path << "\n"
                                                                          << ignored;
}

TEST_F(RunBundle, APlanInADirectoryGitIgnoresStaysOutOfTheBranchAndTheBundleGoesOn) {
  // `git add` refuses an ignored path; the plan's commit never asks it to.
  one_task();
  test::write_text(repo + "/.gitignore", "docs/develop/\n");
  sh(repo, {"git", "add", "--", ".gitignore"});
  sh(repo, {"git", "commit", "-q", "-m", "ignore the plans"});
  sh(worktree, {"git", "merge", "-q", "--ff-only", "main"});
  auto r = run();
  expect_done(r);
  EXPECT_EQ(git({"log", "--format=%H", "main..HEAD", "--", "docs/develop"}), "");
  EXPECT_EQ(files_of(commit_of("T1")), "src/T1.txt\ntests/T1.sh\n");
  std::string ignored = git({"status", "--porcelain", "--ignored", "--untracked-files=all"});
  EXPECT_NE(ignored.find("!! docs/develop/plans/b1.tasks.json"), std::string::npos) << ignored;
}

TEST_F(RunBundle, ThePlannersCopyOfTheSpecIsCommittedWithThePlan) {
  one_task();
  Json planner = scenario["personas"]["planner"][0];
  planner["files"].push_back(
      file("docs/develop/specs/b1.md", "# b1\n\nEach task adds one word file.\n"));
  planner["result"]["artifacts"] = Json::array(
      {"docs/develop/specs/b1.md", "docs/develop/plans/b1.md", "docs/develop/plans/b1.tasks.json"});
  scenario["personas"]["planner"][0] = planner;
  auto r = run();
  expect_done(r);
  std::string plan_commit = git({"log", "--format=%H", "--fixed-strings", "--grep",
                                 "Devgraph-Bundle-Step: b1/plan", "main..HEAD"});
  plan_commit.erase(plan_commit.find_last_not_of('\n') + 1);
  ASSERT_EQ(plan_commit.size(), 40u) << plan_commit;
  EXPECT_EQ(
      files_of(plan_commit),
      "docs/develop/plans/b1.md\ndocs/develop/plans/b1.tasks.json\ndocs/develop/specs/b1.md\n");
  EXPECT_EQ(files_of(commit_of("T1")), "src/T1.txt\ntests/T1.sh\n");
  EXPECT_TRUE(find("FOOTPRINT_VIOLATION").empty());
}

TEST_F(RunBundle, WriteIntoAnotherInFlightTasksFootprintWaitsForAHuman) {
  // T2 claims src/shared/*.txt and is still in flight (its test writer
  // fails and backs off until T1's violation is recorded) when T1 reaches
  // its commit with a note written under src/shared/: outside every
  // footprint, and in conflict with T2's.
  plan[1].extra_files = {"src/shared/*.txt"};
  scenario = base_scenario();
  prepend(
      "developer",
      {{"task", "T1"},
       {"files", Json::array({file("src/T1.txt", "hello\n"), file("src/shared/T1.md", "mine\n")})},
       {"result",
        done("wrote T1 and a shared note", Json::array({"src/T1.txt", "src/shared/T1.md"}))}});
  auto r = run({}, {{"FAKE_FAIL_PERSONA", "tdd-writer"},
                    {"FAKE_FAIL_TASK", "T2"},
                    {"FAKE_FAIL_UNTIL_FILE", run_dir + "/events.jsonl"},
                    {"FAKE_FAIL_UNTIL_MATCH", "FOOTPRINT_VIOLATION"}});
  expect_blocked(r, "footprint violation");
  auto violation = find("FOOTPRINT_VIOLATION", {{"task", "T1"}});
  ASSERT_EQ(violation.size(), 1u);
  Json d = events()[violation[0]]["detail"];
  EXPECT_EQ(d["outside"], Json::array({"src/shared/T1.md"}));
  EXPECT_EQ(d["conflicts"], Json::array({"T2"}));
  Json c = task_cursor("T1");
  EXPECT_EQ(c["node"], "awaiting_human");
  EXPECT_EQ(c["status"], "waiting_human");
  EXPECT_TRUE(find("RECOVERED", {{"task", "T1"}}).empty());
  EXPECT_EQ(c["footprint_outside"], Json::array({"src/shared/T1.md"}));
  // T2 finished, and its commit took neither T1's stray note nor T1's own
  // uncommitted files; both wait in the worktree for the human.
  EXPECT_EQ(task_cursor("T2")["status"], "complete");
  EXPECT_EQ(files_of(commit_of("T2")), "src/T2.txt\ntests/T2.sh\n");
  EXPECT_TRUE(find("RECOVERED", {{"task", "T2"}}).empty());
  std::string dirty = git({"status", "--porcelain", "--untracked-files=all"});
  EXPECT_NE(dirty.find("?? src/shared/T1.md"), std::string::npos) << dirty;
  EXPECT_NE(dirty.find("?? src/T1.txt"), std::string::npos) << dirty;
  EXPECT_EQ(count_of(task_trailers(), "b1/"), 1u);
  EXPECT_TRUE(find("TASK_STARTED", {{"task", "T3"}}).empty());
}

TEST_F(RunBundle, ReviewFindingsAreRepairedAndTheSecondReviewPasses) {
  one_task();
  Json finding = {{"file", "src/T1.txt"}, {"title", "greeting lacks a full stop"}};
  prepend("code-reviewer", {{"call", 1},
                            {"result",
                             {{"status", "DONE_WITH_CONCERNS"},
                              {"summary", "one finding"},
                              {"evidence", Json::array()},
                              {"findings", Json::array({finding})}}}});
  prepend("developer",
          {{"task", ""},
           {"files", Json::array({file("docs/greeting.md", "hello.\n")})},
           {"result", done("added the full stop", Json::array({"docs/greeting.md"}))}});
  auto r = run();
  expect_done(r);
  EXPECT_EQ(calls("code-reviewer - launch"), 2u);
  EXPECT_EQ(calls("developer - launch"), 1u);
  auto findings = find("REVIEW_FINDINGS");
  auto repaired = find("BUNDLE_REPAIR_COMMITTED");
  auto passed = find("BUNDLE_VERIFY_PASSED");
  auto approved = find("REVIEW_APPROVED");
  ASSERT_EQ(findings.size(), 1u);
  ASSERT_EQ(repaired.size(), 1u);
  ASSERT_EQ(passed.size(), 2u);
  ASSERT_EQ(approved.size(), 1u);
  EXPECT_LT(passed[0], findings[0]);
  EXPECT_LT(findings[0], repaired[0]);
  EXPECT_LT(repaired[0], passed[1]);
  EXPECT_LT(passed[1], approved[0]);
  EXPECT_EQ(state()["bundles_runtime"]["b1"]["repairs"], 1);
  std::string steps =
      git({"log", "--format=%(trailers:key=Devgraph-Bundle-Step,valueonly)", "main..HEAD"});
  EXPECT_EQ(count_of(steps, "b1/repair-1\n"), 1u) << steps;
  EXPECT_NE(test::slurp(bundle_dir + "/repair-findings.md").find("greeting lacks a full stop"),
            std::string::npos);
}

TEST_F(RunBundle, FindingThatSurvivesARepairEscalatesEarly) {
  one_task();
  Json finding = {{"file", "src/T1.txt"}, {"title", "greeting is rude"}};
  prepend("code-reviewer", {{"result",
                             {{"status", "DONE_WITH_CONCERNS"},
                              {"summary", "still rude"},
                              {"evidence", Json::array()},
                              {"findings", Json::array({finding})}}}});
  prepend("developer", {{"task", ""},
                        {"files", Json::array({file("docs/greeting.md", "kinder.\n")})},
                        {"result", done("tried", Json::array({"docs/greeting.md"}))}});
  auto r = run();
  expect_blocked(r, "survived a repair cycle");
  // Two reviews and one repair, not the three repair cycles of the budget.
  EXPECT_EQ(calls("code-reviewer - launch"), 2u);
  EXPECT_EQ(calls("developer - launch"), 1u);
  EXPECT_EQ(find("REVIEW_FINDINGS").size(), 1u);
  Json c = state()["bundles_runtime"]["b1"];
  EXPECT_EQ(c["node"], "awaiting_human");
  EXPECT_EQ(c["repairs"], 1);
  auto waiting = find("AWAITING_HUMAN");
  ASSERT_EQ(waiting.size(), 1u);
  EXPECT_EQ(events()[waiting[0]]["detail"]["findings"].size(), 1u);
  // Every task stays committed; nothing was delivered.
  EXPECT_EQ(count_of(task_trailers(), "b1/"), 1u);
}

TEST_F(RunBundle, FailingBundleVerifyIsRepairedThenDone) {
  one_task();
  // T1's developer writes the wrong word, and its verifiers and its own
  // check (which only asks for the file) miss it: only the real test
  // command at bundle_verify catches it.
  plan[0].extra_files = {"tests/T1-exists.sh"};
  scenario = base_scenario();
  prepend("tdd-writer",
          {{"task", "T1"},
           {"files", Json::array({file("tests/T1.sh", "grep -qx hello src/T1.txt\n"),
                                  file("tests/T1-exists.sh", "test -s src/T1.txt\n")})},
           {"result", red("red test for T1", "sh tests/T1-exists.sh")}});
  prepend("developer", {{"task", "T1"},
                        {"files", Json::array({file("src/T1.txt", "hi\n")})},
                        {"result", done("wrote T1")}});
  prepend("developer", {{"task", ""},
                        {"files", Json::array({file("src/T1.txt", "hello\n")})},
                        {"result", done("fixed T1's word", Json::array({"src/T1.txt"}))}});
  auto r = run();
  expect_done(r);
  auto failed = find("BUNDLE_VERIFY_FAILED");
  auto repaired = find("BUNDLE_REPAIR_COMMITTED");
  auto passed = find("BUNDLE_VERIFY_PASSED");
  ASSERT_EQ(failed.size(), 1u);
  ASSERT_EQ(repaired.size(), 1u);
  ASSERT_EQ(passed.size(), 1u);
  EXPECT_LT(failed[0], repaired[0]);
  EXPECT_LT(repaired[0], passed[0]);
  std::string evidence = events()[failed[0]]["detail"]["evidence"];
  EXPECT_NE(evidence.find("FAIL tests/T1.sh"), std::string::npos) << evidence;
  EXPECT_NE(test::slurp(bundle_dir + "/repair-findings.md").find("FAIL tests/T1.sh"),
            std::string::npos);
  std::string last = git({"log", "-1", "--format=%s%n%(trailers:key=Devgraph-Bundle-Step)"});
  EXPECT_NE(last.find("Devgraph-Bundle-Step: b1/repair-1"), std::string::npos) << last;
  EXPECT_EQ(files_of("HEAD"), "src/T1.txt\n");
}

// ---------------------------------------------------------------------------
// The graph decides: routes, recovery nodes and selectors as GRAPH.yaml says.

TEST_F(RunBundle, AnEditedRouteInGraphYamlIsFollowed) {
  // A copy of the skill whose implement node goes straight to the commit:
  // no verifier runs, and every task is still committed exactly once.
  one_task();
  std::string skill = s / "skill";
  sh(s.path(), {"cp", "-R", test::source_dir() + "/skill", skill});
  std::string graph = test::slurp(skill + "/GRAPH.yaml");
  const std::string from =
      "    routes:\n      done: verify\n      concerns_actionable: repair_task";
  auto at = graph.find(from);
  ASSERT_NE(at, std::string::npos);
  graph.replace(at, from.size(),
                "    routes:\n      done: commit_task\n      concerns_actionable: repair_task");
  test::write_text(skill + "/GRAPH.yaml", graph);
  auto r = run({"--skill", skill});
  expect_done(r);
  EXPECT_EQ(calls("tester T1 launch"), 0u);
  EXPECT_EQ(calls("adversarial-tester T1 launch"), 0u);
  EXPECT_TRUE(find("VERIFY_DONE").empty());
  auto implemented = find("IMPLEMENT_DONE", {{"task", "T1"}});
  auto committed = find("TASK_COMMITTED", {{"task", "T1"}});
  ASSERT_EQ(implemented.size(), 1u);
  ASSERT_EQ(committed.size(), 1u);
  EXPECT_EQ(events()[committed[0]]["detail"]["lane_from"], "implement");
}

TEST_F(RunBundle, MissingContextTheRunCanAnswerIsRecoveredBeforeAnyHuman) {
  // The test writer asks what "farewell" means; the plan says. The cursor
  // goes to context_recovery and back (retry_previous), with what was found.
  two_tasks();
  prepend("tdd-writer", {{"task", "T2"},
                         {"call", 1},
                         {"result",
                          {{"status", "NEEDS_CONTEXT"},
                           {"summary", "what is a farewell here?"},
                           {"evidence", Json::array()},
                           {"missing_context", Json::array({"farewell"})}}}});
  auto r = run();
  expect_done(r);
  EXPECT_EQ(calls("tdd-writer T2 launch"), 2u);
  auto needs = find("NEEDS_CONTEXT", {{"task", "T2"}});
  auto recovered = find("RECOVERED", {{"task", "T2"}});
  ASSERT_EQ(needs.size(), 1u);
  ASSERT_EQ(recovered.size(), 1u);
  EXPECT_EQ(events()[needs[0]]["detail"]["lane_to"], "context_recovery");
  EXPECT_EQ(events()[recovered[0]]["detail"]["lane_from"], "context_recovery");
  EXPECT_EQ(events()[recovered[0]]["detail"]["lane_to"], "write_tdd");
  std::string found = test::slurp(bundle_dir + "/tasks/T2/context.md");
  EXPECT_NE(found.find("- docs/develop/plans/b1.md:"), std::string::npos) << found;
  EXPECT_NE(found.find("farewell"), std::string::npos) << found;
  EXPECT_TRUE(find("AWAITING_HUMAN").empty());
}

TEST_F(RunBundle, MissingContextNothingAnswersWaitsForAHumanAtOnce) {
  two_tasks();
  prepend("tdd-writer", {{"task", "T1"},
                         {"result",
                          {{"status", "NEEDS_CONTEXT"},
                           {"summary", "which moon?"},
                           {"evidence", Json::array()},
                           {"missing_context", Json::array({"the colour of the moon"})}}}});
  auto r = run();
  expect_blocked(r, "T1");
  EXPECT_EQ(calls("tdd-writer T1 launch"), 1u) << "relaunched with nothing new to say";
  // One read-only researcher looked first; its answer named no line.
  EXPECT_EQ(find("PERSONA_DISPATCHED", {{"persona", "researcher"}, {"task", "T1"}}).size(), 1u);
  auto waiting = find("AWAITING_HUMAN", {{"task", "T1"}});
  ASSERT_EQ(waiting.size(), 1u);
  EXPECT_EQ(events()[waiting[0]]["detail"]["lane_from"], "context_recovery");
  EXPECT_EQ(task_cursor("T1")["status"], "waiting_human");
  EXPECT_EQ(task_cursor("T2")["status"], "complete");
  // What was searched is in the reason the inbox shows.
  std::string why = task_cursor("T1")["recovery_why"];
  EXPECT_NE(why.find("git grep: colour, moon"), std::string::npos) << why;
  EXPECT_NE(why.find("researcher: not in the repository"), std::string::npos) << why;
}

TEST_F(RunBundle, APlannersQuestionInItsOwnWordsIsAnsweredFromTheRepositorysDocs) {
  // The repository says it; the planner asks in its own words, once.
  one_task();
  test::write_text(worktree + "/README.md",
                   "words\n\nConventions: [docs/conventions.md](docs/conventions.md).\n");
  test::write_text(worktree + "/docs/conventions.md",
                   "# Conventions\n\nDates in reports use ISO 8601 (YYYY-MM-DD).\n");
  sh(worktree, {"git", "add", "--", "README.md", "docs/conventions.md"});
  sh(worktree, {"git", "commit", "-q", "-m", "docs: conventions"});
  Json asks = {{"status", "NEEDS_CONTEXT"},
               {"summary", "which date format?"},
               {"evidence", Json::array()},
               {"missing_context", Json::array({"Which date format should the report use?"})}};
  Json planned = scenario["personas"]["planner"].back();
  // Call 2 plans only when its prompt points at the line; any other asks again.
  Json second = planned;
  second["call"] = 2;
  second["dispatch_contains"] = "docs/conventions.md:3: Dates in reports use ISO 8601";
  prepend("planner", {{"after_call", 1}, {"result", asks}});
  prepend("planner", second);
  prepend("planner", {{"call", 1}, {"result", asks}});
  auto r = run();
  expect_done(r);
  EXPECT_EQ(calls("planner - launch"), 2u);
  EXPECT_TRUE(find("PERSONA_DISPATCHED", {{"persona", "researcher"}}).empty())
      << "the search found it";
  EXPECT_TRUE(find("AWAITING_HUMAN").empty());
  auto needs = find("NEEDS_CONTEXT");
  ASSERT_EQ(needs.size(), 1u);
  Json search = events()[needs[0]]["detail"]["context_search"];
  EXPECT_EQ(search["questions"], Json::array({"Which date format should the report use?"}));
  EXPECT_EQ(search["terms"], Json::array({"date", "format", "report"}));
  ASSERT_FALSE(search["found"].empty());
  EXPECT_EQ(search["found"][0].get<std::string>().rfind("- docs/conventions.md:3: ", 0), 0u)
      << search.dump();
  EXPECT_EQ(find("RECOVERED").size(), 1u);
}

TEST_F(RunBundle, VerifierFindingsAboutTheTestAreRepairedByTheTestWriter) {
  // finding_owner: the tester's finding names the test file the tdd-writer
  // wrote, so repair_task runs the tdd-writer, not the developer.
  one_task();
  const PlannedTask& t = plan[0];
  prepend("tdd-writer",
          {{"task", "T1"},
           {"call", 1},
           {"files", Json::array({file(t.test(), "grep -qx " + t.word + " " + t.impl() + "\n")})},
           {"result", [&] {
              Json r = red("red test for T1", "sh " + t.test());
              r["artifacts"] = Json::array({t.test()});
              return r;
            }()}});
  prepend("tester",
          {{"task", "T1"},
           {"call", 1},
           {"result",
            {{"status", "DONE_WITH_CONCERNS"},
             {"summary", "the test is too weak"},
             {"evidence", Json::array()},
             {"findings",
              Json::array({{{"file", t.test() + ":1"}, {"title", "checks one word only"}}})}}}});
  auto r = run();
  expect_done(r);
  EXPECT_EQ(calls("tdd-writer T1 launch"), 2u);
  EXPECT_EQ(calls("developer T1 launch"), 1u);
  auto triaged = find("CONCERN_TRIAGED", {{"task", "T1"}});
  ASSERT_EQ(triaged.size(), 1u);
  EXPECT_EQ(events()[triaged[0]]["detail"]["owner"], "tdd-writer");
  EXPECT_EQ(saved("tdd-writer", "T1")["node"], "repair_task");
  EXPECT_EQ(calls("tester T1 launch"), 2u);
}

TEST_F(RunBundle, UnknownBundleIsAStateErrorBeforeAnyWork) {
  auto before = test::slurp(run_dir + "/state.json");
  test::write_text(scenario_path, dump_py(scenario));
  auto r = test::run_devgraph({"run-bundle", run_dir, "--bundle", "b9", "--claude-bin",
                               test::test_dir() + "/fixtures/bundle/fake-claude-sim"});
  EXPECT_EQ(r.exit_code, 3) << r.out << r.err;
  EXPECT_EQ(result_of(r)["status"], "BLOCKED");
  EXPECT_EQ(test::slurp(run_dir + "/state.json"), before);
  EXPECT_FALSE(path_exists(fake_state + "/calls.log"));
}

TEST_F(RunBundle, ASecondDriverForTheSameBundleIsRefused) {
  // This test holds the bundle's driver lock, as a live driver would.
  auto held = FileLock::acquire(bundle_dir + "/driver.lock");
  ASSERT_TRUE(held.ok());
  test::write_text(bundle_dir + "/driver.pid", "4242\n");
  auto before = test::slurp(run_dir + "/state.json");
  test::write_text(scenario_path, dump_py(scenario));
  auto r = test::run_devgraph({"run-bundle", run_dir, "--bundle", "b1", "--claude-bin",
                               test::test_dir() + "/fixtures/bundle/fake-claude-sim"});
  EXPECT_EQ(r.exit_code, 3) << r.out << r.err;
  EXPECT_NE(r.out.find("being driven by another process (pid 4242)"), std::string::npos) << r.out;
  EXPECT_EQ(test::slurp(run_dir + "/state.json"), before);
  EXPECT_FALSE(path_exists(fake_state + "/calls.log"));
}

TEST_F(RunBundle, BadPersonaTimeoutIsAUsageError) {
  auto before = test::slurp(run_dir + "/state.json");
  for (const char* bad : {"0", "-1", "soon", "1e999"}) {
    auto r = test::run_devgraph(
        {"run-bundle", run_dir, "--bundle", "b1", "--persona-timeout-seconds", bad});
    EXPECT_EQ(r.exit_code, 2) << bad;
    EXPECT_NE(r.err.find("--persona-timeout-seconds"), std::string::npos) << r.err;
  }
  // A parallelism past what an int holds was truncated before.
  for (const char* bad : {"0", "4294967297", "x"}) {
    auto r = test::run_devgraph({"run-bundle", run_dir, "--bundle", "b1", "--max-parallel", bad});
    EXPECT_EQ(r.exit_code, 2) << bad;
    EXPECT_NE(r.err.find("argument --max-parallel: invalid int value"), std::string::npos) << r.err;
  }
  EXPECT_EQ(test::slurp(run_dir + "/state.json"), before);
  EXPECT_FALSE(path_exists(bundle_dir + "/run_bundle.log"));
}

}  // namespace
}  // namespace devgraph
