// `devgraph metrics` as a process, side by side with the reference
// metrics.py: a record written by either is reported identically by both,
// `sessions` lists the records of both, and bad input is one line with the
// reference's exit code and nothing written.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "support/run_scenario.h"
#include "support/test_util.h"
#include "util/json.h"

namespace devgraph {
namespace {

using test::ProcessResult;

std::string chomp(std::string s) {
  while (!s.empty() && s.back() == '\n') s.pop_back();
  return s;
}

size_t line_count(const std::string& s) {
  size_t n = 0;
  for (char c : s) n += c == '\n';
  return n;
}

class MetricsCli : public ::testing::Test {
 protected:
  void SetUp() override {
    if (test::reference_dir().empty()) GTEST_SKIP() << "reference runtime not available";
    ref_ = join_path(test::reference_dir(), "runtime/metrics.py");
  }
  // Neither tool may write under the real home.
  std::map<std::string, std::string> env() const {
    return {{"HOME", home_.path()}, {"DEVELOP_METRICS_DIR", ""}, {"AI_ROOT", ""}};
  }
  ProcessResult ref(std::vector<std::string> args) const {
    args.insert(args.begin(), {"python3", ref_});
    return test::run_process(args, env());
  }
  ProcessResult dg(std::vector<std::string> args) const {
    args.insert(args.begin(), "metrics");
    return test::run_devgraph(args, env());
  }
  // A run built by `devgraph checkpoint`, as a tech lead records one.
  std::string checkpoint_run(const std::string& id) const {
    const std::string dir = scratch_ / ("home/acme/widgets/runs/" + id);
    const std::vector<std::vector<std::string>> steps = {
        {"init", "--repo", "/src/widgets", "--default-branch", "main"},
        {"go", "--node", "bundle", "--event", "SCAN_DONE"},
        {"go", "--node", "bundle_scheduler", "--event", "BUNDLES_FORMED", "--merge",
         R"({"bundles": [{"id": "B1", "title": "first", "tasks": [{"id": "T1"}]}]})"},
        {"move", "--bundle", "B1", "--node", "plan_bundle", "--event", "BUNDLE_STARTED"},
        {"move", "--bundle", "B1", "--task", "T1", "--node", "write_tdd", "--event",
         "TASK_STARTED"},
        {"event", "--event", "PERSONA_DISPATCHED", "--detail",
         R"({"persona": "developer", "agent_handle": "d-1", "bundle": "B1", "task": "T1"})"},
        {"move", "--bundle", "B1", "--task", "T1", "--node", "implement", "--event", "TDD_DONE",
         "--detail", R"({"agent_handle": "d-1", "persona": "developer", "cost_usd": 0.4})"},
        {"move", "--bundle", "B1", "--task", "T1", "--node", "commit_task", "--event",
         "TASK_COMMITTED"},
        {"go", "--node", "complete", "--event", "RUN_COMPLETE"},
    };
    for (auto args : steps) {
      args.insert(args.begin(), {"checkpoint", dir});
      auto r = test::run_devgraph(args, env());
      EXPECT_EQ(r.exit_code, 0) << args[2] << ": " << r.err;
    }
    return dir;
  }
  // A run written by hand with times minutes apart, costs, a back-off and
  // a wait for a person, so that every table has rows that differ.
  std::string spread_run(const std::string& id, int hour) const {
    const std::string dir = scratch_ / ("home/acme/widgets/runs/" + id);
    EXPECT_TRUE(make_directories(dir));
    Json state = {{"run_id", id},
                  {"repo", "/src/widgets"},
                  {"default_branch", "main"},
                  {"graph_version", 4},
                  {"status", "complete"},
                  {"node", "complete"},
                  {"bundles", Json::array({{{"id", "b1"},
                                            {"branch", "dev/b1"},
                                            {"status", "delivered"},
                                            {"tasks", Json::array({{{"id", "T1"}, {"title", "one"}},
                                                                   {{"id", "T2"}}})}}})},
                  {"metrics", {{"repair_cycles", 1}, {"review_cycles", 2}}},
                  {"capacity", {{"tier", "green"}, {"counters", {{"turn", 3}, {"result", 9}}}}},
                  {"handoffs", 1}};
    test::write_text(join_path(dir, "state.json"), dump_py(state, 2) + "\n");
    auto ts = [&](int m, int s) {
      char buf[40];
      std::snprintf(buf, sizeof buf, "2026-03-04T%02d:%02d:%02d+00:00", hour, m, s);
      return std::string(buf);
    };
    auto line = [&](int m, int s, const char* type, Json detail) {
      return dump_py(Json{{"ts", ts(m, s)},
                          {"type", type},
                          {"node", "bundle_scheduler"},
                          {"detail", detail}}) +
             "\n";
    };
    auto move = [](const char* task, const char* to) {
      return Json{
          {"bundle", "b1"}, {"task", task}, {"cursor", std::string("b1/") + task}, {"lane_to", to}};
    };
    Json t1_done = move("T1", "implement");
    t1_done.update(Json{{"agent_handle", "h1"}, {"persona", "tdd-writer"}, {"cost_usd", 0.125}});
    Json t2_review = move("T2", "repair_task");
    t2_review.update(Json{{"agent_handle", "h3"}, {"persona", "code-reviewer"}, {"cost_usd", 2.5}});
    std::string events =
        line(0, 0, "RUN_STARTED", {{"run_id", id}}) +
        line(1, 7, "SCAN_DONE", {{"from", "scan"}, {"to", "bundle_scheduler"}}) +
        line(2, 0, "TASK_STARTED", move("T1", "write_tdd")) +
        line(2, 30, "TASK_STARTED", move("T2", "write_tdd")) +
        line(
            3, 0, "PERSONA_DISPATCHED",
            {{"persona", "tdd-writer"}, {"bundle", "b1"}, {"task", "T1"}, {"agent_handle", "h1"}}) +
        line(4, 0, "NOTE",
             {{"topic", "cli_error_backoff"}, {"bundle", "b1"}, {"task", "T1"}, {"delay_s", 5.0}}) +
        line(9, 41, "TDD_DONE", t1_done) +
        line(10, 0, "PERSONA_DISPATCHED",
             {{"persona", "code-reviewer"},
              {"bundle", "b1"},
              {"task", "T2"},
              {"agent_handle", "h3"}}) +
        line(17, 3, "REVIEW_FINDINGS", t2_review) +
        line(18, 0, "AWAITING_HUMAN", move("T2", "awaiting_human")) +
        line(48, 0, "ANSWERED", move("T2", "advance_task")) +
        line(51, 0, "TASK_COMMITTED",
             [&] {
               Json d = move("T1", "commit_task");
               d["cursor_complete"] = true;
               return d;
             }()) +
        line(59, 59, "RUN_COMPLETE", {{"from", "bundle_scheduler"}, {"to", "complete"}});
    test::write_text(join_path(dir, "events.jsonl"), events);
    return dir;
  }
  // Both directions: the reference's record reported by both tools, and
  // devgraph's record reported by both; the records agree key for key.
  void expect_compatible(const std::string& run) const {
    const std::string by_ref = scratch_ / "by-ref", by_dg = scratch_ / "by-dg";
    auto r1 = ref({"record", run, "--metrics-dir", by_ref});
    ASSERT_EQ(r1.exit_code, 0) << r1.err;
    auto r2 = dg({"record", run, "--metrics-dir", by_dg});
    ASSERT_EQ(r2.exit_code, 0) << r2.err;
    const std::string ref_file = chomp(r1.out), dg_file = chomp(r2.out);
    EXPECT_EQ(basename_of(dg_file), basename_of(ref_file));
    EXPECT_EQ(dirname_of(dg_file), by_dg);

    auto ref_on_ref = ref({"report", ref_file});
    ASSERT_EQ(ref_on_ref.exit_code, 0) << ref_on_ref.err;
    auto dg_on_ref = dg({"report", ref_file});
    EXPECT_EQ(dg_on_ref.exit_code, 0) << dg_on_ref.err;
    EXPECT_EQ(dg_on_ref.out, ref_on_ref.out);

    auto ref_on_dg = ref({"report", dg_file});
    EXPECT_EQ(ref_on_dg.exit_code, 0) << ref_on_dg.err;
    EXPECT_EQ(ref_on_dg.out, ref_on_ref.out);
    auto dg_on_dg = dg({"report", dg_file});
    EXPECT_EQ(dg_on_dg.out.rfind(chomp(ref_on_ref.out) + "\n\n  cost by persona", 0), 0u)
        << dg_on_dg.out;

    // The run directory itself: the same tables.
    auto ref_on_run = ref({"report", run});
    auto dg_on_run = dg({"report", run});
    EXPECT_EQ(dg_on_run.out.rfind(chomp(ref_on_run.out) + "\n\n", 0), 0u) << dg_on_run.out;

    Json a = Json::parse(test::slurp(ref_file));
    Json b = Json::parse(test::slurp(dg_file));
    EXPECT_TRUE(b.contains("costs") && b.contains("waiting"));
    for (Json* j : {&a, &b}) {
      j->erase("recorded_at");
      j->erase("costs");
      j->erase("waiting");
    }
    EXPECT_EQ(b.dump(), a.dump());  // keys, order, values and number types
  }

  test::Scratch home_;
  test::Scratch scratch_;
  std::string ref_;
};

TEST_F(MetricsCli, ACheckpointRunIsRecordedAndReportedAlikeByBothTools) {
  expect_compatible(checkpoint_run("r1"));
}

TEST_F(MetricsCli, ARunWithSpreadTimesIsRecordedAndReportedAlikeByBothTools) {
  expect_compatible(spread_run("r2", 10));
  auto report = dg({"report", spread_run("r2", 10)});
  EXPECT_NE(report.out.find("  code-reviewer                         1    $2.5000         -"),
            std::string::npos)
      << report.out;
  // b1: back-off 5s; T2 waited 30 minutes for a person.
  EXPECT_NE(report.out.find("$2.6250         -        5s  30m00s"), std::string::npos)
      << report.out;
}

TEST_F(MetricsCli, RecordWritesTheDefaultDirectoryUnderHomeAndPrintsThePath) {
  const std::string run = checkpoint_run("r3");
  auto r = dg({"record", run});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string dir = join_path(home_.path(), ".ai/metrics/develop");
  EXPECT_EQ(dirname_of(chomp(r.out)), dir);
  EXPECT_EQ(basename_of(chomp(r.out)).rfind("acme-widgets-", 0), 0u);
  EXPECT_EQ(line_count(test::slurp(chomp(r.out))), 1u);
  // Again, after the run went on: still one line, the new one.
  ASSERT_EQ(test::run_devgraph({"checkpoint", run, "event", "--event", "NOTE"}, env()).exit_code,
            0);
  ASSERT_EQ(dg({"record", run}).exit_code, 0);
  Json rec = Json::parse(test::slurp(chomp(r.out)));
  EXPECT_EQ(line_count(test::slurp(chomp(r.out))), 1u);
  EXPECT_EQ(rec["counts"]["events"], 10);
}

// `devgraph checkpoint` records the session as the reference's does: at a
// handoff, and again at the end, the resumed run's final record replacing
// the handoff's in the same file; the reference reports it.
TEST_F(MetricsCli, ACheckpointRunRecordsItselfAtHandoffAndItsEndReplacesThatRecord) {
  const std::string dir = scratch_ / "home/acme/widgets/runs/r9";
  const std::string records = home_.path() + "/.ai/metrics/develop";
  auto cp = [&](std::vector<std::string> args) {
    args.insert(args.begin(), {"checkpoint", dir});
    auto r = test::run_devgraph(args, env());
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(r.err, "");
    return r;
  };
  cp({"init", "--repo", "/src/widgets", "--default-branch", "main"});
  cp({"go", "--node", "bundle", "--event", "SCAN_DONE"});
  EXPECT_FALSE(path_exists(records)) << "nothing before a handoff or the end";
  cp({"handoff", "--reason", "context is full"});
  auto files = test::lines_of(test::entries(records));
  ASSERT_EQ(files.size(), 1u) << test::entries(records);
  auto lines = test::read_jsonl(records + "/" + files[0]);
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(lines[0]["run_id"], "r9");
  EXPECT_EQ(lines[0]["status"], "handoff");
  cp({"resume"});
  cp({"go", "--node", "complete", "--event", "RUN_COMPLETE"});
  EXPECT_EQ(test::lines_of(test::entries(records)), files);
  lines = test::read_jsonl(records + "/" + files[0]);
  ASSERT_EQ(lines.size(), 1u) << "the final record replaces the handoff's";
  EXPECT_EQ(lines[0]["status"], "complete");
  auto report = ref({"report", records + "/" + files[0]});
  EXPECT_EQ(report.exit_code, 0) << report.err;
  EXPECT_NE(report.out.find("r9"), std::string::npos) << report.out;
}

TEST_F(MetricsCli, SessionsListsTheRecordsOfBothTools) {
  const std::string dir = scratch_ / "metrics";
  ASSERT_EQ(ref({"record", spread_run("early", 8), "--metrics-dir", dir}).exit_code, 0);
  ASSERT_EQ(dg({"record", spread_run("late", 9), "--metrics-dir", dir}).exit_code, 0);
  for (const std::string& spec : {dir, join_path(dir, "acme-widgets")}) {
    auto a = ref({"sessions", spec});
    auto b = dg({"sessions", spec});
    ASSERT_EQ(b.exit_code, 0) << b.err;
    EXPECT_EQ(b.out, a.out);
    EXPECT_EQ(line_count(b.out), 3u) << b.out;
    EXPECT_LT(b.out.find("early"), b.out.find("late"));
  }
  auto none = dg({"sessions", scratch_ / "nothing-here"});
  EXPECT_EQ(none.exit_code, 0);
  EXPECT_EQ(none.out, ref({"sessions", scratch_ / "nothing-here"}).out);
}

TEST_F(MetricsCli, BadInputIsOneLineWithTheReferencesExitCodeAndWritesNothing) {
  const std::string out = scratch_ / "never";
  const std::string corrupt = spread_run("corrupt", 7);
  test::write_text(join_path(corrupt, "state.json"), "{\"run_id\": ");
  const std::string not_a_run = scratch_ / "plain-dir";
  ASSERT_TRUE(make_directories(not_a_run));
  const std::string not_a_record = scratch_ / "notes.txt";
  test::write_text(not_a_record, "hello\n");
  const std::vector<std::vector<std::string>> cases = {
      {"record", scratch_ / "missing", "--metrics-dir", out},
      {"record", corrupt, "--metrics-dir", out},
      {"report", not_a_run},
      {"report", scratch_ / "missing"},
      {"report", not_a_record},
      {"report", corrupt},
  };
  for (const auto& c : cases) {
    auto a = ref(c);
    auto b = dg(c);
    EXPECT_EQ(b.exit_code, a.exit_code) << c[0] << " " << c[1] << ": " << b.err;
    EXPECT_EQ(b.exit_code, 1);
    EXPECT_EQ(line_count(b.err), 1u) << b.err;
    EXPECT_EQ(b.err.rfind("devgraph metrics: ", 0), 0u) << b.err;
    EXPECT_EQ(b.out, "");
  }
  EXPECT_FALSE(path_exists(out));
  auto msg = dg({"report", not_a_run});
  EXPECT_NE(msg.err.find("is neither a session record nor a run directory"), std::string::npos);

  // An unknown --run-id: the reference's message, word for word.
  const std::string dir = scratch_ / "m";
  const std::string path = chomp(dg({"record", spread_run("r9", 6), "--metrics-dir", dir}).out);
  auto a = ref({"report", path, "--run-id", "zz"});
  auto b = dg({"report", path, "--run-id", "zz"});
  EXPECT_EQ(b.exit_code, a.exit_code);
  EXPECT_EQ(b.err, "devgraph metrics: " + a.err);
  auto usage = dg({"report"});
  EXPECT_EQ(usage.exit_code, 2);
  EXPECT_EQ(ref({"report"}).exit_code, 2);
}

}  // namespace
}  // namespace devgraph
