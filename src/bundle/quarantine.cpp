#include "bundle/quarantine.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>

#include "util/fs.h"

namespace devgraph::bundle {

void StrayLedger::observe(const std::vector<std::string>& paths,
                          const std::vector<std::string>& in_flight) {
  std::vector<std::string> who = in_flight;
  std::sort(who.begin(), who.end());
  who.erase(std::unique(who.begin(), who.end()), who.end());
  for (const auto& p : paths) suspects_.emplace(p, who);
}

std::vector<std::string> StrayLedger::suspects_of(const std::string& path) const {
  auto it = suspects_.find(path);
  return it == suspects_.end() ? std::vector<std::string>{} : it->second;
}

std::string StrayLedger::attributed_to(const std::string& path) const {
  auto s = suspects_of(path);
  return s.size() == 1 ? s.front() : std::string();
}

namespace {

Status check_path(const std::string& path) {
  if (path.empty() || path.front() == '/')
    return fail(ErrorKind::usage, "cannot quarantine \"" + path + "\": not a relative path");
  for (size_t at = 0; at <= path.size();) {
    size_t end = std::min(path.find('/', at), path.size());
    std::string part = path.substr(at, end - at);
    if (part.empty() || part == "." || part == "..")
      return fail(ErrorKind::usage, "cannot quarantine \"" + path + "\": it has an empty, `.` "
                                    "or `..` component");
    at = end + 1;
  }
  return {};
}

std::string octal(mode_t mode) {
  char buf[8];
  std::snprintf(buf, sizeof buf, "%04o", static_cast<unsigned>(mode & 07777));
  return buf;
}

// Copies `from` (a regular file or a symlink) to `to`, durably.
Status copy_durably(const std::string& from, const std::string& to, const struct stat& st) {
  if (S_ISLNK(st.st_mode)) {
    std::string target(static_cast<size_t>(st.st_size) + 1, '\0');
    ssize_t n = ::readlink(from.c_str(), target.data(), target.size());
    if (n < 0) return fail("cannot read the link " + from + ": " + std::strerror(errno));
    target.resize(static_cast<size_t>(n));
    std::string tmp = to + ".tmp";
    ::unlink(tmp.c_str());
    if (::symlink(target.c_str(), tmp.c_str()) != 0 || ::rename(tmp.c_str(), to.c_str()) != 0)
      return fail("cannot write the link " + to + ": " + std::strerror(errno));
    return fsync_directory(dirname_of(to));
  }
  DG_TRY(auto bytes, read_file(from));
  return write_file_atomic(to, bytes, static_cast<int>(st.st_mode & 07777));
}

}  // namespace

Expected<std::vector<Json>> quarantined(const BundleLayout& layout) {
  const std::string index = layout.quarantine_index();
  if (!path_exists(index)) return std::vector<Json>{};
  DG_TRY(auto text, read_file(index));
  auto j = parse_json(text, index);
  if (!j) return j.error();
  if (!j->is_array()) return fail(index + " is not a JSON array");
  std::vector<Json> out;
  for (const auto& r : *j) {
    if (!r.is_object() || json_str(r, "path").empty())
      return fail(index + " holds a record without a path");
    out.push_back(r);
  }
  return out;
}

Expected<Json> quarantine(const BundleLayout& layout, const StrayRecord& stray) {
  DG_CHECK(check_path(stray.path));
  const std::string from = layout.worktree + "/" + stray.path;
  struct stat st{};
  if (::lstat(from.c_str(), &st) != 0)
    return fail(ErrorKind::not_found,
                "cannot quarantine " + stray.path + ": " + std::strerror(errno));
  if (!S_ISREG(st.st_mode) && !S_ISLNK(st.st_mode))
    return fail(ErrorKind::usage,
                "cannot quarantine " + stray.path + ": not a regular file or a symlink");
  DG_TRY(auto records, quarantined(layout));
  // A free name: an earlier stray of the same path keeps its bytes.
  std::string kept = "quarantine/files/" + stray.path;
  auto taken = [&](const std::string& k) {
    if (path_exists(layout.dir() + "/" + k)) return true;
    return std::any_of(records.begin(), records.end(), [&](const Json& r) {
      return json_str(r, "kept_at") == k && json_str(r, "path") != stray.path;
    });
  };
  for (int n = 2; taken(kept); ++n)
    kept = "quarantine/files/" + stray.path + "." + std::to_string(n);
  const std::string to = layout.dir() + "/" + kept;

  Json suspects = Json::array();
  for (const auto& s : stray.suspects) suspects.push_back(s);
  Json record = {{"path", stray.path},
                 {"kept_at", kept},
                 {"bytes", static_cast<long long>(S_ISREG(st.st_mode) ? st.st_size : 0)},
                 {"mode", octal(st.st_mode)},
                 {"symlink", S_ISLNK(st.st_mode)},
                 {"suspects", suspects},
                 {"attributed_to", stray.attributed_to.empty() ? Json() : Json(stray.attributed_to)},
                 {"found_at", stray.found_at}};
  // The record first: a kill after it and before the move leaves the
  // original in place, and the next look records it again under this name.
  Json all = Json::array();
  for (const auto& r : records)
    if (json_str(r, "kept_at") != kept) all.push_back(r);
  all.push_back(record);
  DG_CHECK(make_directories(layout.quarantine_dir()));
  DG_CHECK(write_file_atomic(layout.quarantine_index(), dump_py(all, 2) + "\n"));

  DG_CHECK(make_directories(dirname_of(to)));
  if (::rename(from.c_str(), to.c_str()) == 0) {
    DG_CHECK(fsync_directory(dirname_of(to)));
    DG_CHECK(fsync_directory(dirname_of(from)));
    return record;
  }
  if (errno != EXDEV)
    return fail("cannot move " + stray.path + " into the quarantine: " + std::strerror(errno));
  DG_CHECK(copy_durably(from, to, st));
  if (::unlink(from.c_str()) != 0)
    return fail("cannot remove " + stray.path + " after copying it into the quarantine: " +
                std::strerror(errno));
  DG_CHECK(fsync_directory(dirname_of(from)));
  return record;
}

}  // namespace devgraph::bundle
