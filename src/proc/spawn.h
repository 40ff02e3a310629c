// Spawn attributes shared by every child devgraph starts (one-shot commands
// and supervised personas), so the two launch paths cannot drift apart.
#pragma once

#include <spawn.h>

#include <string>
#include <vector>

namespace devgraph {

// Initializes `attr` for a child in its own process group, with an empty
// signal mask and default dispositions for the signals devgraph handles
// itself (PIPE, TERM, INT, HUP, CHLD). The caller destroys it.
void init_child_spawn_attr(posix_spawnattr_t* attr);

// argv as the NULL-terminated array posix_spawn wants; points into `args`.
std::vector<char*> c_argv(const std::vector<std::string>& args);

}  // namespace devgraph
