// doctor's checks of git, gh and the agent CLIs (src/doctor/tools.h):
// versions read from what the programs print, levels by what devgraph
// needs, and the agent CLIs' argv read from the backends themselves and
// held against their help texts. No process is started.
#include "doctor/tools.h"

#include <gtest/gtest.h>

#include "agents/headless.h"
#include "support/fake_runner.h"

namespace devgraph::doctor {
namespace {

Probe answered(int exit_code, std::string out, std::string err = "") {
  Probe p;
  p.started = true;
  p.result.exit_code = exit_code;
  p.result.out = std::move(out);
  p.result.err = std::move(err);
  return p;
}

Probe not_found(const std::string& program) {
  Probe p;
  p.error = "cannot run " + program + ": No such file or directory";
  return p;
}

bool contains(const std::vector<std::string>& v, const std::string& s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

AgentCli cli_of(agents::BackendKind kind) {
  agents::BackendFlags flags;
  flags.kind = kind;
  auto options = agents::headless_backend(HeadlessSettings{}, flags);
  options.config_dir = "CONFIG_DIR";
  auto cli = agent_cli(options);
  EXPECT_TRUE(cli.ok());
  return cli ? *cli : AgentCli{};
}

// A help text that lists every flag of `cli` but `except`.
std::string help_listing(const AgentCli& cli, const std::string& except = "") {
  std::string help = "Usage: " + cli.program + " [options]\n\nOptions:\n";
  for (const auto& f : cli.flags)
    if (f != except) help += "  " + f + " <value>    what it does\n";
  return help;
}

TEST(DoctorTools, ParseVersionReadsWhatEachProgramPrints) {
  EXPECT_EQ(parse_version("git version 2.39.5\n"), (Version{2, 39, 5}));
  EXPECT_EQ(parse_version("git version 2.39.5.windows.1"), (Version{2, 39, 5}));
  EXPECT_EQ(parse_version("gh version 2.23.0 (2023-02-08)\nhttps://github.com/cli"),
            (Version{2, 23, 0}));
  EXPECT_EQ(parse_version("2.0.14 (Claude Code)"), (Version{2, 0, 14}));
  EXPECT_EQ(parse_version("codex-cli 0.46.0"), (Version{0, 46, 0}));
  EXPECT_EQ(parse_version("tool 3.1"), (Version{3, 1, 0}));
  EXPECT_FALSE(parse_version("version 7"));
  EXPECT_FALSE(parse_version("no digits here"));
}

TEST(DoctorTools, GitVersionIsOkFromTheMinimumOn) {
  Finding f = check_git(answered(0, "git version 2.39.5\n"));
  EXPECT_EQ(f.level, Level::ok);
  EXPECT_EQ(f.id, "git");
  EXPECT_EQ(f.message, "git 2.39.5");
  EXPECT_EQ(f.fix, "");
  EXPECT_EQ(check_git(answered(0, "git version 2.36.0")).level, Level::ok);
}

TEST(DoctorTools, OldOrMissingGitIsAProblemWithTheVersionToInstall) {
  Finding old = check_git(answered(0, "git version 2.30.2\n"));
  EXPECT_EQ(old.level, Level::problem);
  EXPECT_NE(old.message.find("git 2.30.2 is older than 2.36"), std::string::npos) << old.message;
  EXPECT_EQ(old.fix, "install git 2.36 or later");
  Finding missing = check_git(not_found("git"));
  EXPECT_EQ(missing.level, Level::problem);
  EXPECT_NE(missing.message.find("git not found on PATH"), std::string::npos);
  EXPECT_EQ(check_git(answered(0, "what?")).level, Level::warning);
  EXPECT_EQ(check_git(answered(127, "", "broken")).level, Level::problem);
}

TEST(DoctorTools, GhMissingIsAProblemOnlyForGithubDelivery) {
  Finding github = check_gh(not_found("gh"), std::nullopt, "github");
  EXPECT_EQ(github.level, Level::problem);
  EXPECT_EQ(github.message, "gh not found on PATH");
  EXPECT_EQ(github.fix, "install the GitHub CLI (https://cli.github.com), then run: gh auth login");
  EXPECT_EQ(check_gh(not_found("gh"), std::nullopt, "local").level, Level::ok);
  // No repository to say which delivery: worth a look, not a failure.
  EXPECT_EQ(check_gh(not_found("gh"), std::nullopt, "").level, Level::warning);
}

TEST(DoctorTools, GhNotAuthenticatedIsAProblemForGithubDeliveryWithTheLoginCommand) {
  Probe version = answered(0, "gh version 2.23.0 (2023-02-08)\n");
  Probe auth = answered(1, "", "You are not logged into any GitHub hosts. Run gh auth login.\n");
  Finding f = check_gh(version, auth, "github");
  EXPECT_EQ(f.level, Level::problem);
  EXPECT_EQ(f.area, "gh");
  EXPECT_NE(f.message.find("gh 2.23.0 is not authenticated"), std::string::npos) << f.message;
  EXPECT_EQ(f.fix, "run: gh auth login");
  EXPECT_EQ(check_gh(version, auth, "local").level, Level::ok);
  EXPECT_EQ(check_gh(version, auth, "").level, Level::warning);
}

TEST(DoctorTools, GhAuthenticatedIsOk) {
  Finding f = check_gh(answered(0, "gh version 2.23.0\n"), answered(0, "Logged in"), "github");
  EXPECT_EQ(f.level, Level::ok);
  EXPECT_EQ(f.message, "gh 2.23.0, authenticated");
  Probe slow = answered(-1, "");
  slow.result.timed_out = true;
  Finding timed_out = check_gh(answered(0, "gh version 2.23.0\n"), slow, "github");
  EXPECT_EQ(timed_out.level, Level::problem);
  EXPECT_NE(timed_out.message.find("did not answer within 10 s"), std::string::npos);
}

TEST(DoctorTools, FlagsInTakesEachFlagOnceWithoutItsValue) {
  std::vector<std::string> argv = {"claude",     "-p",        "a prompt -with dashes",
                                   "--model=x",  "--add-dir", "a",
                                   "--add-dir",  "b",         "-",
                                   "Bash(ls *)", "-c",        "k=v"};
  EXPECT_EQ(flags_in(argv), (std::vector<std::string>{"-p", "--model", "--add-dir", "-c"}));
}

TEST(DoctorTools, HelpArgvNamesTheSubcommandTheFlagsBelongTo) {
  EXPECT_EQ(help_argv_for({"codex", "exec", "--json", "PROMPT"}),
            (std::vector<std::string>{"codex", "exec", "--help"}));
  EXPECT_EQ(help_argv_for({"claude", "-p", "PROMPT"}),
            (std::vector<std::string>{"claude", "--help"}));
}

TEST(DoctorTools, FlagsMissingFromHelpMatchWholeWordsOnly) {
  std::string help = "  -p, --print\n  --permission-mode <mode>\n  --models-list\n";
  EXPECT_EQ(
      flags_missing_from({"-p", "--print", "--permission-mode", "--perm", "--model"}, help, {}),
      (std::vector<std::string>{"--perm", "--model"}));
  EXPECT_EQ(flags_missing_from({"--perm", "--model"}, help, {"--model"}),
            (std::vector<std::string>{"--perm"}));
}

TEST(DoctorTools, AgentArgvIsTheBackendsOwnLaunchAndResume) {
  AgentCli claude = cli_of(agents::BackendKind::claude);
  EXPECT_EQ(claude.help_argv, (std::vector<std::string>{claude.program, "--help"}));
  for (const char* f : {"-p", "--output-format", "--permission-mode", "--max-turns", "--add-dir",
                        "--model", "--resume"})
    EXPECT_TRUE(contains(claude.flags, f)) << f;
  AgentCli codex = cli_of(agents::BackendKind::codex);
  EXPECT_EQ(codex.program, "codex");
  EXPECT_EQ(codex.help_argv, (std::vector<std::string>{"codex", "exec", "--help"}));
  for (const char* f : {"--json", "--sandbox", "--skip-git-repo-check", "--cd", "-c", "--model"})
    EXPECT_TRUE(contains(codex.flags, f)) << f;
  AgentCli gemini = cli_of(agents::BackendKind::gemini);
  EXPECT_EQ(gemini.help_argv, (std::vector<std::string>{"gemini", "--help"}));
  for (const char* f : {"-p", "--output-format", "--approval-mode", "--include-directories",
                        "--admin-policy", "--resume"})
    EXPECT_TRUE(contains(gemini.flags, f)) << f;
}

TEST(DoctorTools, MissingCliIsAProblemForTheSelectedBackendAndAWarningForTheOthers) {
  AgentCli claude = cli_of(agents::BackendKind::claude);
  Finding selected = check_agent_cli(claude, std::nullopt, not_found("claude"), std::nullopt, true);
  EXPECT_EQ(selected.level, Level::problem);
  EXPECT_EQ(selected.id, "agent.claude");
  EXPECT_NE(selected.message.find("not found on PATH"), std::string::npos) << selected.message;
  EXPECT_NE(selected.fix.find("npm install -g @anthropic-ai/claude-code"), std::string::npos)
      << selected.fix;
  EXPECT_NE(selected.fix.find("DEVELOP_CLAUDE_BIN"), std::string::npos);
  AgentCli codex = cli_of(agents::BackendKind::codex);
  Finding other = check_agent_cli(codex, std::nullopt, not_found("codex"), std::nullopt, false);
  EXPECT_EQ(other.level, Level::warning);
  EXPECT_NE(other.message.find("discuss perspectives"), std::string::npos) << other.message;
}

TEST(DoctorTools, CliWhoseHelpListsEveryFlagIsOkAndClaudesUnlistedMaxTurnsIsForgiven) {
  AgentCli claude = cli_of(agents::BackendKind::claude);
  Finding f =
      check_agent_cli(claude, std::string("/opt/bin/claude"), answered(0, "2.0.14 (Claude Code)\n"),
                      answered(0, help_listing(claude, "--max-turns")), true);
  EXPECT_EQ(f.level, Level::ok) << f.message;
  EXPECT_EQ(f.message.rfind("claude 2.0.14 (Claude Code) at /opt/bin/claude: accepts the ", 0), 0u)
      << f.message;
}

TEST(DoctorTools, CliWhoseHelpLacksAFlagNamesIt) {
  AgentCli codex = cli_of(agents::BackendKind::codex);
  Finding f = check_agent_cli(codex, std::nullopt, answered(0, "codex-cli 0.46.0\n"),
                              answered(0, help_listing(codex, "--skip-git-repo-check")), true);
  EXPECT_EQ(f.level, Level::problem);
  EXPECT_NE(f.message.find("`codex exec --help` does not list --skip-git-repo-check"),
            std::string::npos)
      << f.message;
  EXPECT_EQ(f.fix, "update it (npm install -g @openai/codex@latest)");
  Finding broken = check_agent_cli(codex, std::nullopt, answered(0, "codex-cli 0.46.0\n"),
                                   answered(2, "", "error: unknown command"), false);
  EXPECT_EQ(broken.level, Level::warning);
  EXPECT_NE(broken.message.find("exit 2: error: unknown command"), std::string::npos)
      << broken.message;
}

TEST(DoctorTools, ProbeRunsArgvWithATimeoutAndBoundedOutput) {
  test::FakeRunner runner;
  CommandSpec seen;
  runner.answer = [&](const CommandSpec& spec) -> Expected<CommandResult> {
    seen = spec;
    CommandResult r;
    r.exit_code = 0;
    r.out = "gh version 2.23.0";
    return r;
  };
  Probe p = probe(runner, {"gh", "--version"}, "/repo", {{"GH_PROMPT_DISABLED", "1"}});
  EXPECT_TRUE(p.ok());
  EXPECT_EQ(seen.argv, (std::vector<std::string>{"gh", "--version"}));
  EXPECT_EQ(seen.cwd, "/repo");
  EXPECT_EQ(seen.timeout, kProbeTimeout);
  EXPECT_EQ(seen.max_output_bytes, kProbeOutputBytes);
  runner.answer = [](const CommandSpec&) -> Expected<CommandResult> {
    return fail("cannot run gh: No such file or directory");
  };
  Probe missing = probe(runner, {"gh", "--version"});
  EXPECT_FALSE(missing.started);
  EXPECT_EQ(missing.error, "cannot run gh: No such file or directory");
}

TEST(DoctorTools, FindOnPathTakesTheFirstExecutable) {
  EXPECT_EQ(find_on_path("sh", "/nonexistent:/bin:/usr/bin"),
            std::optional<std::string>("/bin/sh"));
  EXPECT_FALSE(find_on_path("no-such-program-here", "/bin:/usr/bin"));
  EXPECT_EQ(find_on_path("/bin/sh", ""), std::optional<std::string>("/bin/sh"));
}

}  // namespace
}  // namespace devgraph::doctor
