// What a task's commit does about the repository's pre-commit hook
// (git/git.h: Git::pre_commit, ErrorKind::hook), decided from its result
// alone.
//
// Contract: a hook that passed (or none, or hooks off) lets the commit go
// on, and what it rewrote is judged by the footprint check that follows
// (inside the task's footprint: committed; outside: a footprint
// violation). A hook that refused sends the task to its implementer
// (commit_task's hook_rejected route, repair_task's cycles) with a finding
// that names the hook's one-line reason and carries its output, bounded;
// the finding is fenced as data with the task's other findings before any
// prompt. Any other failure (git itself failed) parks the task for a
// person with git's message.
#pragma once

#include <string>

#include "util/expected.h"

namespace devgraph::bundle {

enum class HookAction { commit, repair, block };

struct HookVerdict {
  HookAction action = HookAction::commit;
  std::string finding;  // repair: what the implementer is told to fix
  std::string why;      // block: the reason, one line
};

HookVerdict judge_pre_commit(const Status& hook);

}  // namespace devgraph::bundle
