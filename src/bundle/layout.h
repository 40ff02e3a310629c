// Every path of a bundle, declared in one place: the bundle's directory in
// the run (<run>/bundles/<bundle>/...) and the plan files on its branch.
// Nothing else in the engine spells a bundle path.
#pragma once

#include <optional>
#include <string>

namespace devgraph::bundle {

struct BundleLayout {
  std::string run_dir;  // absolute
  std::string bundle;
  std::string worktree;  // absolute

  // <run>/bundles/<bundle>
  std::string dir() const { return run_dir + "/bundles/" + bundle; }
  std::string log() const { return dir() + "/run_bundle.log"; }
  // One line per completed persona with its cost, so the sum survives a kill.
  std::string ledger() const { return dir() + "/ledger.jsonl"; }
  // The bundle's specification, written by whoever started the bundle.
  std::string spec() const { return dir() + "/spec.md"; }
  std::string driver_pid() const { return dir() + "/driver.pid"; }
  std::string driver_lock() const { return dir() + "/driver.lock"; }
  // The persona processes alive now (proc/leftovers.h).
  std::string live_children() const { return dir() + "/live-children"; }
  std::string sim_state() const { return dir() + "/sim"; }
  std::string tech_lead_result() const { return dir() + "/tech-lead.result.json"; }
  std::string repair_findings() const { return dir() + "/repair-findings.md"; }
  std::string review_findings() const { return dir() + "/review-findings.json"; }
  std::string whole_diff() const { return dir() + "/whole-branch.diff"; }
  std::string pr_body() const { return dir() + "/pr-body.md"; }
  // Strays kept out of the branch (bundle/quarantine.h): their bytes under
  // files/, the index of what came from where in index.json.
  std::string quarantine_dir() const { return dir() + "/quarantine"; }
  std::string quarantine_index() const { return quarantine_dir() + "/index.json"; }
  // The fix loop of repair cycle `n` (src/fix/): its loops' files, the
  // review it started from, the diagnosis record.
  std::string fix_dir(int n) const { return dir() + "/fix-" + std::to_string(n); }
  // The discuss rounds' records (<round>-discussion.md, written by
  // `devgraph discuss`) and their results (bundle/critique_gate.h).
  std::string discussions() const { return dir() + "/discussions"; }
  std::string discussion_result(const std::string& round) const {
    return discussions() + "/" + round + ".result.json";
  }
  std::string tasks_dir() const { return dir() + "/tasks"; }
  // What context recovery found for the bundle cursor.
  std::string bundle_context() const { return dir() + "/context.md"; }

  std::string task_dir(const std::string& task) const { return tasks_dir() + "/" + task; }
  std::string brief(const std::string& task) const { return task_dir(task) + "/brief.md"; }
  std::string scratch(const std::string& task) const { return task_dir(task) + "/scratch"; }
  std::string task_findings(const std::string& task) const {
    return task_dir(task) + "/findings.md";
  }
  // What context recovery found for a cursor (a task's, or the bundle's).
  std::string context(const std::optional<std::string>& task) const {
    return task ? task_dir(*task) + "/context.md" : bundle_context();
  }
  // A person's answer to the cursor (a task's, or the bundle's) that
  // waited for one (bundle/answer.h).
  std::string answer(const std::optional<std::string>& task) const {
    return (task ? task_dir(*task) : dir()) + "/answer.md";
  }
  std::string result(const std::string& persona, const std::optional<std::string>& task) const {
    return (task ? task_dir(*task) : dir()) + "/" + persona + ".result.json";
  }
  // The CLI's own output of every launch of the persona (agents/runtime.h).
  std::string output(const std::string& persona, const std::optional<std::string>& task) const {
    return (task ? task_dir(*task) : dir()) + "/" + persona + ".output.log";
  }

  // On the branch, relative to the worktree.
  std::string plan_rel() const { return "docs/develop/plans/" + bundle + ".md"; }
  std::string tasks_json_rel() const { return "docs/develop/plans/" + bundle + ".tasks.json"; }
  std::string plan_md() const { return worktree + "/" + plan_rel(); }
  std::string tasks_json() const { return worktree + "/" + tasks_json_rel(); }
};

}  // namespace devgraph::bundle
