// What an agent CLI is told besides its argv: GRAPH.yaml's tool lists in
// the CLI's own form, and its telemetry turned off, written once per
// persona runtime into a directory devgraph owns
// (BackendOptions::config_dir).
//
// Per backend (docs/agents.md, "Each CLI's own deny list"):
//   claude  the lists go in its argv (--allowedTools, --disallowedTools);
//           nothing is written. Telemetry off:
//           CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1.
//   codex   a CODEX_HOME of the run's own: the user's config.toml copied,
//           auth.json a symlink to the user's (token refreshes reach it),
//           the user's rules/*.rules copied, and rules/devgraph.rules with
//           one `forbidden` prefix rule per Bash prefix of the deny list.
//           Codex applies the strictest matching rule, so a user rule
//           cannot allow what devgraph forbids. Telemetry off: `-c` flags
//           in the argv (analytics, plugin sync, update check).
//   gemini  a GEMINI_CLI_HOME of the run's own: every entry of the user's
//           ~/.gemini symlinked (login, .env keys, extensions, memory)
//           but settings.json (the user's, copied, with
//           privacy.usageStatisticsEnabled false), policies/ (the user's
//           *.toml copied, and devgraph.toml allowing run_shell_command
//           for the allowed Bash prefixes and denying the deny list's at a
//           higher priority), tmp/ and history/ (the run's sessions). The
//           same denials again in an --admin-policy directory: no user
//           rule outranks the admin tier (gemini ignores --admin-policy on
//           a machine with system policies; the user-tier denials still
//           hold then). The workspace is trusted
//           (GEMINI_CLI_TRUST_WORKSPACE=true), or headless gemini drops
//           its write tools. (A system settings file would be simpler,
//           but gemini reads one only when root owns it and every
//           directory above it.)
//   command, sim: nothing.
// BackendOptions::cli_telemetry leaves each CLI's telemetry as the user
// has it ($DEVGRAPH_CLI_TELEMETRY=1 at the verbs).
//
// Contract: the render functions are pure. prepare_cli() may run again
// for the same directory (a resumed run): it rewrites every file it owns
// and removes copies of user files that are gone, so the directory always
// reflects this launch's options and the user's files now.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "agents/backend.h"
#include "util/expected.h"

namespace devgraph::agents {

// "git commit" for "Bash(git commit *)" (and "Bash(git commit)");
// nullopt for a tool that is not a Bash command prefix.
std::optional<std::string> bash_prefix(std::string_view tool);

// Codex execpolicy: one `prefix_rule(pattern = [...], decision =
// "forbidden")` per Bash prefix of `disallowed`.
std::string codex_rules(const std::vector<std::string>& disallowed);
// The `-c key=value` words of a codex argv that turn its telemetry off
// (empty when `telemetry` is true).
std::vector<std::string> codex_config_overrides(bool telemetry);

// Gemini policy TOML for run_shell_command: `allow` for each Bash prefix
// of `allowed` and `deny` (at a higher priority) for each of
// `disallowed`; an empty `allowed` writes denials only.
std::string gemini_policy(const std::vector<std::string>& allowed,
                          const std::vector<std::string>& disallowed);

// Where a backend's files go under options.config_dir.
std::string codex_home_dir(const BackendOptions& options);
std::string gemini_home_dir(const BackendOptions& options);
std::string gemini_policy_dir(const BackendOptions& options);
std::string gemini_admin_policy_dir(const BackendOptions& options);

// Writes the backend's files under options.config_dir and returns the
// "NAME=value" entries every persona of this runtime gets on top of
// child_environment(). `parent` is this process's environment (for HOME,
// CODEX_HOME and GEMINI_CLI_HOME). Fails with a message naming
// the file it could not write; for claude, command and sim it writes
// nothing and cannot fail.
Expected<std::vector<std::string>> prepare_cli(const BackendOptions& options,
                                               const std::vector<std::string>& parent);

}  // namespace devgraph::agents
