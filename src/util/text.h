// Small string helpers shared across modules.
#pragma once

#include <string>
#include <vector>

namespace devgraph {

// The items with `sep` between them.
std::string join(const std::vector<std::string>& items, const std::string& sep);
// The first `n` bytes of `s` (all of it when shorter).
std::string clip(const std::string& s, size_t n);
// The last `n` bytes of `s`.
std::string clip_tail(const std::string& s, size_t n);
// `path` is `tail`, or ends with "/" + `tail` (a persona may name a file
// relative to the worktree or by an absolute path inside it).
bool path_ends_with(const std::string& path, const std::string& tail);

// "a, b,,c" -> {"a", "b", "c"}: the comma-separated items of a flag's
// value, blanks dropped, empty items skipped.
std::vector<std::string> split_list(const std::string& text);

// The last line of `text` with trailing blanks and newlines dropped (a
// command's stderr quoted in a one-line error).
std::string last_line(std::string_view text);

// `text` for one line of a record, an issue or a message: control
// characters (newlines, tabs) become spaces; longer than `max` bytes, it
// keeps a valid UTF-8 prefix of `max` (clip) and "...".
std::string one_line(std::string_view text, size_t max = std::string::npos);

// `text` trimmed, each run of ASCII whitespace one space: free text as one
// tidy line.
std::string squeeze_spaces(std::string_view text);

// `text` with a newline and `indent` spaces put before each word that would
// end past column `width`; the text starts at column `first_column` (the
// caller wrote what comes before it). Words are split at single spaces.
std::string wrap_words(std::string_view text, size_t indent, size_t first_column, size_t width);

}  // namespace devgraph
