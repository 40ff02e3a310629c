// `devgraph demo` end to end: the README's quick start must reach a ready
// branch offline, with real parallelism, real dependencies, tests written
// first, and one commit per task.
#include <gtest/gtest.h>

#include <chrono>
#include <map>
#include <set>
#include <sstream>

#include "support/test_util.h"
#include "util/json.h"

namespace devgraph {
namespace {

std::vector<Json> events_of(const std::string& run_dir) {
  return test::read_jsonl(run_dir + "/events.jsonl");
}

std::string run_dir_from(const std::string& out) {
  auto pos = out.find("run directory: ");
  if (pos == std::string::npos) return "";
  auto end = out.find('\n', pos);
  return out.substr(pos + 15, end - pos - 15);
}

TEST(Demo, ReachesAReadyBranchOfflineWithParallelTasks) {
  test::Scratch s;
  auto t0 = std::chrono::steady_clock::now();
  // TERM names a real terminal, but stdout is a pipe: plain lines.
  auto r = test::run_devgraph({"demo", "--latency-ms", "100"},
                              {{"AI_ROOT", s.path()}, {"TERM", "xterm"}});
  double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_LT(secs, 60.0);
  EXPECT_NE(r.out.find("everything goes under " + s.path()), std::string::npos);
  EXPECT_EQ(r.out.find('\x1b'), std::string::npos);
  EXPECT_NE(r.out.find("  [start] {"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("branch develop/b1 is ready"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("5 of 5 new test files fail on main"), std::string::npos) << r.out;

  std::string run_dir = run_dir_from(r.out);
  ASSERT_FALSE(run_dir.empty()) << r.out;
  EXPECT_EQ(run_dir.rfind(s.path(), 0), 0u);
  Json state = Json::parse(test::slurp(run_dir + "/state.json"));
  const Json& cursor = state["bundles_runtime"]["b1"];
  EXPECT_EQ(cursor["node"], "create_pr");
  EXPECT_EQ(cursor["status"], "complete");
  for (const char* t : {"T1", "T2", "T3", "T4", "T5"})
    EXPECT_EQ(state["tasks_runtime"][std::string("b1/") + t]["status"], "complete") << t;

  // Parallelism and dependencies, read from the event log.
  int in_flight = 0, peak = 0;
  std::map<std::string, size_t> started, committed;
  auto events = events_of(run_dir);
  for (size_t i = 0; i < events.size(); ++i) {
    const Json& e = events[i];
    std::string task = e["detail"].value("task", "");
    if (e["type"] == "TASK_STARTED") {
      started[task] = i;
      peak = std::max(peak, ++in_flight);
    }
    if (e["type"] == "TASK_COMMITTED") {
      committed[task] = i;
      --in_flight;
    }
  }
  EXPECT_GE(peak, 2);
  ASSERT_EQ(committed.size(), 5u);
  EXPECT_GT(started["T2"], committed["T1"]);
  EXPECT_GT(started["T4"], committed["T2"]);
  EXPECT_GT(started["T4"], committed["T3"]);
  EXPECT_GT(started["T5"], committed["T4"]);

  // One commit per task, each with its trailer, and the tests pass on the branch.
  std::string wt = cursor["worktree"];
  auto log = test::run_process(
      {"git", "-C", wt, "log", "--format=%(trailers:key=Devgraph-Task,valueonly)", "main..HEAD"});
  ASSERT_EQ(log.exit_code, 0);
  for (const char* t : {"b1/T1", "b1/T2", "b1/T3", "b1/T4", "b1/T5"}) {
    size_t n = 0, pos = 0;
    while ((pos = log.out.find(t, pos)) != std::string::npos) ++n, ++pos;
    EXPECT_EQ(n, 1u) << t;
  }
  auto tests = test::run_process(
      {"python3", "-m", "unittest", "discover", "-s", "tests", "-t", "."}, {}, wt);
  EXPECT_EQ(tests.exit_code, 0) << tests.err;
  auto status = test::run_process({"git", "-C", wt, "status", "--porcelain"});
  EXPECT_EQ(status.out, "");
  EXPECT_TRUE(path_exists(run_dir + "/bundles/b1/tech-lead.result.json"));
}

TEST(Demo, RejectsAnUnknownAgent) {
  test::Scratch s;
  auto r = test::run_devgraph({"demo", "--agent", "nope"}, {{"AI_ROOT", s.path()}});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--agent"), std::string::npos);
  EXPECT_EQ(test::entries(s.path()), "");
}

TEST(Demo, RejectsAnAgentCommandForAnotherAgentOrUnparsable) {
  test::Scratch s;
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"demo", "--agent-command", "x {prompt_file}"},
        std::vector<std::string>{"demo", "--agent", "command", "--agent-command", "x \"open"}}) {
    auto r = test::run_devgraph(args, {{"AI_ROOT", s.path()}});
    EXPECT_EQ(r.exit_code, 2) << r.err;
    EXPECT_NE(r.err.find("argument --agent-command"), std::string::npos) << r.err;
    EXPECT_EQ(test::entries(s.path()), "");
  }
}

}  // namespace
}  // namespace devgraph
