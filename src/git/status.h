// The one reader of `git status --porcelain=v1 -z`, whose paths are raw
// bytes (never quoted or escaped), so names with spaces, quotes, newlines
// or non-ASCII characters come through exactly as git stores them. Used by
// git::Git::status() and by the footprint check.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "util/expected.h"

namespace devgraph::git {

// One changed or untracked path: the two status letters, the path (the
// new name of a rename or copy) and, for a rename or copy, the old name.
struct StatusEntry {
  char index = ' ';
  char worktree = ' ';
  std::string path;
  std::string orig_path;  // empty unless renamed or copied
  bool untracked() const { return index == '?'; }
};

// The status arguments after `git`: porcelain v1, NUL-separated, every
// untracked file listed one by one.
inline constexpr const char* kStatusArgs[] = {"status", "--porcelain=v1", "-z",
                                              "--untracked-files=all"};

// A truncated or malformed output (no NUL after a record, a record too
// short, a rename without its old name) is an error naming the entry.
Expected<std::vector<StatusEntry>> parse_porcelain_z(std::string_view out);

}  // namespace devgraph::git
