// `devgraph run-bundle` with github delivery, end to end: a real bare
// repository as `origin`, the fake GitHub CLI (tests/fixtures/bundle/fake-gh,
// found through PATH as the driver finds the real one) and the simulated
// agent playing three of the demo's tasks.
//
// The resume tests SIGKILL the driver at one point of the bundle (a crash
// point, DEVGRAPH_BUNDLE_CRASH_AT, or an outside kill at a random instant),
// run it again without the crash, and require what the issue promises: the
// bundle ends DONE with every task committed exactly once, one push of the
// branch, one `gh pr create`, a state that replays cleanly and an event log
// without gaps.
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/inotify.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <functional>
#include <map>
#include <random>
#include <set>
#include <sstream>

#include "support/build_paths.h"
#include "demo/sample.h"
#include "support/kill_harness.h"
#include "support/run_scenario.h"
#include "support/test_util.h"
#include "util/json.h"

namespace devgraph {
namespace {

constexpr const char* kBundle = "b1";
constexpr const char* kBranch = "develop/b1";
constexpr const char* kTitle = "a text report for tally";
// Three of the demo's issues in one bundle: T1 (normalize) and T3 (line
// statistics) run side by side, T2 (counts) waits for T1. Every resume point
// replays a whole bundle twice (to the kill, then to the end), so the plan
// is as small as still has parallel and dependent tasks.
const std::vector<std::string> kIssues = {"Normalize words", "Count words", "Line statistics"};
const std::vector<std::string> kTasks = {"T1", "T2", "T3"};
// bundle_verify runs these as argv. They check that modules of the bundle
// landed, without the sample's Python test run (about a second per run here).
constexpr const char* kTestCommand = "test -f tally/counts.py";
constexpr const char* kBuildCommand = "test -f tally/lines.py";

// The sim agents' script: the planner writes the plan of kTasks, each
// tdd-writer its task's test file, each developer its module; everyone else
// approves. `latency_ms` is each persona's time.
std::vector<demo::SampleTask> sample_tasks() {
  auto plan = demo::sample_plan(kIssues);
  EXPECT_TRUE(plan) << plan.error().message;
  return plan ? *plan : std::vector<demo::SampleTask>{};
}

// The bundle's spec: the three issues' texts.
std::string sample_spec() {
  std::string spec = std::string("# Bundle ") + kBundle + ": " + kTitle + "\n";
  auto issues = demo::sample_issues();
  for (const auto& title : kIssues)
    if (const auto* i = demo::sample_issue(issues, title))
      spec += "\n## " + i->title + "\n\n" + i->body;
  return spec;
}

Json sim_scenario(long long latency_ms) {
  auto done = [](const std::string& summary) {
    return Json{{"status", "DONE"}, {"summary", summary}, {"evidence", Json::array()}};
  };
  std::string plan = "# Plan for bundle b1\n\nCritical path: T1 -> T2.\n";
  Json doc = {{"bundle", kBundle}, {"tasks", Json::array()}};
  Json tdd = Json::array(), dev = Json::array();
  for (const auto& t : sample_tasks()) {
    if (std::find(kTasks.begin(), kTasks.end(), t.id) == kTasks.end()) continue;
    doc["tasks"].push_back({{"id", t.id},
                            {"title", t.title},
                            {"depends_on", t.depends_on},
                            {"files", Json::array({t.impl.path, t.test.path})}});
    plan += "\n## Task " + t.id + ": " + t.title + "\n\nAdd `" + t.impl.path + "`.\n";
    tdd.push_back(
        {{"task", t.id},
         {"latency_ms", latency_ms},
         {"files", Json::array({{{"path", t.test.path}, {"content", t.test.content}}})},
         {"result", test::red("failing tests for {task}", "python3 -m unittest " + t.test.path)}});
    dev.push_back({{"task", t.id},
                   {"latency_ms", latency_ms},
                   {"files", Json::array({{{"path", t.impl.path}, {"content", t.impl.content}}})},
                   {"result", done("implemented {task}")}});
  }
  Json planner = {{"latency_ms", latency_ms},
                  {"files", Json::array({{{"path", "docs/develop/plans/b1.md"}, {"content", plan}},
                                         {{"path", "docs/develop/plans/b1.tasks.json"},
                                          {"content", dump_py(doc, 2) + "\n"}}})},
                  {"result", done("planned")}};
  return Json{
      {"default", {{"latency_ms", latency_ms}, {"result", done("{persona} approves {task}")}}},
      {"personas", {{"planner", Json::array({planner})}, {"tdd-writer", tdd}, {"developer", dev}}}};
}

using test::lines_of;

size_t count_lines(const std::string& text, const std::string& line) {
  size_t n = 0;
  for (const auto& l : lines_of(text)) n += l == line;
  return n;
}

size_t count_prefixed(const std::string& text, const std::string& prefix) {
  size_t n = 0;
  for (const auto& l : lines_of(text)) n += l.rfind(prefix, 0) == 0;
  return n;
}

// Configuration for every git the tests and the driver start, passed in
// the environment so no `git config` process is needed: an identity for
// commits, and no background gc after them (it only adds noise to timings).
const std::map<std::string, std::string> kGitEnv = test::quiet_git_env();

std::string git_out(const std::string& dir, std::vector<std::string> args) {
  args.insert(args.begin(), {"git", "-C", dir});
  auto r = test::run_process(args, kGitEnv);
  EXPECT_EQ(r.exit_code, 0) << "git " << args[3] << ": " << r.err;
  while (!r.out.empty() && r.out.back() == '\n') r.out.pop_back();
  return r.out;
}

// One bundle ready to drive: `repo` (main, pushed to the bare `remote`),
// the bundle worktree `wt` on develop/b1 from origin/main, and a run whose
// b1 cursor stands at plan_bundle with github delivery.
struct GithubBundle {
  test::Scratch s;
  std::string remote = s / "remote.git";
  std::string repo = s / "repo";
  std::string wt = s / "wt";
  std::string run = s / "runs/r1";
  std::string gh_dir = s / "gh";
  std::string bin = s / "bin";
  std::string scenario = s / "scenario.json";
  std::string merge_policy;
  std::string gh_auto_merge;  // FAKE_GH_AUTO_MERGE: "fail" refuses auto-merge

  explicit GithubBundle(std::string policy = "auto_when_checks_pass")
      : merge_policy(std::move(policy)) {
    auto ok = [](const test::ProcessResult& r) {
      if (r.exit_code != 0) ADD_FAILURE() << r.out << r.err;
    };
    ok(test::run_process({"git", "init", "-q", "--bare", "-b", "main", remote}));
    // Every ref update the remote receives, one "old new ref" line each.
    std::string hook = remote + "/hooks/post-receive";
    test::write_text(hook, "#!/bin/sh\ncat >> '" + remote + "/pushes.log'\n");
    EXPECT_EQ(::chmod(hook.c_str(), 0755), 0);
    ok(test::run_process({"git", "init", "-q", "-b", "main", repo}));
    std::vector<std::string> add = {"add", "--"};
    for (const auto& f : demo::sample_base_files()) {
      EXPECT_TRUE(make_directories(dirname_of(repo + "/" + f.path)));
      test::write_text(repo + "/" + f.path, f.content);
      add.push_back(f.path);
    }
    git_out(repo, add);
    git_out(repo, {"commit", "-q", "-m", "tally: split text into words"});
    git_out(repo, {"remote", "add", "origin", remote});
    git_out(repo, {"push", "-q", "-u", "origin", "main"});
    git_out(repo, {"worktree", "add", "-q", "-b", kBranch, wt, "origin/main"});

    EXPECT_TRUE(make_directories(bin));
    EXPECT_TRUE(make_directories(gh_dir));
    EXPECT_EQ(
        ::symlink((test::test_dir() + "/fixtures/bundle/fake-gh").c_str(), (bin + "/gh").c_str()),
        0);
    test::write_text(scenario, dump_py(sim_scenario(5), 2));

    Json merge = {
        {"delivery", "github"},
        {"merge_policy", merge_policy},
        {"commands", {{"test", kTestCommand}, {"build", kBuildCommand}}},
        {"bundles",
         Json::array(
             {{{"id", kBundle}, {"title", kTitle}, {"issues", Json::array({12, "#34"})}}})}};
    ok(test::run_devgraph({"checkpoint", run, "init", "--repo", repo, "--default-branch", "main",
                           "--merge", dump_py(merge)}));
    Json cursor = {{"worktree", wt}, {"branch", kBranch}, {"base", "origin/main"}};
    ok(test::run_devgraph({"checkpoint", run, "move", "--bundle", kBundle, "--node", "plan_bundle",
                           "--event", "BUNDLE_STARTED", "--merge", dump_py(cursor)}));
    EXPECT_TRUE(make_directories(run + "/bundles/b1"));
    test::write_text(run + "/bundles/b1/spec.md", sample_spec());
  }

  std::vector<std::string> argv() const {
    return {DEVGRAPH_BIN, "run-bundle",     run,   "--bundle",
            kBundle,      "--agent",        "sim", "--sim-scenario",
            scenario,     "--max-parallel", "3",   "--api-backoff-seconds",
            "0.05"};
  }

  // The environment of every run: the fake gh first on PATH; the crash
  // point only when asked for (an empty value unsets it).
  std::map<std::string, std::string> env(const std::string& crash = "") const {
    const char* path = std::getenv("PATH");
    auto e = kGitEnv;
    e.insert({{"PATH", bin + ":" + (path ? path : "/usr/bin:/bin")},
              {"FAKE_GH_DIR", gh_dir},
              {"FAKE_GH_AUTO_MERGE", gh_auto_merge},
              {"DEVGRAPH_BUNDLE_CRASH_AT", crash}});
    return e;
  }

  test::ProcessResult run_bundle(const std::string& crash = "") const {
    auto a = argv();
    a.erase(a.begin());
    return test::run_devgraph(a, env(crash));
  }

  // Every `<persona>.result.json` of the bundle: path -> contents.
  std::map<std::string, std::string> saved_results() const {
    std::map<std::string, std::string> out;
    const std::string suffix = ".result.json";
    for (const auto& e : std::filesystem::recursive_directory_iterator(run + "/bundles/b1")) {
      std::string path = e.path().string();
      if (path.size() > suffix.size() &&
          path.compare(path.size() - suffix.size(), suffix.size(), suffix) == 0 &&
          path.find("tech-lead.result.json") == std::string::npos)
        out[path] = test::slurp(path);
    }
    return out;
  }

  Json state() const { return Json::parse(test::slurp(run + "/state.json")); }
  std::string gh_calls() const { return test::slurp(gh_dir + "/calls.log"); }
  std::vector<Json> events() const {
    std::vector<Json> out;
    for (const auto& l : lines_of(test::slurp(run + "/events.jsonl")))
      out.push_back(Json::parse(l));
    return out;
  }
  size_t branch_pushes() const {
    if (!path_exists(remote + "/pushes.log")) return 0;
    const std::string ref = " refs/heads/develop/b1";
    size_t n = 0;
    for (const auto& l : lines_of(test::slurp(remote + "/pushes.log")))
      n += l.size() > ref.size() && l.compare(l.size() - ref.size(), ref.size(), ref) == 0;
    return n;
  }
};

// The driver's children (agents, git) run in process groups of their own,
// so a SIGKILLed driver leaves them running for a moment: an agent still
// writing its files, a `git commit` still holding index.lock. As a child
// subreaper the test inherits them and, after each kill, waits for every
// one to exit before it starts the next run, so no run races the leftovers
// of the one before.
using test::adopt_orphans;
void reap_orphans() {
  while (::waitpid(-1, nullptr, 0) > 0) {
  }
}

Json result_line(const std::string& out) {
  auto pos = out.rfind("RESULT_JSON: ");
  if (pos == std::string::npos) return Json();
  auto end = out.find('\n', pos);
  return Json::parse(out.substr(pos + 13, end == std::string::npos ? end : end - pos - 13));
}

// Events numbered 1..N without a gap and state.event_seq == N; the run
// replays cleanly against the graph.
void expect_consistent_run(const GithubBundle& b, const std::string& when) {
  SCOPED_TRACE(when);
  auto events = b.events();
  for (size_t i = 0; i < events.size(); ++i)
    ASSERT_EQ(events[i]["seq"], static_cast<long long>(i + 1)) << "event line " << i + 1;
  EXPECT_EQ(b.state()["event_seq"], static_cast<long long>(events.size()));
  auto v = test::run_devgraph({"validate", "run", b.run});
  EXPECT_EQ(v.exit_code, 0) << v.out << v.err;
}

// After a kill from outside, which may land inside a store transaction:
// the log holds events 1..state.event_seq without a gap, plus at most the
// one line the dying transaction appended before it could save state.json
// (whole or torn). The next transaction cuts that line off; `validate run`
// names it until then.
void expect_recoverable_run(const GithubBundle& b, const std::string& when) {
  SCOPED_TRACE(when);
  long long seq = b.state()["event_seq"].get<long long>();
  auto lines = lines_of(test::slurp(b.run + "/events.jsonl"));
  ASSERT_GE(lines.size(), static_cast<size_t>(seq));
  ASSERT_LE(lines.size(), static_cast<size_t>(seq) + 1);
  for (long long i = 0; i < seq; ++i)
    ASSERT_EQ(Json::parse(lines[i])["seq"], i + 1) << "event line " << i + 1;
  auto v = test::run_devgraph({"validate", "run", b.run});
  if (lines.size() == static_cast<size_t>(seq)) {
    EXPECT_EQ(v.exit_code, 0) << v.out << v.err;
  } else {
    EXPECT_EQ(v.exit_code, 1);
    EXPECT_TRUE(v.out.find("past state.event_seq") != std::string::npos ||
                v.out.find("torn") != std::string::npos)
        << v.out;
  }
}

// Everything a finished github bundle must show, however many times the
// driver was killed on the way.
void expect_delivered_once(const GithubBundle& b, const test::ProcessResult& last) {
  ASSERT_EQ(last.exit_code, 0) << last.out << last.err;
  Json result = result_line(last.out);
  EXPECT_EQ(result["status"], "DONE") << last.out;
  EXPECT_EQ(result["tasks_completed"], static_cast<int>(kTasks.size()));
  std::string head = git_out(b.wt, {"rev-parse", "HEAD"});
  EXPECT_EQ(result["head"], head);
  EXPECT_EQ(git_out(b.wt, {"status", "--porcelain"}), "");

  // The branch reached the remote once, and the remote has the worktree's head.
  EXPECT_EQ(
      test::run_process({"git", "--git-dir", b.remote, "rev-parse", "refs/heads/develop/b1"}).out,
      head + "\n");
  EXPECT_EQ(b.branch_pushes(), 1u) << test::slurp(b.remote + "/pushes.log");

  // One pull request, opened once, for the branch into main, closing both issues.
  std::string calls = b.gh_calls();
  std::string create = std::string("pr\tcreate\t--base\tmain\t--head\t") + kBranch +
                       "\t--title\tfeat(b1): " + kTitle + "\t--body-file\t" + b.run +
                       "/bundles/b1/pr-body.md";
  EXPECT_EQ(count_prefixed(calls, "pr\tcreate\t"), 1u) << calls;
  EXPECT_EQ(count_lines(calls, create), 1u) << calls;
  std::string body = test::slurp(b.gh_dir + "/pr-1.body");
  EXPECT_EQ(count_lines(body, "Closes #12"), 1u) << body;
  EXPECT_EQ(count_lines(body, "Closes #34"), 1u) << body;
  EXPECT_EQ(count_prefixed(body, "Closes #"), 2u) << body;
  bool auto_merge = b.merge_policy == "auto_when_checks_pass";
  bool refused = b.gh_auto_merge == "fail";
  EXPECT_EQ(count_lines(calls, "pr\tmerge\t1\t--auto\t--merge"), auto_merge ? 1u : 0u) << calls;
  EXPECT_NE(test::slurp(b.gh_dir + "/pr-1.fields")
                .find(auto_merge && !refused ? "autoMerge=true" : "autoMerge=false"),
            std::string::npos);
  EXPECT_FALSE(path_exists(b.gh_dir + "/pr-2.fields"));

  // Every task committed exactly once, by trailer; the plan once too.
  // One git log: "<hash> T=<task trailer> S=<step trailer>" per commit.
  auto log = lines_of(git_out(b.wt, {"log",
                                     "--format=%H T=%(trailers:key=Devgraph-Task,valueonly,"
                                     "separator=%x2C) S=%(trailers:key=Devgraph-Bundle-Step,"
                                     "valueonly,separator=%x2C)",
                                     "origin/main..HEAD"}));
  std::map<std::string, std::vector<std::string>> task_commits;  // task key -> commits
  std::vector<std::string> steps;
  for (const auto& l : log) {
    auto t = l.find(" T="), st = l.find(" S=");
    ASSERT_TRUE(t != std::string::npos && st != std::string::npos) << l;
    std::string task = l.substr(t + 3, st - t - 3), step = l.substr(st + 3);
    if (!task.empty()) task_commits[task].push_back(l.substr(0, t));
    if (!step.empty()) steps.push_back(step);
  }
  EXPECT_EQ(task_commits.size(), kTasks.size());
  Json state = b.state();
  for (const auto& t : kTasks) {
    std::string key = std::string(kBundle) + "/" + t;
    ASSERT_EQ(task_commits[key].size(), 1u) << t;
    const Json& c = state["tasks_runtime"][key];
    EXPECT_EQ(c["status"], "complete") << t;
    // The cursor names the commit that carries the task's trailer.
    EXPECT_EQ(c.value("commit", ""), task_commits[key][0]) << t;
  }
  EXPECT_EQ(std::count(steps.begin(), steps.end(), "b1/plan"), 1);
  EXPECT_EQ(std::set<std::string>(steps.begin(), steps.end()).size(), steps.size());

  // The pull request is recorded on the bundle cursor, as the reference's
  // run_bundle.py records it (it leaves the run's `prs` list to the
  // orchestrator's monitor_prs).
  const Json& cursor = state["bundles_runtime"][kBundle];
  EXPECT_EQ(cursor["node"], "create_pr");
  EXPECT_EQ(cursor["status"], "complete");
  EXPECT_EQ(cursor["head"], head);
  Json pr = {{"number", 1},
             {"url", "https://github.invalid/owner/repo/pull/1"},
             {"auto_merge", !auto_merge ? "off"
                            : refused   ? "unavailable"
                                        : "enabled"}};
  EXPECT_EQ(cursor["pr"], pr);
  EXPECT_EQ(result["pr"], pr);
  EXPECT_EQ(state["prs"], Json::array());
  EXPECT_EQ(cursor["persona_runs"], result["persona_runs"]);
  // planner, four personas per task, code and documentation reviewers; a
  // persona killed before its result was saved runs again and counts twice.
  EXPECT_GE(cursor["persona_runs"].get<int>(), 3 + 4 * static_cast<int>(kTasks.size()));

  // One PR_CREATED and one TASK_COMMITTED per task in the log.
  std::map<std::string, int> committed;
  int pr_created = 0;
  for (const auto& e : b.events()) {
    if (e["type"] == "PR_CREATED") ++pr_created;
    if (e["type"] == "TASK_COMMITTED") ++committed[e["detail"].value("task", "")];
  }
  EXPECT_EQ(pr_created, 1);
  for (const auto& t : kTasks) EXPECT_EQ(committed[t], 1) << t;
  expect_consistent_run(b, "after the last run");
}

TEST(RunBundleGithub, PushesOnceAndOpensOnePullRequestWithAutoMerge) {
  GithubBundle b;
  auto r = b.run_bundle();
  expect_delivered_once(b, r);
  // The pull request was looked up before it was created, and the push came
  // before the pull request.
  auto calls = lines_of(b.gh_calls());
  ASSERT_GE(calls.size(), 3u);
  EXPECT_EQ(calls[0].rfind("pr\tview\t", 0), 0u) << calls[0];
  int auto_enabled = 0;
  for (const auto& e : b.events()) auto_enabled += e["type"] == "AUTO_MERGE_ENABLED";
  EXPECT_EQ(auto_enabled, 1);

  // Running it again once it is done changes nothing outside.
  auto again = b.run_bundle();
  EXPECT_EQ(again.exit_code, 0) << again.err;
  EXPECT_EQ(result_line(again.out)["pr"]["number"], 1);
  EXPECT_EQ(b.branch_pushes(), 1u);
  EXPECT_EQ(count_prefixed(b.gh_calls(), "pr\tcreate\t"), 1u);
}

TEST(RunBundleGithub, NeverPolicyLeavesAutoMergeOff) {
  GithubBundle b("never");
  auto r = b.run_bundle();
  expect_delivered_once(b, r);
  EXPECT_EQ(count_prefixed(b.gh_calls(), "pr\tmerge"), 0u);
}

TEST(RunBundleGithub, RefusedAutoMergeIsRecordedAndTheBundleIsStillDone) {
  GithubBundle b;
  b.gh_auto_merge = "fail";
  auto r = b.run_bundle();
  expect_delivered_once(b, r);
  int unavailable = 0;
  for (const auto& e : b.events()) unavailable += e["type"] == "AUTO_MERGE_UNAVAILABLE";
  EXPECT_EQ(unavailable, 1);
}

// A path of T3 already staged when the run starts (as a persona that ran
// `git add` itself, or a run killed between `git add` and `git commit`,
// would leave it) stays out of the plan's and T1's commits: each commit
// takes its own paths only, and T3 still gets its commit.
TEST(RunBundleGithub, PathsStagedForAnotherTaskStayOutOfACommit) {
  GithubBundle b;
  const auto tasks = sample_tasks();
  auto t3 = std::find_if(tasks.begin(), tasks.end(), [](const auto& t) { return t.id == "T3"; });
  ASSERT_NE(t3, tasks.end());
  // An unfinished start of T3's module, staged: T3's test still fails on
  // it, and T3's developer finishes it.
  EXPECT_TRUE(make_directories(dirname_of(b.wt + "/" + t3->impl.path)));
  test::write_text(b.wt + "/" + t3->impl.path, "# to be written\n");
  git_out(b.wt, {"add", "--", t3->impl.path});
  auto r = b.run_bundle();
  expect_delivered_once(b, r);
  std::string t3_commit = b.state()["tasks_runtime"]["b1/T3"].value("commit", "");
  auto files = git_out(b.wt, {"show", "--name-only", "--format=", t3_commit});
  EXPECT_EQ(count_lines(files, t3->impl.path), 1u) << files;
  auto touching = git_out(b.wt, {"log", "--format=%H", "origin/main..HEAD", "--", t3->impl.path});
  EXPECT_EQ(touching, t3_commit);
}

// ---------------------------------------------------------------------------
// SIGKILL and resume at one point of the bundle.

struct KillPoint {
  const char* crash;   // DEVGRAPH_BUNDLE_CRASH_AT
  const char* window;  // what has happened and what has not
};

// Each point names the effect it interrupts (bundle/crash_points.h), so a
// point stays where it is when the driver gains a move. T1 heads the
// longest chain (T1 -> T2) and is served first; T3 runs beside it.
const KillPoint kPoints[] = {
    {"launch:b1/planner", "planning: nothing launched yet"},
    {"saved:b1/planner", "planning: planner result saved, plan not committed"},
    {"commit:b1/plan", "planning: plan staged, not committed"},
    {"committed:b1/plan", "planning: plan committed, PLAN_DONE not recorded"},
    {"moved:b1/PLAN_DONE", "PLAN_DONE recorded, no task started"},
    {"launch:b1/T3/tdd-writer", "two tasks started, the second tdd-writer not launched"},
    {"saved:b1/T1/tdd-writer", "a tdd-writer result saved, TDD_DONE not recorded"},
    {"saved:b1/T1/developer", "an implement result saved, IMPLEMENT_DONE not recorded"},
    {"saved:b1/T1/tester", "one verifier of a task done, the other may be running"},
    {"commit:b1/T1", "first task: intent recorded, paths staged, not committed"},
    {"committed:b1/T1", "first task committed, TASK_COMMITTED not recorded"},
    {"launch:b1/T2/tdd-writer", "the dependent task starting while another may be verified"},
    {"commit:b1/T3", "the side task staged while another may be in flight"},
    {"committed:b1/T3", "the side task committed, not recorded"},
    {"committed:b1/T2", "the dependent task committed, not recorded"},
    {"moved:b1/BUNDLE_TASKS_COMPLETE", "tasks complete, bundle_verify not run"},
    {"saved:b1/code-reviewer", "code review saved, REVIEW_APPROVED not recorded"},
    {"saved:b1/documentation-reviewer", "documentation review saved, delivery not started"},
    {"push:develop/b1", "push intent recorded, not pushed"},
    {"pushed:develop/b1", "pushed, pull request not looked up"},
    {"pr:develop/b1", "pull request intent recorded, gh pr create not run"},
    {"pr_created:develop/b1", "pull request open, not read back"},
    {"merged:develop/b1", "auto-merge enabled, PR_CREATED not recorded"},
    {"delivered:b1", "PR_CREATED recorded, result not written"},
};

void PrintTo(const KillPoint& p, std::ostream* os) {
  *os << p.crash << " (" << p.window << ")";
}

class RunBundleResume : public ::testing::TestWithParam<KillPoint> {};

TEST_P(RunBundleResume, KilledOnceThenResumedDeliversExactlyOnce) {
  const KillPoint& p = GetParam();
  SCOPED_TRACE(std::string(p.crash) + ": " + p.window);
  GithubBundle b;
  adopt_orphans();
  auto killed = b.run_bundle(p.crash);
  reap_orphans();
  ASSERT_EQ(killed.signal, SIGKILL)
      << "the crash point was never reached; exit " << killed.exit_code << "\n"
      << killed.out << killed.err;
  EXPECT_EQ(killed.out.find("RESULT_JSON"), std::string::npos);
  expect_consistent_run(b, "right after the kill");
  auto saved = b.saved_results();
  if (std::string(p.crash) != "launch:b1/planner") {
    EXPECT_FALSE(saved.empty());
  }
  auto resumed = b.run_bundle();
  expect_delivered_once(b, resumed);
  // A persona whose result was saved before the kill was not run again:
  // its result file is the same one (same handle, same time).
  auto after = b.saved_results();
  for (const auto& [path, text] : saved) EXPECT_EQ(after[path], text) << path;
}

std::string point_name(const ::testing::TestParamInfo<KillPoint>& info) {
  std::string n = info.param.crash;
  for (auto& c : n)
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  return n;
}

// Every point in the regular build; every other one (each stage still
// covered) in the sanitizer build, where each process starts slowly.
std::vector<KillPoint> points_for_this_build() {
  std::vector<KillPoint> out;
  for (size_t i = 0; i < std::size(kPoints); ++i)
    if (!test::kUnderSanitizers || i % 2 == 0) out.push_back(kPoints[i]);
  return out;
}

INSTANTIATE_TEST_SUITE_P(Points, RunBundleResume, ::testing::ValuesIn(points_for_this_build()),
                         point_name);

// ---------------------------------------------------------------------------
// Kills from outside: the driver's process group gets SIGKILL again and
// again, each run resuming the previous one, until a run finishes on its
// own. The instants come from the run's progress, not the clock: each round
// picks a number of new events.jsonl lines and kills the group as soon as
// the log has grown by that many, which lands inside store transactions,
// persona launches, commits and delivery alike, on a fast machine or a
// loaded one.

using test::Waited;
using test::Watch;

// Starts the driver in a process group of its own, output to files.
pid_t spawn_group(const GithubBundle& b, const std::string& log) {
  return test::spawn_group(b.argv(), log, b.env());
}

// Until events.jsonl holds at least `lines` lines.
Waited wait_for_lines(const GithubBundle& b, Watch& watch, int pidfd, size_t lines,
                      std::chrono::steady_clock::time_point deadline) {
  return test::wait_until(
      watch, pidfd, [&] { return std::vector<std::string>{b.run}; },
      [&] { return test::event_lines(b.run) >= lines; }, deadline);
}

TEST(RunBundleResumeOutside, RandomGroupKillsUntilDone) {
  adopt_orphans();
  GithubBundle b;
  Watch watch;
  ASSERT_TRUE(watch.ok() && watch.add(b.run))
      << "inotify on " << b.run << ": " << std::strerror(errno);
  // Any seed gives at least three kills and an end (see below); a new one
  // each run reaches other kill points, and failures name it.
  const unsigned seed = std::random_device{}();
  std::mt19937 rng(seed);
  // A whole bundle writes 43 lines (2 of them before the first run). A
  // resumed run first dispatches again the personas the kill cut short (at
  // most four: two tasks' verifiers) and may note a commit, push or pull
  // request intent again, and the last line before a kill may be cut: 6
  // lines at most that do not move the bundle on. A round of at least 7
  // new lines therefore always moves it on (a round of 1 can repeat the
  // same dispatch forever), so it ends within 48 rounds even at one event
  // a round (five or six in practice), and three rounds of at most 10 end
  // by line 32, well before the bundle does: at least three kills.
  std::uniform_int_distribution<size_t> new_lines(7, 10);
  // Generous: a failure condition for a driver that hangs, never a wait.
  constexpr auto kRoundLimit = std::chrono::seconds(120);
  int kills = 0;
  bool finished = false;
  // The seed, then "+target@lines before" per round, for failures.
  std::string trace = "seed " + std::to_string(seed) + ":";
  for (int round = 0; round < 48 && !finished; ++round) {
    const size_t before = test::event_lines(b.run);
    const size_t target = new_lines(rng);
    trace += " +" + std::to_string(target) + "@" + std::to_string(before);
    pid_t pid = spawn_group(b, b.s / "outside.log");
    ASSERT_GT(pid, 0);
    int pidfd = static_cast<int>(::syscall(SYS_pidfd_open, pid, 0));
    if (pidfd < 0) ::kill(-pid, SIGKILL);
    ASSERT_GE(pidfd, 0) << "pidfd_open: " << std::strerror(errno);
    Waited why = wait_for_lines(b, watch, pidfd, before + target,
                                std::chrono::steady_clock::now() + kRoundLimit);
    ::close(pidfd);
    if (why != Waited::kExited) ::kill(-pid, SIGKILL);
    int st = 0;
    ASSERT_EQ(::waitpid(pid, &st, 0), pid);
    reap_orphans();
    ASSERT_NE(why, Waited::kTimedOut)
        << "round " << round + 1 << ": events.jsonl did not grow by " << target << " lines in "
        << kRoundLimit.count() << " s;" << trace << "\n"
        << test::slurp(b.s / "outside.log");
    if (WIFSIGNALED(st)) {
      ASSERT_EQ(WTERMSIG(st), SIGKILL);
      ++kills;
      expect_recoverable_run(b, "after outside kill " + std::to_string(kills) + ";" + trace);
      if (::testing::Test::HasFatalFailure()) return;
    } else {
      ASSERT_TRUE(WIFEXITED(st));
      ASSERT_EQ(WEXITSTATUS(st), 0) << test::slurp(b.s / "outside.log");
      finished = true;
    }
  }
  EXPECT_TRUE(finished) << trace;
  EXPECT_GE(kills, 3) << trace;
  auto last = b.run_bundle();
  expect_delivered_once(b, last);
  RecordProperty("outside_kills", kills);
  std::cout << "outside kills: " << kills << ", finished on its own: " << finished
            << ", events.jsonl lines: " << test::event_lines(b.run)
            << ", rounds (+new lines@lines before): " << trace << "\n";
}

// ---------------------------------------------------------------------------
// Stop signals: SIGINT or SIGTERM to a running run-bundle ends every
// persona's process group, leaves each cursor where it stood, exits with
// 128 + N and says HANDOFF; the next run resumes to DONE.

class RunBundleStop : public ::testing::TestWithParam<int> {};

// The process groups the driver's live-children record names.
std::vector<pid_t> recorded_groups(const GithubBundle& b) {
  std::vector<pid_t> out;
  auto text = read_file(b.run + "/bundles/b1/live-children");
  if (!text) return out;
  std::istringstream in(*text);
  long long pid = 0, start = 0;
  while (in >> pid >> start) out.push_back(static_cast<pid_t>(pid));
  return out;
}

TEST_P(RunBundleStop, ASignalEndsEveryPersonaAndTheNextRunResumes) {
  const int sig = GetParam();
  adopt_orphans();
  GithubBundle b;
  // T1's developer hangs on its first call (the sim waits a day), so a
  // persona is surely running when the signal comes.
  Json sc = sim_scenario(5);
  auto& dev = sc["personas"]["developer"];
  dev.insert(dev.begin(), Json{{"task", "T1"}, {"call", 1}, {"fail", "hang"}});
  test::write_text(b.scenario, dump_py(sc, 2));
  Watch watch;
  ASSERT_TRUE(watch.ok() && watch.add(b.run));
  const std::string log = b.s / "stop.log";
  pid_t pid = spawn_group(b, log);
  ASSERT_GT(pid, 0);
  int pidfd = static_cast<int>(::syscall(SYS_pidfd_open, pid, 0));
  if (pidfd < 0) ::kill(-pid, SIGKILL);
  ASSERT_GE(pidfd, 0);
  // The simulated agent counts its calls in the bundle's sim directory,
  // which exists once the planner has run; T1's developer is hanging once
  // its call is counted (a launch only recorded may not have started yet).
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
  auto planned = [&] {
    auto text = read_file(b.run + "/events.jsonl");
    return text && text->find("\"PLAN_DONE\"") != std::string::npos;
  };
  auto run_only = [&] { return std::vector<std::string>{b.run}; };
  auto reached = test::wait_until(watch, pidfd, run_only, planned, deadline);
  if (reached == Waited::kReached &&
      !(watch.add(b.run + "/bundles/b1/sim") && watch.add(b.run + "/bundles/b1")))
    reached = Waited::kTimedOut;
  // The child may count its call before the driver has recorded it among
  // its live children (bundles/b1/live-children): wait for both.
  auto is_developer_t1 = [](pid_t p) {
    auto cmd = read_file("/proc/" + std::to_string(p) + "/cmdline");
    if (!cmd) return false;
    std::replace(cmd->begin(), cmd->end(), '\0', ' ');
    return cmd->find("--persona developer --task T1 ") != std::string::npos;
  };
  auto hanging = [&] {
    auto count = read_file(b.run + "/bundles/b1/sim/developer--T1.count");
    if (!count || *count != "1\n") return false;
    auto groups = recorded_groups(b);
    return std::any_of(groups.begin(), groups.end(), is_developer_t1);
  };
  if (reached == Waited::kReached)
    reached = test::wait_until(watch, pidfd, run_only, hanging, deadline);
  if (reached != Waited::kReached) ::kill(-pid, SIGKILL);
  ASSERT_EQ(reached, Waited::kReached) << test::slurp(log);
  auto groups = recorded_groups(b);
  EXPECT_FALSE(groups.empty());
  const auto signalled = std::chrono::steady_clock::now();
  // As a terminal's Ctrl-C or a supervisor's TERM reaches it: the driver
  // only (personas run in process groups of their own).
  ASSERT_EQ(::kill(pid, sig), 0);
  int st = 0;
  ASSERT_EQ(::waitpid(pid, &st, 0), pid);
  ::close(pidfd);
  const auto took = std::chrono::steady_clock::now() - signalled;
  ASSERT_TRUE(WIFEXITED(st)) << "killed by signal " << WTERMSIG(st) << "\n" << test::slurp(log);
  EXPECT_EQ(WEXITSTATUS(st), 128 + sig) << test::slurp(log);
  // Every persona process group had ended before the driver exited (only
  // zombies, now reaped, may be left).
  while (::waitpid(-1, nullptr, WNOHANG) > 0) {
  }
  for (pid_t g : groups) {
    bool gone = ::kill(-g, 0) != 0 && errno == ESRCH;
    EXPECT_TRUE(gone) << "persona group " << g << " outlived the driver";
    if (!gone) ::kill(-g, SIGKILL);  // a group this test's driver started
  }
  std::string out = test::slurp(log);
  Json result = result_line(out);
  EXPECT_EQ(result["status"], "HANDOFF") << out;
  EXPECT_EQ(result["human_required"], false);
  EXPECT_EQ(b.state()["tasks_runtime"]["b1/T1"]["node"], "implement");
  EXPECT_FALSE(path_exists(b.run + "/bundles/b1/tasks/T1/developer.result.json"))
      << "a stop must not be saved as the persona's answer";
  std::cout << "stopped by signal " << sig << " in "
            << std::chrono::duration_cast<std::chrono::milliseconds>(took).count() << " ms\n";
  // The next run resumes where the first stopped and delivers once.
  auto resumed = b.run_bundle();
  expect_delivered_once(b, resumed);
}

std::string signal_name(const ::testing::TestParamInfo<int>& p) {
  return p.param == SIGINT ? "SIGINT" : "SIGTERM";
}

INSTANTIATE_TEST_SUITE_P(Signals, RunBundleStop, ::testing::Values(SIGINT, SIGTERM), signal_name);

}  // namespace
}  // namespace devgraph
