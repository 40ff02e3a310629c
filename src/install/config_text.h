// Just enough understanding of the agent CLIs' text formats to merge into
// them without rewriting what the user wrote: a TOML statement scanner (for
// Codex's config.toml) and a structural check of Starlark rule files (for
// Codex's execpolicy rules). Neither is a full parser; both refuse, with the
// line number, text whose structure they cannot follow, so a merge never
// guesses.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "util/expected.h"

namespace devgraph::install {

struct TomlStatement {
  enum class Kind { table, array_table, key_value };
  Kind kind = Kind::key_value;
  std::string table;  // the table this statement belongs to ("" = top level)
  std::string key;    // key_value: the key, dotted parts joined by "."; table: its name
  size_t begin = 0;   // offset of the statement's first byte
  size_t value_begin = 0, value_end = 0;  // key_value: the value's bytes
  size_t end = 0;                         // offset just past the statement's line (after '\n')
  int line = 0;                           // 1-based
};

// Scans a TOML document into its top-level statements. Fails naming `origin`
// and the line when the structure does not scan (an unterminated string or
// bracket, a line that is neither a table header nor `key = value`).
Expected<std::vector<TomlStatement>> scan_toml(std::string_view text, std::string_view origin);

struct TomlStringArray {
  std::vector<std::string> values;
  // Where a new element goes and whether it needs a leading separator.
  size_t insert_at = 0;
  bool needs_comma = false;     // true: prefix the insertion with ", "
  bool trailing_comma = false;  // the last element is followed by a comma
};

// Parses `value` (the bytes of a TOML value) as an array of strings.
// Offsets in the result are relative to `value`.
Expected<TomlStringArray> parse_toml_string_array(std::string_view value, std::string_view what);

// A TOML basic string literal for `s`.
std::string toml_quote(std::string_view s);

// Checks that Starlark text has closed strings and balanced brackets.
Status check_starlark(std::string_view text, std::string_view origin);

}  // namespace devgraph::install
