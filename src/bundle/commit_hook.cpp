#include "bundle/commit_hook.h"

#include "git/git.h"
#include "util/text.h"

namespace devgraph::bundle {

HookVerdict judge_pre_commit(const Status& hook) {
  if (hook) return {};
  const Error& e = hook.error();
  if (e.kind != ErrorKind::hook) return {HookAction::block, "", e.message};
  std::string finding =
      "The repository's pre-commit hook refused the commit of this task (" + e.message +
      "). Change the task's files so the hook passes; devgraph runs it again at the commit.";
  std::string output = clip_tail(e.output, git::kHookOutputMax);
  if (!output.empty()) finding += "\nThe hook's output:\n" + output;
  return {HookAction::repair, std::move(finding), ""};
}

}  // namespace devgraph::bundle
