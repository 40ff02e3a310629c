// The placement guard: devgraph's security boundary around git checkouts.
//
// Rules (GRAPH.yaml `placement`):
// - A primary clone (a checkout whose `.git` is a directory, or a submodule
//   checkout inside one) is read-only: no file inside it may be created,
//   changed or removed, and git commands that change its index, HEAD or
//   working tree do not run there. Read-only git and branch/worktree
//   management stay allowed.
// - Bundle worktrees live only at <worktrees_root>/<owner>/<repo>/<slug>,
//   where <owner>/<repo> comes from the `origin` remote, or is
//   `local/<directory-name>` when there is none.
// - Roots listed in DEVELOP_GUARD_EXEMPT (':'-separated) are exempt.
//
// Contracts:
// - Every check returns a Verdict: std::nullopt allows; a string denies and
//   is the one-line reason. Checks never throw on any input and never write.
// - Paths are resolved the way the kernel would open them: `~`, relative
//   paths against the effective working directory, `..` after symlinks, and
//   symlinks (including dangling ones) component by component, so a link
//   inside a worktree that points into a primary clone counts as the clone.
// - Topology is read from `.git`, `HEAD` and `config` files directly; no git
//   process is started, so a check costs a handful of stat() calls.
// - A `.git` marks a checkout only when git would take it for one: a
//   directory, or a `gitdir: <path>` file naming one, with a HEAD git
//   accepts (read as git reads it) and objects/ and refs/ in its common
//   directory. Any other `.git` directory (an empty one another program
//   left in the temporary directory) is passed over and the walk goes on
//   upwards, as git's own discovery does. A `.git` file naming no
//   repository, where git stops with an error, is passed over too, so a
//   primary clone above it still counts.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "util/expected.h"
#include "util/json.h"

namespace devgraph::guard {

// Where placement lives. Built from the environment by Roots::from_env();
// tests build one directly.
struct Roots {
  std::string home;                 // for `~`; $HOME
  std::string worktrees;            // DEVELOP_WORKTREES_ROOT, default $AI_ROOT/worktrees
  std::string develop_home;         // DEVELOP_HOME_ROOT, default $AI_ROOT/develop
  std::vector<std::string> exempt;  // resolved DEVELOP_GUARD_EXEMPT entries

  // AI_ROOT defaults to ~/.ai. Unset variables fall back to their defaults;
  // an empty DEVELOP_GUARD_EXEMPT exempts nothing.
  static Roots from_env();
};

enum class CheckoutKind { kNone, kPrimary, kWorktree };

// The checkout enclosing a directory.
struct Checkout {
  CheckoutKind kind = CheckoutKind::kNone;
  std::string top;         // working-tree root
  std::string head_dir;    // the directory holding this checkout's HEAD
  std::string common_dir;  // the shared git directory (holds config)
};

// Walks up from `dir` (resolved first) to the nearest `.git` that is a
// repository.
Checkout probe(const std::string& dir);

// `path` made absolute against `cwd` (after `~` expansion against `home`),
// with `.`/`..` and every symlink resolved as far as the path exists.
std::string resolve_path(const std::string& path, const std::string& cwd, const std::string& home);

// The checkout's identity: "owner/repo" from origin, else "local/<dir>",
// else "" (not a repository).
std::string owner_repo(const Checkout& checkout);

// "feature/x" -> "feature-x".
std::string branch_slug(const std::string& branch);

// The facts `devgraph guard resolve` prints.
struct Placement {
  std::string owner;
  std::string repo;
  std::string delivery;  // "github" with an origin remote, else "local"
  std::optional<std::string> primary_top;
  std::optional<std::string> checkout_kind;  // "primary" | "worktree"
  std::string worktrees_dir;
  std::string develop_home;
  std::optional<std::string> branch;
  std::optional<std::string> branch_slug;
  std::optional<std::string> worktree_path;  // the canonical worktree for `branch`

  Json to_json() const;  // the reference's field names and order
};

// Fails (exit code 2) when `cwd` is not inside a git repository.
Expected<Placement> resolve_placement(const std::string& cwd,
                                      const std::optional<std::string>& branch, const Roots& roots);

using Verdict = std::optional<std::string>;

// Is `path` (relative to `cwd`) the canonical worktree location for the
// repository containing `cwd`? Exemptions do not apply.
Verdict check_worktree(const std::string& path, const std::string& cwd, const Roots& roots);

// May a file at `path` (relative to `cwd`) be created or modified?
Verdict check_write(const std::string& path, const std::string& cwd, const Roots& roots);

// May the shell command line `command` run with working directory `cwd`?
// The command is parsed as a shell would parse it (see guard/shell.h);
// a command that cannot be parsed is denied when it runs in, or names a
// path inside, a primary clone.
Verdict check_bash(const std::string& command, const std::string& cwd, const Roots& roots);

// The Claude Code PreToolUse hook: `payload` is the JSON read from stdin,
// `fallback_cwd` is used when the payload names none. Returns the text to
// print on stdout: empty to allow, a deny decision JSON line otherwise.
// Malformed payloads are allowed.
std::string hook_response(const std::string& payload, const std::string& fallback_cwd,
                          const Roots& roots);

// Runs the built-in checks in a temporary directory; returns the failures.
std::vector<std::string> self_check();

}  // namespace devgraph::guard
