// The autonomy suite: `devgraph run` end to end over a fresh repository
// with local issues (no origin, so a delivered bundle is a ready branch),
// the simulated agent misbehaving the way real agent CLIs do, and no
// person anywhere. The repository, the issues and the scenario are the
// files of bench/autonomy/ (its README lists the ten misbehaviours), which
// bench/autonomy.sh runs as a figure; the focused tests below take that
// scenario's rules for every bundle and add one story of their own. Every
// test asserts on the exit code, the RESULT_JSON line, state.json,
// events.jsonl, `devgraph inbox` and git.
#include <unistd.h>

#include <gtest/gtest.h>

#include <cstdlib>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "support/run_scenario.h"
#include "support/shipped.h"
#include "support/test_util.h"
#include "util/fs.h"
#include "util/json.h"

namespace devgraph {
namespace {

using test::done;
using test::file;
using test::lines_of;
using test::result_of;

class Autonomy : public ::testing::Test {
 protected:
  void SetUp() override {
    suite = test::source_dir() + "/bench/autonomy";
    repo = scratch / "markers";
    ai_root = scratch / "ai";
    scenario = suite + "/scenario.json";
  }

  std::map<std::string, std::string> env() const {
    std::map<std::string, std::string> e = {{"AI_ROOT", ai_root},
                                            {"GIT_AUTHOR_NAME", "t"},
                                            {"GIT_AUTHOR_EMAIL", "t@example.invalid"},
                                            {"GIT_COMMITTER_NAME", "t"},
                                            {"GIT_COMMITTER_EMAIL", "t@example.invalid"},
                                            {"NO_COLOR", "1"}};
    if (github) {
      const char* path = std::getenv("PATH");
      e["PATH"] = bin + ":" + (path ? path : "/usr/bin:/bin");
      e["FAKE_GH_DIR"] = gh_dir;
    }
    return e;
  }

  std::string git(const std::vector<std::string>& args) {
    std::vector<std::string> argv = {"git"};
    argv.insert(argv.end(), args.begin(), args.end());
    auto r = test::run_process(argv, env(), repo);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return r.out;
  }

  test::ProcessResult devgraph(const std::vector<std::string>& args) {
    return test::run_devgraph(args, env(), repo);
  }

  // The suite's repository committed on main, and the first `count` issues
  // of issues.txt filed as local issues (issue N becomes bundle bN).
  void make_repository(size_t count) {
    auto cp = test::run_process({"cp", "-R", suite + "/repo", repo});
    ASSERT_EQ(cp.exit_code, 0) << cp.err;
    git({"init", "-q", "-b", "main"});
    git({"add", "-A"});
    git({"commit", "-q", "-m", "base"});
    auto titles = lines_of(test::slurp(suite + "/issues.txt"));
    ASSERT_GE(titles.size(), count);
    for (size_t i = 0; i < count; ++i) {
      auto r = devgraph({"issue", "new", titles[i], "--body", titles[i] + "."});
      ASSERT_EQ(r.exit_code, 0) << r.err;
      ASSERT_EQ(r.out, std::to_string(i + 1) + "\n");
    }
  }

  // The suite's repository with an origin on GitHub: a bare repository
  // behind the URL, and the fake gh (tests/fixtures/bundle/fake-gh) first
  // on PATH, serving the first `count` issues of issues.txt as open issues
  // labelled devgraph (issue N becomes bundle bN) and keeping the pull
  // requests it is asked to open.
  void make_github_repository(size_t count) {
    github = true;
    delivered_event = "PR_CREATED";
    ASSERT_TRUE(make_directories(gh_dir));
    ASSERT_TRUE(make_directories(bin));
    ASSERT_EQ(::symlink((test::test_dir() + "/fixtures/bundle/fake-gh").c_str(),
                        (bin + "/gh").c_str()),
              0);
    auto cp = test::run_process({"cp", "-R", suite + "/repo", repo});
    ASSERT_EQ(cp.exit_code, 0) << cp.err;
    auto bare = test::run_process({"git", "init", "-q", "--bare", "-b", "main", remote}, env(),
                                  scratch.path());
    ASSERT_EQ(bare.exit_code, 0) << bare.err;
    git({"init", "-q", "-b", "main"});
    git({"add", "-A"});
    git({"commit", "-q", "-m", "base"});
    const std::string origin = "https://github.com/acme/markers.git";
    git({"remote", "add", "origin", origin});
    git({"config", "url." + remote + ".insteadOf", origin});
    git({"push", "-q", "-u", "origin", "main"});
    git({"remote", "set-head", "origin", "main"});
    auto titles = lines_of(test::slurp(suite + "/issues.txt"));
    ASSERT_GE(titles.size(), count);
    Json issues = Json::array();
    for (size_t i = 0; i < count; ++i)
      issues.push_back({{"number", i + 1},
                        {"title", titles[i]},
                        {"body", titles[i] + "."},
                        {"labels", Json::array({{{"name", "devgraph"}}})},
                        {"state", "OPEN"},
                        {"createdAt", "2026-11-01T10:00:00Z"},
                        {"updatedAt", "2026-11-01T10:00:00Z"}});
    test::write_text(gh_dir + "/issues.json", dump_py(issues) + "\n");
  }

  // Pull request N's body, by the branch it was opened from.
  std::map<std::string, std::string> pull_request_bodies() const {
    std::map<std::string, std::string> out;
    for (int n = 1; path_exists(gh_dir + "/pr-" + std::to_string(n) + ".fields"); ++n) {
      std::string head;
      for (const auto& l : lines_of(test::slurp(gh_dir + "/pr-" + std::to_string(n) + ".fields")))
        if (l.rfind("headRefName=", 0) == 0) head = l.substr(12);
      out[head] = test::slurp(gh_dir + "/pr-" + std::to_string(n) + ".body");
    }
    return out;
  }

  // The suite's scenario with only the rules every bundle shares: one task
  // per bundle, src/<bundle>.txt holding the id and tests/<bundle>.sh
  // checking it, everyone else approving.
  Json shared_rules() const {
    Json sc = *parse_json(test::slurp(suite + "/scenario.json"), "scenario");
    for (auto& [persona, rules] : sc["personas"].items()) {
      (void)persona;
      Json kept = Json::array();
      for (const auto& r : rules)
        if (!r.contains("bundle")) kept.push_back(r);
      rules = kept;
    }
    return sc;
  }

  // Puts `rule` first among `persona`'s rules of `sc`.
  static void prepend(Json& sc, const std::string& persona, Json rule) {
    Json& rules = sc["personas"][persona];
    if (rules.is_null()) rules = Json::array();
    rules.insert(rules.begin(), std::move(rule));
  }

  void use(const Json& sc) {
    scenario = scratch / "scenario.json";
    test::write_text(scenario, dump_py(sc, 2));
  }

  test::ProcessResult run(std::vector<std::string> extra = {}) {
    std::vector<std::string> args = {"run", "--agent", "sim", "--sim-scenario", scenario};
    for (const char* a : {"--api-backoff-seconds", "0", "--no-live"}) args.push_back(a);
    args.insert(args.end(), extra.begin(), extra.end());
    return devgraph(args);
  }

  Json inbox() {
    auto r = devgraph({"inbox", "--json"});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    auto items = parse_json(r.out, "inbox");
    EXPECT_TRUE(items) << r.out;
    return items ? *items : Json::array();
  }

  void load(const Json& result) {
    run_dir = json_str(result, "run_dir");
    ASSERT_FALSE(run_dir.empty()) << dump_py(result);
    events = test::read_jsonl(run_dir + "/events.jsonl");
    state = *parse_json(test::slurp(run_dir + "/state.json"), "state");
  }

  // The events of `type` whose detail holds every field of `match`.
  std::vector<Json> of(const std::string& type, const Json& match = Json::object()) const {
    std::vector<Json> out;
    for (const auto& e : events) {
      if (e["type"] != type) continue;
      const Json& d = e["detail"];
      bool all = true;
      for (const auto& [k, v] : match.items()) all = all && d.contains(k) && d[k] == v;
      if (all) out.push_back(d);
    }
    return out;
  }

  size_t dispatches(const std::string& bundle, const std::string& persona) const {
    return of("PERSONA_DISPATCHED", {{"bundle", bundle}, {"persona", persona}}).size();
  }

  // The runtime's `launched` records of `persona` in bundle `bundle`, fresh
  // launches and resumes, in order.
  std::vector<Json> launches(const std::string& bundle, const std::string& persona) const {
    std::vector<Json> out;
    for (const auto& rec : test::read_jsonl(run_dir + "/bundles/" + bundle + "/run_bundle.log"))
      if (rec["event"] == "launched" && rec["persona"] == persona) out.push_back(rec);
    return out;
  }

  Json bundle_state(const std::string& id) const {
    for (const auto& b : state["bundles"])
      if (b["id"] == id) return b;
    ADD_FAILURE() << "no bundle " << id << " in state.json";
    return Json::object();
  }

  std::string branch_of(const std::string& id) const {
    return json_str(bundle_state(id), "branch");
  }

  // The paths bundle `id`'s ready branch changed that neither a task's
  // footprint in the plan nor the plan itself holds (tasks.json and the
  // plan are the planner's commit).
  std::vector<std::string> outside_footprints(const std::string& id) {
    const Json b = bundle_state(id);
    std::set<std::string> allowed = {"docs/develop/plans/" + id + ".md",
                                     "docs/develop/plans/" + id + ".tasks.json"};
    for (const auto& t : b["tasks"])
      for (const auto& f : t["files"]) allowed.insert(f.get<std::string>());
    std::vector<std::string> out;
    for (const auto& path : lines_of(git({"diff", "--name-only", "main.." + branch_of(id)})))
      if (!allowed.count(path)) out.push_back(path);
    return out;
  }

  // "<bundle>/<task>: <path>" for each path a task's commit holds outside
  // that task's own footprint in the plan.
  std::vector<std::string> committed_by_another(const std::string& id) {
    std::vector<std::string> out;
    const Json b = bundle_state(id);
    for (const auto& t : b["tasks"]) {
      const std::string task = json_str(t, "id");
      std::set<std::string> own;
      for (const auto& f : t["files"]) own.insert(f.get<std::string>());
      for (const auto& path : lines_of(task_commit_files(id, task)))
        if (!own.count(path)) out.push_back(id + "/" + task + ": " + path);
    }
    return out;
  }

  // The files task `task`'s commit on bundle `id`'s branch holds, one a line.
  std::string task_commit_files(const std::string& id, const std::string& task) {
    std::string sha = git({"log", "--format=%H", "--fixed-strings", "--grep",
                           "Devgraph-Task: " + id + "/" + task, "main.." + branch_of(id)});
    sha.erase(sha.find_last_not_of('\n') + 1);
    EXPECT_EQ(sha.size(), 40u) << id << "/" << task << ": " << sha;
    return git({"show", "--name-only", "--format=", sha});
  }

  std::string on_branch(const std::string& id, const std::string& path) {
    return git({"show", branch_of(id) + ":" + path});
  }

  // What every unattended run must show: exit 0 and COMPLETE, every bundle
  // delivered as a ready branch with its own issue, nothing waiting for a
  // person anywhere, no file outside the plan's footprints on any branch,
  // and no task's commit holding a file outside its own footprint but the
  // `wrong` ones ("<bundle>/<task>: <path>").
  void expect_delivered_unattended(const test::ProcessResult& r, size_t bundles,
                                   const std::vector<std::string>& wrong = {}) {
    ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
    Json res = result_of(r);
    ASSERT_NO_FATAL_FAILURE(load(res));
    EXPECT_EQ(res["status"], "COMPLETE") << dump_py(res);
    EXPECT_TRUE(res["human_required"].empty()) << dump_py(res["human_required"]);
    ASSERT_EQ(res["bundles"].size(), bundles) << dump_py(res);
    std::vector<std::string> found_wrong;
    for (const auto& b : res["bundles"]) {
      const std::string id = json_str(b, "id");
      EXPECT_EQ(b["status"], "delivered") << dump_py(b);
      EXPECT_EQ(b["issues"], Json::array({std::stoll(id.substr(1))})) << dump_py(b);
      EXPECT_FALSE(json_str(b, "branch").empty()) << dump_py(b);
      EXPECT_EQ(outside_footprints(id), std::vector<std::string>()) << id;
      for (const auto& w : committed_by_another(id)) found_wrong.push_back(w);
    }
    EXPECT_EQ(found_wrong, wrong);
    EXPECT_EQ(inbox(), Json::array());
    EXPECT_EQ(devgraph({"inbox"}).out, "nothing waits for a person\n");
    for (const char* type :
         {"AWAITING_HUMAN", "HUMAN_REQUIRED", "TECH_LEAD_BLOCKED", "RECOVERY_EXHAUSTED"})
      EXPECT_TRUE(of(type).empty()) << type;
    EXPECT_EQ(of(delivered_event).size(), bundles);
    std::vector<std::string> validate = {"validate", "run", run_dir};
    if (!skill.empty()) validate.insert(validate.end(), {"--skill", skill});
    auto v = devgraph(validate);
    EXPECT_EQ(v.exit_code, 0) << v.out << v.err;
  }

  test::Scratch scratch;
  std::string suite, repo, ai_root, scenario, run_dir;
  std::string skill;  // the skill directory a run was given, "" for the shipped one
  // GitHub delivery (make_github_repository): the fake gh's files, its bin
  // directory and the bare repository behind the origin.
  bool github = false;
  std::string delivered_event = "BRANCH_READY";
  std::string gh_dir = scratch / "gh", bin = scratch / "bin", remote = scratch / "origin.git";
  std::vector<Json> events;
  Json state;
};

TEST_F(Autonomy, TenRecoverableMisbehavioursInOneRunAreAllDeliveredWithNoPerson) {
  ASSERT_NO_FATAL_FAILURE(make_repository(10));
  auto r = run();
  ASSERT_NO_FATAL_FAILURE(expect_delivered_unattended(r, 10));
  EXPECT_TRUE(of("FOOTPRINT_VIOLATION").empty());
  // Every branch holds its marker and passes the repository's tests.
  for (int i = 1; i <= 10; ++i) {
    const std::string b = "b" + std::to_string(i);
    std::string marker = on_branch(b, "src/" + b + ".txt");
    EXPECT_EQ(marker.substr(0, b.size() + 1), b + "\n") << b;
    auto t = test::run_process({"sh", "run-tests.sh"}, {}, json_str(bundle_state(b), "worktree"));
    EXPECT_EQ(t.exit_code, 0) << b << "\n" << t.out;
  }

  // (1) b1's developer printed a RESULT_JSON line that is not JSON: the
  // session was resumed once and its answer taken.
  auto malformed = of("MALFORMED_RESULT", {{"bundle", "b1"}});
  ASSERT_EQ(malformed.size(), 1u);
  EXPECT_EQ(malformed[0]["persona"], "developer");
  EXPECT_EQ(malformed[0]["reason"], "RESULT_JSON is not valid JSON");
  Json saved =
      *parse_json(test::slurp(run_dir + "/bundles/b1/tasks/T1/developer.result.json"), "saved");
  EXPECT_EQ(saved["result"]["summary"], "green for T1 (resumed)");
  auto launched = launches("b1", "developer");
  ASSERT_EQ(launched.size(), 2u);
  EXPECT_EQ(launched[0]["resumed"], false);
  EXPECT_EQ(launched[1]["resumed"], true);
  EXPECT_EQ(launched[1]["handle"], launched[0]["handle"]);
  EXPECT_TRUE(of("BLOCKED", {{"bundle", "b1"}}).empty());

  // (2) b2's test writer named a check with `&&` in it: sent back with the
  // reason, and its next check is the one devgraph ran.
  auto b2_blocked = of("BLOCKED", {{"bundle", "b2"}, {"persona", "tdd-writer"}});
  ASSERT_EQ(b2_blocked.size(), 1u);
  EXPECT_NE(json_str(b2_blocked[0], "summary").find("is not a single command"), std::string::npos)
      << dump_py(b2_blocked[0]);
  EXPECT_EQ(of("RECOVERED", {{"bundle", "b2"}}).size(), 1u);
  auto b2_red = of("TDD_DONE", {{"bundle", "b2"}});
  ASSERT_EQ(b2_red.size(), 1u);
  EXPECT_EQ(b2_red[0]["check"]["commands"], Json::array({"sh tests/b2.sh"}));

  // (3) b3's first test passed before any implementation: sent back.
  auto b3_blocked = of("BLOCKED", {{"bundle", "b3"}, {"persona", "tdd-writer"}});
  ASSERT_EQ(b3_blocked.size(), 1u);
  EXPECT_NE(json_str(b3_blocked[0], "summary").find("passes already"), std::string::npos)
      << dump_py(b3_blocked[0]);
  EXPECT_EQ(of("RECOVERED", {{"bundle", "b3"}}).size(), 1u);
  EXPECT_EQ(on_branch("b3", "tests/b3.sh"), "grep -qx b3 src/b3.txt\n");

  // (4) b4's first implementation failed the task's check after
  // verification: the developer repaired it, and only the repair is
  // committed.
  auto b4_repair = of("CONCERN_TRIAGED", {{"bundle", "b4"}});
  ASSERT_EQ(b4_repair.size(), 1u);
  EXPECT_EQ(b4_repair[0]["owner"], "developer");
  // devgraph's own check found it, and the event says so rather than
  // naming the verifier that answered last.
  EXPECT_EQ(b4_repair[0]["raised_by"], Json::array({"devgraph"})) << dump_py(b4_repair[0]);
  EXPECT_FALSE(b4_repair[0].contains("persona")) << dump_py(b4_repair[0]);
  EXPECT_EQ(b4_repair[0]["lane_to"], "repair_task");
  EXPECT_NE(b4_repair[0]["findings"][0].get<std::string>().find("`sh tests/b4.sh` exited 1"),
            std::string::npos)
      << dump_py(b4_repair[0]);
  EXPECT_EQ(dispatches("b4", "developer"), 2u);
  EXPECT_EQ(on_branch("b4", "src/b4.txt"), "b4\n");

  // (5) b5's tester met an API 500 once: backed off and launched again,
  // with no retry of the task spent.
  auto backoff = of("NOTE", {{"bundle", "b5"}, {"topic", "cli_error_backoff"}});
  ASSERT_EQ(backoff.size(), 1u);
  EXPECT_EQ(backoff[0]["persona"], "tester");
  EXPECT_NE(json_str(backoff[0], "error").find("API Error: 500"), std::string::npos)
      << dump_py(backoff[0]);
  EXPECT_EQ(dispatches("b5", "tester"), 2u);
  EXPECT_TRUE(of("BLOCKED", {{"bundle", "b5"}}).empty());

  // (6) b6's code review found something: repaired, reviewed again, passed.
  EXPECT_EQ(of("REVIEW_FINDINGS", {{"bundle", "b6"}}).size(), 1u);
  EXPECT_EQ(of("BUNDLE_REPAIR_COMMITTED", {{"bundle", "b6"}}).size(), 1u);
  EXPECT_EQ(dispatches("b6", "code-reviewer"), 2u);
  EXPECT_EQ(on_branch("b6", "src/b6.txt"), "b6\nreviewed\n");

  // (7) b7's planner asked which date format; the repository's
  // docs/conventions.md (linked from its README) says, and the planner's
  // second prompt points at the line. No researcher, no person.
  auto needs = of("NEEDS_CONTEXT", {{"bundle", "b7"}});
  ASSERT_EQ(needs.size(), 1u);
  EXPECT_EQ(needs[0]["persona"], "planner");
  EXPECT_EQ(needs[0]["context_search"]["found"][0].get<std::string>().rfind(
                "- docs/conventions.md:3: ", 0),
            0u)
      << dump_py(needs[0]["context_search"]);
  EXPECT_EQ(dispatches("b7", "researcher"), 0u);
  auto planners = of("PERSONA_DISPATCHED", {{"bundle", "b7"}, {"persona", "planner"}});
  ASSERT_EQ(planners.size(), 2u);
  std::string retry = test::slurp(run_dir + "/bundles/b7/prompts/" +
                                  json_str(planners[1], "agent_handle") + ".prompt.md");
  EXPECT_NE(retry.find("docs/conventions.md:3"), std::string::npos) << retry;
  std::string first = test::slurp(run_dir + "/bundles/b7/prompts/" +
                                  json_str(planners[0], "agent_handle") + ".prompt.md");
  EXPECT_EQ(first.find("docs/conventions.md:3"), std::string::npos);

  // (8) b8's developer left an unreported scratch file at the root: kept
  // in the bundle's quarantine byte for byte, attributed to T1 alone,
  // never committed, and nobody blamed.
  const std::string kept = run_dir + "/bundles/b8/quarantine";
  EXPECT_EQ(test::slurp(kept + "/files/notes-T1.md"), "scratch notes of T1\n");
  Json index = *parse_json(test::slurp(kept + "/index.json"), "index");
  ASSERT_EQ(index.size(), 1u) << dump_py(index);
  EXPECT_EQ(index[0]["path"], "notes-T1.md");
  EXPECT_EQ(index[0]["suspects"], Json::array({"T1"}));
  EXPECT_EQ(index[0]["attributed_to"], "T1");
  EXPECT_EQ(git({"log", "--format=%H", "main.." + branch_of("b8"), "--", "notes-T1.md"}), "");
  auto ready8 = of("BRANCH_READY", {{"bundle", "b8"}});
  ASSERT_EQ(ready8.size(), 1u);
  EXPECT_EQ(ready8[0]["quarantined"], Json::array({"notes-T1.md"}));
  for (int i = 1; i <= 10; ++i)
    if (i != 8) {
      EXPECT_FALSE(path_exists(run_dir + "/bundles/b" + std::to_string(i) + "/quarantine")) << i;
    }

  // (9) b9's tester raised an observational concern: recorded, verified,
  // committed, with no extra developer round.
  auto verified = of("VERIFY_DONE", {{"bundle", "b9"}});
  ASSERT_EQ(verified.size(), 1u);
  EXPECT_EQ(verified[0]["concern_triage"]["kind"], "observational");
  EXPECT_EQ(verified[0]["concern_triage"]["raised_by"], Json::array({"tester"}));
  EXPECT_TRUE(of("CONCERN_TRIAGED", {{"bundle", "b9"}}).empty());
  EXPECT_EQ(dispatches("b9", "developer"), 1u);
  EXPECT_EQ(dispatches("b9", "tester"), 1u);

  // (10) b10's adversarial tester answered DONE having run nothing: the
  // verification is not taken, both verifiers run again.
  auto b10_blocked = of("BLOCKED", {{"bundle", "b10"}, {"persona", "adversarial-tester"}});
  ASSERT_EQ(b10_blocked.size(), 1u);
  EXPECT_NE(json_str(b10_blocked[0], "summary").find("ran nothing has verified nothing"),
            std::string::npos)
      << dump_py(b10_blocked[0]);
  EXPECT_EQ(of("RECOVERED", {{"bundle", "b10"}}).size(), 1u);
  EXPECT_EQ(dispatches("b10", "adversarial-tester"), 2u);
  EXPECT_EQ(dispatches("b10", "developer"), 1u);

  // The misbehaviours cost no other bundle anything: nothing blocked or
  // recovered outside the bundles they were written for.
  std::set<std::string> stopped;
  for (const char* type : {"BLOCKED", "RECOVERED", "NEEDS_CONTEXT", "MALFORMED_RESULT"})
    for (const auto& d : of(type)) stopped.insert(json_str(d, "bundle"));
  EXPECT_EQ(stopped, (std::set<std::string>{"b1", "b2", "b3", "b7", "b10"}));
}

// The same ten bundles under GitHub delivery: ten pull requests, each
// closing its issue, opened with no person; the scratch file of b8 is in
// its quarantine and named in its pull request's body, and never pushed.
TEST_F(Autonomy, TenRecoverableMisbehavioursUnderGithubDeliveryOpenTenPullRequestsWithNoPerson) {
  ASSERT_NO_FATAL_FAILURE(make_github_repository(10));
  auto r = run();
  ASSERT_NO_FATAL_FAILURE(expect_delivered_unattended(r, 10));
  EXPECT_TRUE(of("FOOTPRINT_VIOLATION").empty());
  auto bodies = pull_request_bodies();
  ASSERT_EQ(bodies.size(), 10u);
  for (int i = 1; i <= 10; ++i) {
    const std::string b = "b" + std::to_string(i);
    ASSERT_TRUE(bodies.count(branch_of(b))) << b;
    const std::string& body = bodies[branch_of(b)];
    EXPECT_NE(body.find("Closes #" + std::to_string(i) + "\n"), std::string::npos) << body;
    EXPECT_EQ(body.find("Kept out of this pull request") != std::string::npos, i == 8) << body;
  }
  EXPECT_NE(bodies[branch_of("b8")].find("notes-T1.md"), std::string::npos);
  EXPECT_EQ(test::slurp(run_dir + "/bundles/b8/quarantine/files/notes-T1.md"),
            "scratch notes of T1\n");
  auto pushed = test::run_process(
      {"git", "--git-dir", remote, "ls-tree", "-r", "--name-only", "refs/heads/" + branch_of("b8")},
      env(), scratch.path());
  ASSERT_EQ(pushed.exit_code, 0) << pushed.err;
  EXPECT_EQ(pushed.out.find("notes-T1.md"), std::string::npos) << pushed.out;
  // b7's planner was answered from the repository's conventions.
  auto needs = of("NEEDS_CONTEXT", {{"bundle", "b7"}});
  ASSERT_EQ(needs.size(), 1u);
  EXPECT_EQ(needs[0]["context_search"]["found"][0].get<std::string>().rfind(
                "- docs/conventions.md:3: ", 0),
            0u)
      << dump_py(needs[0]["context_search"]);
}

// The plan's tasks.json names a dependency on a task that does not exist:
// the plan check refuses it, the planner is told why and plans again.
TEST_F(Autonomy, APlanThatFailsTheScheduleCheckIsPlannedAgainWithTheProblemNamed) {
  ASSERT_NO_FATAL_FAILURE(make_repository(1));
  Json sc = shared_rules();
  Json planned = sc["personas"]["planner"][0];
  Json bad = planned;
  Json tasks = *parse_json(bad["files"][1]["content"].get<std::string>(), "tasks");
  tasks["tasks"][0]["depends_on"] = Json::array({"T9"});
  bad["files"][1]["content"] = dump_py(tasks, 2);
  bad["call"] = 1;
  // The second plan is played only when its prompt names the problem.
  Json told = planned;
  told["dispatch_contains"] = "tasks.json failed the schedule check";
  prepend(sc, "planner",
          {{"result",
            {{"status", "BLOCKED"},
             {"summary", "not told why"},
             {"evidence", Json::array()},
             {"blockers", Json::array({"not told why"})}}}});
  prepend(sc, "planner", told);
  prepend(sc, "planner", bad);
  use(sc);
  auto r = run();
  ASSERT_NO_FATAL_FAILURE(expect_delivered_unattended(r, 1));
  auto blocked = of("BLOCKED", {{"persona", "planner"}});
  ASSERT_EQ(blocked.size(), 1u);
  EXPECT_NE(json_str(blocked[0], "summary")
                .find("tasks.json failed the schedule check: T1: depends_on must list known task "
                      "ids, got ['T9']"),
            std::string::npos)
      << dump_py(blocked[0]);
  EXPECT_EQ(of("RECOVERED").size(), 1u);
  EXPECT_EQ(dispatches("b1", "planner"), 2u);
  EXPECT_EQ(of("PLAN_DONE").size(), 1u);
  // Only the plan that passed is on the branch.
  Json committed = *parse_json(on_branch("b1", "docs/develop/plans/b1.tasks.json"), "tasks");
  EXPECT_EQ(committed["tasks"][0]["depends_on"], Json::array());
}

// The developer's first launch hangs until the persona timeout ends it:
// the task spends one retry and the second launch delivers. The timeout is
// the only wait: five times what an ordinary launch takes under the
// sanitizers on a loaded machine.
TEST_F(Autonomy, APersonaThatTimesOutOnceIsLaunchedAgainAndTheBundleIsDelivered) {
  ASSERT_NO_FATAL_FAILURE(make_repository(1));
  Json sc = shared_rules();
  prepend(sc, "developer", {{"task", "T1"}, {"call", 1}, {"fail", "hang"}});
  use(sc);
  auto r = run({"--persona-timeout-seconds", "5"});
  ASSERT_NO_FATAL_FAILURE(expect_delivered_unattended(r, 1));
  auto blocked = of("BLOCKED", {{"persona", "developer"}});
  ASSERT_EQ(blocked.size(), 1u);
  EXPECT_NE(json_str(blocked[0], "summary").find("exceeded the 5 s persona timeout (5000 ms)"),
            std::string::npos)
      << dump_py(blocked[0]);
  EXPECT_EQ(blocked[0]["retry"], 1);
  auto recovered = of("RECOVERED");
  ASSERT_EQ(recovered.size(), 1u);
  EXPECT_EQ(recovered[0]["lane_to"], "implement");
  EXPECT_EQ(dispatches("b1", "developer"), 2u);
  Json saved =
      *parse_json(test::slurp(run_dir + "/bundles/b1/tasks/T1/developer.result.json"), "saved");
  EXPECT_EQ(saved["outcome"], "result");
  EXPECT_EQ(on_branch("b1", "src/b1.txt"), "b1\n");
}

// The code review's finding is about README.md, a file no task of the
// bundle claims. The bundle's repair takes it: the finding is repaired on
// the branch, in the repair's commit, never in a task's.
TEST_F(Autonomy, AReviewFindingOnAFileOutsideTheBundleIsRepairedInTheRepairCommit) {
  ASSERT_NO_FATAL_FAILURE(make_repository(1));
  Json sc = shared_rules();
  Json finding = {{"file", "README.md"}, {"title", "the README does not name the new marker"}};
  prepend(sc, "code-reviewer",
          {{"call", 1},
           {"result",
            {{"status", "DONE_WITH_CONCERNS"},
             {"summary", "one finding"},
             {"evidence", Json::array()},
             {"findings", Json::array({finding})}}}});
  prepend(sc, "developer",
          {{"task", ""},
           {"files", Json::array({file("README.md", "# Markers\n\nsrc/b1.txt is the first.\n")})},
           {"result", done("named the marker", Json::array({"README.md"}))}});
  use(sc);
  auto r = run();
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  Json res = result_of(r);
  ASSERT_NO_FATAL_FAILURE(load(res));
  EXPECT_EQ(res["status"], "COMPLETE");
  EXPECT_EQ(res["bundles"][0]["status"], "delivered");
  EXPECT_EQ(inbox(), Json::array());
  EXPECT_TRUE(of("AWAITING_HUMAN").empty());
  EXPECT_EQ(of("REVIEW_FINDINGS").size(), 1u);
  EXPECT_EQ(of("BUNDLE_REPAIR_COMMITTED").size(), 1u);
  EXPECT_EQ(dispatches("b1", "code-reviewer"), 2u);
  // README.md is the one path outside every footprint on the branch, and
  // the repair's commit is the one that holds it.
  EXPECT_EQ(outside_footprints("b1"), std::vector<std::string>({"README.md"}));
  std::string readme_commits =
      git({"log", "--format=%(trailers:key=Devgraph-Bundle-Step,valueonly)",
           "main.." + branch_of("b1"), "--", "README.md"});
  EXPECT_EQ(readme_commits, "b1/repair-1\n\n") << readme_commits;
  EXPECT_EQ(task_commit_files("b1", "T1"), "src/b1.txt\ntests/b1.sh\n");
}

// Two tasks of one bundle: T1 and T2, each with its own marker and test.
Json two_task_plan(bool t2_after_t1) {
  auto task = [](const std::string& id, Json deps) {
    return Json{
        {"id", id},
        {"title", "the {bundle} " + id + " marker"},
        {"depends_on", std::move(deps)},
        {"files", Json::array({"src/{bundle}-" + id + ".txt", "tests/{bundle}-" + id + ".sh"})}};
  };
  return Json{
      {"bundle", "{bundle}"},
      {"tasks", Json::array({task("T1", Json::array()),
                             task("T2", t2_after_t1 ? Json::array({"T1"}) : Json::array())})}};
}

// The shared rules, planning two_task_plan(): the test writer and the
// developer of each task write that task's files; T1's developer also
// writes T2's marker ("draft by T1") and reports both.
Json two_task_scenario(Json sc, bool t2_after_t1) {
  sc["personas"]["planner"][0]["files"][1]["content"] = dump_py(two_task_plan(t2_after_t1), 2);
  Json red = test::red("red for {task}", "sh tests/{bundle}-{task}.sh");
  sc["personas"]["tdd-writer"] =
      Json::array({{{"files", Json::array({file("tests/{bundle}-{task}.sh",
                                                "grep -qx {task} src/{bundle}-{task}.txt\n")})},
                    {"result", red}}});
  sc["personas"]["developer"] = Json::array(
      {{{"task", "T1"},
        {"files", Json::array({file("src/{bundle}-T1.txt", "T1\n"),
                               file("src/{bundle}-T2.txt", "draft by T1\n")})},
        {"result",
         done("green for T1", Json::array({"src/{bundle}-T1.txt", "src/{bundle}-T2.txt"}))}},
       {{"files", Json::array({file("src/{bundle}-{task}.txt", "{task}\n")})},
        {"result", done("green for {task}", Json::array({"src/{bundle}-{task}.txt"}))}}});
  return sc;
}

// T1's developer writes into T2's marker while T2 is in flight (its test
// writer asks something nothing in the repository answers, so T2 waits
// for a person, still claiming its footprint). T1's commit holds only T1's
// files; the write is left uncommitted for T2, no footprint violation is
// raised on anyone, and the one question a person gets is T2's own.
TEST_F(Autonomy, AWriteIntoAnInFlightTasksFileIsLeftToThatTaskAndBlamesNobody) {
  ASSERT_NO_FATAL_FAILURE(make_repository(1));
  Json sc = two_task_scenario(shared_rules(), false);
  prepend(sc, "tdd-writer",
          {{"task", "T2"},
           {"result",
            {{"status", "NEEDS_CONTEXT"},
             {"summary", "which moon?"},
             {"evidence", Json::array()},
             {"missing_context", Json::array({"the colour of the moon"})}}}});
  use(sc);
  auto r = run();
  ASSERT_EQ(r.exit_code, 2) << r.out << r.err;
  Json res = result_of(r);
  ASSERT_NO_FATAL_FAILURE(load(res));
  EXPECT_EQ(res["status"], "HUMAN_REQUIRED");
  EXPECT_EQ(res["bundles"][0]["status"], "parked");
  EXPECT_TRUE(of("FOOTPRINT_VIOLATION").empty());
  ASSERT_EQ(of("TASK_COMMITTED", {{"task", "T1"}}).size(), 1u);
  EXPECT_TRUE(of("TASK_COMMITTED", {{"task", "T2"}}).empty());
  std::string worktree = json_str(bundle_state("b1"), "worktree");
  std::string t1 = git({"-C", worktree, "log", "-1", "--format=%H", "--fixed-strings", "--grep",
                        "Devgraph-Task: b1/T1"});
  t1.erase(t1.find_last_not_of('\n') + 1);
  EXPECT_EQ(git({"-C", worktree, "show", "--name-only", "--format=", t1}),
            "src/b1-T1.txt\ntests/b1-T1.sh\n");
  EXPECT_EQ(test::slurp(worktree + "/src/b1-T2.txt"), "draft by T1\n");
  Json items = inbox();
  ASSERT_EQ(items.size(), 1u) << dump_py(items);
  EXPECT_EQ(items[0]["key"], "b1/T2");
  EXPECT_NE(json_str(items[0], "question").find("the colour of the moon"), std::string::npos)
      << dump_py(items[0]);
  ASSERT_EQ(res["human_required"].size(), 1u);
  EXPECT_EQ(json_str(res["human_required"][0], "reason").rfind("T2: tdd-writer: which moon?", 0),
            0u)
      << dump_py(res["human_required"]);
}

// T1's developer writes into the marker of T2, which waits for T1 and has
// not started, and reports it. A task not started yet still claims its
// footprint: the write is left in the worktree for T2, T1's commit holds
// only T1's files, nothing is blamed and nobody is asked, and T2 commits
// its own marker.
TEST_F(Autonomy, AReportedWriteIntoAPendingTasksFileIsLeftForThatTask) {
  ASSERT_NO_FATAL_FAILURE(make_repository(1));
  use(two_task_scenario(shared_rules(), true));
  auto r = run();
  ASSERT_NO_FATAL_FAILURE(expect_delivered_unattended(r, 1, {}));
  EXPECT_TRUE(of("FOOTPRINT_VIOLATION").empty());
  EXPECT_TRUE(of("RECOVERED", {{"task", "T1"}}).empty());
  EXPECT_EQ(task_commit_files("b1", "T1"), "src/b1-T1.txt\ntests/b1-T1.sh\n");
  EXPECT_EQ(task_commit_files("b1", "T2"), "src/b1-T2.txt\ntests/b1-T2.sh\n");
  EXPECT_EQ(on_branch("b1", "src/b1-T2.txt"), "T2\n");
}

// The graph runs whatever `validate graph` accepts, through the binary:
// each conformance edit of the shipped GRAPH.yaml (tests/support/shipped.h)
// in a copy of the skill, `validate graph --skill` on it, then one bundle
// delivered with no person by `devgraph run --skill`, with the reviews the
// edited lane holds.
class MutatedSkill : public Autonomy,
                     public ::testing::WithParamInterface<test::GraphMutation> {};

TEST_P(MutatedSkill, IsValidAndDeliversWithNoPerson) {
  namespace mutation = test::mutation;
  const std::string name = GetParam().name;
  skill = scratch / "skill";
  auto cp = test::run_process({"cp", "-R", test::source_dir() + "/skill", skill});
  ASSERT_EQ(cp.exit_code, 0) << cp.err;
  test::write_text(skill + "/GRAPH.yaml", test::edited_graph_text(GetParam().edits));
  ASSERT_NO_FATAL_FAILURE(make_repository(1));
  auto valid = devgraph({"validate", "graph", "--skill", skill});
  ASSERT_EQ(valid.exit_code, 0) << name << ": " << valid.out << valid.err;

  use(shared_rules());
  auto r = run({"--skill", skill});
  ASSERT_NO_FATAL_FAILURE(expect_delivered_unattended(r, 1));
  EXPECT_EQ(dispatches("b1", "code-reviewer"), name == mutation::kSecondReview ? 2u : 1u) << name;
  EXPECT_EQ(dispatches("b1", "documentation-reviewer"),
            name == mutation::kToCreatePr || name == mutation::kSkipDocs ? 0u : 1u)
      << name;
  EXPECT_EQ(dispatches("b1", "adversarial-tester"), name == mutation::kOneVerifier ? 0u : 1u)
      << name;
}

INSTANTIATE_TEST_SUITE_P(Conformance, MutatedSkill, ::testing::ValuesIn(test::graph_mutations()),
                         [](const auto& p) { return test::mutation_test_name(p.param); });

}  // namespace
}  // namespace devgraph
