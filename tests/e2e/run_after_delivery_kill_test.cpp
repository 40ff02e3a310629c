// After delivery, killed and resumed, end to end: `devgraph run` with
// GitHub delivery (a bare origin behind a github.com URL, the fake GitHub
// CLI tests/fixtures/bundle/fake-gh) in a repository where a first run
// delivered three pull requests, of which a person merged two and the
// third has a failing check. The next run monitors the three, cleans the
// two merged worktrees, audits the two merges (the simulated merge-auditor
// finds one thing of every severity in each, the same things), files the
// Medium and Low findings as issues and forms one remediation bundle of the
// Critical and High ones, then delivers it.
//
// That run is SIGKILLed (its pid only: audit children and drivers are left
// as orphans for the next run to end) at a named crash point of the
// after-delivery steps, or from outside at instants picked from its event
// log. After each kill: no finding was filed twice, at most one
// remediation bundle exists, the unmerged pull request's worktree is there
// and the audit marker has passed no merge that was not audited. Then
// `devgraph run` runs to the end and the whole outcome is checked, and one
// more run files nothing.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <cstdlib>
#include <map>
#include <random>
#include <set>

#include "support/kill_harness.h"
#include "support/run_scenario.h"
#include "support/test_util.h"
#include "util/fs.h"
#include "util/json.h"

namespace devgraph {
namespace {

using test::lines_of;

constexpr const char* kOrigin = "https://github.com/acme/widgets.git";
constexpr auto kRunLimit = std::chrono::seconds(120);
constexpr int kResumesAllowed = 3;

std::string trimmed(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
  return s;
}

Json finding(const std::string& severity, const std::string& what) {
  return Json{{"severity", severity},
              {"file", "src/b1.txt"},
              {"line", 1},
              {"description", what},
              {"rule", "r-" + severity},
              {"evidence", "reverted in a copy, the test failed"}};
}

// How one round kills the after-delivery run: at a named point, or when
// its event log holds `lines` lines (once or twice).
struct Kill {
  std::string point;          // DEVGRAPH_RUN_CRASH_AT, or ""
  std::vector<size_t> lines;  // outside kills, in increasing order
  std::string what() const {
    if (!point.empty()) return "crash point " + point;
    std::string s = "outside kills at events.jsonl lines";
    for (size_t l : lines) s += " " + std::to_string(l);
    return s;
  }
};

// A round: the delivery (github or local) and its number, which picks the
// kill.
struct Round {
  std::string delivery;
  int number;
};

void PrintTo(const Round& r, std::ostream* os) {
  *os << r.delivery << " round " << r.number;
}

class AfterDeliveryKill : public ::testing::TestWithParam<Round> {
 protected:
  bool github() const { return GetParam().delivery == "github"; }
  test::Scratch s;
  std::string repo = s / "widgets";
  std::string remote = s / "remote.git";
  std::string ai_root = s / "ai";
  std::string gh_dir = s / "gh";
  std::string bin = s / "bin";
  std::string scenario = s / "scenario.json";
  std::string log = s / "runs.log";
  // The two merged commits the audit sees: github, the merge commits;
  // local, the merged branches' tips.
  std::string m1, m2;
  std::string b3_worktree;
  std::map<std::string, int> pr_of;  // github: head branch -> pull request number

  std::string git(const std::vector<std::string>& args, const std::string& dir = "") const {
    std::vector<std::string> argv = {"git"};
    argv.insert(argv.end(), args.begin(), args.end());
    auto r = test::run_process(argv, env(), dir.empty() ? repo : dir);
    EXPECT_EQ(r.exit_code, 0) << "git " << args[0] << ": " << r.err;
    return trimmed(r.out);
  }
  bool git_ok(const std::vector<std::string>& args) const {
    std::vector<std::string> argv = {"git", "-C", repo};
    argv.insert(argv.end(), args.begin(), args.end());
    return test::run_process(argv, env()).exit_code == 0;
  }

  std::map<std::string, std::string> env(const std::string& crash = "") const {
    const char* path = std::getenv("PATH");
    auto e = test::quiet_git_env();
    e.insert({{"AI_ROOT", ai_root},
              {"PATH", bin + ":" + (path ? path : "/usr/bin:/bin")},
              {"FAKE_GH_DIR", gh_dir},
              {"NO_COLOR", "1"},
              {"DEVGRAPH_RUN_CRASH_AT", crash},
              {"DEVGRAPH_BUNDLE_CRASH_AT", ""}});
    return e;
  }

  std::vector<std::string> run_args() const {
    return {"run", "--agent",  "sim", "--sim-scenario", scenario, "--api-backoff-seconds",
            "0",   "--no-live"};
  }
  test::ProcessResult run() const { return test::run_devgraph(run_args(), env(), repo); }

  void write_issues(const Json& issues) const {
    test::write_text(gh_dir + "/issues.json.tmp", dump_py(issues, 2) + "\n");
    ASSERT_EQ(::rename((gh_dir + "/issues.json.tmp").c_str(), (gh_dir + "/issues.json").c_str()),
              0);
  }

  static Json issue(long long n, const std::string& title) {
    return Json{{"number", n},
                {"title", title},
                {"body", "Do " + title + "."},
                {"labels", Json::array({{{"name", "devgraph"}}})},
                {"state", "OPEN"},
                {"createdAt", "2026-11-0" + std::to_string(n) + "T10:00:00Z"},
                {"updatedAt", "2026-11-0" + std::to_string(n) + "T10:00:00Z"}};
  }

  std::string develop_home() const {
    auto r = test::run_devgraph({"guard", "resolve", "--cwd", repo}, env(), repo);
    auto j = parse_json(r.out, "guard resolve");
    return j ? json_str(*j, "develop_home") : std::string();
  }
  std::string run_dir(const std::string& home) const {
    auto names = test::names_in(home + "/runs");
    return names.empty() ? std::string() : home + "/runs/" + names.back();
  }

  void SetUp() override {
    // Under sanitizers a sample of rounds runs; the others are skipped
    // here, before the deliveries every round starts from.
    if (test::kUnderSanitizers && GetParam().number > 3)
      GTEST_SKIP() << "a sample of rounds under sanitizers";
    ASSERT_TRUE(make_directories(gh_dir));
    ASSERT_TRUE(make_directories(bin));
    test::adopt_orphans();
    test::write_widgets_files(repo);
    git({"init", "-q", "-b", "main"});
    git({"add", "-A"});
    git({"commit", "-q", "-m", "base"});
    write_scenario();
    if (github()) {
      set_up_github();
    } else {
      set_up_local();
    }
  }

  // The merge-auditor finds the same four things in every merge.
  void write_scenario() const {
    Json sc = test::one_task_scenario(test::OneTaskScenario{0, std::nullopt, Json(), {}});
    Json every = Json::array(
        {finding("Critical", "secret written to the log"), finding("High", "input used unchecked"),
         finding("Medium", "error code dropped"), finding("Low", "name says the opposite")});
    sc["personas"]["merge-auditor"] = Json::array({{{"latency_ms", 30},
                                                    {"result",
                                                     {{"status", "DONE"},
                                                      {"summary", "four findings"},
                                                      {"evidence", Json::array()},
                                                      {"findings", every}}}}});
    test::write_text(scenario, dump_py(sc, 2));
  }

  // The first run delivers b1..b3 as ready branches; a person merges b1
  // and b2 into main.
  void set_up_local() {
    for (const char* title : {"alpha", "beta", "gamma"}) {
      auto r = test::run_devgraph({"issue", "new", title, "--body", "Do it."}, env(), repo);
      ASSERT_EQ(r.exit_code, 0) << r.err;
    }
    first_run();
    if (::testing::Test::HasFatalFailure()) return;
    m1 = git({"rev-parse", "develop/b1-alpha"});
    m2 = git({"rev-parse", "develop/b2-beta"});
    git({"merge", "-q", "--no-ff", "--no-edit", "develop/b1-alpha"});
    git({"merge", "-q", "--no-ff", "--no-edit", "develop/b2-beta"});
  }

  void first_run() {
    auto r = run();
    ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
    Json state = *parse_json(test::slurp(run_dir(develop_home()) + "/state.json"), "state");
    ASSERT_EQ(state["bundles"].size(), 3u) << dump_py(state["bundles"]);
    b3_worktree = json_str(state["bundles"][2], "worktree");
  }

  // The first run delivers three pull requests; a person merges b1's and
  // b2's on GitHub; b3's check fails.
  void set_up_github() {
    git({"init", "-q", "--bare", "-b", "main", remote}, s.path());
    git({"remote", "add", "origin", kOrigin});
    git({"config", "url." + remote + ".insteadOf", kOrigin});
    git({"push", "-q", "-u", "origin", "main"});
    git({"remote", "set-head", "origin", "main"});
    ASSERT_EQ(
        ::symlink((test::test_dir() + "/fixtures/bundle/fake-gh").c_str(), (bin + "/gh").c_str()),
        0);
    write_issues(Json::array({issue(1, "alpha"), issue(2, "beta"), issue(3, "gamma")}));
    first_run();
    if (::testing::Test::HasFatalFailure()) return;

    // The fake's numbers, in the order the drivers opened them.
    for (const auto& l : lines_of(test::slurp(gh_dir + "/heads"))) {
      auto sp = l.find(' ');
      if (sp != std::string::npos) pr_of[l.substr(sp + 1)] = std::stoi(l.substr(0, sp));
    }
    ASSERT_EQ(pr_of.size(), 3u) << test::slurp(gh_dir + "/heads");

    git({"fetch", "-q", "origin"});
    git({"merge", "-q", "--no-ff", "--no-edit", "origin/develop/b1-alpha"});
    m1 = git({"rev-parse", "HEAD"});
    git({"merge", "-q", "--no-ff", "--no-edit", "origin/develop/b2-beta"});
    m2 = git({"rev-parse", "HEAD"});
    git({"push", "-q", "origin", "main"});
    auto merged = [&](int n, const std::string& commit, const std::string& at) {
      std::string fields = test::slurp(gh_dir + "/pr-" + std::to_string(n) + ".fields");
      test::write_text(gh_dir + "/pr-" + std::to_string(n) + ".fields",
                       fields + "state=MERGED\nmergeCommit=" + commit + "\nmergedAt=" + at + "\n");
      test::write_text(
          gh_dir + "/pr-" + std::to_string(n) + ".diff",
          "diff --git a/src/b" + std::to_string(n) + ".txt b/src/b" + std::to_string(n) + ".txt\n");
    };
    merged(pr_of["develop/b1-alpha"], m1, "2026-12-01T10:00:00Z");
    merged(pr_of["develop/b2-beta"], m2, "2026-12-01T11:00:00Z");
    Json check = {{"__typename", "CheckRun"},
                  {"name", "test"},
                  {"workflowName", "CI"},
                  {"status", "COMPLETED"},
                  {"conclusion", "FAILURE"},
                  {"detailsUrl", "https://github.com/acme/widgets/actions/runs/7/job/8"}};
    test::write_text(gh_dir + "/pr-" + std::to_string(pr_of["develop/b3-gamma"]) + ".look-1",
                     "checks=" + dump_py(Json::array({check})) + "\n");
    test::write_text(gh_dir + "/job-8.log", "FAIL: tests/b3.sh\n");
    write_issues(Json::array({issue(3, "gamma")}));
  }

  // Filed issues: fingerprint -> how many carry it. github: the issues
  // `gh issue create` made; local: the issue files.
  std::map<std::string, int> filed_fingerprints() const {
    std::map<std::string, int> out;
    std::string dir = github() ? gh_dir : develop_home() + "/audit/issues";
    for (const auto& name : test::names_in(dir)) {
      bool issue = github() ? name.rfind("issue-", 0) == 0 && name.size() > 5 &&
                                  name.substr(name.size() - 5) == ".body"
                            : name.size() > 3 && name.substr(name.size() - 3) == ".md";
      if (!issue) continue;
      std::string body = test::slurp(dir + "/" + name);
      const std::string tag = "<!-- devgraph-finding: ";
      auto at = body.find(tag);
      EXPECT_NE(at, std::string::npos) << name << ": " << body;
      if (at == std::string::npos) continue;
      ++out[body.substr(at + tag.size(), 16)];
    }
    return out;
  }

  // The merged commits whose auditor left an audited result in `run`.
  std::set<std::string> audited(const std::string& run) const {
    std::set<std::string> out;
    for (const auto& key : test::names_in(run + "/audit")) {
      auto r = load_json_file(run + "/audit/" + key + "/result.json");
      auto q = load_json_file(run + "/audit/" + key + "/request.json");
      if (r && q && json_str(*r, "status") == "audited") out.insert(json_str(*q, "merge_commit"));
    }
    return out;
  }

  size_t remediation_bundles(const std::string& run) const {
    auto text = read_file(run + "/state.json");  // none before the first record
    auto state = parse_json(text ? *text : "{}", "state");
    if (!state || !state->contains("bundles")) return 0;
    size_t n = 0;
    for (const auto& b : (*state)["bundles"]) n += b.contains("remediation");
    return n;
  }

  // What must hold at every instant, killed or not.
  void expect_safe(const std::string& home, const std::string& run, const std::string& when) {
    SCOPED_TRACE(when);
    for (const auto& [fp, n] : filed_fingerprints()) EXPECT_EQ(n, 1) << "fingerprint " << fp;
    EXPECT_LE(remediation_bundles(run), 1u);
    EXPECT_TRUE(is_directory(b3_worktree)) << "the unmerged pull request's worktree is gone";
    EXPECT_TRUE(git_ok({"rev-parse", "-q", "--verify", "refs/heads/develop/b3-gamma"}));
    std::string marker = trimmed(test::slurp(home + "/last-audit"));
    auto done = audited(run);
    for (const auto& merge : {m1, m2}) {
      if (!git_ok({"merge-base", "--is-ancestor", merge, marker})) continue;
      EXPECT_TRUE(done.count(merge))
          << "the marker " << marker << " passed " << merge << ", which was not audited";
    }
  }

  Kill pick(int round) const {
    // Named points first, each a window between an effect and its record.
    std::vector<std::string> points = {
        "window", "cleanup:develop/b2-beta", "auditor", "auditor@2", "remediation", "marker"};
    if (github())
      points.insert(points.end(), {"inspected:" + std::to_string(pr_of.at("develop/b3-gamma")),
                                   "issue", "issued", "issued@2"});
    if (round <= static_cast<int>(points.size())) return Kill{points[round - 1], {}};
    // An undisturbed after-delivery run writes about 60 lines, the
    // remediation bundle's delivery included; kills past its end find the
    // run exited and the round has fewer kills.
    std::mt19937 rng(static_cast<unsigned>(round));
    std::uniform_int_distribution<size_t> first(1, 40), second(1, 25);
    Kill k;
    k.lines.push_back(first(rng));
    if (std::bernoulli_distribution(0.5)(rng)) k.lines.push_back(k.lines.back() + second(rng));
    return k;
  }
};

TEST_P(AfterDeliveryKill, KilledWhileMonitoringCleaningAuditingOrTriagingLosesAndRepeatsNothing) {
  const int round = GetParam().number;
  const Kill kill = pick(round);
  SCOPED_TRACE(GetParam().delivery + " round " + std::to_string(round) + ": " + kill.what());
  const std::string home = develop_home();
  const std::string first_run = run_dir(home);
  int kills = 0;
  std::string run_path;
  // The run after the first: the newest directory with a state.json. One
  // killed before its first record has none, and the next run starts
  // afresh (nothing was done in it).
  auto this_run = [&] {
    std::string found;
    for (const auto& name : test::names_in(home + "/runs")) {
      std::string dir = home + "/runs/" + name;
      if (dir == first_run) continue;
      if (found.empty() || path_exists(dir + "/state.json")) found = dir;
    }
    run_path = found;
    return run_path;
  };
  auto one = [&](const std::string& crash, std::optional<size_t> at) -> bool {
    test::Watch watch;
    EXPECT_TRUE(watch.ok());
    test::Background bg;
    test::start_background(bg, run_args(), env(crash), repo, log);
    if (::testing::Test::HasFatalFailure()) return false;
    auto dirs = [&] {
      std::vector<std::string> d = {home, home + "/runs"};
      if (!this_run().empty()) d.push_back(run_path);
      return d;
    };
    auto why = test::wait_until(
        watch, bg.pidfd, dirs, [&] { return at && test::event_lines(this_run()) >= *at; },
        std::chrono::steady_clock::now() + kRunLimit);
    if (why == test::Waited::kReached) ::kill(bg.pid, SIGKILL);
    int st = bg.wait();
    test::reap_exited();
    EXPECT_NE(why, test::Waited::kTimedOut) << test::slurp(log);
    if (WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL) {
      ++kills;
      return true;
    }
    EXPECT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0) << test::slurp(log);
    return false;
  };
  // A run that exits on its own (0) before a kill has nothing to resume;
  // so has one killed after it recorded its end.
  bool finished = false;
  if (!kill.point.empty()) {
    EXPECT_TRUE(one(kill.point, std::nullopt)) << "the run never reached " << kill.point << "\n"
                                               << test::slurp(log);
  } else {
    for (size_t at : kill.lines) {
      if (!one("", at)) {
        finished = true;
        break;
      }
      expect_safe(home, this_run(), "after kill " + std::to_string(kills));
      if ((finished = test::end_committed(this_run()))) break;
    }
  }
  // The first kill lands well before the end of the run.
  EXPECT_GE(kills, 1);
  ASSERT_FALSE(this_run().empty()) << test::slurp(log);
  expect_safe(home, this_run(), "after the kills");

  // To the end.
  test::ProcessResult last;
  for (int n = 0; n < kResumesAllowed && !finished; ++n) {
    last = this->run();
    test::reap_exited();
    if (last.exit_code == 0) break;
  }
  if (!finished) {
    ASSERT_EQ(last.exit_code, 0) << last.out << last.err << test::slurp(log);
  }
  // One run after the first, the killed one (unless killed before its
  // first record), finished.
  const std::string run = this_run();
  auto runs = test::names_in(home + "/runs");
  EXPECT_TRUE(runs.size() == 2 ||
              (runs.size() == 3 && !path_exists(home + "/runs/" + runs[1] + "/state.json")))
      << runs.size() << " runs";
  expect_safe(home, run, "at the end");
  ASSERT_TRUE(path_exists(run + "/state.json")) << run << " has no state\n"
                                                << test::slurp(log) << test::event_summary(run);
  Json state = *parse_json(test::slurp(run + "/state.json"), "state");
  EXPECT_EQ(json_str(state, "status"), "complete");
  // The two Medium and Low findings filed once each, the Critical and
  // High ones one remediation bundle, delivered (github: as the fourth
  // pull request).
  auto filed = filed_fingerprints();
  EXPECT_EQ(filed.size(), 2u);
  ASSERT_EQ(remediation_bundles(run), 1u) << dump_py(state["bundles"]);
  for (const auto& b : state["bundles"])
    if (b.contains("remediation")) {
      EXPECT_EQ(json_str(b, "status"), "delivered") << dump_py(b);
      EXPECT_EQ(b["remediation"]["findings"].size(), 4u) << dump_py(b);
    }
  if (github()) {
    std::string calls = test::slurp(gh_dir + "/calls.log");
    size_t creates = 0;
    for (const auto& l : lines_of(calls)) creates += l.rfind("pr\tcreate\t", 0) == 0;
    EXPECT_EQ(creates, 4u) << calls;
  }
  // github: past the last merge; local: at the default branch's tip.
  EXPECT_EQ(trimmed(test::slurp(home + "/last-audit")), github() ? m2 : git({"rev-parse", "main"}));
  EXPECT_EQ(audited(run), (std::set<std::string>{m1, m2}));
  for (const char* branch : {"develop/b1-alpha", "develop/b2-beta"})
    EXPECT_FALSE(git_ok({"rev-parse", "-q", "--verify", std::string("refs/heads/") + branch}))
        << branch << " was not cleaned";
  auto v = test::run_devgraph({"validate", "run", run}, env(), repo);
  EXPECT_EQ(v.exit_code, 0) << v.out << v.err;
  test::expect_no_process_left(run, kill.what());

  // One more run: nothing new is filed or bundled.
  auto again = this->run();
  ASSERT_EQ(again.exit_code, 0) << again.out << again.err;
  EXPECT_EQ(filed_fingerprints(), filed);
  Json res = test::result_of(again);
  EXPECT_TRUE(res["audit"]["issues_filed"].empty()) << dump_py(res["audit"]);
  EXPECT_EQ(remediation_bundles(json_str(res, "run_dir")), 0u);
  if (::testing::Test::HasFailure())
    std::cout << "killed " << kills << " time(s)\n"
              << test::slurp(log) << "events:\n"
              << test::event_summary(run);
}

std::vector<Round> rounds(const std::string& delivery, int n) {
  std::vector<Round> out;
  for (int i = 1; i <= n; ++i) out.push_back(Round{delivery, i});
  return out;
}

std::string round_name(const ::testing::TestParamInfo<Round>& p) {
  return p.param.delivery + std::to_string(p.param.number);
}

// Thirty rounds with GitHub delivery, where monitoring and filing go
// through gh; fifteen with local delivery, where the window must outlive
// the branches the clean-up deletes.
INSTANTIATE_TEST_SUITE_P(Github, AfterDeliveryKill, ::testing::ValuesIn(rounds("github", 30)),
                         round_name);
INSTANTIATE_TEST_SUITE_P(Local, AfterDeliveryKill, ::testing::ValuesIn(rounds("local", 15)),
                         round_name);

}  // namespace
}  // namespace devgraph
