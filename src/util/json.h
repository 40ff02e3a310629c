// JSON as devgraph stores it.
//
// Json keeps object keys in insertion order, so a state.json written by
// devgraph lists its keys in the same order as one written by the reference
// runtime, and a round trip through devgraph leaves a file's key order alone.
//
// dump_py() serializes exactly like Python's json.dumps with its defaults
// (ensure_ascii, ", " and ": " separators; with indent, "," at line ends):
// files and printed output stay byte-compatible with the reference.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "util/expected.h"

namespace devgraph {

using Json = nlohmann::ordered_json;

// indent < 0: one line. indent >= 0: pretty-printed with that many spaces.
std::string dump_py(const Json& value, int indent = -1);

// dump_py() of `value` appended to `out` as if it stood `depth` levels deep
// in an indented document: nested lines are indented by indent*(depth+1).
// For writers that splice values into text they lay out themselves.
void append_py(std::string& out, const Json& value, int indent, int depth);

// Python's repr() of a value ('text', True, None, [1, 'a'], {'k': 1}), as
// the reference quotes values in its messages. Strings take single quotes
// unless they hold a single quote and no double quote; ASCII control
// characters are escaped, other characters are kept as they are.
std::string py_repr(const Json& value);
std::string py_repr(std::string_view text);
inline std::string py_repr(const std::string& text) {
  return py_repr(std::string_view(text));
}
inline std::string py_repr(const char* text) {
  return py_repr(std::string_view(text));
}
// Python's str(): a string as it is, anything else as py_repr(), as the
// reference's f-strings print values.
std::string py_str(const Json& value);

// Parses `text`; on failure the error names `what` (a file or a flag) and
// says where the text is broken. A duplicate key keeps its first position
// and its last value, as Python's json does. An integer outside the 64-bit
// range is refused rather than rounded to a double.
Expected<Json> parse_json(std::string_view text, std::string_view what);

// Reads and parses a JSON file.
Expected<Json> load_json_file(const std::string& path);

// Field readers for loosely shaped JSON (persona results, state records):
// the string at `key`, else `fallback`; the strings of the array at `key`
// (other items skipped), else none.
std::string json_str(const Json& object, const char* key, const std::string& fallback = "");
std::vector<std::string> json_str_list(const Json& object, const char* key);

}  // namespace devgraph
