#include "install/install.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <sstream>

#include "install/config_text.h"
#include "support/test_util.h"
#include "util/json.h"

namespace devgraph::install {
namespace {

namespace fs = std::filesystem;

std::string fixture(const std::string& name) {
  return test::slurp(test::test_dir() + "/fixtures/install/" + name);
}

class FakeTerminal final : public Terminal {
 public:
  FakeTerminal(bool interactive, std::optional<std::string> answer)
      : interactive_(interactive), answer_(std::move(answer)) {}
  bool interactive() const override { return interactive_; }
  std::optional<std::string> ask(const std::string& question) override {
    asked = question;
    return answer_;
  }
  std::string asked;

 private:
  bool interactive_;
  std::optional<std::string> answer_;
};

struct Home {
  test::Scratch dir;
  Context ctx;
  Home() {
    ctx.home = dir.path();
    ctx.devgraph_bin = "/opt/devgraph/bin/devgraph";
    ctx.location = dir / "repo";
  }
  std::string claude() const { return dir / ".claude/settings.json"; }
  std::string copilot() const { return dir / ".copilot/permissions-config.json"; }
  std::string codex_config() const { return dir / ".codex/config.toml"; }
  std::string codex_rules() const { return dir / ".codex/rules/devgraph.rules"; }
  void put(const std::string& path, const std::string& text) const {
    fs::create_directories(fs::path(path).parent_path());
    test::write_text(path, text);
  }
  // Every file under the home, with its bytes: "nothing changed" is this
  // map being equal before and after.
  std::map<std::string, std::string> snapshot() const {
    std::map<std::string, std::string> out;
    for (auto& e : fs::recursive_directory_iterator(dir.path()))
      if (e.is_regular_file()) out[e.path().string()] = test::slurp(e.path().string());
    return out;
  }
};

int run(Tool tool, const Context& ctx, Options options, Terminal& terminal, std::string* out_text,
        std::string* err_text = nullptr) {
  std::ostringstream out, err;
  int code = run_install(tool, ctx, options, terminal, "20261130T052300Z", out, err);
  if (out_text) *out_text = out.str();
  if (err_text) *err_text = err.str();
  return code;
}

int apply(Tool tool, const Context& ctx, std::string* out_text = nullptr,
          std::string* err_text = nullptr) {
  FakeTerminal no_tty(false, std::nullopt);
  return run(tool, ctx, Options{true, false}, no_tty, out_text, err_text);
}

// ---- Claude Code ----------------------------------------------------------

TEST(InstallClaude, MergesIntoTheUsersSettingsKeepingEverything) {
  Home h;
  const std::string original = fixture("claude-settings.json");
  h.put(h.claude(), original);
  std::string out;
  ASSERT_EQ(apply(Tool::claude, h.ctx, &out), 0) << out;

  Json before = Json::parse(original);
  Json after = Json::parse(test::slurp(h.claude()));
  // Every key the user had is still there, in the same order, same value.
  std::vector<std::string> keys_before, keys_after;
  for (auto& [k, v] : before.items()) keys_before.push_back(k);
  for (auto& [k, v] : after.items()) keys_after.push_back(k);
  EXPECT_EQ(keys_before, keys_after);
  for (const char* key :
       {"model", "env", "hooks", "statusLine", "cleanupPeriodDays", "temperatureHint"})
    EXPECT_EQ(after[key], before[key]) << key;
  EXPECT_EQ(after["permissions"]["deny"], before["permissions"]["deny"]);
  EXPECT_EQ(after["permissions"]["defaultMode"], "acceptEdits");
  const Json& allow = after["permissions"]["allow"];
  ASSERT_GE(allow.size(), 2u);
  EXPECT_EQ(allow[0], "Bash(git diff *)");
  EXPECT_EQ(allow[1], "Read(~/notes/**)");
  for (auto verb : granted_verbs()) {
    EXPECT_NE(
        std::find(allow.begin(), allow.end(), Json("Bash(devgraph " + std::string(verb) + " *)")),
        allow.end())
        << verb;
    EXPECT_NE(std::find(allow.begin(), allow.end(),
                        Json("Bash(/opt/devgraph/bin/devgraph " + std::string(verb) + " *)")),
              allow.end())
        << verb;
  }
  EXPECT_EQ(allow.size(), 2u + 2 * granted_verbs().size());
  EXPECT_EQ(after["env"]["GREETING"], "h\xC3\xA9llo w\xC3\xB6rld");
  EXPECT_FALSE(after.contains("hooks") && after["hooks"].contains("PreToolUse"));

  // The backup holds the user's original bytes.
  std::string backup = h.claude() + ".devgraph-backup-20261130T052300Z";
  EXPECT_EQ(test::slurp(backup), original);
  EXPECT_NE(out.find("backup: " + backup), std::string::npos);
  EXPECT_NE(out.find("\n+      \"Bash(devgraph checkpoint *)\",\n"), std::string::npos) << out;
}

TEST(InstallClaude, SecondRunChangesNothingAndSaysSo) {
  Home h;
  h.put(h.claude(), fixture("claude-settings.json"));
  h.ctx.hook = true;
  ASSERT_EQ(apply(Tool::claude, h.ctx), 0);
  auto after_first = h.snapshot();
  std::string out;
  ASSERT_EQ(apply(Tool::claude, h.ctx, &out), 0);
  EXPECT_NE(out.find("nothing to change"), std::string::npos) << out;
  EXPECT_EQ(h.snapshot(), after_first);
  auto plan = plan_install(Tool::claude, h.ctx);
  ASSERT_TRUE(plan.ok());
  EXPECT_FALSE(plan->changes_anything());
  EXPECT_EQ(render_diff(plan->files[0]), "");
}

TEST(InstallClaude, HookIsRegisteredOnceBesideTheUsersHooks) {
  Home h;
  h.put(h.claude(), fixture("claude-settings.json"));
  h.ctx.hook = true;
  h.ctx.devgraph_bin = "/opt/dev graph/devgraph";  // a path that needs quoting
  ASSERT_EQ(apply(Tool::claude, h.ctx), 0);
  Json after = Json::parse(test::slurp(h.claude()));
  ASSERT_TRUE(after["hooks"].contains("PostToolUse"));
  const Json& pre = after["hooks"]["PreToolUse"];
  ASSERT_EQ(pre.size(), 1u);
  EXPECT_EQ(pre[0]["matcher"], "Bash|Edit|Write|MultiEdit|NotebookEdit");
  EXPECT_EQ(pre[0]["hooks"][0]["type"], "command");
  EXPECT_EQ(pre[0]["hooks"][0]["command"], "'/opt/dev graph/devgraph' guard hook");
  EXPECT_EQ(pre[0]["hooks"][0]["timeout"], 10);
  // Installing again, with or without --hook, adds nothing.
  ASSERT_EQ(apply(Tool::claude, h.ctx), 0);
  h.ctx.hook = false;
  ASSERT_EQ(apply(Tool::claude, h.ctx), 0);
  EXPECT_EQ(Json::parse(test::slurp(h.claude()))["hooks"]["PreToolUse"].size(), 1u);
}

TEST(InstallClaude, CreatesTheFileWhenAbsentWithoutABackup) {
  Home h;
  ASSERT_EQ(apply(Tool::claude, h.ctx), 0);
  Json after = Json::parse(test::slurp(h.claude()));
  EXPECT_EQ(after["permissions"]["allow"].size(), 2 * granted_verbs().size());
  EXPECT_EQ(h.snapshot().size(), 1u);
}

TEST(InstallClaude, ConfigDirVariableMovesTheFile) {
  Home h;
  h.ctx.env["CLAUDE_CONFIG_DIR"] = h.dir / "elsewhere";
  ASSERT_EQ(apply(Tool::claude, h.ctx), 0);
  EXPECT_TRUE(fs::exists(h.dir / "elsewhere/settings.json"));
  EXPECT_FALSE(fs::exists(h.claude()));
}

TEST(InstallClaude, MalformedFileIsRefusedAndLeftByteForByte) {
  for (const char* name : {"claude-malformed.json", "claude-wrong-type.json"}) {
    SCOPED_TRACE(name);
    Home h;
    h.put(h.claude(), fixture(name));
    auto before = h.snapshot();
    std::string out, err;
    EXPECT_EQ(apply(Tool::claude, h.ctx, &out, &err), 1);
    EXPECT_EQ(out, "");
    EXPECT_EQ(err.rfind("devgraph install claude: " + h.claude() + ": ", 0), 0u) << err;
    EXPECT_NE(err.find("nothing was changed"), std::string::npos) << err;
    EXPECT_EQ(std::count(err.begin(), err.end(), '\n'), 1) << err;
    EXPECT_EQ(h.snapshot(), before);
  }
  Home h;
  h.put(h.claude(), "[1, 2]\n");
  auto plan = plan_install(Tool::claude, h.ctx);
  ASSERT_FALSE(plan.ok());
  EXPECT_NE(plan.error().message.find("top level is not a JSON object"), std::string::npos);
}

// ---- the conversation -------------------------------------------------------

TEST(InstallConversation, NoTerminalAndNoYesRefusesAndWritesNothing) {
  Home h;
  h.put(h.claude(), fixture("claude-settings.json"));
  auto before = h.snapshot();
  FakeTerminal no_tty(false, std::nullopt);
  std::string out, err;
  EXPECT_EQ(run(Tool::claude, h.ctx, Options{false, false}, no_tty, &out, &err), 1);
  EXPECT_NE(out.find("--- " + h.claude()), std::string::npos) << out;  // the preview was shown
  EXPECT_NE(err.find("no terminal to ask on"), std::string::npos) << err;
  EXPECT_EQ(h.snapshot(), before);
}

TEST(InstallConversation, AnswerDecides) {
  Home h;
  h.put(h.claude(), fixture("claude-settings.json"));
  auto before = h.snapshot();
  FakeTerminal no(true, std::string("n"));
  std::string out;
  EXPECT_EQ(run(Tool::claude, h.ctx, Options{false, false}, no, &out), 1);
  EXPECT_EQ(no.asked, "Apply these changes? [y/N] ");
  EXPECT_EQ(h.snapshot(), before);
  FakeTerminal eof(true, std::nullopt);
  EXPECT_EQ(run(Tool::claude, h.ctx, Options{false, false}, eof, &out), 1);
  EXPECT_EQ(h.snapshot(), before);
  FakeTerminal yes(true, std::string(" yes \n"));
  EXPECT_EQ(run(Tool::claude, h.ctx, Options{false, false}, yes, &out), 0);
  EXPECT_NE(h.snapshot(), before);
}

TEST(InstallConversation, DryRunShowsAndWritesNothing) {
  Home h;
  FakeTerminal tty(true, std::string("y"));
  std::string out;
  EXPECT_EQ(run(Tool::codex, h.ctx, Options{true, true}, tty, &out), 0);
  EXPECT_NE(out.find("dry run"), std::string::npos);
  EXPECT_NE(out.find("--- /dev/null\n+++ " + h.codex_rules()), std::string::npos) << out;
  EXPECT_EQ(tty.asked, "");
  EXPECT_FALSE(fs::exists(h.dir / ".codex"));
}

TEST(InstallConversation, HookIsForClaudeOnlyAndHomeMustBeAbsolute) {
  Home h;
  h.ctx.hook = true;
  auto plan = plan_install(Tool::codex, h.ctx);
  ASSERT_FALSE(plan.ok());
  EXPECT_EQ(plan.error().exit_code, 2);
  h.ctx.hook = false;
  h.ctx.home = "relative/home";
  EXPECT_FALSE(plan_install(Tool::claude, h.ctx).ok());
}

// ---- Copilot CLI ------------------------------------------------------------

TEST(InstallCopilot, MergesIntoTheLocationKeepingOtherApprovals) {
  Home h;
  std::string text = fixture("copilot-permissions.json");
  text.replace(text.find("@LOCATION@"), 10, h.ctx.location);
  h.put(h.copilot(), text);
  ASSERT_EQ(apply(Tool::copilot, h.ctx), 0);
  Json before = Json::parse(text);
  Json after = Json::parse(test::slurp(h.copilot()));
  EXPECT_EQ(after["version"], 1);
  EXPECT_EQ(after["locations"]["/srv/other-repo"], before["locations"]["/srv/other-repo"]);
  const Json& loc = after["locations"][h.ctx.location];
  const Json& approvals = loc["tool_approvals"];
  ASSERT_EQ(approvals.size(), 3u);  // commands (extended), mcp (kept), write (added)
  const Json& ids = approvals[0]["commandIdentifiers"];
  EXPECT_EQ(ids[0], "git status");
  EXPECT_EQ(ids[1], "npm test:*");
  EXPECT_NE(std::find(ids.begin(), ids.end(), Json("devgraph checkpoint:*")), ids.end());
  EXPECT_NE(std::find(ids.begin(), ids.end(), Json("/opt/devgraph/bin/devgraph guard:*")),
            ids.end());
  EXPECT_EQ(approvals[1], before["locations"][h.ctx.location]["tool_approvals"][1]);
  EXPECT_EQ(approvals[2], Json({{"kind", "write"}}));
  EXPECT_EQ(loc["allowed_directories"],
            Json({"/srv/shared-cache", h.dir / ".ai/develop", h.dir / ".ai/worktrees"}));
  // Copilot refuses allowed directories that do not exist: install made them.
  EXPECT_TRUE(fs::is_directory(h.dir / ".ai/develop"));
  EXPECT_TRUE(fs::is_directory(h.dir / ".ai/worktrees"));

  auto after_first = h.snapshot();
  std::string out;
  ASSERT_EQ(apply(Tool::copilot, h.ctx, &out), 0);
  EXPECT_NE(out.find("nothing to change"), std::string::npos);
  EXPECT_EQ(h.snapshot(), after_first);
}

TEST(InstallCopilot, MalformedFileIsRefusedAndLeftByteForByte) {
  Home h;
  h.put(h.copilot(), fixture("copilot-malformed.json"));
  auto before = h.snapshot();
  std::string err;
  EXPECT_EQ(apply(Tool::copilot, h.ctx, nullptr, &err), 1);
  EXPECT_NE(err.find("not valid JSON"), std::string::npos) << err;
  EXPECT_EQ(h.snapshot(), before);
  EXPECT_FALSE(fs::exists(h.dir / ".ai"));
}

// ---- Codex ------------------------------------------------------------------

TEST(InstallCodex, AddsRootsToTheUsersArrayAndRulesInItsOwnFile) {
  Home h;
  const std::string original = fixture("codex-config.toml");
  h.put(h.codex_config(), original);
  h.put(h.dir / ".codex/rules/default.rules", fixture("codex-user.rules"));
  ASSERT_EQ(apply(Tool::codex, h.ctx), 0);

  std::string config = test::slurp(h.codex_config());
  const std::string roots =
      "\"" + (h.dir / ".ai/develop") + "\", \"" + (h.dir / ".ai/worktrees") + "\"";
  std::string expected = original;
  expected.replace(expected.find("'/var/tmp/builds',") + 18, 0, " " + roots);
  EXPECT_EQ(config, expected);
  auto scanned = scan_toml(config, "config.toml");
  ASSERT_TRUE(scanned.ok()) << scanned.error().message;

  std::string rules = test::slurp(h.codex_rules());
  EXPECT_EQ(rules.rfind("# ", 0), 0u);
  EXPECT_NE(
      rules.find("prefix_rule(pattern = [\"devgraph\", \"checkpoint\"], decision = \"allow\""),
      std::string::npos)
      << rules;
  EXPECT_NE(rules.find("[\"/opt/devgraph/bin/devgraph\", \"run-bundle\"]"), std::string::npos);
  EXPECT_TRUE(check_starlark(rules, "devgraph.rules").ok());
  EXPECT_EQ(test::slurp(h.dir / ".codex/rules/default.rules"), fixture("codex-user.rules"));
  EXPECT_EQ(test::slurp(h.codex_config() + ".devgraph-backup-20261130T052300Z"), original);

  auto after_first = h.snapshot();
  std::string out;
  ASSERT_EQ(apply(Tool::codex, h.ctx, &out), 0);
  EXPECT_NE(out.find("nothing to change"), std::string::npos) << out;
  EXPECT_EQ(h.snapshot(), after_first);
}

TEST(InstallCodex, RulesFileTheUserEditedKeepsItsLines) {
  Home h;
  h.put(h.codex_rules(), fixture("codex-user.rules"));
  ASSERT_EQ(apply(Tool::codex, h.ctx), 0);
  std::string rules = test::slurp(h.codex_rules());
  EXPECT_EQ(rules.rfind(fixture("codex-user.rules"), 0), 0u);
  EXPECT_NE(rules.find("\"devgraph\", \"guard\""), std::string::npos);
}

// `original` writes the home directory as "~"; so does the result.
std::string merged_config(std::string original) {
  Home h;
  for (size_t p; (p = original.find('~')) != std::string::npos;)
    original.replace(p, 1, h.dir.path());
  h.put(h.codex_config(), original);
  auto plan = plan_install(Tool::codex, h.ctx);
  EXPECT_TRUE(plan.ok()) << plan.error().message;
  if (!plan.ok()) return "";
  std::string after = plan->files[1].after;
  // Replace the temp home so expectations can be literal.
  for (size_t p; (p = after.find(h.dir.path())) != std::string::npos;)
    after.replace(p, h.dir.path().size(), "~");
  auto scanned = scan_toml(after, "merged");
  EXPECT_TRUE(scanned.ok()) << (scanned.ok() ? "" : scanned.error().message) << after;
  return after;
}

TEST(InstallCodex, TomlShapes) {
  const std::string roots = "\"~/.ai/develop\", \"~/.ai/worktrees\"";
  EXPECT_EQ(merged_config(""), "[sandbox_workspace_write]\nwritable_roots = [" + roots + "]\n");
  EXPECT_EQ(merged_config("model = \"x\""),
            "model = \"x\"\n\n[sandbox_workspace_write]\nwritable_roots = [" + roots + "]\n");
  EXPECT_EQ(merged_config("[sandbox_workspace_write]\nnetwork_access = true\n[other]\nk = 1\n"),
            "[sandbox_workspace_write]\nwritable_roots = [" + roots +
                "]\nnetwork_access = true\n[other]\nk = 1\n");
  EXPECT_EQ(merged_config("[sandbox_workspace_write]\nwritable_roots = []\n"),
            "[sandbox_workspace_write]\nwritable_roots = [" + roots + "]\n");
  EXPECT_EQ(
      merged_config("[sandbox_workspace_write]\nwritable_roots = [\"~/.ai/develop\"] # mine\n"),
      "[sandbox_workspace_write]\nwritable_roots = [\"~/.ai/develop\", \"~/.ai/worktrees\"] "
      "# mine\n");
  EXPECT_EQ(merged_config("sandbox_workspace_write.network_access = true\n[x]\ny = 2\n"),
            "sandbox_workspace_write.network_access = true\n"
            "sandbox_workspace_write.writable_roots = [" +
                roots + "]\n[x]\ny = 2\n");
  EXPECT_EQ(merged_config("sandbox_workspace_write.writable_roots = [\"/a\"]\n"),
            "sandbox_workspace_write.writable_roots = [\"/a\", " + roots + "]\n");
  // A table of that name under another parent is not the one.
  EXPECT_EQ(merged_config("[profiles.p.sandbox_workspace_write]\nwritable_roots = [\"/a\"]\n"),
            "[profiles.p.sandbox_workspace_write]\nwritable_roots = [\"/a\"]\n\n"
            "[sandbox_workspace_write]\nwritable_roots = [" +
                roots + "]\n");
}

TEST(InstallCodex, MalformedFilesAreRefusedAndLeftByteForByte) {
  struct Case {
    std::string file, text, message;
  };
  const std::vector<Case> cases = {
      {"config", fixture("codex-config-malformed.toml"),
       "config.toml:2: unterminated table header"},
      {"config", "model = \"unterminated\n", "config.toml:1: unterminated string"},
      {"config", "just words\n", "config.toml:1: expected a [table] header or key = value"},
      {"config", "[sandbox_workspace_write]\nwritable_roots = \"/a\"\n",
       "writable_roots is not an array"},
      {"config", "[sandbox_workspace_write]\nwritable_roots = [1, 2]\n",
       "writable_roots holds something other than plain strings"},
      {"config", "sandbox_workspace_write = { network_access = true }\n", "inline table"},
      {"rules", fixture("codex-rules-malformed.rules"), "devgraph.rules:2: '(' is never closed"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.text);
    Home h;
    h.put(c.file == "config" ? h.codex_config() : h.codex_rules(), c.text);
    auto before = h.snapshot();
    std::string err;
    EXPECT_EQ(apply(Tool::codex, h.ctx, nullptr, &err), 1);
    EXPECT_NE(err.find(c.message), std::string::npos) << err;
    EXPECT_EQ(std::count(err.begin(), err.end(), '\n'), 1) << err;
    EXPECT_EQ(h.snapshot(), before);
  }
}

TEST(InstallCodex, CodexHomeMovesTheFiles) {
  Home h;
  h.ctx.env["CODEX_HOME"] = h.dir / "cx";
  EXPECT_EQ(
      config_files(Tool::codex, h.ctx),
      (std::vector<std::string>{h.dir / "cx/rules/devgraph.rules", h.dir / "cx/config.toml"}));
}

// ---- the preview --------------------------------------------------------------

TEST(InstallDiff, ShowsChangedLinesWithContext) {
  FileChange c{"/f", std::string("a\nb\nc\nd\ne\nf\ng\n"), "a\nb\nc\nD\ne\nf\ng\nh\n", ""};
  EXPECT_EQ(render_diff(c), "--- /f\n+++ /f\n@@\n b\n c\n-d\n+D\n e\n f\n g\n+h\n");
  FileChange same{"/f", std::string("x\n"), "x\n", ""};
  EXPECT_EQ(render_diff(same), "");
  FileChange created{"/f", std::nullopt, "x\n", ""};
  EXPECT_EQ(render_diff(created), "--- /dev/null\n+++ /f\n@@\n+x\n");
}

}  // namespace
}  // namespace devgraph::install
