// `devgraph schedule` as a process: exit codes, output byte-compatible with
// the reference script where the two agree by design, and footprint-check
// against real git repositories with awkward file names.
#include <gtest/gtest.h>

#include "support/test_util.h"
#include "util/fs.h"

namespace devgraph {
namespace {

using namespace std::string_literals;
using test::run_devgraph;
using test::run_process;

const char* kPlan = R"({"bundle": "b1", "tasks": [
  {"id": "T1", "title": "domain", "depends_on": [], "files": ["src/domain/**", "package.json"], "kind": "code"},
  {"id": "T2", "title": "ui", "depends_on": ["T1"], "files": ["src/ui/*.ts"], "kind": "code"},
  {"id": "T3", "title": "all of src", "depends_on": [], "files": ["src/**"], "kind": "code"},
  {"id": "T4", "title": "e2e", "depends_on": [], "files": ["e2e"], "kind": "code"},
  {"id": "T5", "title": "helpers", "depends_on": [], "files": ["e2e-helpers/x"], "kind": "docs"},
  {"id": "T6", "title": "docs", "depends_on": ["T2", "T5"], "files": ["docs/caf\u00e9 *.md"]}
]})";

const char* kState = R"({"tasks_runtime": {
  "b1/T1": {"bundle": "b1", "task": "T1", "node": null, "status": "complete"},
  "b1/T4": {"bundle": "b1", "task": "T4", "node": "write_tdd", "status": "active"},
  "b2/T5": {"bundle": "b2", "task": "T5", "node": "verify", "status": "active"}}})";

class ScheduleCli : public ::testing::Test {
 protected:
  void SetUp() override {
    test::write_text(dir / "tasks.json", kPlan);
    test::write_text(dir / "state.json", kState);
  }

  // Runs the reference script when it is available.
  test::ProcessResult reference(const std::vector<std::string>& args) {
    std::vector<std::string> argv = {"python3", test::reference_dir() + "/runtime/schedule.py"};
    argv.insert(argv.end(), args.begin(), args.end());
    return run_process(argv, {}, dir.path());
  }

  void git(const std::string& repo, const std::vector<std::string>& args) {
    std::vector<std::string> argv = {"git", "-C", repo};
    argv.insert(argv.end(), args.begin(), args.end());
    auto r =
        run_process(argv, {{"GIT_CONFIG_GLOBAL", "/dev/null"}, {"GIT_CONFIG_SYSTEM", "/dev/null"}});
    ASSERT_EQ(r.exit_code, 0) << r.err;
  }

  // A repository with one commit of `files`.
  std::string make_repo(const std::vector<std::string>& files) {
    std::string repo = dir / "repo";
    EXPECT_TRUE(make_directories(repo).ok());
    git(repo, {"init", "-q"});
    git(repo, {"config", "user.email", "t@example.com"});
    git(repo, {"config", "user.name", "t"});
    for (const auto& f : files) write(repo, f, "v1\n");
    git(repo, {"add", "-A"});
    git(repo, {"commit", "-q", "-m", "base"});
    return repo;
  }

  static void write(const std::string& repo, const std::string& rel, const std::string& text) {
    std::string path = join_path(repo, rel);
    EXPECT_TRUE(make_directories(dirname_of(path)).ok());
    test::write_text(path, text);
  }

  test::Scratch dir;
};

TEST_F(ScheduleCli, CheckAcceptsAValidPlan) {
  auto r = run_devgraph({"schedule", "check", dir / "tasks.json"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "OK: tasks.json is valid\n");
}

TEST_F(ScheduleCli, CheckReportsEveryProblemAndExitsOne) {
  test::write_text(dir / "bad.json", R"({"bundle": "b", "tasks": [
      {"id": "T1", "depends_on": ["GHOST", "T2"], "files": ["src/{a,b}/**"]},
      {"id": "T2", "depends_on": ["T1"], "files": ["x"]},
      {"id": "T3", "depends_on": ["T4"], "files": []},
      {"id": "T4", "depends_on": ["T3"], "files": ["y"]}]})");
  auto r = run_devgraph({"schedule", "check", dir / "bad.json"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err,
            "devgraph schedule: tasks.json is invalid:\n"
            "  T1: depends_on must list known task ids, got ['GHOST', 'T2']\n"
            "  T1: files may use only *, **, and ? glob syntax (no bracket or brace expressions)\n"
            "  T3: files must be a non-empty list of glob strings\n"
            "  dependency cycle: T1 -> T2 -> T1\n"
            "  dependency cycle: T3 -> T4 -> T3\n");
}

TEST_F(ScheduleCli, UsageErrorsExitTwo) {
  EXPECT_EQ(run_devgraph({"schedule"}).exit_code, 2);
  auto bogus = run_devgraph({"schedule", "bogus"});
  EXPECT_EQ(bogus.exit_code, 2);
  EXPECT_NE(bogus.err.find("invalid choice: 'bogus'"), std::string::npos) << bogus.err;
  auto missing = run_devgraph({"schedule", "runnable", dir / "tasks.json", "--bundle", "b1"});
  EXPECT_EQ(missing.exit_code, 2);
  EXPECT_NE(missing.err.find("the following arguments are required: --state"), std::string::npos);
  auto bad_int = run_devgraph({"schedule", "runnable", dir / "tasks.json", "--state",
                               dir / "state.json", "--bundle", "b1", "--max", "x"});
  EXPECT_EQ(bad_int.exit_code, 2);
  EXPECT_NE(bad_int.err.find("argument --max: invalid int value: 'x'"), std::string::npos);
  auto help = run_devgraph({"schedule", "--help"});
  EXPECT_EQ(help.exit_code, 0);
  EXPECT_NE(help.out.find("footprint-check"), std::string::npos);
}

TEST_F(ScheduleCli, RunnableReadsStateAndDefaultsTheCeilingFromTheGraph) {
  auto r = run_devgraph({"schedule", "runnable", dir / "tasks.json", "--state", dir / "state.json",
                         "--bundle", "b1"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, R"({
  "bundle": "b1",
  "route": "task_available",
  "runnable": [
    "T2",
    "T5"
  ],
  "in_flight": [
    "T4"
  ],
  "complete": [
    "T1"
  ],
  "remaining": [
    "T2",
    "T3",
    "T4",
    "T5",
    "T6"
  ],
  "max_parallel": 6,
  "waiting_on_deps": {
    "T6": [
      "T2",
      "T5"
    ]
  },
  "waiting_on_footprint": {
    "T3": [
      "T2"
    ]
  },
  "waiting_on_capacity": [],
  "deadlock": false
}
)");
}

TEST_F(ScheduleCli, RunnableRoutes) {
  auto route = [&](const std::string& state, const std::string& max) {
    test::write_text(dir / "s.json", state);
    auto r = run_devgraph({"schedule", "runnable", dir / "tasks.json", "--state", dir / "s.json",
                           "--bundle", "b1", "--max", max});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    auto pos = r.out.find("\"route\": \"");
    return r.out.substr(pos + 10, r.out.find('"', pos + 10) - pos - 10);
  };
  EXPECT_EQ(route("{}", "2"), "task_available");
  EXPECT_EQ(route("{}", "0"), "deadlock");
  EXPECT_EQ(route(kState, "1"), "waiting");
  std::string all = R"({"tasks_runtime": {)";
  for (int i = 1; i <= 6; ++i)
    all += std::string(i > 1 ? "," : "") + "\"b1/T" + std::to_string(i) +
           "\": {\"bundle\": \"b1\", \"task\": \"T" + std::to_string(i) +
           "\", \"node\": \"commit_task\", \"status\": \"complete\"}";
  EXPECT_EQ(route(all + "}}", "3"), "bundle_tasks_complete");
}

TEST_F(ScheduleCli, RunnableRefusesAnotherBundlesPlanAndABrokenState) {
  auto other = run_devgraph({"schedule", "runnable", dir / "tasks.json", "--state",
                             dir / "state.json", "--bundle", "b2", "--max", "3"});
  EXPECT_EQ(other.exit_code, 1);
  EXPECT_EQ(other.err, "devgraph schedule: tasks.json is for bundle 'b1', not 'b2'\n");
  test::write_text(dir / "broken.json", "{");
  auto broken = run_devgraph({"schedule", "runnable", dir / "tasks.json", "--state",
                              dir / "broken.json", "--bundle", "b1", "--max", "3"});
  EXPECT_EQ(broken.exit_code, 1);
  EXPECT_EQ(broken.err.find('\n'), broken.err.size() - 1) << "one line: " << broken.err;
}

TEST_F(ScheduleCli, OutputMatchesTheReference) {
  if (test::reference_dir().empty()) GTEST_SKIP() << "reference runtime not available";
  // Few cases: each one starts a Python interpreter.
  const std::vector<std::vector<std::string>> cases = {
      {"conflicts", "tasks.json"},
      {"critical-path", "tasks.json", "--ceiling", "2"},
      {"runnable", "tasks.json", "--state", "state.json", "--bundle", "b1", "--max", "4"},
      {"runnable", "tasks.json", "--state", "state.json", "--bundle", "b1", "--max", "0"},
  };
  for (const auto& args : cases) {
    auto ref = reference(args);
    std::vector<std::string> ours = {"schedule"};
    ours.insert(ours.end(), args.begin(), args.end());
    auto dg = run_devgraph(ours, {}, dir.path());
    EXPECT_EQ(dg.exit_code, ref.exit_code) << args[0];
    EXPECT_EQ(dg.out, ref.out) << args[0];
  }
}

TEST_F(ScheduleCli, FootprintCheckInARealRepository) {
  std::string repo = make_repo({"src/domain/a.ts", "src/ui/b.ts", "README.md", "e2e/spec.ts"});
  write(repo, "src/domain/a.ts", "v2\n");                  // own, modified
  write(repo, "src/domain/new file.ts", "n\n");            // own, untracked, a space
  write(repo, "src/ui/c.ts", "c\n");                       // T2's
  write(repo, "e2e-helpers/x", "x\n");                     // looks like T4's `e2e`, is not
  write(repo, "docs/caf\xc3\xa9 \"menu\".md", "m\n");      // T6 not in flight: outside
  git(repo, {"mv", "README.md", "src/domain/README.md"});  // rename out of an unowned path
  auto r = run_devgraph({"schedule", "footprint-check", dir / "tasks.json", "--task", "T1",
                         "--worktree", repo, "--in-flight", "T2, T4"});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_EQ(r.out, R"({
  "task": "T1",
  "own": [
    "src/domain/README.md",
    "src/domain/a.ts",
    "src/domain/new file.ts"
  ],
  "other_in_flight": {
    "T2": [
      "src/ui/c.ts"
    ]
  },
  "outside": [
    "README.md",
    "docs/caf\u00e9 \"menu\".md",
    "e2e-helpers/x"
  ],
  "violation": true,
  "add_pathspec": [
    ":(literal)src/domain/README.md",
    ":(literal)src/domain/a.ts",
    ":(literal)src/domain/new file.ts"
  ]
}
)");
}

TEST_F(ScheduleCli, FootprintCheckPathspecCommitsExactlyTheTasksFiles) {
  std::string repo = make_repo({"src/domain/a.ts", "src/other.ts"});
  write(repo, "src/domain/a.ts", "v2\n");
  write(repo, "src/domain/b [1].ts", "glob characters in a name\n");
  write(repo, "src/other.ts", "v2\n");
  test::write_text(dir / "p.json", R"({"bundle": "b", "tasks": [
      {"id": "T1", "files": ["src/domain/**"]},
      {"id": "T2", "files": ["src/other.ts"]}]})");
  auto r = run_devgraph({"schedule", "footprint-check", dir / "p.json", "--task", "T1",
                         "--worktree", repo, "--in-flight", "T2"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("\"violation\": false"), std::string::npos);
  std::vector<std::string> add = {"add", "--", ":(literal)src/domain/a.ts",
                                  ":(literal)src/domain/b [1].ts"};
  git(repo, add);
  auto staged = run_process({"git", "-C", repo, "diff", "--cached", "--name-only", "-z"});
  EXPECT_EQ(staged.out, "src/domain/a.ts\0src/domain/b [1].ts\0"s);
}

TEST_F(ScheduleCli, FootprintCheckCleanTreeAndErrors) {
  std::string repo = make_repo({"src/domain/a.ts"});
  auto clean = run_devgraph(
      {"schedule", "footprint-check", dir / "tasks.json", "--task", "T1", "--worktree", repo});
  EXPECT_EQ(clean.exit_code, 0) << clean.err;
  EXPECT_NE(clean.out.find("\"violation\": false"), std::string::npos);
  auto unknown = run_devgraph(
      {"schedule", "footprint-check", dir / "tasks.json", "--task", "T9", "--worktree", repo});
  EXPECT_EQ(unknown.exit_code, 1);
  EXPECT_EQ(unknown.err, "devgraph schedule: unknown task 'T9'\n");
  auto unknown_flight = run_devgraph({"schedule", "footprint-check", dir / "tasks.json", "--task",
                                      "T1", "--worktree", repo, "--in-flight", "T2,NOPE"});
  EXPECT_EQ(unknown_flight.exit_code, 1);
  EXPECT_EQ(unknown_flight.err, "devgraph schedule: unknown in-flight tasks ['NOPE']\n");
  auto not_repo = run_devgraph({"schedule", "footprint-check", dir / "tasks.json", "--task", "T1",
                                "--worktree", dir / "nowhere"});
  EXPECT_EQ(not_repo.exit_code, 1);
  EXPECT_EQ(not_repo.err.find('\n'), not_repo.err.size() - 1) << "one line: " << not_repo.err;
  EXPECT_NE(not_repo.err.find("git status --porcelain=v1 -z --untracked-files=all failed in "),
            std::string::npos);
}

TEST_F(ScheduleCli, BadInputChangesNothingOnDisk) {
  std::string repo = make_repo({"src/domain/a.ts"});
  write(repo, "src/domain/a.ts", "v2\n");
  auto before = run_process({"git", "-C", repo, "status", "--porcelain=v1", "-z"});
  test::write_text(dir / "bad.json", R"({"bundle": "b", "tasks": []})");
  auto r = run_devgraph(
      {"schedule", "footprint-check", dir / "bad.json", "--task", "T1", "--worktree", repo});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(test::slurp(dir / "bad.json"), R"({"bundle": "b", "tasks": []})");
  auto after = run_process({"git", "-C", repo, "status", "--porcelain=v1", "-z"});
  EXPECT_EQ(before.out, after.out);
}

}  // namespace
}  // namespace devgraph
