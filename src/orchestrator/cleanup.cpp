#include "orchestrator/cleanup.h"

#include "git/git.h"
#include "util/fs.h"

namespace devgraph::orchestrator {
namespace {

// Runs git in `dir`; a git that ran and failed is an error quoting it.
Expected<CommandResult> git(CommandRunner& runner, const std::string& dir,
                            std::vector<std::string> args) {
  return git::run_git(runner, dir, args);
}

std::string last_line(const std::string& text) {
  std::string t = text;
  while (!t.empty() && (t.back() == '\n' || t.back() == '\r')) t.pop_back();
  size_t nl = t.rfind('\n');
  return nl == std::string::npos ? t : t.substr(nl + 1);
}

Error failed(const std::vector<std::string>& args, const CommandResult& r) {
  return fail("git " + args.front() + " failed: " + last_line(r.err.empty() ? r.out : r.err));
}

Expected<std::string> git_out(CommandRunner& runner, const std::string& dir,
                              std::vector<std::string> args) {
  DG_TRY(CommandResult r, git(runner, dir, args));
  if (!r.ok()) return failed(args, r);
  return r.out;
}

}  // namespace

std::string_view keep_reason_text(Keep keep) {
  switch (keep) {
    case Keep::none:
      return "may be removed";
    case Keep::not_devgraph:
      return "not on a develop/ branch";
    case Keep::not_canonical:
      return "not at the canonical worktree path";
    case Keep::not_merged:
      return "its branch is not merged";
    case Keep::dirty:
      return "uncommitted changes";
    case Keep::untracked:
      return "untracked files";
    case Keep::unpushed:
      return "commits the remote does not have";
  }
  return "kept";
}

Keep keep_reason(const WorktreeFacts& f) {
  if (f.branch.rfind("develop/", 0) != 0) return Keep::not_devgraph;
  if (!f.canonical) return Keep::not_canonical;
  if (!f.merged) return Keep::not_merged;
  if (f.dirty) return Keep::dirty;
  if (f.untracked) return Keep::untracked;
  if (f.unpushed) return Keep::unpushed;
  return Keep::none;
}

Expected<WorktreeFacts> worktree_facts(CommandRunner& runner, const FactsRequest& req) {
  WorktreeFacts f;
  f.path = req.worktree;
  if (!is_directory(req.worktree)) return fail("worktree " + req.worktree + " is not a directory");
  f.canonical = !req.canonical_path.empty() &&
                absolute_path(req.worktree) == absolute_path(req.canonical_path);
  DG_TRY(CommandResult head, git(runner, req.worktree, {"symbolic-ref", "-q", "--short", "HEAD"}));
  if (head.exit_code == 0) f.branch = last_line(head.out);
  if (f.branch.empty()) return f;  // detached: not devgraph's to remove

  // Untracked files are listed one by one; ignored ones are not.
  DG_TRY(std::string status, git_out(runner, req.worktree,
                                     {"status", "--porcelain=v1", "-z", "--untracked-files=all"}));
  for (size_t at = 0; at < status.size();) {
    size_t end = status.find('\0', at);
    if (end == std::string::npos) end = status.size();
    std::string_view entry(status.data() + at, end - at);
    if (entry.size() >= 2) (entry.substr(0, 2) == "??" ? f.untracked : f.dirty) = true;
    // A rename's second path follows as its own field.
    if (entry.size() >= 2 && (entry[0] == 'R' || entry[0] == 'C')) end = status.find('\0', end + 1);
    at = end == std::string::npos ? status.size() : end + 1;
  }

  DG_TRY(CommandResult anc,
         git(runner, req.worktree, {"merge-base", "--is-ancestor", "HEAD", req.default_branch}));
  if (anc.exit_code != 0 && anc.exit_code != 1) return failed({"merge-base"}, anc);
  f.merged = anc.exit_code == 0 || req.pr_merged;

  if (!req.pr_head.empty()) {
    DG_TRY(CommandResult in_pr,
           git(runner, req.worktree, {"merge-base", "--is-ancestor", "HEAD", req.pr_head}));
    if (in_pr.exit_code != 0 && in_pr.exit_code != 1) return failed({"merge-base"}, in_pr);
    f.unpushed = in_pr.exit_code != 0;
  } else if (!req.remote.empty()) {
    // Commits of HEAD the remote's copy of the branch lacks; a branch the
    // remote never had counts as unpushed unless its work is in the
    // default branch.
    std::string remote_ref = "refs/remotes/" + req.remote + "/" + f.branch;
    DG_TRY(CommandResult has,
           git(runner, req.worktree, {"rev-parse", "-q", "--verify", remote_ref}));
    if (has.exit_code == 0) {
      DG_TRY(std::string ahead,
             git_out(runner, req.worktree, {"rev-list", "--count", remote_ref + "..HEAD"}));
      f.unpushed = last_line(ahead) != "0";
    } else {
      f.unpushed = anc.exit_code != 0;
    }
  }
  return f;
}

Expected<CleanupResult> remove_merged(CommandRunner& runner, const std::string& repo,
                                      const FactsRequest& req) {
  CleanupResult out;
  DG_TRY(WorktreeFacts f, worktree_facts(runner, req));
  out.kept = keep_reason(f);
  if (out.kept != Keep::none) return out;
  // Without --force git refuses a worktree with changes or untracked files
  // that appeared since the facts were read.
  DG_TRY(CommandResult rm, git(runner, repo, {"worktree", "remove", req.worktree}));
  if (!rm.ok()) {
    out.kept = Keep::dirty;
    out.note = "git worktree remove refused: " + last_line(rm.err);
    return out;
  }
  out.removed_worktree = true;
  // -d, never -D: git refuses a branch whose commits are not merged into
  // HEAD or its upstream (a squash-merged PR's branch stays then).
  DG_TRY(CommandResult br, git(runner, repo, {"branch", "-d", f.branch}));
  if (br.ok())
    out.removed_branch = true;
  else
    out.note = "git branch -d refused: " + last_line(br.err);
  return out;
}

}  // namespace devgraph::orchestrator
