// Turning a recorded command string (state.json `commands.test`) into argv
// without a shell.
//
// Contract: words split on unquoted blanks; '...' keeps everything literal;
// "..." keeps everything but lets a backslash escape " \ $ and `; a
// backslash outside quotes escapes the next character. Anything a shell
// would treat as more than one program invocation (an unquoted | & ; < > (
// ) or ` or $( ) is refused, as is an unterminated quote or an empty
// command: the command comes from repository configuration, and running it
// as argv must never silently mean something other than what a shell user
// would expect.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "util/expected.h"

namespace devgraph {

Expected<std::vector<std::string>> split_command(std::string_view text);

}  // namespace devgraph
