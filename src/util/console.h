// The process's standard streams for code that writes with operator<<,
// without <iostream>.
//
// Including <iostream> anywhere puts an initializer before main that builds
// every standard stream and locale facet, and a short devgraph command
// (a checkpoint, a guard hook) paid for it on every run although most of
// them print one line. out() and err() are built on first use instead and
// write through C stdio, so their output keeps its order with printf and
// fprintf: the same contract as std::cout and std::cerr synchronized with
// stdio (the default).
#pragma once

#include <optional>
#include <ostream>
#include <string>
#include <string_view>

namespace devgraph {

std::ostream& out();  // standard output
std::ostream& err();  // standard error

// Writes `text` to standard output through stdio, in order with out() and
// printf. For a command that prints one line: the first use of out() builds
// a locale, about a tenth of a short command's own time.
void write_out(std::string_view text);

// One line of standard input without its newline; nullopt at end of input.
std::optional<std::string> read_stdin_line();

}  // namespace devgraph
