#include "agents/cli_setup.h"

#include <sys/stat.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include "support/shipped.h"
#include "support/test_util.h"
#include "util/fs.h"
#include "util/json.h"

namespace devgraph::agents {
namespace {

TEST(CliSetup, BashPrefixTakesTheCommandWordsOfABashRule) {
  EXPECT_EQ(bash_prefix("Bash(git commit *)"), "git commit");
  EXPECT_EQ(bash_prefix("Bash(rm -rf *)"), "rm -rf");
  EXPECT_EQ(bash_prefix("Bash(make)"), "make");
  EXPECT_EQ(bash_prefix("Bash(  sh  *)"), "sh");
  EXPECT_EQ(bash_prefix("Read"), std::nullopt);
  EXPECT_EQ(bash_prefix("Bash()"), std::nullopt);
  EXPECT_EQ(bash_prefix("Bash( *)"), std::nullopt);
  EXPECT_EQ(bash_prefix("Bash(git * --force)"), std::nullopt);  // not a prefix
  EXPECT_EQ(bash_prefix("Bash(git"), std::nullopt);
}

TEST(CliSetup, CodexRulesForbidEveryBashPrefixOfTheDenyList) {
  std::string rules = codex_rules(test::shipped_graph().headless.disallowed_tools);
  for (const char* line : {
           R"(prefix_rule(pattern = ["git", "commit"], decision = "forbidden"))",
           R"(prefix_rule(pattern = ["git", "clean"], decision = "forbidden"))",
           R"(prefix_rule(pattern = ["git", "push"], decision = "forbidden"))",
           R"(prefix_rule(pattern = ["rm", "-rf"], decision = "forbidden"))",
       })
    EXPECT_NE(rules.find(std::string(line) + "\n"), std::string::npos) << line << "\n" << rules;
  // An allow rule would run the command outside codex's sandbox.
  EXPECT_EQ(rules.find("decision = \"allow\""), std::string::npos);
  // Other tools are not shell prefixes; a repeated prefix is one rule; a
  // quote stays inside its string.
  rules = codex_rules({"Read", "Bash(git add *)", "Bash(git add)", "Bash(say \"hi *)"});
  EXPECT_EQ(rules.substr(rules.find("prefix_rule")),
            "prefix_rule(pattern = [\"git\", \"add\"], decision = \"forbidden\")\n"
            "prefix_rule(pattern = [\"say\", \"\\\"hi\"], decision = \"forbidden\")\n");
}

TEST(CliSetup, CodexTelemetryOverridesUnlessAskedToKeepIt) {
  EXPECT_EQ(
      codex_config_overrides(false),
      (std::vector<std::string>{"-c", "analytics.enabled=false", "-c", "features.plugins=false",
                                "-c", "check_for_update_on_startup=false"}));
  EXPECT_TRUE(codex_config_overrides(true).empty());
}

TEST(CliSetup, GeminiPolicyAllowsTheAllowedPrefixesAndDeniesAboveThem) {
  std::string policy = gemini_policy({"Read", "Bash(sh *)"}, {"Bash(git push *)"});
  EXPECT_EQ(policy.substr(policy.find("[[rule]]")),
            "[[rule]]\ntoolName = \"run_shell_command\"\ncommandPrefix = \"sh\"\n"
            "decision = \"allow\"\npriority = 100\n\n"
            "[[rule]]\ntoolName = \"run_shell_command\"\ncommandPrefix = \"git push\"\n"
            "decision = \"deny\"\npriority = 900\n");
  EXPECT_EQ(gemini_policy({}, {"Bash(git push *)"}).find("decision = \"allow\""),
            std::string::npos);
}

std::vector<std::string> with_home(const std::string& home) {
  return {"HOME=" + home, "PATH=/usr/bin"};
}

BackendOptions options(BackendKind kind, const std::string& config_dir) {
  BackendOptions o;
  o.kind = kind;
  o.config_dir = config_dir;
  o.allowed_tools = {"Read", "Bash(sh *)"};
  o.disallowed_tools = {"Bash(git commit *)", "Bash(git clean *)"};
  return o;
}

std::string link_target(const std::string& path) {
  char buf[4096];
  ssize_t n = ::readlink(path.c_str(), buf, sizeof buf);
  return n < 0 ? std::string() : std::string(buf, static_cast<size_t>(n));
}

TEST(CliSetup, ClaudeGetsItsNonEssentialTrafficTurnedOffAndNothingWritten) {
  test::Scratch s;
  auto o = options(BackendKind::claude, s / "cli");
  auto env = prepare_cli(o, with_home(s / "home"));
  ASSERT_TRUE(env) << env.error().message;
  EXPECT_EQ(*env, (std::vector<std::string>{"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1"}));
  o.cli_telemetry = true;
  env = prepare_cli(o, with_home(s / "home"));
  ASSERT_TRUE(env);
  EXPECT_TRUE(env->empty());
  EXPECT_FALSE(path_exists(s / "cli"));
  for (auto kind : {BackendKind::command, BackendKind::sim}) {
    env = prepare_cli(options(kind, ""), with_home(s / "home"));
    ASSERT_TRUE(env);
    EXPECT_TRUE(env->empty());
  }
}

TEST(CliSetup, CodexGetsAHomeOfTheRunsOwnWithTheUsersConfigLoginAndRules) {
  test::Scratch s;
  std::string user = s / "home/.codex";
  ASSERT_TRUE(make_directories(user + "/rules").ok());
  test::write_text(user + "/config.toml", "model_provider = \"mine\"\n");
  test::write_text(user + "/auth.json", "{\"token\": 1}\n");
  test::write_text(user + "/rules/default.rules", "prefix_rule(pattern = [\"ls\"])\n");
  test::write_text(user + "/AGENTS.md", "the user's own instructions\n");
  auto o = options(BackendKind::codex, s / "cli");

  auto env = prepare_cli(o, with_home(s / "home"));
  ASSERT_TRUE(env) << env.error().message;
  std::string ours = s / "cli/codex-home";
  EXPECT_EQ(*env, (std::vector<std::string>{"CODEX_HOME=" + ours}));
  EXPECT_EQ(test::slurp(ours + "/config.toml"), "model_provider = \"mine\"\n");
  EXPECT_EQ(link_target(ours + "/auth.json"), user + "/auth.json");
  EXPECT_EQ(test::entries(ours + "/rules"), "default.rules\ndevgraph.rules\n");
  EXPECT_EQ(test::slurp(ours + "/rules/devgraph.rules"), codex_rules(o.disallowed_tools));
  EXPECT_FALSE(path_exists(ours + "/AGENTS.md"));  // the persona file is the instructions

  // Again, after the user dropped a rule and logged out: the copy follows.
  ASSERT_EQ(::unlink((user + "/rules/default.rules").c_str()), 0);
  ASSERT_EQ(::unlink((user + "/auth.json").c_str()), 0);
  env = prepare_cli(o, with_home(s / "home"));
  ASSERT_TRUE(env) << env.error().message;
  EXPECT_EQ(test::entries(ours + "/rules"), "devgraph.rules\n");
  EXPECT_EQ(link_target(ours + "/auth.json"), "");

  // $CODEX_HOME names the user's home when set.
  std::string other = s / "elsewhere";
  ASSERT_TRUE(make_directories(other).ok());
  test::write_text(other + "/config.toml", "model = \"x\"\n");
  auto parent = with_home(s / "home");
  parent.push_back("CODEX_HOME=" + other);
  ASSERT_TRUE(prepare_cli(o, parent));
  EXPECT_EQ(test::slurp(ours + "/config.toml"), "model = \"x\"\n");
}

TEST(CliSetup, GeminiGetsAHomeOfTheRunsOwnWithUsageStatisticsOffAndPolicies) {
  test::Scratch s;
  std::string user = s / "home/.gemini";
  ASSERT_TRUE(make_directories(user + "/policies").ok());
  ASSERT_TRUE(make_directories(user + "/tmp/session").ok());
  test::write_text(user + "/settings.json",
                   "// mine\n{\"security\": {\"auth\": {\"selectedType\": \"oauth-personal\"}}}\n");
  test::write_text(user + "/oauth_creds.json", "{}\n");
  test::write_text(user + "/policies/mine.toml", "# mine\n");
  auto o = options(BackendKind::gemini, s / "cli");

  auto env = prepare_cli(o, with_home(s / "home"));
  ASSERT_TRUE(env) << env.error().message;
  std::string home = s / "cli/gemini-home";
  EXPECT_EQ(*env, (std::vector<std::string>{"GEMINI_CLI_HOME=" + home,
                                            "GEMINI_CLI_TRUST_WORKSPACE=true"}));
  std::string ours = home + "/.gemini";
  EXPECT_EQ(test::entries(ours), "oauth_creds.json\npolicies\nsettings.json\n");
  EXPECT_EQ(link_target(ours + "/oauth_creds.json"), user + "/oauth_creds.json");
  Json settings = Json::parse(test::slurp(ours + "/settings.json"));
  EXPECT_EQ(settings["security"]["auth"]["selectedType"], "oauth-personal");
  EXPECT_EQ(settings["privacy"]["usageStatisticsEnabled"], false);
  EXPECT_EQ(test::entries(ours + "/policies"), "devgraph.toml\nmine.toml\n");
  EXPECT_EQ(test::slurp(ours + "/policies/devgraph.toml"),
            gemini_policy(o.allowed_tools, o.disallowed_tools));
  EXPECT_EQ(test::slurp(gemini_admin_policy_dir(o) + "/devgraph.toml"),
            gemini_policy({}, o.disallowed_tools));

  // With telemetry kept, the user's settings as they are.
  o.cli_telemetry = true;
  ASSERT_TRUE(prepare_cli(o, with_home(s / "home")));
  settings = Json::parse(test::slurp(ours + "/settings.json"));
  EXPECT_FALSE(settings.contains("privacy"));

  // Settings gemini could not read either: a clear error naming the file.
  test::write_text(user + "/settings.json", "{\"security\": \n");
  env = prepare_cli(o, with_home(s / "home"));
  ASSERT_FALSE(env);
  EXPECT_NE(env.error().message.find(user + "/settings.json is not a JSON object"),
            std::string::npos)
      << env.error().message;
}

TEST(CliSetup, CodexAndGeminiNeedAConfigurationDirectory) {
  for (auto kind : {BackendKind::codex, BackendKind::gemini}) {
    auto env = prepare_cli(options(kind, ""), with_home("/nonexistent"));
    ASSERT_FALSE(env);
    EXPECT_NE(env.error().message.find("configuration directory"), std::string::npos);
  }
}

}  // namespace
}  // namespace devgraph::agents
