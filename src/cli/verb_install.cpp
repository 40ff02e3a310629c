// devgraph install claude|codex|copilot [--yes] [--dry-run] [--hook]
// [--location DIR]: grant devgraph's commands to an agent CLI. The work is in
// src/install/; this file wires it to argv, the environment and the terminal.
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <ctime>

#include "cli/verbs.h"
#include "install/install.h"
#include "skill/skill.h"
#include "util/args.h"
#include "util/console.h"
#include "util/fs.h"

namespace devgraph {
namespace {

class StdTerminal final : public install::Terminal {
 public:
  bool interactive() const override { return isatty(STDIN_FILENO) != 0; }
  std::optional<std::string> ask(const std::string& question) override {
    out() << question << std::flush;
    return read_stdin_line();
  }
};

std::string env(const char* name) {
  const char* v = std::getenv(name);
  return v ? v : "";
}

// "20261130T052300Z": names the backups.
std::string stamp_now() {
  std::time_t t = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y%m%dT%H%M%SZ", &tm);
  return buf;
}

}  // namespace

ArgParser verb_install_parser() {
  ArgParser parser("devgraph install");
  parser
      .description(
          "Grant the commands and directories devgraph needs to an agent CLI, in its own "
          "configuration files. Shows the change, asks, keeps a backup, and merges without "
          "touching anything else.")
      .positional("tool", "the agent CLI")
      .choices({"claude", "codex", "copilot"})
      .flag("yes", "apply without asking")
      .flag("dry-run", "only show the change")
      .flag("hook", "claude: also run `devgraph guard hook` before every shell or write tool call")
      .option("location", "copilot: the repository the approvals are for")
      .default_value("the current directory")
      .hint(ValueHint::directory)
      .option("skill", "skill directory (accepted for symmetry; install does not read it)")
      .default_value(kSkillDefault)
      .hint(ValueHint::directory);
  return parser;
}

int verb_install(const VerbArgs& args) {
  ArgParser parser = verb_parser("install");
  auto parsed = parser.parse(args);
  if (!parsed) return report_error("install", parsed.error());
  const std::string name = parsed->positionals()[0];
  auto tool = install::parse_tool(name);
  if (!tool)
    return report_error("install",
                        parser.usage_error("argument tool: invalid choice: '" + name +
                                           "' (choose from 'claude', 'codex', 'copilot')"));
  if (parsed->flag("hook") && *tool != install::Tool::claude)
    return report_error("install", parser.usage_error("--hook applies to claude only"));

  install::Context ctx;
  ctx.home = env("HOME");
  ctx.devgraph_bin = self_executable();
  for (const char* var : {"CLAUDE_CONFIG_DIR", "CODEX_HOME", "COPILOT_HOME"})
    ctx.env[var] = env(var);
  ctx.location = absolute_path(parsed->get_or("location", "."));
  ctx.hook = parsed->flag("hook");

  install::Options options;
  options.yes = parsed->flag("yes");
  options.dry_run = parsed->flag("dry-run");
  StdTerminal terminal;
  return install::run_install(*tool, ctx, options, terminal, stamp_now(), out(), err());
}

}  // namespace devgraph
