// The git operations the bundle driver needs, behind one small interface.
//
// Contract: every operation runs `git` as argv (never a shell) through a
// CommandRunner in one repository directory (a worktree). A git that ran and
// failed is an Error whose one-line message names the subcommand and quotes
// git's last line of stderr. Paths handed to add() are always given after
// "--", so a pathspec is never read as an option; nothing here ever stages
// with -A or ".".
//
// Hooks: with GitOptions::run_hooks (the default) a commit runs the
// repository's own hooks as `git commit` would, each as a child of its own
// (`git hook run`, argv, GitOptions::hook_timeout, output bounded):
// pre-commit on an index of HEAD plus the commit's paths (what `git commit
// -- <pathspec>` shows it), then commit-msg on the message, and only then
// `git commit --no-verify`: each hook runs once, a refusal is known to be
// the hook's, and what a pre-commit hook rewrote in the working tree is
// what the commit takes.
// prepare-commit-msg and post-commit run inside `git commit` as always. A
// hook that exits non-zero or times out is an Error of kind
// ErrorKind::hook whose message names the hook and whose `output` is the
// tail of what it printed (at most kHookOutputMax bytes); nothing is
// committed. A git too old for `git hook run` (before 2.36) is a refused
// error saying so, never taken for a refusing hook. Without run_hooks no
// hook of either kind runs.
//
// Exactly-once support: commit() writes trailers ("Key: value" lines in the
// last paragraph of the message) and find_trailer() finds the commits that
// carry one, so a driver killed between "commit" and "record the commit" can
// ask git whether the commit already exists instead of making it twice.
#pragma once

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "git/status.h"
#include "proc/command.h"
#include "util/expected.h"

namespace devgraph::git {

struct CommitRequest {
  std::string subject;
  std::string body;                                           // may be empty
  std::vector<std::pair<std::string, std::string>> trailers;  // in order
};

// How a Git object commits (make_git). run_hooks: GRAPH.yaml
// headless.run_git_hooks.
struct GitOptions {
  bool run_hooks = true;
  std::chrono::milliseconds hook_timeout{std::chrono::minutes(10)};
};

// The most of a refusing hook's output an Error carries (its tail).
inline constexpr size_t kHookOutputMax = 4000;

struct TrailerHit {
  std::string commit;  // full hash
  std::string value;   // the trailer's value on that commit
};

class Git {
 public:
  virtual ~Git() = default;

  // The repository directory every call runs in.
  virtual const std::string& dir() const = 0;
  // The full hash `rev` names.
  virtual Expected<std::string> rev_parse(const std::string& rev) = 0;
  // Every changed and untracked file (untracked files listed one by one).
  virtual Expected<std::vector<StatusEntry>> status() = 0;
  // `git add -- <pathspec...>`. An empty pathspec is an error.
  virtual Status add(const std::vector<std::string>& pathspec) = 0;
  // Paths staged in the index relative to HEAD; with a pathspec, only the
  // staged paths it matches.
  virtual Expected<std::vector<std::string>> staged(
      const std::vector<std::string>& pathspec = {}) = 0;
  // Whether commits run the repository's hooks (GitOptions::run_hooks).
  virtual bool runs_hooks() const = 0;
  // Runs the repository's pre-commit hook (`git hook run --ignore-missing`)
  // on the index `git commit -- <pathspec>` would commit: HEAD plus those
  // paths, in an index of its own (the real index is left as it is; an
  // empty pathspec: the real index). Ok when it passed, when there is none
  // or when hooks are off; an ErrorKind::hook error with its output when it
  // refused or timed out. What it rewrote in the working tree stays there.
  virtual Status pre_commit(const std::vector<std::string>& pathspec) = 0;
  // Commits what is staged; returns the new HEAD. With hooks on it runs
  // pre-commit (unless `pre_commit_done`: the caller ran it itself through
  // run_hook, to judge what it rewrote) and commit-msg first; a refusal is
  // an ErrorKind::hook error and nothing is committed. Fails when nothing is
  // staged. With a pathspec only those paths are committed (`git commit --
  // <pathspec>`): whatever else sits in the index (a persona may have staged
  // another task's files) stays staged and out of this commit.
  virtual Expected<std::string> commit(const CommitRequest& request,
                                       const std::vector<std::string>& pathspec = {},
                                       bool pre_commit_done = false) = 0;
  // Commits reachable from HEAD (and, when `since` is set, not from `since`)
  // that carry trailer `key`; newest first.
  virtual Expected<std::vector<TrailerHit>> find_trailer(const std::string& key,
                                                         const std::string& since = "") = 0;
  // `git worktree add -b <branch> <path> <base>`; when the branch already
  // exists it is checked out as is.
  virtual Status worktree_add(const std::string& path, const std::string& branch,
                              const std::string& base) = 0;
  // `git diff <range>`, e.g. "main...HEAD".
  virtual Expected<std::string> diff(const std::string& range) = 0;
  // `git push -u <remote> <branch>`.
  virtual Status push(const std::string& remote, const std::string& branch) = 0;
  // The commit `branch` points at on `remote` (ls-remote), or nullopt when
  // the remote has no such branch.
  virtual Expected<std::optional<std::string>> remote_head(const std::string& remote,
                                                           const std::string& branch) = 0;
  // Subject lines and hashes of base..HEAD, oldest first ("<hash> <subject>").
  virtual Expected<std::vector<std::string>> log_oneline(const std::string& base) = 0;
};

// Commits exactly `pathspec` (`git add --` then `git commit --` by that
// pathspec, never the whole index): whatever else is staged stays staged
// and out of the commit. Returns the new HEAD, or "" when there is nothing
// to commit (an empty pathspec, or paths whose change was undone before
// the add). `on_step` is called with "commit" right before `git commit`
// and "committed" right after it (the crash points of an exactly-once
// commit); it may be empty. A refusing hook is the commit's ErrorKind::hook
// error, passed on as it is.
Expected<std::string> commit_paths(Git& git, const std::vector<std::string>& pathspec,
                                   const CommitRequest& request,
                                   const std::function<void(const char*)>& on_step = {},
                                   bool pre_commit_done = false);

// The real implementation: runs git through `runner` in `dir`. `env` is
// added to every git invocation (e.g. a committer identity).
std::unique_ptr<Git> make_git(CommandRunner& runner, std::string dir,
                              std::map<std::string, std::string> env = {},
                              GitOptions options = {});

// `git -C dir ARGS` as argv through `runner`, for the queries the Git
// interface does not type (an exit code that is an answer, as
// `merge-base --is-ancestor` gives; for-each-ref; worktree remove). No
// optional locks, no prompt; with `stop_on_signal` a stop signal ends it
// (CommandSpec::stop_on_signal). The result is raw: a git that ran and
// refused is a result, not an error.
Expected<CommandResult> run_git(CommandRunner& runner, const std::string& dir,
                                const std::vector<std::string>& args,
                                std::chrono::milliseconds timeout = std::chrono::minutes(2),
                                bool stop_on_signal = false);

// The commit HEAD points at in the worktree `dir`, read from the
// repository's files instead of a `git rev-parse` process (a process costs
// milliseconds, and the driver asks after every commit): `.git` as a
// directory or a linked worktree's `gitdir:` file, HEAD as a symbolic or
// detached ref, loose refs and packed-refs. nullopt whenever anything is
// unusual (GIT_DIR or GIT_COMMON_DIR in the environment, a reftable
// repository, an unborn branch, a malformed file); then ask git.
std::optional<std::string> head_from_files(const std::string& dir);

// The message `commit()` writes for a request: subject, blank line, body,
// blank line, "Key: value" trailers.
std::string format_commit_message(const CommitRequest& request);

}  // namespace devgraph::git
