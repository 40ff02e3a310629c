// The environment the driver runs git with.
#pragma once

#include <map>
#include <string>

namespace devgraph::bundle {

// Adds `maintenance.auto=false` through GIT_CONFIG_COUNT/KEY/VALUE (after
// any such entries already in the environment): without it every commit
// the driver makes starts `git maintenance run --auto`, which costs more
// than the commit itself (measured: 130 ms vs 50 ms per commit) and sits on
// the bundle's critical path. The user's own git commands still run the
// maintenance.
std::map<std::string, std::string> driver_git_env();

}  // namespace devgraph::bundle
