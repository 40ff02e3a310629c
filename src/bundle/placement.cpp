#include "bundle/placement.h"

#include <unistd.h>

#include "util/fs.h"

namespace devgraph::bundle {
namespace {

// As the kernel would open it: relative to the working directory, `..`
// after symlinks.
std::string resolved(const std::string& path, const guard::Roots& roots) {
  char buf[4096];
  std::string cwd = ::getcwd(buf, sizeof buf) ? buf : "/";
  return guard::resolve_path(path, cwd, roots.home);
}

std::string primary_top(const std::string& path) {
  guard::Checkout c = guard::probe(path);
  return c.top.empty() ? path : c.top;
}

}  // namespace

guard::Verdict check_bundle_worktree(const std::string& worktree, const guard::Roots& roots) {
  std::string wt = resolved(worktree, roots);
  // The worktree itself: a primary clone is read-only.
  if (guard::check_write(wt, "/", roots))
    return "bundle worktree " + wt +
           " is a primary clone, which is read-only; the bundle needs a linked worktree (" +
           "git worktree add " + roots.worktrees + "/<owner>/<repo>/<branch-slug> -b <branch>)";
  // Its parent: a linked worktree nested in a primary clone's tree changes
  // that clone's working tree with every file it writes.
  std::string parent = dirname_of(wt);
  if (parent != wt && guard::check_write(parent, "/", roots))
    return "bundle worktree " + wt + " lies inside the primary clone " + primary_top(parent) +
           ", which is read-only; bundle worktrees live at " + roots.worktrees +
           "/<owner>/<repo>/<branch-slug>";
  return std::nullopt;
}

guard::Verdict check_write_root(const std::string& what, const std::string& path,
                                const guard::Roots& roots) {
  std::string p = resolved(path, roots);
  if (guard::check_write(p, "/", roots))
    return what + " " + p + " lies inside the primary clone " + primary_top(p) +
           ", which is read-only; put it outside every primary clone";
  return std::nullopt;
}

}  // namespace devgraph::bundle
