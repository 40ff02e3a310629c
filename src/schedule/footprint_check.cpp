// footprint-check: did a task's uncommitted changes stay inside its
// footprint? Reads `git status --porcelain=v1 -z`, whose paths are raw bytes
// (never quoted or escaped), so names with spaces, quotes, newlines or
// non-ASCII characters are classified exactly as git stores them.
#include <algorithm>

#include "schedule/schedule.h"

namespace devgraph::schedule {
std::vector<std::string> git_status_argv(const std::string& worktree) {
  std::vector<std::string> argv = {"git", "-C", worktree};
  argv.insert(argv.end(), std::begin(git::kStatusArgs), std::end(git::kStatusArgs));
  return argv;
}

Expected<std::vector<StatusEntry>> uncommitted_changes(CommandRunner& runner,
                                                       const std::string& worktree) {
  CommandSpec spec;
  spec.argv = git_status_argv(worktree);
  // Status may refresh the index; other writers share this worktree, so
  // never take index.lock for that.
  spec.env["GIT_OPTIONAL_LOCKS"] = "0";
  spec.timeout = std::chrono::minutes(2);
  spec.max_output_bytes = 256 * 1024 * 1024;
  DG_TRY(CommandResult res, runner.run(spec));
  if (!res.ok()) {
    std::string err = res.err;
    while (!err.empty() && (err.back() == '\n' || err.back() == ' ')) err.pop_back();
    if (auto nl = err.find('\n'); nl != std::string::npos) err = err.substr(0, nl);
    if (res.timed_out) err = "timed out";
    return fail("git status --porcelain=v1 -z --untracked-files=all failed in " + worktree + ": " +
                err);
  }
  if (res.output_truncated)
    return fail("git status output in " + worktree + " is larger than devgraph reads");
  return git::parse_porcelain_z(res.out);
}

Expected<FootprintReport> classify_changes(const Plan& plan, const std::string& task,
                                           const std::vector<std::string>& in_flight,
                                           const std::vector<StatusEntry>& changes) {
  const Task* own = plan.find(task);
  if (own == nullptr) return fail("unknown task '" + task + "'");
  std::vector<const Task*> others;
  std::string unknown;
  for (const auto& id : in_flight) {
    const Task* t = plan.find(id);
    if (t == nullptr)
      unknown += (unknown.empty() ? "'" : ", '") + id + "'";
    else if (t != own)
      others.push_back(t);
  }
  if (!unknown.empty()) return fail("unknown in-flight tasks [" + unknown + "]");

  FootprintReport r;
  r.task = task;
  std::unordered_map<std::string, size_t> owner_slot;
  auto classify = [&](const std::string& path) {
    if (own->footprint.contains(path)) {
      r.own.push_back(path);
      r.add_pathspec.push_back(":(literal)" + path);
      return;
    }
    for (const Task* t : others) {
      if (!t->footprint.contains(path)) continue;
      auto [it, fresh] = owner_slot.emplace(t->id, r.other_in_flight.size());
      if (fresh) r.other_in_flight.emplace_back(t->id, std::vector<std::string>{});
      r.other_in_flight[it->second].second.push_back(path);
      return;
    }
    r.outside.push_back(path);
  };
  for (const auto& e : changes) {
    classify(e.path);
    // Both sides of a rename or copy: taking a file away from a path the
    // task does not own is as much a change there as writing to it.
    if (!e.orig_path.empty() && e.orig_path != e.path) classify(e.orig_path);
  }
  r.violation = !r.outside.empty();
  return r;
}

Expected<FootprintReport> footprint_check(const Plan& plan, const std::string& task,
                                          const std::vector<std::string>& in_flight,
                                          const std::string& worktree, CommandRunner& runner) {
  // Unknown ids are reported before git runs.
  DG_CHECK(classify_changes(plan, task, in_flight, {}));
  DG_TRY(auto changes, uncommitted_changes(runner, worktree));
  return classify_changes(plan, task, in_flight, changes);
}

Json FootprintReport::to_json() const {
  auto list = [](const std::vector<std::string>& items) {
    Json out = Json::array();
    for (const auto& s : items) out.push_back(s);
    return out;
  };
  Json out = Json::object();
  out["task"] = task;
  out["own"] = list(own);
  Json others = Json::object();
  for (const auto& [k, v] : other_in_flight) others[k] = list(v);
  out["other_in_flight"] = std::move(others);
  out["outside"] = list(outside);
  out["violation"] = violation;
  out["add_pathspec"] = list(add_pathspec);
  return out;
}

}  // namespace devgraph::schedule
