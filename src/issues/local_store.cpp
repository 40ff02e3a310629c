#include "issues/local_store.h"

#include <dirent.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cerrno>
#include <cstring>
#include <limits>
#include <set>
#include <string_view>
#include <utility>

#include "util/args.h"
#include "util/fs.h"
#include "util/json.h"
#include "util/text.h"

namespace devgraph::issues {
namespace {

constexpr size_t kMaxTitleBytes = 256;
constexpr size_t kMaxLabelBytes = 64;
constexpr size_t kMaxBranchBytes = 256;
constexpr const char* kFence = "---";

Error usage(std::string message) {
  return fail(ErrorKind::usage, std::move(message));
}

// The code points of `text`, or nullopt when it is not well-formed UTF-8
// (overlong forms, surrogates and values past U+10FFFF are not).
std::optional<std::u32string> decode_utf8(std::string_view text) {
  std::u32string out;
  size_t i = 0;
  while (i < text.size()) {
    const auto c = static_cast<unsigned char>(text[i]);
    char32_t cp = 0;
    size_t extra = 0;
    char32_t min = 0;
    if (c < 0x80) {
      cp = c;
    } else if ((c & 0xE0) == 0xC0) {
      cp = c & 0x1F;
      extra = 1;
      min = 0x80;
    } else if ((c & 0xF0) == 0xE0) {
      cp = c & 0x0F;
      extra = 2;
      min = 0x800;
    } else if ((c & 0xF8) == 0xF0) {
      cp = c & 0x07;
      extra = 3;
      min = 0x10000;
    } else {
      return std::nullopt;
    }
    if (extra > 0 && i + extra >= text.size()) return std::nullopt;
    for (size_t k = 1; k <= extra; ++k) {
      const auto cc = static_cast<unsigned char>(text[i + k]);
      if ((cc & 0xC0) != 0x80) return std::nullopt;
      cp = (cp << 6) | (cc & 0x3F);
    }
    if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return std::nullopt;
    out.push_back(cp);
    i += extra + 1;
  }
  return out;
}

// Unicode's White_Space property.
bool is_space(char32_t cp) {
  return (cp >= 0x09 && cp <= 0x0D) || cp == 0x20 || cp == 0x85 || cp == 0xA0 || cp == 0x1680 ||
         (cp >= 0x2000 && cp <= 0x200A) || cp == 0x2028 || cp == 0x2029 || cp == 0x202F ||
         cp == 0x205F || cp == 0x3000;
}

// C0, DEL and C1.
bool is_control(char32_t cp) {
  return cp < 0x20 || (cp >= 0x7F && cp <= 0x9F);
}

// A word without whitespace, control characters or commas (labels,
// branches): `what` names it in the error.
Status check_word(const std::string& word, const std::string& what, size_t max_bytes) {
  if (word.empty()) return usage(what + " is empty");
  if (word.size() > max_bytes)
    return usage(what + " is longer than " + std::to_string(max_bytes) + " bytes");
  auto cps = decode_utf8(word);
  if (!cps) return usage(what + " is not valid UTF-8");
  for (char32_t cp : *cps) {
    if (is_space(cp)) return usage(what + " contains whitespace");
    if (is_control(cp)) return usage(what + " contains a control character");
    if (cp == ',') return usage(what + " contains a comma");
  }
  return {};
}

Status check_head(const std::string& head) {
  const bool hex = std::all_of(head.begin(), head.end(), [](char c) {
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
  });
  if (!hex || head.size() < 7 || head.size() > 64)
    return usage("head " + py_repr(clip(head, 80)) + " is not a hex object id (7 to 64 of 0-9a-f)");
  return {};
}

Status check_number(long long number) {
  if (number <= 0) return usage("issue number " + std::to_string(number) + " is not positive");
  return {};
}

// One JSON value on one line: strings keep their UTF-8 (checked before).
std::string json_line(const Json& value) {
  return value.dump(-1, ' ', false);
}

std::string render(const Issue& raw) {
  std::string out = std::string(kFence) + "\n";
  auto line = [&out](const char* key, const std::string& json) {
    out += key;
    out += ": ";
    out += json;
    out += "\n";
  };
  line("number", std::to_string(raw.number));
  line("title", json_line(raw.title));
  line("state", json_line(raw.state));
  std::vector<std::string> labels;
  for (const auto& l : raw.labels) labels.push_back(json_line(l));
  line("labels", "[" + join(labels, ", ") + "]");
  if (raw.parent) line("parent", std::to_string(*raw.parent));
  if (!raw.priority.empty()) line("priority", json_line(raw.priority));
  line("created", json_line(raw.created));
  if (!raw.updated.empty()) line("updated", json_line(raw.updated));
  if (raw.branch) line("branch", json_line(*raw.branch));
  if (raw.head) line("head", json_line(*raw.head));
  if (!raw.close_reason.empty()) line("close_reason", json_line(raw.close_reason));
  out += kFence;
  out += "\n";
  out += raw.body;
  return out;
}

// The issue as its file states it (parent and priority only as written).
Expected<Issue> parse(std::string_view text, const std::string& path, long long number) {
  auto corrupt = [&path](const std::string& what) {
    return fail(ErrorKind::internal, "corrupt issue file " + path + ": " + what);
  };
  const std::string open = std::string(kFence) + "\n";
  if (text.substr(0, open.size()) != open) return corrupt("it does not open with a '---' line");
  Issue raw;
  std::set<std::string> seen;
  size_t pos = open.size();
  int line_no = 1;
  while (true) {
    ++line_no;
    const size_t end = text.find('\n', pos);
    const std::string_view line =
        text.substr(pos, end == std::string_view::npos ? std::string_view::npos : end - pos);
    if (line == kFence) {
      raw.body = end == std::string_view::npos ? "" : std::string(text.substr(end + 1));
      break;
    }
    if (end == std::string_view::npos) return corrupt("the front matter has no closing '---' line");
    pos = end + 1;
    const std::string where = "line " + std::to_string(line_no);
    const size_t colon = line.find(':');
    const std::string key(line.substr(0, colon == std::string_view::npos ? 0 : colon));
    if (key.empty() || !std::all_of(key.begin(), key.end(),
                                    [](char c) { return (c >= 'a' && c <= 'z') || c == '_'; }))
      return corrupt(where + " is not 'key: value'");
    if (!seen.insert(key).second) return corrupt("key '" + key + "' is given twice");
    std::string_view value_text = line.substr(colon + 1);
    while (!value_text.empty() && (value_text.front() == ' ' || value_text.front() == '\t'))
      value_text.remove_prefix(1);
    while (!value_text.empty() && (value_text.back() == ' ' || value_text.back() == '\t'))
      value_text.remove_suffix(1);
    auto value = parse_json(value_text, key);
    if (!value) return corrupt(value.error().message);
    const Json& v = *value;
    auto positive = [&](const char* what) -> Expected<long long> {
      if (!v.is_number_integer() ||
          (v.is_number_unsigned() &&
           v.get<unsigned long long>() >
               static_cast<unsigned long long>(std::numeric_limits<long long>::max())) ||
          v.get<long long>() <= 0)
        return corrupt(std::string(what) + " is not a positive integer");
      return v.get<long long>();
    };
    auto text_value = [&](const char* what) -> Expected<std::string> {
      if (!v.is_string()) return corrupt(std::string(what) + " is not a string");
      return v.get<std::string>();
    };
    auto checked = [&](Status st) -> Status {
      if (!st) return corrupt(st.error().message);
      return {};
    };
    if (key == "number") {
      DG_TRY(raw.number, positive("number"));
    } else if (key == "title") {
      DG_TRY(raw.title, text_value("title"));
      DG_CHECK(checked(check_title(raw.title)));
    } else if (key == "state") {
      DG_TRY(raw.state, text_value("state"));
      if (raw.state != "open" && raw.state != "closed")
        return corrupt("state " + json_line(raw.state) + " is neither \"open\" nor \"closed\"");
    } else if (key == "labels") {
      if (!v.is_array()) return corrupt("labels is not a list");
      for (const auto& l : v) {
        if (!l.is_string()) return corrupt("labels holds a value that is not a string");
        raw.labels.push_back(l.get<std::string>());
        DG_CHECK(checked(check_label(raw.labels.back())));
      }
    } else if (key == "parent") {
      DG_TRY(raw.parent, positive("parent"));
    } else if (key == "priority") {
      DG_TRY(raw.priority, text_value("priority"));
      DG_CHECK(checked(check_priority(raw.priority)));
    } else if (key == "created") {
      DG_TRY(raw.created, text_value("created"));
    } else if (key == "updated") {
      DG_TRY(raw.updated, text_value("updated"));
    } else if (key == "branch") {
      DG_TRY(raw.branch, text_value("branch"));
    } else if (key == "head") {
      DG_TRY(raw.head, text_value("head"));
    } else if (key == "close_reason") {
      DG_TRY(raw.close_reason, text_value("close_reason"));
    } else {
      return corrupt("unknown key '" + key + "'");
    }
  }
  for (const char* required : {"number", "title", "state", "created"})
    if (!seen.count(required)) return corrupt(std::string("key '") + required + "' is missing");
  if (raw.number != number)
    return corrupt("its number " + std::to_string(raw.number) + " does not match its file name");
  return raw;
}

// The issue as callers see it: parent and priority fall back to the body
// and the labels.
Issue derive(Issue raw) {
  if (!raw.parent) raw.parent = parent_from_body(raw.body);
  if (raw.priority.empty()) raw.priority = priority_from_labels(raw.labels);
  return raw;
}

// The decimal digits of an issue file's name (`<digits>.md`), else "".
std::string issue_digits(const std::string& name) {
  if (name.size() < 4 || name.compare(name.size() - 3, 3, ".md") != 0) return "";
  std::string digits = name.substr(0, name.size() - 3);
  return std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; })
             ? digits
             : "";
}

// The names of the issue files of `dir`, and of the temporary files that
// killed writers left (`<digits>.md.tmp.*`). A missing directory has none.
struct Listing {
  std::vector<std::string> issues;
  std::vector<std::string> temps;
};
Expected<Listing> list_dir(const std::string& dir) {
  Listing out;
  DIR* d = ::opendir(dir.c_str());
  if (d == nullptr) {
    if (errno == ENOENT) return out;
    return fail("cannot read the issues directory " + dir + ": " + std::strerror(errno));
  }
  while (dirent* e = ::readdir(d)) {
    const std::string name = e->d_name;
    if (!issue_digits(name).empty()) {
      out.issues.push_back(name);
    } else if (const size_t t = name.find(".md.tmp.");
               t != std::string::npos && !issue_digits(name.substr(0, t + 3)).empty()) {
      out.temps.push_back(name);
    }
  }
  ::closedir(d);
  return out;
}

// The number a `<digits>.md` name stands for.
Expected<long long> number_of(const std::string& dir, const std::string& name) {
  auto n = parse_int(issue_digits(name));
  if (!n || *n <= 0)
    return fail(ErrorKind::internal,
                "corrupt issue file " + join_path(dir, name) + ": its name is not an issue number");
  return *n;
}

Expected<Issue> load(const std::string& dir, long long number, const std::string& path) {
  if (!path_exists(path))
    return fail(ErrorKind::not_found, "no issue #" + std::to_string(number) + " in " + dir);
  DG_TRY(std::string text, read_file(path));
  return parse(text, path, number);
}

}  // namespace

Status check_title(const std::string& title) {
  auto cps = decode_utf8(title);
  if (!cps) return usage("title is not valid UTF-8");
  if (std::all_of(cps->begin(), cps->end(), is_space)) return usage("title is empty");
  if (title.size() > kMaxTitleBytes)
    return usage("title is longer than " + std::to_string(kMaxTitleBytes) + " bytes");
  return {};
}

Status check_label(const std::string& label) {
  return check_word(label, "label " + py_repr(clip(label, kMaxLabelBytes + 16)), kMaxLabelBytes);
}

Status check_priority(const std::string& priority) {
  if (priority.empty() || priority == "P0" || priority == "P1" || priority == "P2") return {};
  return usage("priority " + py_repr(clip(priority, 16)) + " is not one of P0, P1, P2");
}

Status check_parent(long long parent) {
  if (parent <= 0) return usage("parent " + std::to_string(parent) + " is not a positive number");
  return {};
}

Status check_new_issue(const NewIssue& issue) {
  DG_CHECK(check_title(issue.title));
  std::set<std::string> labels;
  for (const auto& label : issue.labels) {
    DG_CHECK(check_label(label));
    if (!labels.insert(label).second) return usage("label " + py_repr(label) + " is given twice");
  }
  if (issue.parent) DG_CHECK(check_parent(*issue.parent));
  return check_priority(issue.priority);
}

LocalIssues::LocalIssues(std::string dir, const Clock& clock)
    : dir_(std::move(dir)), clock_(&clock) {}

std::string LocalIssues::path_of(long long number) const {
  return join_path(dir_, std::to_string(number) + ".md");
}

Expected<Issue> LocalIssues::create(const NewIssue& issue) {
  DG_CHECK(check_new_issue(issue));
  if (!is_directory(dir_)) {
    DG_CHECK(make_directories(dir_));
    DG_CHECK(fsync_directory(dirname_of(dir_)));
  }
  DG_TRY(FileLock lock, FileLock::acquire(join_path(dir_, ".lock")));
  DG_TRY(Listing listing, list_dir(dir_));
  // Under the lock no live writer owns one of these.
  for (const auto& t : listing.temps) (void)::unlink(join_path(dir_, t).c_str());
  long long highest = 0;
  for (const auto& name : listing.issues) {
    DG_TRY(long long n, number_of(dir_, name));
    highest = std::max(highest, n);
  }
  if (highest == std::numeric_limits<long long>::max())
    return fail(ErrorKind::internal, "no issue number is left after #" + std::to_string(highest));
  Issue raw;
  raw.number = highest + 1;
  raw.title = issue.title;
  raw.body = issue.body;
  raw.labels = issue.labels;
  raw.parent = issue.parent;
  raw.priority = issue.priority;
  raw.created = iso_utc(clock_->wall());
  DG_CHECK(write_file_atomic(path_of(raw.number), render(raw)));
  return derive(std::move(raw));
}

Expected<std::vector<Issue>> LocalIssues::list() const {
  DG_TRY(Listing listing, list_dir(dir_));
  std::vector<std::pair<long long, std::string>> files;
  for (const auto& name : listing.issues) {
    DG_TRY(long long n, number_of(dir_, name));
    if (name != std::to_string(n) + ".md")
      return fail(ErrorKind::internal, "corrupt issue file " + join_path(dir_, name) +
                                           ": an issue file is named " + std::to_string(n) + ".md");
    files.emplace_back(n, name);
  }
  std::sort(files.begin(), files.end());
  std::vector<Issue> out;
  if (!cache_) {
    for (const auto& [n, name] : files) {
      ++file_reads_;
      DG_TRY(Issue raw, load(dir_, n, join_path(dir_, name)));
      out.push_back(derive(std::move(raw)));
    }
    return out;
  }
  std::map<long long, Kept> kept;
  for (const auto& [n, name] : files) {
    const std::string path = join_path(dir_, name);
    auto old = kept_.find(n);
    if (old != kept_.end() && old->second.trusted) {
      if (auto id = file_identity(path); id && *id == old->second.identity) {
        out.push_back(old->second.issue);
        kept.emplace(n, std::move(old->second));
        continue;
      }
    }
    const int64_t started = std::chrono::duration_cast<std::chrono::nanoseconds>(
                                clock_->wall().time_since_epoch())
                                .count();
    Kept k;
    ++file_reads_;
    DG_TRY(FileBuffer text, read_file_buffer(path, &k.identity));
    DG_TRY(Issue raw, parse(text.view(), path, n));
    k.issue = derive(std::move(raw));
    // A tenth of a second is many kernel ticks: a later change shows in
    // the file's times.
    k.trusted = started - k.identity.ctime_ns > 100 * 1000 * 1000;
    out.push_back(k.issue);
    kept.emplace(n, std::move(k));
  }
  kept_ = std::move(kept);
  return out;
}

void LocalIssues::cache_reads(bool on) {
  cache_ = on;
  kept_.clear();
}

Expected<Issue> LocalIssues::get(long long number) const {
  DG_CHECK(check_number(number));
  DG_TRY(Issue raw, load(dir_, number, path_of(number)));
  return derive(std::move(raw));
}

namespace {

// One write of one issue under the lock: `change` edits the issue as its
// file states it and says whether anything changed; only then is the file
// replaced, with `updated` stamped.
template <class Change>
Expected<Issue> modify(const std::string& dir, const std::string& path, long long number,
                       const Clock& clock, Change change) {
  DG_CHECK(check_number(number));
  if (!is_directory(dir))
    return fail(ErrorKind::not_found, "no issue #" + std::to_string(number) + " in " + dir);
  DG_TRY(FileLock lock, FileLock::acquire(join_path(dir, ".lock")));
  DG_TRY(Issue raw, load(dir, number, path));
  if (change(raw)) {
    raw.updated = iso_utc(clock.wall());
    DG_CHECK(write_file_atomic(path, render(raw)));
  }
  return derive(std::move(raw));
}

}  // namespace

Expected<Issue> LocalIssues::close(long long number, const std::string& reason) {
  if (!decode_utf8(reason)) return usage("close reason is not valid UTF-8");
  return modify(dir_, path_of(number), number, *clock_, [&reason](Issue& raw) {
    if (raw.state == "closed") return false;
    raw.state = "closed";
    raw.close_reason = reason;
    return true;
  });
}

Expected<Issue> LocalIssues::reopen(long long number) {
  return modify(dir_, path_of(number), number, *clock_, [](Issue& raw) {
    if (raw.state == "open") return false;
    raw.state = "open";
    raw.close_reason.clear();
    return true;
  });
}

Expected<Issue> LocalIssues::record_delivery(long long number, const std::string& branch,
                                             const std::string& head) {
  DG_CHECK(
      check_word(branch, "branch " + py_repr(clip(branch, kMaxBranchBytes + 16)), kMaxBranchBytes));
  if (branch.front() == '-') return usage("branch " + py_repr(branch) + " starts with '-'");
  DG_CHECK(check_head(head));
  return modify(dir_, path_of(number), number, *clock_, [&](Issue& raw) {
    if (raw.branch == branch && raw.head == head) return false;
    raw.branch = branch;
    raw.head = head;
    return true;
  });
}

}  // namespace devgraph::issues
