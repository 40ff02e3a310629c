// `devgraph install` as a user runs it: the real binary, a temporary HOME, no
// terminal on stdin.
#include <gtest/gtest.h>

#include <filesystem>

#include "support/build_paths.h"
#include "support/test_util.h"
#include "util/json.h"

namespace devgraph {
namespace {

namespace fs = std::filesystem;

std::string fixture(const std::string& name) {
  return test::slurp(test::test_dir() + "/fixtures/install/" + name);
}

// HOME points at the scratch directory and the tools' own variables are
// unset, so nothing outside the scratch directory is read or written.
std::map<std::string, std::string> home_env(const test::Scratch& s) {
  return {{"HOME", s.path()}, {"CLAUDE_CONFIG_DIR", ""}, {"CODEX_HOME", ""}, {"COPILOT_HOME", ""}};
}

std::map<std::string, std::string> snapshot(const std::string& dir) {
  std::map<std::string, std::string> out;
  for (auto& e : fs::recursive_directory_iterator(dir))
    if (e.is_regular_file()) out[e.path().string()] = test::slurp(e.path().string());
  return out;
}

TEST(InstallCli, ClaudeWithYesMergesThenSecondRunIsANoOp) {
  test::Scratch home;
  fs::create_directories(home / ".claude");
  test::write_text(home / ".claude/settings.json", fixture("claude-settings.json"));
  auto first = test::run_devgraph({"install", "claude", "--yes", "--hook"}, home_env(home));
  ASSERT_EQ(first.exit_code, 0) << first.out << first.err;
  EXPECT_EQ(first.err, "");
  EXPECT_NE(first.out.find("updated: " + (home / ".claude/settings.json")), std::string::npos);

  Json settings = Json::parse(test::slurp(home / ".claude/settings.json"));
  EXPECT_EQ(settings["model"], "opus");
  EXPECT_EQ(settings["permissions"]["allow"][0], "Bash(git diff *)");
  std::string hook = settings["hooks"]["PreToolUse"][0]["hooks"][0]["command"];
  // The hook runs this very binary, by absolute path.
  EXPECT_EQ(hook, fs::canonical(DEVGRAPH_BIN).string() + " guard hook");

  auto files = snapshot(home.path());
  auto second = test::run_devgraph({"install", "claude", "--yes", "--hook"}, home_env(home));
  EXPECT_EQ(second.exit_code, 0);
  EXPECT_NE(second.out.find("nothing to change"), std::string::npos) << second.out;
  EXPECT_EQ(snapshot(home.path()), files);
}

TEST(InstallCli, WithoutATerminalOrYesItPreviewsAndRefuses) {
  test::Scratch home;
  auto r = test::run_devgraph({"install", "codex"}, home_env(home), "", "y\n");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.out.find("+++ " + (home / ".codex/config.toml")), std::string::npos) << r.out;
  EXPECT_EQ(r.err,
            "devgraph install codex: no terminal to ask on; run again with --yes to apply, or "
            "--dry-run to preview (nothing was changed)\n");
  EXPECT_TRUE(snapshot(home.path()).empty());
}

TEST(InstallCli, DryRunWritesNothing) {
  test::Scratch home;
  auto r = test::run_devgraph({"install", "copilot", "--dry-run", "--location", home / "repo"},
                              home_env(home));
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("devgraph checkpoint:*"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("(dry run: nothing was written)"), std::string::npos);
  EXPECT_TRUE(fs::is_empty(home.path()));
}

TEST(InstallCli, MalformedConfigIsRefusedUntouched) {
  test::Scratch home;
  fs::create_directories(home / ".codex");
  test::write_text(home / ".codex/config.toml", fixture("codex-config-malformed.toml"));
  auto before = snapshot(home.path());
  auto r = test::run_devgraph({"install", "codex", "--yes"}, home_env(home));
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err, "devgraph install codex: " + (home / ".codex/config.toml") +
                       ":2: unterminated table header; fix or move the file and run again "
                       "(nothing was changed)\n");
  EXPECT_EQ(snapshot(home.path()), before);
}

TEST(InstallCli, CodexHomeVariableAndBackups) {
  test::Scratch home;
  fs::create_directories(home / "cx");
  test::write_text(home / "cx/config.toml", fixture("codex-config.toml"));
  auto env = home_env(home);
  env["CODEX_HOME"] = home / "cx";
  auto r = test::run_devgraph({"install", "codex", "--yes"}, env);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(fs::exists(home / "cx/rules/devgraph.rules"));
  EXPECT_FALSE(fs::exists(home / ".codex"));
  int backups = 0;
  for (auto& e : fs::directory_iterator(home / "cx"))
    if (e.path().filename().string().rfind("config.toml.devgraph-backup-", 0) == 0) {
      ++backups;
      EXPECT_EQ(test::slurp(e.path().string()), fixture("codex-config.toml"));
    }
  EXPECT_EQ(backups, 1);
}

TEST(InstallCli, UsageErrors) {
  test::Scratch home;
  auto unknown = test::run_devgraph({"install", "vim"}, home_env(home));
  EXPECT_EQ(unknown.exit_code, 2);
  EXPECT_NE(unknown.err.find("invalid choice: 'vim'"), std::string::npos) << unknown.err;
  auto hook = test::run_devgraph({"install", "codex", "--hook"}, home_env(home));
  EXPECT_EQ(hook.exit_code, 2);
  EXPECT_NE(hook.err.find("--hook applies to claude only"), std::string::npos) << hook.err;
  auto missing = test::run_devgraph({"install"}, home_env(home));
  EXPECT_EQ(missing.exit_code, 2);
  EXPECT_TRUE(fs::is_empty(home.path()));
}

}  // namespace
}  // namespace devgraph
