#include "doctor/setup.h"

#include <sys/stat.h>
#include <sys/statvfs.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "doctor/tools.h"
#include "util/fs.h"

namespace devgraph::doctor {
namespace {

// "12.3 GiB"
std::string gib(std::uint64_t bytes) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f GiB", static_cast<double>(bytes) / (1u << 30));
  return buf;
}

// The plan changes nothing and every directory it needs is there.
Expected<bool> in_place(const Expected<install::Plan>& plan) {
  if (!plan) return plan.error();
  for (const auto& f : plan->files)
    if (f.changed()) return false;
  for (const auto& d : plan->directories)
    if (!is_directory(d)) return false;
  return true;
}

std::string program_of(install::Tool tool) {
  return std::string(install::tool_name(tool));
}

}  // namespace

GuardFacts gather_guard(const std::optional<guard::Placement>& clone, const guard::Roots& roots) {
  GuardFacts f;
  f.self_check_failures = guard::self_check();
  if (!clone || !clone->primary_top) return f;
  const std::string& top = *clone->primary_top;
  f.primary_top = top;
  f.primary_write = guard::check_write(join_path(top, ".devgraph-doctor-probe"), top, roots);
  auto sample = guard::resolve_placement(top, std::string(kSampleBranch), roots);
  if (!sample) {
    f.worktree_placement = sample.error().message;
  } else {
    f.worktree_path = sample->worktree_path.value_or("");
    f.worktree_placement = guard::check_worktree(f.worktree_path, top, roots);
    f.worktree_write = guard::check_write(join_path(f.worktree_path, "README.md"), top, roots);
  }
  f.develop_home = clone->develop_home;
  f.develop_home_write =
      guard::check_write(join_path(f.develop_home, "runs/state.json"), top, roots);
  return f;
}

std::vector<Finding> check_guard(const GuardFacts& f) {
  std::vector<Finding> out;
  const char* area = "guard";
  if (!f.self_check_failures.empty())
    out.push_back(problem("guard.self_check", area,
                          "self-check: " + std::to_string(f.self_check_failures.size()) +
                              " check(s) failed, the first: " + f.self_check_failures.front(),
                          "report it; `devgraph guard self-check` lists every failure"));
  if (f.primary_top) {
    if (!f.primary_write)
      out.push_back(warning("guard.primary", area,
                            "a write into the primary clone " + *f.primary_top +
                                " is allowed (DEVELOP_GUARD_EXEMPT covers it)",
                            "take the clone out of DEVELOP_GUARD_EXEMPT"));
    if (f.worktree_placement)
      out.push_back(problem(
          "guard.worktree", area,
          "the canonical worktree " + f.worktree_path + " is refused: " + *f.worktree_placement,
          "set DEVELOP_WORKTREES_ROOT (or AI_ROOT) to a directory outside "
          "every git checkout"));
    else if (f.worktree_write)
      out.push_back(
          problem("guard.worktree", area,
                  "a write inside the canonical worktree is refused: " + *f.worktree_write,
                  "set DEVELOP_WORKTREES_ROOT (or AI_ROOT) to a directory outside "
                  "every git checkout"));
    if (f.develop_home_write)
      out.push_back(problem(
          "guard.develop_home", area,
          "runs could not be written under " + f.develop_home + ": " + *f.develop_home_write,
          "set DEVELOP_HOME_ROOT (or AI_ROOT) to a directory outside every "
          "git checkout"));
  }
  if (out.empty()) {
    std::string what = "self-check passes";
    if (f.primary_top)
      what +=
          "; the primary clone is read-only; worktrees go to " + dirname_of(f.worktree_path) + "/";
    out.push_back(ok("guard", area, what));
  }
  return out;
}

InstallFacts gather_install(install::Tool tool, const install::Context& ctx,
                            const std::string& path) {
  InstallFacts f;
  f.tool = tool;
  auto files = install::config_files(tool, ctx);
  if (!files.empty()) f.config = files.front();
  for (const auto& file : files) f.in_use = f.in_use || path_exists(file);
  f.in_use = f.in_use || find_on_path(program_of(tool), path).has_value();
  install::Context plain = ctx;
  plain.hook = false;
  f.grants = in_place(install::plan_install(tool, plain));
  if (tool == install::Tool::claude) {
    install::Context hooked = ctx;
    hooked.hook = true;
    f.hook = in_place(install::plan_install(tool, hooked));
  }
  return f;
}

Finding check_install(const InstallFacts& f) {
  const std::string name = program_of(f.tool);
  const std::string id = "install." + name;
  const char* area = "install";
  const std::string command =
      "devgraph install " + name + (f.tool == install::Tool::claude ? " --hook" : "");
  if (!f.in_use) return ok(id, area, name + ": not set up here (no configuration, no CLI)");
  if (!f.grants)
    return warning(id, area, name + ": " + f.grants.error().message,
                   "fix or move that file, then run: " + command);
  if (!*f.grants)
    return warning(id, area,
                   name + ": devgraph's grants are missing from " + f.config +
                       " (an agent driven by hand asks before each devgraph command)",
                   "run: " + command);
  if (f.hook && (!*f.hook || !**f.hook))
    return warning(id, area,
                   name + ": grants present, but the placement guard's hook is not registered",
                   "run: " + command);
  return ok(id, area,
            name + ": grants present" + (f.hook ? ", guard hook registered" : std::string()));
}

std::vector<DiskFacts> gather_disk(const guard::Roots& roots) {
  std::vector<DiskFacts> out;
  std::vector<dev_t> seen;
  for (const std::string& root : {roots.worktrees, roots.develop_home}) {
    DiskFacts f;
    f.root = root;
    std::string dir = root;
    struct stat st {};
    while (::stat(dir.c_str(), &st) != 0 && dir != "/" && !dir.empty()) dir = dirname_of(dir);
    f.measured = dir;
    if (::stat(dir.c_str(), &st) == 0) {
      bool again = false;
      for (dev_t d : seen) again = again || d == st.st_dev;
      if (again) continue;
      seen.push_back(st.st_dev);
    }
    struct statvfs vfs {};
    if (::statvfs(dir.c_str(), &vfs) == 0)
      f.free_bytes = static_cast<std::uint64_t>(vfs.f_bavail) * vfs.f_frsize;
    else
      f.error = std::strerror(errno);
    out.push_back(std::move(f));
  }
  return out;
}

Finding check_disk(const DiskFacts& f) {
  const char* area = "disk";
  if (!f.free_bytes)
    return warning("disk", area, "cannot measure the free space at " + f.measured + ": " + f.error,
                   "check that " + f.measured + " is readable");
  const std::string where = f.root == f.measured ? f.root : f.root + " (at " + f.measured + ")";
  const std::string fix = "free space there, or set AI_ROOT to a larger disk";
  if (*f.free_bytes < kNoDiskBytes)
    return problem(
        "disk", area,
        gib(*f.free_bytes) + " free for " + where + ": worktrees and test runs will fail", fix);
  if (*f.free_bytes < kLowDiskBytes)
    return warning("disk", area,
                   gib(*f.free_bytes) + " free for " + where + " (under " + gib(kLowDiskBytes) +
                       "): a few bundles' worktrees and builds may fill it",
                   fix);
  return ok("disk", area, gib(*f.free_bytes) + " free for " + where);
}

}  // namespace devgraph::doctor
