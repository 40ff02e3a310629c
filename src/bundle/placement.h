// Placement checks of the bundle driver. Before the driver writes anything
// (driver.pid, the bundle directory, a persona launch), the bundle worktree
// and every directory it writes under are put to the placement guard
// (src/guard), so a run never writes into a primary clone.
//
// Contracts:
// - A check returns nullopt to allow, or a one-line reason that names the
//   path and the primary clone; it never writes and never throws.
// - Roots listed in DEVELOP_GUARD_EXEMPT are honoured, as the guard does.
// - Canonical placement (<worktrees>/<owner>/<repo>/<slug>) is the guard's
//   `check-worktree` rule for creating a worktree; a driver handed an
//   existing worktree elsewhere runs, and only a primary clone, or a tree
//   inside one, is refused.
#pragma once

#include <string>

#include "guard/guard.h"

namespace devgraph::bundle {

// The bundle worktree must be a linked worktree, not a primary clone, and
// must not lie inside a primary clone's working tree.
guard::Verdict check_bundle_worktree(const std::string& worktree, const guard::Roots& roots);

// A directory the driver creates or writes under (`what` names it in the
// reason: "run directory", ...) must not lie inside a primary clone.
guard::Verdict check_write_root(const std::string& what, const std::string& path,
                                const guard::Roots& roots);

}  // namespace devgraph::bundle
