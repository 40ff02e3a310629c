#include "doctor/leftovers.h"

#include <algorithm>
#include <filesystem>
#include <system_error>

#include "guard/guard.h"
#include "proc/leftovers.h"
#include "store/run_store.h"
#include "util/fs.h"
#include "util/json.h"
#include "util/text.h"

namespace devgraph::doctor {
namespace {

namespace fs = std::filesystem;

constexpr const char* kArea = "leftovers";

std::vector<std::string> directories_in(const std::string& dir) {
  std::vector<std::string> out;
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    std::error_code type_ec;
    if (it->is_directory(type_ec) && !it->is_symlink(type_ec)) out.push_back(it->path().string());
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::optional<Json> read_state(const std::string& run_dir) {
  auto text = read_file_at_most(join_path(run_dir, kStateFile), size_t{64} << 20);
  if (!text) return std::nullopt;
  Json v = Json::parse(*text, nullptr, false);
  if (!v.is_object()) return std::nullopt;
  return v;
}

// Every string value of a "worktree" key, anywhere in `v`.
void worktrees_named(const Json& v, std::vector<std::string>& out) {
  if (v.is_object()) {
    for (auto it = v.begin(); it != v.end(); ++it) {
      if (it.key() == "worktree" && it->is_string()) out.push_back(it->get<std::string>());
      worktrees_named(*it, out);
    }
  } else if (v.is_array()) {
    for (const auto& e : v) worktrees_named(e, out);
  }
}

bool under(const std::string& path, const std::string& dir) {
  return !dir.empty() && path.size() > dir.size() + 1 && path.compare(0, dir.size(), dir) == 0 &&
         path[dir.size()] == '/';
}

}  // namespace

std::vector<RunFacts> gather_runs(const std::string& develop_home) {
  std::vector<RunFacts> out;
  for (const auto& dir : directories_in(join_path(develop_home, "runs"))) {
    auto state = read_state(dir);
    if (!state) continue;
    out.push_back(RunFacts{basename_of(dir), json_str(*state, "status"), json_str(*state, "mode")});
  }
  return out;
}

std::optional<int> pid_in_note(std::string_view note) {
  while (!note.empty() && (note.back() == '\n' || note.back() == ' ')) note.remove_suffix(1);
  if (note.rfind("pid ", 0) != 0 || note.size() == 4 || note.size() > 14) return std::nullopt;
  long long pid = 0;
  for (char c : note.substr(4)) {
    if (c < '0' || c > '9') return std::nullopt;
    pid = pid * 10 + (c - '0');
  }
  if (pid <= 0 || pid > 0x7fffffff) return std::nullopt;
  return static_cast<int>(pid);
}

LockFacts gather_lock(const std::string& develop_home, std::vector<RunFacts> runs) {
  LockFacts f;
  f.path = join_path(develop_home, "orchestrator.lock");
  f.runs = std::move(runs);
  f.exists = path_exists(f.path);
  if (f.exists)
    if (auto note = read_file_at_most(f.path, 256)) f.pid = pid_in_note(*note);
  f.pid_alive = f.pid && process_start_time(*f.pid).has_value();
  return f;
}

Finding check_lock(const LockFacts& f) {
  std::vector<const RunFacts*> running;
  for (const auto& r : f.runs)
    if (r.status == "running") running.push_back(&r);
  if (f.pid && f.pid_alive)
    return ok(
        "lock", kArea,
        "orchestrator.lock: held by pid " + std::to_string(*f.pid) +
            (running.empty() ? std::string() : ", run " + running.front()->id + " in progress"));
  if (running.empty()) return ok("lock", kArea, "no stale lock: no run is left marked running");
  const RunFacts& r = *running.front();
  std::string owner = f.pid ? "names pid " + std::to_string(*f.pid) + ", which is gone"
                            : (f.exists ? "names no owner" : "is missing");
  std::string verb = r.mode == "clean" ? "devgraph clean" : "devgraph run";
  std::string more =
      running.size() > 1 ? " (and " + std::to_string(running.size() - 1) + " more)" : std::string();
  return warning("lock", kArea,
                 "stale lock: " + f.path + " " + owner + ", but run " + r.id + more +
                     " is still marked running (its orchestrator was killed)",
                 "run `" + verb + "` in the repository to resume it; nothing is locked meanwhile");
}

WorktreeFacts gather_worktrees(CommandRunner& runner, const std::string& top,
                               const std::string& canonical_dir, const std::string& develop_home,
                               const std::string& home) {
  WorktreeFacts f;
  f.top = top;
  f.canonical_dir = guard::resolve_path(canonical_dir, "/", home);
  auto list = git::make_repo_queries(runner, top)->worktrees();
  if (!list) {
    f.error = list.error().message;
  } else {
    for (auto e : *list) {
      e.path = guard::resolve_path(e.path, "/", home);
      f.registered.push_back(std::move(e));
    }
  }
  for (const auto& dir : directories_in(join_path(develop_home, "runs"))) {
    auto state = read_state(dir);
    if (!state) continue;
    std::vector<std::string> named;
    worktrees_named(*state, named);
    for (const auto& p : named)
      if (!p.empty()) f.recorded.insert(guard::resolve_path(p, "/", home));
  }
  if (!f.error)
    for (const auto& dir : directories_in(f.canonical_dir)) {
      std::string resolved = guard::resolve_path(dir, "/", home);
      bool listed = std::any_of(f.registered.begin(), f.registered.end(),
                                [&](const git::WorktreeEntry& e) { return e.path == resolved; });
      // A worktree of another clone of the same repository shares the
      // directory: only what is no checkout at all is a stray.
      guard::Checkout c = guard::probe(resolved);
      bool checkout = c.kind == guard::CheckoutKind::kWorktree && c.top == resolved;
      if (!listed && !checkout) f.strays.push_back(resolved);
    }
  return f;
}

std::vector<Finding> check_worktrees(const WorktreeFacts& f) {
  std::vector<Finding> out;
  if (f.error) {
    out.push_back(warning("worktrees", kArea, "cannot list the worktrees: " + *f.error,
                          "run: git -C " + f.top + " worktree list"));
    return out;
  }
  for (const auto& e : f.registered) {
    const std::string name = e.path + (e.branch.empty() ? "" : " (" + e.branch + ")");
    if (e.prunable) {
      std::string message = "orphaned worktree " + name + ": registered, but its directory is gone";
      std::string fix = "run: git -C " + f.top + " worktree prune";
      if (under(e.path, f.canonical_dir))
        out.push_back(problem("worktree.prunable", kArea,
                              message + "; git refuses a new worktree for it there", fix));
      else
        out.push_back(warning("worktree.prunable", kArea, message, fix));
    } else if (e.branch.rfind("develop/", 0) == 0 && under(e.path, f.canonical_dir) &&
               !f.recorded.count(e.path)) {
      out.push_back(warning(
          "worktree.unowned", kArea,
          "orphaned worktree " + name + ": no run of this repository names it",
          "`devgraph clean` sorts its branch, or: git -C " + f.top + " worktree remove " + e.path));
    }
  }
  for (const auto& dir : f.strays)
    out.push_back(warning("worktree.stray", kArea,
                          dir + " is in the worktrees directory but is no worktree git lists",
                          "look at what it holds, then remove it by hand"));
  if (out.empty())
    out.push_back(ok("worktrees", kArea,
                     std::to_string(f.registered.size()) + " linked worktree(s), none orphaned"));
  return out;
}

std::vector<Finding> check_waiting(const Expected<std::vector<inbox::Item>>& items) {
  std::vector<Finding> out;
  if (!items) {
    out.push_back(warning("waiting", kArea, "cannot read the runs: " + items.error().message,
                          "run: devgraph inbox"));
    return out;
  }
  if (items->empty()) {
    out.push_back(ok("waiting", kArea, "no run waits for a person"));
    return out;
  }
  size_t shown = 0;
  for (const auto& i : *items) {
    if (shown++ == kMaxWaiting) break;
    out.push_back(
        warning("waiting", kArea,
                i.key + " (run " + i.run_id + ") waits for a person: " + one_line(i.reason, 200),
                "answer it: devgraph answer " + i.key + " --run " + i.run_id +
                    " (--text TEXT | --approve | --reject)"));
  }
  if (items->size() > kMaxWaiting)
    out.push_back(
        warning("waiting", kArea,
                std::to_string(items->size() - kMaxWaiting) + " more item(s) wait for a person",
                "run: devgraph inbox"));
  return out;
}

}  // namespace devgraph::doctor
