// `devgraph checkpoint` as a process: output and exit codes, refusals that
// leave the run untouched, runs handed back and forth with the reference
// checkpoint.py, and writers SIGKILLed at random instants.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <fcntl.h>

#include <chrono>
#include <random>
#include <regex>

#include "support/build_paths.h"
#include "support/test_util.h"
#include "util/json.h"

namespace devgraph {
namespace {

using test::run_devgraph;

struct RunDir {
  test::Scratch scratch;
  std::string dir = scratch / "runs/r1";
  std::string state_path() const { return join_path(dir, "state.json"); }
  std::string events_path() const { return join_path(dir, "events.jsonl"); }
  std::string files() const {
    return test::slurp(state_path()) + "\n--\n" + test::slurp(events_path());
  }
  test::ProcessResult cp(std::vector<std::string> args) const {
    args.insert(args.begin(), {"checkpoint", dir});
    return run_devgraph(args);
  }
};

std::vector<Json> read_events(const std::string& path) {
  return test::read_jsonl(path);
}

TEST(CheckpointCli, VerbsPrintWhatTheReferencePrints) {
  RunDir run;
  auto init = run.cp({"init", "--repo", "/repo", "--default-branch", "main"});
  ASSERT_EQ(init.exit_code, 0) << init.err;
  EXPECT_EQ(init.out, "r1\n");
  auto go = run.cp({"go", "--node", "bundle", "--event", "SCAN_DONE"});
  EXPECT_EQ(go.exit_code, 0) << go.err;
  EXPECT_EQ(go.out, "[r1] node=bundle event=SCAN_DONE\n");
  auto move = run.cp({"move", "--bundle", "B1", "--task", "T1", "--node", "write_tdd", "--event",
                      "TASK_STARTED", "--merge", R"({"base_commit": "abc"})"});
  EXPECT_EQ(move.exit_code, 0) << move.err;
  EXPECT_EQ(move.out, "[r1] cursor=B1/T1 node=write_tdd event=TASK_STARTED\n");
  auto ev = run.cp({"event", "--event", "NOTE", "--detail", R"({"text": "hi"})"});
  EXPECT_EQ(ev.out, "[r1] node=bundle event=NOTE\n");
  auto sig = run.cp({"signal", "--type", "turn", "--count", "2"});
  EXPECT_EQ(sig.exit_code, 0) << sig.err;
  Json report = Json::parse(sig.out);
  EXPECT_EQ(report["cursor"], "orchestrator");
  EXPECT_EQ(report["counters"]["turn"], 2);
  EXPECT_EQ(report["tier"], "green");
  auto show = run.cp({"show"});
  EXPECT_EQ(show.exit_code, 0);
  EXPECT_EQ(show.out, test::slurp(run.state_path()));  // indent=2 + newline both ways
  auto handoff = run.cp({"handoff", "--reason", "test"});
  EXPECT_EQ(handoff.exit_code, 0) << handoff.err;
  EXPECT_EQ(handoff.out, join_path(run.dir, "HANDOFF.md") + "\n");
  EXPECT_TRUE(path_exists(join_path(run.dir, "HANDOFF.md")));
  auto resume = run.cp({"resume"});
  EXPECT_EQ(resume.exit_code, 0) << resume.err;
  EXPECT_EQ(Json::parse(resume.out)["node"], "bundle");
  EXPECT_EQ(test::slurp(run.scratch / "current-run"), run.dir + "\n");
}

TEST(CheckpointCli, UsageErrorsExitTwoAndRefusalsExitOneWithNothingChanged) {
  RunDir run;
  ASSERT_EQ(run.cp({"init", "--repo", "/repo", "--default-branch", "main"}).exit_code, 0);
  const std::string before = run.files();
  struct Case {
    std::vector<std::string> args;
    int code;
    std::string needle;
  };
  const std::vector<Case> cases = {
      {{"go", "--event", "SCAN_DONE"}, 2, "the following arguments are required: --node"},
      {{"fly"}, 2, "invalid choice: 'fly'"},
      {{"signal", "--type", "tokens"}, 2, "invalid choice: 'tokens'"},
      {{"signal", "--type", "turn", "--count", "many"}, 2, "invalid int value: 'many'"},
      {{"go", "--node", "bundle", "--event", "SCAN_DONE", "--bogus", "1"}, 2, "unrecognized"},
      {{"go", "--node", "bundle", "--event", "SCAN_DONE", "--detail", "{nope"},
       1,
       "--detail is not valid JSON"},
      {{"go", "--node", "bundle", "--event", "SCAN_DONE", "--merge", "[1]"},
       1,
       "--merge must be a JSON object"},
      {{"event", "--event", "MADE_UP"}, 1, "not in the vocabulary"},
      {{"go", "--node", "verify", "--event", "SCAN_DONE"}, 1, "lane 'task'"},
      {{"go", "--node", "no_such_node", "--event", "SCAN_DONE"}, 1, "not a node of the graph"},
      {{"move", "--bundle", "B 1", "--node", "plan_bundle", "--event", "PLAN_DONE"},
       1,
       "not a valid id"},
      {{"move", "--bundle", "B1", "--node", "create_pr", "--event", "PLAN_DONE", "--plan",
        std::string(run.scratch / "none.json")},
       1,
       "--plan"},
      {{"event", "--event", "NOTE", "--merge", R"({"bundles_runtime": {}})"},
       1,
       "may not write bundles_runtime"},
      {{"go", "--node", "bundle", "--event", "SCAN_DONE", "--merge", R"({"status": "paused"})"},
       1,
       "schema"},
      {{"signal", "--type", "turn", "--bundle", "B9"}, 1, "has no cursor yet"},
      {{"init", "--repo", "/r", "--default-branch", "main"}, 1, "already exists"},
      {{"move", "--bundle", "-x", "--node", "plan_bundle", "--event", "PLAN_DONE"},
       2,
       "argument --bundle: expected one argument"},
      {{"signal", "--type", "turn", "--count", "99999999999999999999"}, 2, "out of range"},
      {{"go", "--node", "bundle", "--event", "SCAN_DONE", "--merge", R"({"a": 1e400})"},
       1,
       "--merge is not valid JSON: number overflow"},
      {{"event", "--event", "NOTE", "--merge", R"({"a": [100000000000000000000]})"},
       1,
       "--merge is not valid JSON: integer 100000000000000000000 is outside the 64-bit range"},
      {{"go", "--node", "bundle", "--event", "SCAN_DONE", "--detail", R"({"a": NaN})"},
       1,
       "--detail is not valid JSON"},
  };
  for (const auto& c : cases) {
    auto r = run.cp(c.args);
    EXPECT_EQ(r.exit_code, c.code) << c.args[0] << " " << r.err;
    EXPECT_NE(r.err.find(c.needle), std::string::npos) << r.err;
    if (c.code == 1) {
      EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    }
    EXPECT_EQ(run.files(), before) << r.err;
  }
  // argparse's abbreviations, and Python int() spellings of a count.
  auto abbreviated = run.cp({"signal", "--ty", "turn", "--co= 1_0"});
  EXPECT_EQ(abbreviated.exit_code, 0) << abbreviated.err;
  EXPECT_EQ(Json::parse(abbreviated.out)["counters"]["turn"], 10);
  const std::string counted = run.files();
  auto overflow = run.cp({"signal", "--type", "turn", "--count", "9223372036854775807"});
  EXPECT_EQ(overflow.exit_code, 1);
  EXPECT_NE(overflow.err.find("--count 9223372036854775807 would overflow the turn counter"),
            std::string::npos)
      << overflow.err;
  EXPECT_EQ(run.files(), counted);
  RunDir missing;
  auto r = missing.cp({"show"});
  EXPECT_EQ(r.exit_code, 1);
  auto m = missing.cp({"go", "--node", "bundle", "--event", "SCAN_DONE"});
  EXPECT_EQ(m.exit_code, 1);
  EXPECT_FALSE(path_exists(missing.dir));
  test::write_text(run.state_path(), "{\"run_id\": \"r1\",");
  auto torn = run.cp({"event", "--event", "NOTE"});
  EXPECT_EQ(torn.exit_code, 1);
  EXPECT_NE(torn.err.find("not valid JSON"), std::string::npos);
}

// Timestamps and the scratch root differ between two runs of the same steps.
std::string normalized(const std::string& text, const std::string& root) {
  static const std::regex ts(R"("\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\+00:00")");
  std::string out = std::regex_replace(text, ts, "\"TS\"");
  for (size_t pos; (pos = out.find(root)) != std::string::npos;)
    out.replace(pos, root.size(), "ROOT");
  return out;
}

// The same session recorded twice: once by devgraph alone, once with the
// two tools taking turns (each continuing the other's files). Both must
// accept every step and hold the same files after every step, so each
// reference step did exactly what devgraph's would have.
TEST(CheckpointCli, RunsPassBackAndForthWithTheReference) {
  if (test::reference_dir().empty()) GTEST_SKIP() << "reference runtime not available";
  const std::string ref = join_path(test::reference_dir(), "runtime/checkpoint.py");
  const std::vector<std::vector<std::string>> steps = {
      {"init", "--repo", "/repo", "--default-branch", "main", "--merge",
       R"({"delivery": "local"})"},
      {"go", "--node", "bundle", "--event", "SCAN_DONE", "--detail", R"({"issues": [1, 2]})"},
      {"go", "--node", "bundle_scheduler", "--event", "BUNDLES_FORMED", "--merge",
       R"({"bundles": [{"id": "B1", "title": "first"}, {"id": "B2", "title": "second"}]})"},
      {"move", "--bundle", "B1", "--node", "plan_bundle", "--event", "BUNDLE_STARTED", "--merge",
       R"({"branch": "dev/b1", "worktree": "/w"})"},
      {"event", "--event", "PERSONA_DISPATCHED", "--detail",
       R"({"persona": "tech-lead", "agent_handle": "tl-1", "bundle": "B1"})"},
      {"move", "--bundle", "B1", "--task", "T1", "--node", "write_tdd", "--event", "TASK_STARTED",
       "--merge", R"({"base_commit": "abc"})"},
      {"move", "--bundle", "B1", "--task", "T1", "--node", "implement", "--event", "TDD_DONE",
       "--detail", R"({"note": "red"})"},
      {"event", "--event", "PERSONA_DISPATCHED", "--detail",
       R"({"persona": "developer", "agent_handle": "d-1", "bundle": "B1", "task": "T1"})",
       "--merge", R"({"+concerns": {"task": "T1", "detail": "slow"}})"},
      {"signal", "--type", "result", "--count", "31"},
      {"signal", "--type", "turn", "--bundle", "B1", "--count", "5"},
      {"move", "--bundle", "B1", "--task", "T1", "--node", "commit_task", "--event",
       "TASK_COMMITTED"},
      {"move", "--bundle", "B1", "--task", "T2", "--node", "awaiting_human", "--event",
       "AWAITING_HUMAN"},
      {"handoff", "--reason", "red tier"},
      {"resume"},
      {"signal", "--type", "tool_call", "--reset"},
      {"move", "--bundle", "B1", "--node", "create_pr", "--event", "PR_CREATED", "--merge",
       R"({"pr": {"number": 7, "url": "u"}})"},
      {"go", "--node", "complete", "--event", "RUN_COMPLETE"},
  };
  test::Scratch home;  // the reference records session metrics under $HOME
  std::map<std::string, std::string> env = {{"HOME", home.path()}};
  RunDir alone, mixed;
  for (size_t i = 0; i < steps.size(); ++i) {
    auto r1 = alone.cp(steps[i]);
    ASSERT_EQ(r1.exit_code, 0) << steps[i][0] << ": " << r1.err;
    test::ProcessResult r2;
    if (i % 2 == 0) {
      std::vector<std::string> b = {"python3", ref, mixed.dir};
      b.insert(b.end(), steps[i].begin(), steps[i].end());
      r2 = test::run_process(b, env);
    } else {
      r2 = mixed.cp(steps[i]);
    }
    ASSERT_EQ(r2.exit_code, 0) << "step " << i << " " << steps[i][0] << ": " << r2.err;
    if (steps[i][0] != "signal") {  // the tier action text comes from GRAPH.yaml
      EXPECT_EQ(normalized(r1.out, alone.scratch.path()), normalized(r2.out, mixed.scratch.path()))
          << "step " << i;
    }
    EXPECT_EQ(normalized(test::slurp(alone.state_path()), alone.scratch.path()),
              normalized(test::slurp(mixed.state_path()), mixed.scratch.path()))
        << "state after step " << i << " " << steps[i][0];
    EXPECT_EQ(normalized(test::slurp(alone.events_path()), alone.scratch.path()),
              normalized(test::slurp(mixed.events_path()), mixed.scratch.path()))
        << "events after step " << i << " " << steps[i][0];
  }
  // devgraph's run is also what the reference's own validator accepts.
  auto shown = test::run_process({"python3", ref, mixed.dir, "show"}, env);
  EXPECT_EQ(shown.exit_code, 0);
  EXPECT_EQ(shown.out, mixed.cp({"show"}).out);
}

// A run of 1,000 tasks: the same moves by devgraph and, where it is
// available, the reference leave the same files, and the records devgraph's
// moves do not touch keep their bytes. The first move parses the file whole
// (devgraph did not write it), the second leaves the cursor maps unparsed.
TEST(CheckpointCli, ALargeRunMovesAsTheReferenceDoes) {
  RunDir dg, ref;
  ASSERT_EQ(dg.cp({"init", "--repo", "/repo", "--default-branch", "main"}).exit_code, 0);
  auto state = load_json_file(dg.state_path());
  ASSERT_TRUE(state.ok());
  for (int i = 0; i < 1000; ++i) {
    const std::string bundle = "B" + std::to_string(i / 10);
    (*state)["tasks_runtime"][bundle + "/T" + std::to_string(i)] =
        Json{{"bundle", bundle},
             {"task", "T" + std::to_string(i)},
             {"node", "implement"},
             {"previous_node", "write_tdd"},
             {"status", "active"},
             {"moves", 2},
             {"updated_at", (*state)["started_at"]},
             {"base_commit", std::string(40, '0')}};
  }
  const std::string before = dump_py(*state, 2) + "\n";
  for (const RunDir* run : {&dg, &ref}) {
    ASSERT_TRUE(make_directories(run->dir).ok());
    test::write_text(run->state_path(), before);
    test::write_text(run->events_path(), test::slurp(dg.events_path()));
  }
  const std::vector<std::vector<std::string>> moves = {
      {"move", "--bundle", "B0", "--task", "T1", "--node", "verify", "--event", "IMPLEMENT_DONE"},
      {"move", "--bundle", "B99", "--task", "T1000", "--node", "write_tdd", "--event",
       "TASK_STARTED", "--merge", R"({"base_commit": "abc"})"},
  };
  for (const auto& m : moves) {
    std::vector<std::string> args = {"checkpoint", dg.dir};
    args.insert(args.end(), m.begin(), m.end());
    auto a = run_devgraph(args);
    ASSERT_EQ(a.exit_code, 0) << a.err;
    if (!test::reference_dir().empty()) {
      test::Scratch home;  // the reference records session metrics under $HOME
      std::vector<std::string> py = {
          "python3", join_path(test::reference_dir(), "runtime/checkpoint.py"), ref.dir};
      py.insert(py.end(), m.begin(), m.end());
      auto c = test::run_process(py, {{"HOME", home.path()}});
      ASSERT_EQ(c.exit_code, 0) << c.err;
    }
  }
  if (!test::reference_dir().empty()) {
    EXPECT_EQ(normalized(dg.files(), dg.scratch.path()),
              normalized(ref.files(), ref.scratch.path()));
  }
  // Untouched records keep their text: the ones between the two moved
  // records are one unchanged span of the file.
  const std::string after = test::slurp(dg.state_path());
  const size_t from = before.find("\"B0/T2\": {");
  const size_t to = before.find("\"B99/T999\": {");
  ASSERT_NE(from, std::string::npos);
  ASSERT_NE(to, std::string::npos);
  EXPECT_NE(after.find(before.substr(from, to - from)), std::string::npos);
  auto reloaded = load_json_file(dg.state_path());
  ASSERT_TRUE(reloaded.ok());
  const auto events = read_events(dg.events_path());
  ASSERT_EQ(events.size(), 3u);  // init and the two moves
  for (size_t i = 0; i < events.size(); ++i) EXPECT_EQ(events[i]["seq"], i + 1);
  EXPECT_EQ((*reloaded)["event_seq"], events.size());
  EXPECT_EQ((*reloaded)["tasks_runtime"]["B0/T1"]["node"], "verify");
  EXPECT_EQ((*reloaded)["tasks_runtime"]["B99/T1000"]["base_commit"], "abc");
  EXPECT_EQ((*reloaded)["tasks_runtime"].size(), 1001u);
  (*reloaded)["tasks_runtime"].erase("B0/T1");
  (*reloaded)["tasks_runtime"].erase("B99/T1000");
  for (auto& [key, rec] : (*reloaded)["tasks_runtime"].items())
    ASSERT_EQ(rec, (*state)["tasks_runtime"][key]) << key;
}

// Writers SIGKILLed at random instants: after every kill state.json parses,
// and at the end the log is contiguous, ends at state.event_seq, and every
// move event's change is in the state (cursor.moves == its move events).
TEST(CheckpointCli, SigkilledWritersLeaveAConsistentRun) {
  // On a RAM file system when there is one: the page cache survives a
  // SIGKILL on any file system, so the disk adds only time.
  const char* old_tmp = std::getenv("TMPDIR");
  std::string saved = old_tmp ? old_tmp : "";
  if (is_directory("/dev/shm") && ::access("/dev/shm", W_OK) == 0)
    ::setenv("TMPDIR", "/dev/shm", 1);
  RunDir run;
  if (saved.empty()) {
    ::unsetenv("TMPDIR");
  } else {
    ::setenv("TMPDIR", saved.c_str(), 1);
  }
  ASSERT_EQ(run.cp({"init", "--repo", "/repo", "--default-branch", "main"}).exit_code, 0);
  const std::string bin = DEVGRAPH_BIN;
  const std::vector<std::string> argv_s = {bin,        "checkpoint", run.dir,   "move",
                                           "--bundle", "B1",         "--task",  "T1",
                                           "--node",   "implement",  "--event", "IMPLEMENT_DONE"};
  std::vector<char*> argv;
  for (const auto& s : argv_s) argv.push_back(const_cast<char*>(s.c_str()));
  argv.push_back(nullptr);

  // How long one move takes here (under sanitizers or on a busy machine it
  // varies tenfold); kill instants are then spread over about two command
  // lifetimes, so kills land before, inside and between transactions.
  const auto t0 = std::chrono::steady_clock::now();
  ASSERT_EQ(test::run_process(argv_s).exit_code, 0);
  const auto one_move =
      std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() - t0)
          .count();
  const int kKills = test::kUnderSanitizers ? 50 : 200;  // see test_util.h
  std::mt19937 rng(12345);
  std::uniform_int_distribution<long long> delay_us(0, 2 * one_move + 1000);
  int torn_or_ghost = 0;
  for (int k = 0; k < kKills; ++k) {
    pid_t loop = ::fork();
    ASSERT_GE(loop, 0);
    if (loop == 0) {
      ::setpgid(0, 0);
      int null_fd = ::open("/dev/null", O_WRONLY);
      ::dup2(null_fd, 1);
      ::dup2(null_fd, 2);
      while (true) {
        pid_t w = ::fork();
        if (w == 0) {
          ::execv(argv[0], argv.data());
          ::_exit(127);
        }
        int st = 0;
        ::waitpid(w, &st, 0);
      }
    }
    ::setpgid(loop, loop);
    // Choosing the kill instant is the point of this test, not a wait.
    ::usleep(static_cast<useconds_t>(delay_us(rng)));
    ::kill(-loop, SIGKILL);
    int st = 0;
    ASSERT_EQ(::waitpid(loop, &st, 0), loop);
    // Readers never see a torn state.json.
    Json state = Json::parse(test::slurp(run.state_path()));
    std::string log = test::slurp(run.events_path());
    long long lines = std::count(log.begin(), log.end(), '\n');
    if ((!log.empty() && log.back() != '\n') || lines != state["event_seq"].get<long long>())
      ++torn_or_ghost;
  }
  // The next command loads the run and repairs the log's tail.
  auto next = run.cp({"event", "--event", "NOTE"});
  ASSERT_EQ(next.exit_code, 0) << next.err;
  Json state = Json::parse(test::slurp(run.state_path()));
  auto events = read_events(run.events_path());
  ASSERT_EQ(static_cast<long long>(events.size()), state["event_seq"].get<long long>());
  long long moves = 0;
  for (size_t i = 0; i < events.size(); ++i) {
    ASSERT_EQ(events[i]["seq"], static_cast<long long>(i + 1));
    if (events[i]["type"] == "IMPLEMENT_DONE") ++moves;
  }
  const long long recorded = state["tasks_runtime"].contains("B1/T1")
                                 ? state["tasks_runtime"]["B1/T1"]["moves"].get<long long>()
                                 : 0;
  EXPECT_EQ(recorded, moves);
  EXPECT_GT(moves, 0) << "no kill came late enough to let a move finish";
  EXPECT_EQ(state["metrics"]["transitions"], moves);
  RecordProperty("kills", kKills);
  RecordProperty("kills_leaving_torn_or_ghost_lines", torn_or_ghost);
  RecordProperty("moves_committed", static_cast<int>(moves));
  std::cout << "kills=" << kKills << " left_torn_or_ghost=" << torn_or_ghost
            << " moves_committed=" << moves << "\n";
}

}  // namespace
}  // namespace devgraph
