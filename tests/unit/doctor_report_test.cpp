// `devgraph doctor`'s report (src/doctor/doctor.h): the table, the JSON for
// scripts, the exit code; and a whole run over a scratch clone whose every
// command a fake runner answers, which asks only read-only questions.
#include "doctor/doctor.h"

#include <gtest/gtest.h>

#include "support/fake_runner.h"
#include "support/test_util.h"
#include "util/fs.h"

namespace devgraph::doctor {
namespace {

std::vector<Finding> sample() {
  return {ok("git", "git", "git 2.39.5"),
          problem("gh", "gh", "gh 2.23.0 is not authenticated", "run: gh auth login"),
          warning("origin", "repository", "no origin remote", "git remote add origin URL")};
}

TEST(DoctorReport, TableAlignsLevelAreaAndMessageThenSumsUp) {
  EXPECT_EQ(render_table(sample()),
            "ok       git         git 2.39.5\n"
            "problem  gh          gh 2.23.0 is not authenticated \xE2\x80\x94 run: gh auth login\n"
            "warning  repository  no origin remote \xE2\x80\x94 git remote add origin URL\n"
            "\n"
            "1 check ok, 1 warning, 1 problem: devgraph is not ready until each problem is "
            "fixed\n");
  EXPECT_EQ(render_table({ok("git", "git", "git 2.39.5")}).substr(27),
            "1 check ok, 0 warnings, 0 problems: devgraph is ready\n");
}

TEST(DoctorReport, JsonSaysOkCountsAndEveryCheck) {
  Json j = to_json(sample());
  EXPECT_EQ(j["ok"], false);
  EXPECT_EQ(j["counts"], (Json{{"ok", 1}, {"warning", 1}, {"problem", 1}}));
  ASSERT_EQ(j["checks"].size(), 3u);
  EXPECT_EQ(j["checks"][1], (Json{{"id", "gh"},
                                  {"area", "gh"},
                                  {"level", "problem"},
                                  {"message", "gh 2.23.0 is not authenticated"},
                                  {"fix", "run: gh auth login"}}));
  EXPECT_EQ(to_json({ok("git", "git", "git 2.39.5")})["ok"], true);
}

TEST(DoctorReport, ExitCodeIsOneOnlyWithAProblem) {
  EXPECT_EQ(exit_code(sample()), 1);
  EXPECT_EQ(exit_code({ok("a", "a", "x"), warning("b", "b", "y", "z")}), 0);
}

// Every command run_doctor may run: versions, help texts, gh auth status
// and git's read-only queries.
bool read_only(const std::vector<std::string>& argv) {
  if (argv.size() == 2 && (argv[1] == "--version" || argv[1] == "--help")) return true;
  if (argv == std::vector<std::string>{"codex", "exec", "--help"}) return true;
  if (argv == std::vector<std::string>{"gh", "auth", "status"}) return true;
  if (argv.empty() || argv[0] != "git") return false;
  static const std::vector<std::vector<std::string>> git = {
      {"git", "rev-parse", "--is-bare-repository"},
      {"git", "remote", "get-url", "origin"},
      {"git", "symbolic-ref", "--quiet", "--short", "HEAD"},
      {"git", "worktree", "list", "--porcelain"}};
  return std::find(git.begin(), git.end(), argv) != git.end();
}

TEST(DoctorReport, AWholeRunAsksOnlyReadOnlyQuestionsAndReportsEachArea) {
  test::Scratch s;
  ASSERT_TRUE(make_directories(s / "repo").ok());
  ASSERT_EQ(test::run_process({"git", "init", "-q", "-b", "main"}, {}, s / "repo").exit_code, 0);
  test::FakeRunner runner;
  runner.answer = [](const CommandSpec& spec) -> Expected<CommandResult> {
    const auto& a = spec.argv;
    CommandResult r;
    r.exit_code = 0;
    if (a[0] == "gemini" || a[0] == "codex")
      return fail("cannot run " + a[0] + ": No such file or directory");
    if (a == std::vector<std::string>{"git", "--version"}) r.out = "git version 2.39.5\n";
    if (a == std::vector<std::string>{"git", "rev-parse", "--is-bare-repository"})
      r.out = "false\n";
    if (a == std::vector<std::string>{"git", "remote", "get-url", "origin"}) r.exit_code = 2;
    if (a == std::vector<std::string>{"git", "symbolic-ref", "--quiet", "--short", "HEAD"})
      r.out = "main\n";
    if (a == std::vector<std::string>{"git", "worktree", "list", "--porcelain"})
      r.out = "worktree /x\nHEAD abc\nbranch refs/heads/main\n\n";
    if (a[0] == "gh") r.out = "gh version 2.23.0\n";
    if (a[0] == "claude" && a[1] == "--version") r.out = "2.0.14 (Claude Code)\n";
    return r;
  };
  Options o;
  o.repo = s / "repo";
  o.repo_given = true;
  o.roots.home = s.path();
  o.roots.worktrees = s / "ai/worktrees";
  o.roots.develop_home = s / "ai/develop";
  o.install.home = s / "home";
  o.install.devgraph_bin = "/opt/devgraph";
  o.path = "";
  auto findings = run_doctor(o, runner);
  for (const auto& argv : runner.calls) EXPECT_TRUE(read_only(argv)) << describe_argv(argv);

  std::vector<std::string> ids;
  for (const auto& f : findings) ids.push_back(f.id);
  EXPECT_EQ(ids, (std::vector<std::string>{
                     "git", "skill", "repository", "origin", "default_branch", "commands", "gh",
                     "agent.claude", "agent.codex", "agent.gemini", "guard", "install.claude",
                     "install.codex", "install.copilot", "disk", "lock", "worktrees", "waiting"}));
  // claude's empty help lists none of devgraph's flags: a problem, as the
  // selected backend's.
  EXPECT_EQ(findings[7].level, Level::problem);
  EXPECT_EQ(findings[8].level, Level::warning);
  EXPECT_EQ(exit_code(findings), 1);
  EXPECT_EQ(test::entries(s.path()), "repo\n");
}

}  // namespace
}  // namespace devgraph::doctor
