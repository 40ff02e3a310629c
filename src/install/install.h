// `devgraph install claude|codex|copilot`: grant devgraph's commands and
// directories to an agent CLI, in that CLI's own configuration format.
//
// What is granted: running `devgraph <verb> ...` for the verbs a model-driven
// tech lead or orchestrator calls (kGrantedVerbs), both as `devgraph` (the
// form the persona files use, resolved through PATH) and as the absolute path
// of the running binary; and write access to the two roots where runs and
// bundle worktrees live (<home>/.ai/develop, <home>/.ai/worktrees). With
// --hook (Claude Code only), `<devgraph> guard hook` is registered as a
// PreToolUse hook so the placement guard sees every shell and file-writing
// tool call.
//
// Contracts:
// - plan_install() only reads. It returns, per file, the bytes before and
//   after; a file whose merge changes nothing has before == after. The
//   user's existing content survives: keys, entries and unknown fields are
//   kept in order, and only missing grants are appended.
// - A file that exists but cannot be understood (invalid JSON, a value of
//   the wrong type where devgraph must merge, TOML or Starlark whose
//   structure does not scan) fails the whole plan with one line naming the
//   file and what is wrong. Nothing is written in that case.
// - apply_plan() writes only changed files: first a backup copy of the old
//   bytes next to the file (<file>.devgraph-backup-<stamp>), then the new
//   bytes with write_file_atomic. Running the same install twice changes
//   nothing the second time.
// - Where the files live follows each tool's own rules: the tool's
//   config-directory variable when set, else a directory under $HOME.
#pragma once

#include <iosfwd>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "util/expected.h"

namespace devgraph::install {

enum class Tool { claude, codex, copilot };

std::optional<Tool> parse_tool(std::string_view name);
std::string_view tool_name(Tool tool);

// The verbs granted, in the order rules are written.
std::span<const std::string_view> granted_verbs();

struct Context {
  std::string home;          // the user's home directory (absolute)
  std::string devgraph_bin;  // absolute path of the running devgraph binary
  // Environment variables consulted for config directories:
  // CLAUDE_CONFIG_DIR, CODEX_HOME, COPILOT_HOME. Missing or empty: default.
  std::map<std::string, std::string> env;
  // Copilot keys its approvals by location: the repository the agent runs
  // in (absolute). Unused by the other tools.
  std::string location;
  bool hook = false;  // claude only: register the guard as a PreToolUse hook
};

struct FileChange {
  std::string path;
  std::optional<std::string> before;  // nullopt: the file does not exist yet
  std::string after;
  std::string what;  // one line: what the change grants, for the preview
  bool changed() const { return !before || *before != after; }
};

struct Plan {
  Tool tool = Tool::claude;
  std::vector<FileChange> files;
  // Directories that must exist for the grants to apply (Copilot refuses an
  // allowed directory that does not exist). Created by apply_plan().
  std::vector<std::string> directories;
  bool changes_anything() const;
};

// The configuration files of `tool` under `ctx` (for messages and tests).
std::vector<std::string> config_files(Tool tool, const Context& ctx);

Expected<Plan> plan_install(Tool tool, const Context& ctx);

// A line diff of one change, for the preview: "--- path", "+++ path", then
// hunks of " ", "-", "+" lines with two lines of context. Empty when the
// file does not change.
std::string render_diff(const FileChange& change);

// Writes every changed file (backup first, then an atomic replace) and
// creates the plan's directories. `stamp` names the backups
// ("20261130T052300Z"); an existing backup name gets a numeric suffix.
// Returns the backup paths written.
Expected<std::vector<std::string>> apply_plan(const Plan& plan, const std::string& stamp);

// The terminal the verb asks on; a seam so tests answer without a tty.
class Terminal {
 public:
  virtual ~Terminal() = default;
  virtual bool interactive() const = 0;
  // Shows `question` and returns the answer line; nullopt at end of input.
  virtual std::optional<std::string> ask(const std::string& question) = 0;
};

struct Options {
  bool yes = false;
  bool dry_run = false;
};

// The whole install conversation: preview, then ask (or --yes), then apply.
// Prints to `out`. Returns the process exit code: 0 when applied, already
// in place, or a dry run; 1 when declined, refused for lack of a terminal,
// or failed (the error is printed to `err` as one line).
int run_install(Tool tool, const Context& ctx, const Options& options, Terminal& terminal,
                const std::string& stamp, std::ostream& out, std::ostream& err);

}  // namespace devgraph::install
