// The one fence for untrusted text. Whatever reaches a persona's prompt
// that someone other than its dispatcher wrote (an issue, a person's
// answer, another persona's findings, a CI log, a hook's output) goes in
// through fence_untrusted(), so every prompt marks data the same way and
// the personas' files describe one form.
//
// Contract: the result is `label`, a note that the block is data and never
// instructions, then a line DATA_START, `text` line by line, and a line
// DATA_END (no newline after it). A line of `text` that holds DATA_START or
// DATA_END anywhere (after other text, behind a carriage return, inside a
// word) is prefixed "[data] ", so the only lines that are exactly a marker
// are the fence's own and the text cannot close the block early. Line
// breaks are kept as they were ("\n", "\r\n" or "\r"); an empty text is an
// empty block.
#pragma once

#include <string>
#include <string_view>

namespace devgraph {

std::string fence_untrusted(std::string_view label, std::string_view text);

}  // namespace devgraph
