// The fixture of `devgraph run-bundle`'s end-to-end tests: one bundle "b1"
// of a fresh repository (a test runner on main, a worktree on develop/b1,
// the bundle cursor at plan_bundle), a scenario the fake claude
// (tests/fixtures/bundle/fake-claude-sim) plays through `devgraph
// sim-agent`, and the readers the tests assert with (state, events, result
// files, git). tests/e2e/run_bundle_test.cpp and run_bundle_fix_test.cpp
// share it.
#pragma once

#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "support/build_paths.h"
#include "support/run_scenario.h"
#include "support/test_util.h"
#include "util/fs.h"
#include "util/json.h"

namespace devgraph::test {

struct PlannedTask {
  std::string id, title, word;  // the task makes src/<id>.txt hold `word`
  std::vector<std::string> depends_on;
  std::vector<std::string> extra_files;  // more footprint globs
  std::string impl() const { return "src/" + id + ".txt"; }
  std::string test() const { return "tests/" + id + ".sh"; }
};

// T1 and T2 run side by side; T3 needs both.
inline std::vector<PlannedTask> default_plan() {
  return {{"T1", "greeting", "hello", {}, {}},
          {"T2", "farewell", "goodbye", {}, {}},
          {"T3", "banner", "welcome", {"T1", "T2"}, {}}};
}

// A code review with one gap on docs/greeting.md, which the fix loop reads.
inline Json one_gap(const std::string& what, const std::string& severity = "Important") {
  return Json{
      {"status", "DONE_WITH_CONCERNS"},
      {"summary", "one gap"},
      {"evidence", Json::array()},
      {"findings",
       Json::array(
           {{{"severity", severity}, {"file", "docs/greeting.md"}, {"description", what}}})}};
}

// A fixer's answer that closed gap 1 in docs/greeting.md.
inline Json fixed_gap_one(const std::string& summary) {
  Json fixed = done(summary);
  fixed["fixes"] = Json::array({{{"gap", 1}, {"files", {"docs/greeting.md"}}}});
  return fixed;
}

inline size_t count_of(const std::string& haystack, const std::string& needle) {
  size_t n = 0;
  for (size_t pos = haystack.find(needle); pos != std::string::npos;
       pos = haystack.find(needle, pos + 1))
    ++n;
  return n;
}

// One bundle "b1" of a fresh repository, ready for run-bundle: main holds
// the test runner, the worktree sits on develop/b1, the run's bundle cursor
// is at plan_bundle (as `devgraph demo` sets it up, through the checkpoint
// verb).
class RunBundleFixture : public ::testing::Test {
 public:
  test::Scratch s;
  std::string repo = s / "repo";
  std::string worktree = s / "wt/b1";
  std::string run_dir = s / "run";
  std::string bundle_dir = run_dir + "/bundles/b1";
  std::string scenario_path = s / "scenario.json";
  std::string fake_state = s / "fake";
  std::vector<PlannedTask> plan = default_plan();
  Json scenario;

  void SetUp() override {
    ASSERT_TRUE(make_directories(repo).ok());
    sh(repo, {"git", "init", "-q", "-b", "main"});
    sh(repo, {"git", "config", "user.name", "Test"});
    sh(repo, {"git", "config", "user.email", "test@example.invalid"});
    test::write_text(repo + "/run-tests.sh", test::kRunTests);
    test::write_text(repo + "/README.md", "words\n");
    sh(repo, {"git", "add", "--", "run-tests.sh", "README.md"});
    sh(repo, {"git", "commit", "-q", "-m", "base"});
    sh(repo, {"git", "worktree", "add", "-q", "-b", "develop/b1", worktree, "main"});
    Json init = {
        {"delivery", "local"},
        {"merge_policy", "never"},
        {"commands", {{"test", "sh run-tests.sh"}, {"build", "sh -n run-tests.sh"}}},
        {"bundles",
         Json::array({{{"id", "b1"}, {"title", "words of welcome"}, {"issues", Json::array()}}})}};
    checkpoint({"init", "--repo", repo, "--default-branch", "main", "--merge", dump_py(init)});
    Json cursor = {{"worktree", worktree}, {"branch", "develop/b1"}, {"base", "main"}};
    checkpoint({"move", "--bundle", "b1", "--node", "plan_bundle", "--event", "BUNDLE_STARTED",
                "--merge", dump_py(cursor)});
    ASSERT_TRUE(make_directories(bundle_dir).ok());
    ASSERT_TRUE(make_directories(fake_state).ok());
    test::write_text(bundle_dir + "/spec.md", "# b1\n\nEach task adds one word file.\n");
    scenario = base_scenario();
  }

  static void sh(const std::string& cwd, const std::vector<std::string>& argv) {
    auto r = test::run_process(argv, {}, cwd);
    ASSERT_EQ(r.exit_code, 0) << argv[0] << " " << argv[1] << ": " << r.err;
  }

  void checkpoint(std::vector<std::string> args) {
    args.insert(args.begin(), {"checkpoint", run_dir});
    auto r = test::run_devgraph(args);
    ASSERT_EQ(r.exit_code, 0) << r.err;
  }

  // Planner writes the plan; tdd-writer a test that fails until the
  // developer writes the word; everyone else approves.
  Json base_scenario() const {
    Json tasks = Json::array();
    std::string md = "# Plan b1\n";
    for (const auto& t : plan) {
      Json files = Json::array({t.impl(), t.test()});
      for (const auto& f : t.extra_files) files.push_back(f);
      tasks.push_back(
          {{"id", t.id}, {"title", t.title}, {"depends_on", t.depends_on}, {"files", files}});
      md += "\n## Task " + t.id + ": " + t.title + "\n\nWrite `" + t.word + "` to " + t.impl() +
            ".\n";
    }
    Json tasks_doc = {{"bundle", "b1"}, {"tasks", tasks}};
    Json personas = Json::object();
    personas["planner"] = Json::array(
        {{{"files", Json::array({file("docs/develop/plans/b1.md", md),
                                 file("docs/develop/plans/b1.tasks.json", dump_py(tasks_doc, 2))})},
          {"result", done("planned")}}});
    personas["tdd-writer"] = Json::array();
    personas["developer"] = Json::array();
    for (const auto& t : plan) {
      personas["tdd-writer"].push_back(
          {{"task", t.id},
           {"files", Json::array({file(t.test(), "grep -qx " + t.word + " " + t.impl() + "\n")})},
           {"result", red("red test for {task}", "sh " + t.test())}});
      personas["developer"].push_back({{"task", t.id},
                                       {"files", Json::array({file(t.impl(), t.word + "\n")})},
                                       {"result", done("wrote {task}")}});
    }
    return Json{{"default", {{"result", done("{persona} approves {task}")}}},
                {"personas", personas}};
  }

  // Most failure paths need no dependency, and the bundle gates need one
  // task only: fewer persona launches keep the tests fast (each launch is a
  // devgraph process, costly under the sanitizers).
  void two_tasks() { only(2); }
  void one_task() { only(1); }
  void only(size_t n) {
    plan.resize(n);
    scenario = base_scenario();
  }

  // Puts `rule` before the persona's other rules (the first match wins).
  void prepend(const std::string& persona, Json rule) {
    if (!scenario["personas"].contains(persona)) scenario["personas"][persona] = Json::array();
    auto& list = scenario["personas"][persona];
    list.insert(list.begin(), std::move(rule));
  }

  test::ProcessResult run(std::vector<std::string> extra = {},
                          std::map<std::string, std::string> env = {}) {
    test::write_text(scenario_path, dump_py(scenario, 2));
    std::vector<std::string> args = {"run-bundle",
                                     run_dir,
                                     "--bundle",
                                     "b1",
                                     "--claude-bin",
                                     test::test_dir() + "/fixtures/bundle/fake-claude-sim",
                                     "--max-parallel",
                                     "3",
                                     "--api-backoff-seconds",
                                     "0.05"};
    args.insert(args.end(), extra.begin(), extra.end());
    env.insert({{"FAKE_SCENARIO", scenario_path},
                {"FAKE_STATE", fake_state},
                {"DEVGRAPH_BIN", DEVGRAPH_BIN}});
    return test::run_devgraph(args, env);
  }

  static Json result_of(const test::ProcessResult& r) {
    auto pos = r.out.rfind("RESULT_JSON: ");
    if (pos == std::string::npos) return Json();
    auto end = r.out.find('\n', pos);
    return Json::parse(r.out.substr(pos + 13, end == std::string::npos ? end : end - pos - 13));
  }

  Json state() const { return Json::parse(test::slurp(run_dir + "/state.json")); }
  std::vector<Json> events() const { return test::read_jsonl(run_dir + "/events.jsonl"); }
  std::vector<Json> log() const { return test::read_jsonl(bundle_dir + "/run_bundle.log"); }
  Json task_cursor(const std::string& t) const { return state()["tasks_runtime"]["b1/" + t]; }
  Json saved(const std::string& persona, const std::string& task = "") const {
    std::string dir = task.empty() ? bundle_dir : bundle_dir + "/tasks/" + task;
    return Json::parse(test::slurp(dir + "/" + persona + ".result.json"));
  }
  // Lines "persona task kind" of the fake CLI's calls.
  size_t calls(const std::string& line) const {
    return count_of("\n" + test::slurp(fake_state + "/calls.log"), "\n" + line + "\n");
  }

  // Indices of the events of `type` whose detail matches every pair given.
  std::vector<size_t> find(const std::string& type, const Json& where = Json::object()) const {
    std::vector<size_t> out;
    auto evs = events();
    for (size_t i = 0; i < evs.size(); ++i) {
      if (evs[i]["type"] != type) continue;
      bool ok = true;
      for (auto& [k, v] : where.items()) ok &= evs[i]["detail"].value(k, Json()) == v;
      if (ok) out.push_back(i);
    }
    return out;
  }

  std::string git(const std::vector<std::string>& args) const {
    std::vector<std::string> argv = {"git", "-C", worktree};
    argv.insert(argv.end(), args.begin(), args.end());
    auto r = test::run_process(argv);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return r.out;
  }
  // Task trailer values of main..HEAD, one per line.
  std::string task_trailers() const {
    return git({"log", "--format=%(trailers:key=Devgraph-Task,valueonly)", "main..HEAD"});
  }
  std::string files_of(const std::string& commit) const {
    return git({"show", "--name-only", "--format=", commit});
  }
  std::string commit_of(const std::string& task) const {
    return task_cursor(task).value("commit", "");
  }

  void expect_done(const test::ProcessResult& r) {
    ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
    Json res = result_of(r);
    EXPECT_EQ(res["status"], "DONE") << res.dump();
    Json c = state()["bundles_runtime"]["b1"];
    EXPECT_EQ(c["node"], "create_pr");
    EXPECT_EQ(c["status"], "complete");
    EXPECT_EQ(find("BRANCH_READY").size(), 1u);
    std::string trailers = task_trailers();
    for (const auto& t : plan) {
      EXPECT_EQ(task_cursor(t.id)["status"], "complete") << t.id;
      EXPECT_EQ(count_of(trailers, "b1/" + t.id + "\n"), 1u) << t.id << "\n" << trailers;
    }
    EXPECT_EQ(git({"status", "--porcelain"}), "");
    auto tests = test::run_process({"sh", "run-tests.sh"}, {}, worktree);
    EXPECT_EQ(tests.exit_code, 0) << tests.out;
  }

  void expect_blocked(const test::ProcessResult& r, const std::string& blocker_word) {
    EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
    Json res = result_of(r);
    EXPECT_EQ(res["status"], "BLOCKED");
    EXPECT_EQ(res["human_required"], true);
    ASSERT_FALSE(res["blockers"].empty());
    EXPECT_NE(res["blockers"][0].get<std::string>().find(blocker_word), std::string::npos)
        << res["blockers"].dump();
    EXPECT_TRUE(find("BRANCH_READY").empty());
    Json file_result = Json::parse(test::slurp(bundle_dir + "/tech-lead.result.json"));
    EXPECT_EQ(file_result["status"], "BLOCKED");
  }
};

}  // namespace devgraph::test
