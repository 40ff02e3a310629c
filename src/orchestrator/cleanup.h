// cleanup_merged's safe removal of a delivered bundle's worktree and branch
// (GRAPH.yaml `cleanup_merged`): only a worktree at its canonical path, on
// a devgraph branch whose work is merged, with nothing uncommitted,
// untracked or unpushed, is removed, and only the way git itself refuses
// to lose work (`git worktree remove` without --force, then `git branch
// -d`, never -D). Everything else is preserved and reported with why.
//
// Contract:
// - keep_reason() is pure: the first reason in Keep's order that applies.
// - worktree_facts() only reads (git status, rev-list, merge-base); a git
//   that fails is an error naming the command, never a guess that the
//   worktree is clean.
// - remove_merged() re-reads the facts just before it removes anything, so
//   a worktree that changed since it was inspected is preserved; it never
//   removes a branch whose worktree it could not remove.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "proc/command.h"
#include "util/expected.h"

namespace devgraph::orchestrator {

struct WorktreeFacts {
  std::string path;        // the worktree, as given
  std::string branch;      // checked out there ("develop/b1"); "" when detached
  bool canonical = false;  // path is the canonical worktree of branch
  bool merged = false;     // every commit of branch is in the default branch, or its PR merged
  bool dirty = false;      // tracked files changed or staged
  bool untracked = false;  // files git neither tracks nor ignores
  bool unpushed = false;   // commits the branch's copy on the remote lacks
};

// Why a worktree stays, in the order they are checked.
enum class Keep {
  none,           // it may go
  not_devgraph,   // not on a develop/ branch
  not_canonical,  // not at the canonical path: someone else's checkout
  not_merged,
  dirty,
  untracked,
  unpushed,
};
std::string_view keep_reason_text(Keep keep);
Keep keep_reason(const WorktreeFacts& facts);

struct FactsRequest {
  std::string worktree;        // an existing worktree directory
  std::string canonical_path;  // where the guard says the branch's worktree belongs
  std::string default_branch;  // "main"
  // github delivery: the PR is merged (a squash merge leaves the branch's
  // commits out of the default branch) and the remote holds the branch.
  bool pr_merged = false;
  // The merged PR's head commit: a worktree at it, or behind it, holds
  // nothing the PR did not. Without one, the remote's copy of the branch
  // is compared instead.
  std::string pr_head;
  std::string remote;  // "origin" for github delivery; "" for local
};
Expected<WorktreeFacts> worktree_facts(CommandRunner& runner, const FactsRequest& request);

struct CleanupResult {
  bool removed_worktree = false;
  bool removed_branch = false;
  Keep kept = Keep::none;  // why the worktree stayed (none when removed)
  std::string note;        // one line: what git said when it refused
};
// Removes the worktree and then its branch when keep_reason() allows,
// running git in `repo` (the primary checkout).
Expected<CleanupResult> remove_merged(CommandRunner& runner, const std::string& repo,
                                      const FactsRequest& request);

}  // namespace devgraph::orchestrator
