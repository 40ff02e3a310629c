// Pieces shared by the guard's source files; not part of its interface.
#pragma once

#include <optional>
#include <string>

#include "guard/guard.h"

namespace devgraph::guard::detail {

// probe() for a directory that is already resolved (no symlinks).
Checkout probe_resolved(const std::string& dir);

// The deepest existing ancestor of an absolute path (the path itself when
// it exists).
std::string nearest_existing(const std::string& path);

bool is_exempt(const std::string& top, const Roots& roots);

// The non-exempt primary clone containing the resolved absolute `path`.
std::optional<Checkout> primary_containing(const std::string& path, const Roots& roots);

// "the canonical worktree command" hint for a repository.
std::string suggest_worktree(const Checkout& checkout, const Roots& roots);

// One-line denial for a write (`subject` describes what is written).
std::string deny_write(const std::string& subject, const Checkout& primary, const Roots& roots);

// Why `resolved_target` is not a canonical worktree path for `checkout`'s
// repository, or nullopt when it is.
Verdict worktree_target_reason(const std::string& resolved_target, const Checkout& checkout,
                               const Roots& roots);

// `~` and `~user` for the analysis: the home directory of `user` ("" is
// the current user), or nullopt when unknown.
std::optional<std::string> home_of(const std::string& user, const Roots& roots);

}  // namespace devgraph::guard::detail
