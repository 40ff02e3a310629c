// `devgraph debug` killed (SIGKILL of its whole process group) once its
// session log holds a picked number of lines, while it starts or while it
// goes on from an answered checkpoint; then `devgraph debug continue`
// runs it to the end. What a user would check: the checkpoint was asked
// once and answered once, never asked again; one commit of the fix; the
// debugger launched once per step that ran, a persona the killed process
// left running ended before the next one started; no process left.
#include <signal.h>
#include <sys/wait.h>

#include <gtest/gtest.h>

#include <algorithm>

#include "support/kill_harness.h"
#include "support/run_scenario.h"
#include "support/test_util.h"
#include "util/fs.h"
#include "util/json.h"

namespace devgraph {
namespace {

using test::result_of;

Json answer(Json debug) {
  return Json{{"status", "DONE"},
              {"summary", json_str(debug, "type")},
              {"evidence", Json::array()},
              {"debug", debug}};
}

struct Round {
  bool in_answer;  // kill `debug answer`; else `debug start`
  size_t line;     // once the session log holds this many more lines
};

void PrintTo(const Round& r, std::ostream* os) {
  *os << (r.in_answer ? "answer" : "start") << " killed at line " << r.line;
}

class DebugKill : public ::testing::TestWithParam<Round> {
 protected:
  test::Scratch s;
  std::string repo = s / "repo";
  std::string scenario = s / "scenario.json";
  std::string home = s / "develop/local/repo/debug";
  std::string session = home + "/k";
  std::map<std::string, std::string> env;

  void SetUp() override {
    test::adopt_orphans();
    env = test::quiet_git_env();
    env["AI_ROOT"] = s / "ai";
    env["DEVELOP_HOME_ROOT"] = s / "develop";
    ASSERT_TRUE(make_directories(repo));
    git({"init", "-q", "-b", "main"});
    test::write_text(repo + "/src/app.txt", "broken\n");
    git({"add", "--", "src/app.txt"});
    git({"commit", "-q", "-m", "base"});
    // Each debugger call takes a moment, so some kills land while one runs.
    Json rules =
        Json::array({{{"dispatch_contains", "Start the investigation"},
                      {"latency_ms", 150},
                      {"result", answer({{"type", "CHECKPOINT_REACHED"},
                                         {"checkpoint",
                                          {{"type", "human-verify"},
                                           {"details", "d"},
                                           {"awaiting", "Does it fail for you?"}}}})}},
                     {{"dispatch_contains", "checkpoint was answered"},
                      {"latency_ms", 150},
                      {"files", Json::array({{{"path", "src/app.txt"}, {"content", "fixed\n"}}})},
                      {"result", answer({{"type", "DEBUG_COMPLETE"},
                                         {"resolution",
                                          {{"root_cause", "it said broken"},
                                           {"fix", "it says fixed"},
                                           {"files_changed", {"src/app.txt"}}}}})}}});
    Json sc = {{"default",
                {{"result",
                  {{"status", "BLOCKED"}, {"summary", "no rule"}, {"evidence", Json::array()}}}}},
               {"personas", {{"debugger", rules}}}};
    test::write_text(scenario, dump_py(sc, 2));
  }

  void git(const std::vector<std::string>& args) {
    std::vector<std::string> argv = {"git"};
    argv.insert(argv.end(), args.begin(), args.end());
    auto r = test::run_process(argv, env, repo);
    ASSERT_EQ(r.exit_code, 0) << r.err;
  }

  std::vector<std::string> with_backend(std::vector<std::string> args) const {
    args.insert(args.begin(), "debug");
    for (const std::string& a :
         {std::string("--agent"), std::string("sim"), std::string("--sim-scenario"), scenario,
          std::string("--repo"), repo})
      args.push_back(a);
    return args;
  }

  test::ProcessResult run(std::vector<std::string> args) {
    return test::run_devgraph(with_backend(std::move(args)), env);
  }

  // Runs `debug ARGS` in the background and SIGKILLs its group once the
  // session log holds `line` more lines than now. Returns whether it was
  // killed (else it finished first).
  bool kill_at(std::vector<std::string> args, size_t line) {
    const size_t base = test::event_lines(session);
    test::Background bg;
    test::start_background(bg, with_backend(std::move(args)), env, repo, s / "bg.log");
    test::Watch watch;
    EXPECT_TRUE(watch.ok());
    auto why = test::wait_until(
        watch, bg.pidfd,
        [&] {
          return std::vector<std::string>{
              s.path(), s / "develop", s / "develop/local", s / "develop/local/repo",
              home,     session};
        },
        [&] { return test::event_lines(session) >= base + line; },
        std::chrono::steady_clock::now() + std::chrono::seconds(60));
    bool killed = why == test::Waited::kReached;
    if (killed) ::kill(-bg.pid, SIGKILL);
    int st = bg.wait();
    if (killed && WIFEXITED(st)) killed = false;  // it had finished by itself
    return killed;
  }

  std::vector<Json> events() const { return test::read_jsonl(session + "/events.jsonl"); }
  size_t count(const std::string& event) const {
    auto all = events();
    return static_cast<size_t>(std::count_if(
        all.begin(), all.end(), [&](const Json& e) { return json_str(e, "event") == event; }));
  }
};

// The same session, but the debugger's second launch hangs until ended.
class DebugKillHang : public DebugKill {
 protected:
  void SetUp() override {
    DebugKill::SetUp();
    Json sc = *load_json_file(scenario);
    Json& rules = sc["personas"]["debugger"];
    rules.insert(rules.begin(), Json{{"call", 2}, {"fail", "hang"}});
    test::write_text(scenario, dump_py(sc, 2));
  }
};

TEST_P(DebugKill, KilledAtAnInstantContinueFinishesItAskingNothingTwice) {
  const Round round = GetParam();
  if (!round.in_answer) {
    kill_at({"start", "it fails", "--slug", "k"}, round.line);
    if (!path_exists(home + "/k.md")) {
      // Killed before the session existed: a new start makes it.
      auto again = run({"start", "it fails", "--slug", "k"});
      EXPECT_EQ(again.exit_code, 2) << again.out << again.err;
    }
    auto c = run({"continue", "k"});
    ASSERT_EQ(c.exit_code, 2) << c.out << c.err;
    EXPECT_EQ(result_of(c)["question"]["id"], "q1-checkpoint");
  } else {
    auto started = run({"start", "it fails", "--slug", "k"});
    ASSERT_EQ(started.exit_code, 2) << started.out << started.err;
  }
  test::reap_exited();
  // The person answers; the answer may itself be killed part way.
  bool killed =
      kill_at({"answer", "k", "--text", "yes, always"}, round.in_answer ? round.line : 99);
  if (path_exists(home + "/k.md") &&
      test::slurp(home + "/k.md").find("\"phase\": \"ask\"") != std::string::npos) {
    // Killed before the answer was recorded: it is still the question.
    ASSERT_TRUE(killed);
    auto again = run({"answer", "k", "--text", "yes, always"});
    EXPECT_EQ(again.exit_code, 0) << again.out << again.err;
  }
  auto end = run({"continue", "k"});
  ASSERT_EQ(end.exit_code, 0) << end.out << end.err << test::slurp(s / "bg.log");
  Json res = result_of(end);
  EXPECT_EQ(res["status"], "DEBUG_COMPLETE");
  // Asked once, answered once, never asked again.
  std::string resolved = test::slurp(home + "/resolved/k.md");
  EXPECT_NE(resolved.find("answered: [\"q1-checkpoint\"]"), std::string::npos) << resolved;
  // One commit of the fix on the branch.
  auto log = test::run_process({"git", "-C", repo, "log", "--format=%s", "main..debug/k"}, env);
  EXPECT_EQ(log.out, "fix: it says fixed\n");
  // The debugger's second step got the answer, as data.
  EXPECT_TRUE(path_exists(session + "/calls/2/answer.json"));
  EXPECT_FALSE(path_exists(session + "/calls/3"));
  test::reap_exited();
  EXPECT_TRUE(test::adopted_alive().empty());
}

// A debugger still running when its devgraph is killed (one that hangs)
// is ended by the next `continue` before that launches the step again:
// never two debuggers on one session.
TEST_F(DebugKillHang, ADebuggerLeftRunningIsEndedBeforeTheStepIsLaunchedAgain) {
  auto started = run({"start", "it fails", "--slug", "k"});
  ASSERT_EQ(started.exit_code, 2) << started.out << started.err;
  const std::string record = session + "/calls/2/live-children";
  test::Background bg;
  test::start_background(bg, with_backend({"answer", "k", "--text", "yes"}), env, repo,
                         s / "bg.log");
  test::Watch watch;
  ASSERT_TRUE(watch.ok());
  // Killed once the debugger runs and the simulated agent has counted its
  // second call (the one that hangs): killed before the count, the next
  // launch would be call 2 again and hang too.
  const std::string counted = session + "/sim/debugger---.count";
  auto why = test::wait_until(
      watch, bg.pidfd,
      [&] {
        return std::vector<std::string>{session, session + "/calls", session + "/calls/2",
                                        session + "/sim"};
      },
      [&] {
        auto n = read_file(counted);
        return !test::recorded_processes(record).empty() && n && *n == "2\n";
      },
      std::chrono::steady_clock::now() + std::chrono::seconds(60));
  ASSERT_EQ(why, test::Waited::kReached) << test::slurp(s / "bg.log");
  ::kill(-bg.pid, SIGKILL);
  bg.wait();
  auto left = test::recorded_processes(record);
  ASSERT_EQ(left.size(), 1u);
  const int orphan = left[0].first;
  ASSERT_EQ(::kill(orphan, 0), 0) << "the hanging debugger should still run";
  auto end = run({"continue", "k"});
  ASSERT_EQ(end.exit_code, 0) << end.out << end.err;
  auto all = events();
  size_t ended = all.size(), returned = all.size();
  for (size_t i = 0; i < all.size(); ++i) {
    if (json_str(all[i], "event") == "leftovers_ended" && ended == all.size()) ended = i;
    if (json_str(all[i], "event") == "returned" && i > ended && returned == all.size())
      returned = i;
  }
  ASSERT_LT(ended, all.size()) << "continue did not end the debugger left running";
  EXPECT_EQ(all[ended]["detail"]["groups"], 1);
  EXPECT_LT(ended, returned);
  test::reap_exited();
  EXPECT_NE(::kill(orphan, 0), 0);
  EXPECT_TRUE(test::adopted_alive().empty());
  std::string resolved = test::slurp(home + "/resolved/k.md");
  EXPECT_NE(resolved.find("answered: [\"q1-checkpoint\"]"), std::string::npos) << resolved;
}

INSTANTIATE_TEST_SUITE_P(, DebugKill,
                         ::testing::Values(Round{false, 1}, Round{false, 2}, Round{true, 1},
                                           Round{true, 2}, Round{true, 3}, Round{true, 4},
                                           Round{true, 5}),
                         [](const ::testing::TestParamInfo<Round>& p) {
                           return std::string(p.param.in_answer ? "Answer" : "Start") + "Line" +
                                  std::to_string(p.param.line);
                         });

}  // namespace
}  // namespace devgraph
