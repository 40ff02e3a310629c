// `devgraph doctor`'s checks of the programs devgraph runs: git, the
// GitHub CLI, and each agent CLI with the argv devgraph would give it.
//
// Contract:
// - probe() runs one read-only command (`--version`, `--help`, `gh auth
//   status`) through a CommandRunner: argv only, never a shell, stdin
//   /dev/null, kProbeTimeout, at most kProbeOutputBytes of each stream.
//   Nothing here ever asks a model anything: an agent CLI is only asked
//   for its version and its help.
// - The check_* functions are pure: findings from what the probes
//   answered.
// - An agent CLI's argv is the backend's own (agents/backend.h), built for
//   a sample launch and its resume; "accepted" means every flag in it
//   appears in the help of the CLI's command (`claude --help`, `codex exec
//   --help`), bar the flags the CLI is known to take without listing them
//   (unlisted_flags()).
// - Levels: no git, a git older than kMinimumGit, no gh or an
//   unauthenticated gh with github delivery, and the selected backend's
//   CLI missing or not listing devgraph's flags are problems; the other
//   CLIs' are warnings (the discuss perspectives that name them fall back
//   to another backend); gh with local delivery is never a problem.
#pragma once

#include <chrono>
#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "agents/backend.h"
#include "doctor/finding.h"
#include "proc/command.h"

namespace devgraph::doctor {

inline constexpr std::chrono::seconds kProbeTimeout{10};
inline constexpr size_t kProbeOutputBytes = 256 * 1024;

// What one command answered.
struct Probe {
  bool started = false;  // false: it could not be started (not found)
  std::string error;     // why it could not start
  CommandResult result;
  bool ok() const { return started && result.ok(); }
};

Probe probe(CommandRunner& runner, std::vector<std::string> argv, const std::string& cwd = "",
            std::map<std::string, std::string> env = {});

// Where `program` would be found: itself when it holds a slash, else the
// first executable regular file of that name in the ':'-separated `path`.
std::optional<std::string> find_on_path(const std::string& program, const std::string& path);

struct Version {
  int major = 0, minor = 0, patch = 0;
  auto operator<=>(const Version&) const = default;
};
// The first "N.N" or "N.N.N" in `text` ("git version 2.39.5" -> 2.39.5).
std::optional<Version> parse_version(std::string_view text);
std::string version_text(const Version& v);

// `git worktree list --porcelain -z` (orchestrator/merge_audit.h).
inline constexpr Version kMinimumGit{2, 36, 0};

// From `git --version`.
Finding check_git(const Probe& version);

// From `gh --version` and, when gh ran, `gh auth status`. `delivery` is
// "github", "local", or "" when there is no repository to say.
Finding check_gh(const Probe& version, const std::optional<Probe>& auth,
                 const std::string& delivery);

// One agent CLI as devgraph would run it.
struct AgentCli {
  agents::BackendKind kind = agents::BackendKind::claude;
  std::string program;                 // argv[0] of every launch
  std::vector<std::string> help_argv;  // program, its subcommand, --help
  std::vector<std::string> flags;      // every flag devgraph passes, once each, in order
};

// The backend's launch and resume argv for a sample launch, read for
// flags. Fails only when the backend cannot be made (a command or sim
// backend without its template or scenario).
Expected<AgentCli> agent_cli(const agents::BackendOptions& options);

// The words of `argv` that are flags: those starting with '-' (not "-"
// alone), up to any '='; each once, in order.
std::vector<std::string> flags_in(const std::vector<std::string>& argv);
// argv[0] and the subcommand words after it (up to the first flag), then
// --help: `codex exec --help` for a `codex exec --json ...` launch.
std::vector<std::string> help_argv_for(const std::vector<std::string>& argv);
// Flags the CLI takes but does not list in its --help: claude's
// --max-turns (anthropics/claude-code#16963).
std::vector<std::string> unlisted_flags(agents::BackendKind kind);
// The flags not found in `help` as whole words (neither a letter, digit,
// '-' nor '_' on either side), the unlisted ones left out.
std::vector<std::string> flags_missing_from(const std::vector<std::string>& flags,
                                            std::string_view help,
                                            const std::vector<std::string>& unlisted);

// `version` from `<program> --version`; `help` from help_argv, asked only
// when the program started; `path` where it was found. `selected`: the
// backend `devgraph run` would use (--agent).
Finding check_agent_cli(const AgentCli& cli, const std::optional<std::string>& path,
                        const Probe& version, const std::optional<Probe>& help, bool selected);

}  // namespace devgraph::doctor
