// Where devgraph's assets live: GRAPH.yaml, contracts/, agents/,
// templates/. Every verb resolves the skill directory the same way.
//
// Order: the --skill flag, then $DEVGRAPH_SKILL, then the installed copy
// next to the binary (<prefix>/share/devgraph), then the source tree the
// binary was built from. The first candidate that holds GRAPH.yaml wins; a
// flag or variable that names a directory without GRAPH.yaml is an error
// rather than a silent fallback.
#pragma once

#include <optional>
#include <string>

#include "util/expected.h"

namespace devgraph {

Expected<std::string> locate_skill(const std::optional<std::string>& flag);

// The running executable's absolute path (from /proc/self/exe).
std::string self_executable();

}  // namespace devgraph
