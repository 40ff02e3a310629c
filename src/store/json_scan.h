// Finding where a JSON object or array ends without parsing it.
//
// DeferredState (deferred_state.h) indexes a state file's cursor records by
// skipping over each record's text; at 1,000 tasks that is 370 KB per
// command, and skipping it byte by byte cost more than everything else a
// `checkpoint move` does. skip_json_container() looks at 16 bytes at a
// time (SSE2, part of every x86-64 CPU) and only stops at the bytes that
// can matter: quotes, backslashes and brackets.
//
// Contract, for every function here: `i` indexes a '{' or '['. The result is
// the index just past the bracket that closes it, or npos when the text
// ends first or a closing bracket does not match the open one. Inside
// strings (a backslash escapes the next byte) brackets do not count. Other
// bytes are not checked: the caller parses whatever it uses. The two
// versions of each function return the same value (and list the same
// children) for every input; the scalar one is the portable definition and
// the fallback on other CPUs.
#pragma once

#include <cstddef>
#include <string_view>
#include <vector>

namespace devgraph {

size_t skip_json_container(std::string_view text, size_t i);
size_t skip_json_container_scalar(std::string_view text, size_t i);

// [begin, end) of a container's text, brackets included.
struct JsonSpan {
  size_t begin = 0;
  size_t end = 0;
  bool operator==(const JsonSpan&) const = default;
};
// skip_json_container() that also appends to `children` the span of every
// object and array directly inside the scanned one, in order: one pass over
// a map of records finds every record's value. Scalars inside are not
// listed. On npos, `children` holds what was found before the error.
size_t scan_json_children(std::string_view text, size_t i, std::vector<JsonSpan>& children);
size_t scan_json_children_scalar(std::string_view text, size_t i, std::vector<JsonSpan>& children);

}  // namespace devgraph
