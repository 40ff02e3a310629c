// The texts a debug session sends its personas, rendered from the editable
// templates skill/templates/debug-dispatch.md and specialist-dispatch.md.
//
// Contract: the debugger is told where things are (the debug file's path,
// the worktree, the branch), the goal, the mode and devgraph's directive;
// never the debug file's text. Whatever a person or a persona wrote (the
// recorded next action, the root cause, the fix direction) goes in through
// fence_untrusted() (util/untrusted.h) only. Rendering is pure apart from reading the template.
#pragma once

#include <string>

#include "debug/debug_file.h"
#include "util/expected.h"

namespace devgraph::debug {

Expected<std::string> render_debug_dispatch(const std::string& skill_dir, const Paths& paths,
                                            const DebugFile& file);
Expected<std::string> render_specialist_dispatch(const std::string& skill_dir, const Paths& paths,
                                                 const DebugFile& file);

}  // namespace devgraph::debug
