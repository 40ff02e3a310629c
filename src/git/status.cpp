#include "git/status.h"

namespace devgraph::git {
namespace {

bool is_rename_or_copy(char c) {
  return c == 'R' || c == 'C';
}

}  // namespace

Expected<std::vector<StatusEntry>> parse_porcelain_z(std::string_view out) {
  std::vector<StatusEntry> entries;
  size_t pos = 0;
  auto next_field = [&](std::string_view& field) {
    size_t end = out.find('\0', pos);
    if (end == std::string_view::npos) return false;
    field = out.substr(pos, end - pos);
    pos = end + 1;
    return true;
  };
  while (pos < out.size()) {
    std::string_view rec;
    if (!next_field(rec))
      return fail("git status output is truncated (no NUL after entry " +
                  std::to_string(entries.size() + 1) + ")");
    if (rec.size() < 4 || rec[2] != ' ')
      return fail("git status output is malformed at entry " + std::to_string(entries.size() + 1));
    StatusEntry e;
    e.index = rec[0];
    e.worktree = rec[1];
    e.path = std::string(rec.substr(3));
    if (is_rename_or_copy(e.index) || is_rename_or_copy(e.worktree)) {
      // -z puts the old name in its own field after the new one.
      std::string_view orig;
      if (!next_field(orig) || orig.empty())
        return fail("git status output lacks the old name of rename " + e.path);
      e.orig_path = std::string(orig);
    }
    entries.push_back(std::move(e));
  }
  return entries;
}

}  // namespace devgraph::git
