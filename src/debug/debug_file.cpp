#include "debug/debug_file.h"

#include <unistd.h>

#include <map>

#include "util/text.h"

namespace devgraph::debug {
namespace {

using Fields = std::vector<std::pair<std::string, std::string>>;

const char* const kSections[] = {"Current Focus", "Evidence",          "Symptoms",
                                 "Eliminated",    "Specialist Review", "Resolution"};

bool needs_block(const std::string& v) {
  return v.empty() || v == "|" || v.find('\n') != std::string::npos || v.front() == ' ' ||
         v.front() == '\t' || v.back() == ' ' || v.back() == '\t';
}

// One field at `indent` ("" or two spaces); `first` replaces the indent of
// the field's own line (the "- " of a list entry).
void put_field(std::string& out, const std::string& indent, const std::string& first,
               const std::string& key, const std::string& value) {
  out += first + key + ":";
  if (!needs_block(value)) {
    out += " " + value + "\n";
    return;
  }
  out += " |\n";
  if (value.empty()) return;
  size_t start = 0;
  while (true) {
    size_t nl = value.find('\n', start);
    out += indent + "  " + value.substr(start, nl == std::string::npos ? nl : nl - start) + "\n";
    if (nl == std::string::npos) break;
    start = nl + 1;
  }
}

void put_fields(std::string& out, const Fields& fields) {
  for (const auto& [k, v] : fields) put_field(out, "", "", k, v);
}

void put_entry(std::string& out, const Fields& fields) {
  bool first = true;
  for (const auto& [k, v] : fields) {
    put_field(out, "  ", first ? "- " : "  ", k, v);
    first = false;
  }
}

struct Line {
  std::string text;
  int number = 0;
};

Error bad(const std::string& origin, int line, const std::string& what) {
  return fail(origin + ":" + std::to_string(line) + ": " + what);
}

// The fields of lines at `indent`, in order.
Expected<Fields> read_fields(const std::vector<Line>& lines, const std::string& indent,
                             const std::string& origin) {
  Fields out;
  size_t i = 0;
  while (i < lines.size()) {
    const Line& l = lines[i];
    if (l.text.compare(0, indent.size(), indent) != 0)
      return bad(origin, l.number, "expected a field at indent " + std::to_string(indent.size()));
    std::string rest = l.text.substr(indent.size());
    size_t colon = rest.find(':');
    std::string key = colon == std::string::npos ? "" : rest.substr(0, colon);
    if (key.empty() || key.find_first_not_of("abcdefghijklmnopqrstuvwxyz_") != std::string::npos)
      return bad(origin, l.number, "expected `key: value`");
    std::string after = rest.substr(colon + 1);
    ++i;
    if (after == " |") {
      const std::string cont = indent + "  ";
      std::string value;
      bool any = false;
      while (i < lines.size() && lines[i].text.compare(0, cont.size(), cont) == 0) {
        value += (any ? "\n" : "") + lines[i].text.substr(cont.size());
        any = true;
        ++i;
      }
      out.emplace_back(key, value);
    } else if (after.size() > 1 && after[0] == ' ') {
      out.emplace_back(key, after.substr(1));
    } else {
      return bad(origin, l.number, "expected `" + key + ": value` or `" + key + ": |`");
    }
  }
  return out;
}

// The entries of a list section: each opens with "- ".
Expected<std::vector<Fields>> read_entries(const std::vector<Line>& lines,
                                           const std::string& origin) {
  std::vector<Fields> out;
  std::vector<Line> entry;
  auto flush = [&]() -> Status {
    if (entry.empty()) return {};
    DG_TRY(auto f, read_fields(entry, "  ", origin));
    out.push_back(std::move(f));
    entry.clear();
    return {};
  };
  for (const auto& l : lines) {
    if (l.text.rfind("- ", 0) == 0) {
      DG_CHECK(flush());
      entry.push_back({"  " + l.text.substr(2), l.number});
    } else if (entry.empty()) {
      return bad(origin, l.number, "expected an entry opening with `- `");
    } else {
      entry.push_back(l);
    }
  }
  DG_CHECK(flush());
  return out;
}

std::string field(const Fields& f, const std::string& key) {
  for (const auto& [k, v] : f)
    if (k == key) return v;
  return "";
}

Json strings_json(const std::vector<std::string>& v) {
  Json a = Json::array();
  for (const auto& s : v) a.push_back(s);
  return a;
}

std::vector<std::string> strings_of(const Json& j) {
  std::vector<std::string> out;
  if (j.is_array())
    for (const auto& s : j)
      if (s.is_string()) out.push_back(s.get<std::string>());
  return out;
}

int int_of(const Json& j, int fallback = 0) {
  return j.is_number_integer() ? j.get<int>() : fallback;
}

std::string str_of(const Json& j) {
  return j.is_string() ? j.get<std::string>() : "";
}

// The front matter, in its fixed order.
std::vector<std::pair<std::string, Json>> front_matter(const DebugFile& f) {
  const Machine& m = f.m;
  return {
      {"slug", f.slug},
      {"status", f.status},
      {"trigger", f.trigger},
      {"goal", f.goal},
      {"tdd", f.tdd},
      {"specialists", f.specialists},
      {"created", f.created},
      {"updated", f.updated},
      {"phase", m.phase},
      {"step", m.step},
      {"mode", m.mode},
      {"directive", m.directive},
      {"malformed", m.malformed},
      {"cycles", Json{{"investigation", m.cycles_investigation},
                      {"fix", m.cycles_fix},
                      {"since_person", m.cycles_since_person}}},
      {"pending", m.pending ? m.pending->to_json() : Json()},
      {"answered", strings_json(m.answered)},
      {"test_command", strings_json(m.test_command)},
      {"test_file", m.test_file},
      {"tdd_state", m.tdd_state},
      {"tdd_used", m.tdd_used},
      {"fix_direction", m.fix_direction},
      {"specialist_hint", m.specialist_hint},
      {"fix_files", strings_json(m.fix_files)},
      {"commit", m.commit},
      {"end", m.end},
      {"stop_reason", m.stop_reason},
      {"worktree", m.worktree},
      {"branch", m.branch},
      {"base", m.base},
      {"default_branch", m.default_branch},
      {"delivery", m.delivery},
      {"delivered", m.delivered},
  };
}

Status read_front(const std::map<std::string, Json>& kv, DebugFile& f, const std::string& origin) {
  auto get = [&](const char* k) -> const Json& {
    static const Json null_json;
    auto it = kv.find(k);
    return it == kv.end() ? null_json : it->second;
  };
  f.slug = str_of(get("slug"));
  f.status = str_of(get("status"));
  if (f.slug.empty() || f.status.empty())
    return fail(origin + ": the front matter has no slug or status");
  f.trigger = str_of(get("trigger"));
  f.goal = str_of(get("goal"));
  f.tdd = get("tdd").is_boolean() && get("tdd").get<bool>();
  f.specialists = get("specialists").is_boolean() && get("specialists").get<bool>();
  f.created = str_of(get("created"));
  f.updated = str_of(get("updated"));
  Machine& m = f.m;
  m.phase = str_of(get("phase"));
  m.step = int_of(get("step"), 1);
  m.mode = str_of(get("mode"));
  m.directive = str_of(get("directive"));
  m.malformed = int_of(get("malformed"));
  const Json& c = get("cycles");
  if (c.is_object()) {
    m.cycles_investigation = int_of(c.value("investigation", Json()));
    m.cycles_fix = int_of(c.value("fix", Json()));
    m.cycles_since_person = int_of(c.value("since_person", Json()));
  }
  if (!get("pending").is_null()) {
    auto q = Question::from_json(get("pending"));
    if (!q) return fail(origin + ": pending: " + q.error().message);
    m.pending = *q;
  }
  m.answered = strings_of(get("answered"));
  m.test_command = strings_of(get("test_command"));
  m.test_file = str_of(get("test_file"));
  m.tdd_state = str_of(get("tdd_state"));
  m.tdd_used = get("tdd_used").is_boolean() && get("tdd_used").get<bool>();
  m.fix_direction = str_of(get("fix_direction"));
  m.specialist_hint = str_of(get("specialist_hint"));
  m.fix_files = strings_of(get("fix_files"));
  m.commit = str_of(get("commit"));
  m.end = str_of(get("end"));
  m.stop_reason = str_of(get("stop_reason"));
  m.worktree = str_of(get("worktree"));
  m.branch = str_of(get("branch"));
  m.base = str_of(get("base"));
  m.default_branch = str_of(get("default_branch"));
  m.delivery = str_of(get("delivery"));
  m.delivered = get("delivered");
  return {};
}

}  // namespace

Json Question::to_json() const {
  Json needs = Json::array();
  for (int n : needs_text) needs.push_back(n);
  return Json{{"id", id},
              {"kind", kind},
              {"text", text},
              {"choices", strings_json(choices)},
              {"text_choice", text_choice},
              {"needs_text", needs},
              {"held_mode", held_mode},
              {"held_directive", held_directive}};
}

Expected<Question> Question::from_json(const Json& j) {
  if (!j.is_object()) return fail("a question must be an object");
  Question q;
  q.id = json_str(j, "id");
  q.kind = json_str(j, "kind");
  q.text = json_str(j, "text");
  if (q.id.empty() || q.kind.empty()) return fail("a question needs an id and a kind");
  q.choices = strings_of(j.value("choices", Json()));
  q.text_choice = int_of(j.value("text_choice", Json()));
  for (const auto& n : j.value("needs_text", Json::array()))
    if (n.is_number_integer()) q.needs_text.push_back(n.get<int>());
  q.held_mode = json_str(j, "held_mode");
  q.held_directive = json_str(j, "held_directive");
  return q;
}

std::string clean_text(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size(); ++i) {
    unsigned char c = static_cast<unsigned char>(text[i]);
    if (c == '\r') {
      if (i + 1 < text.size() && text[i + 1] == '\n') continue;
      out += '\n';
    } else if (c == '\n' || c == '\t' || (c >= 0x20 && c != 0x7f)) {
      out += static_cast<char>(c);
    }
  }
  while (!out.empty() && (out.back() == ' ' || out.back() == '\t' || out.back() == '\n'))
    out.pop_back();
  if (out.size() > kMaxText) {
    size_t n = kMaxText;
    while (n > 0 && (static_cast<unsigned char>(out[n]) & 0xC0) == 0x80) --n;
    out.resize(n);
  }
  return out;
}

std::string render(const DebugFile& f) {
  std::string out = "---\n";
  for (const auto& [k, v] : front_matter(f)) out += k + ": " + dump_py(v) + "\n";
  out += "---\n\n# Debug session " + f.slug + "\n";
  out += "\n## Current Focus\n";
  put_fields(out, {{"hypothesis", f.hypothesis}, {"next_action", f.next_action}});
  out += "\n## Symptoms\n";
  put_fields(out, {{"reported", f.reported}, {"details", f.details}});
  out += "\n## Evidence\n";
  for (const auto& e : f.evidence)
    put_entry(out, {{"timestamp", e.timestamp},
                    {"checked", e.checked},
                    {"found", e.found},
                    {"implication", e.implication}});
  out += "\n## Eliminated\n";
  for (const auto& e : f.eliminated)
    put_entry(out,
              {{"timestamp", e.timestamp}, {"hypothesis", e.hypothesis}, {"evidence", e.evidence}});
  out += "\n## Specialist Review\n";
  for (const auto& r : f.reviews)
    put_entry(out, {{"timestamp", r.timestamp},
                    {"hint", r.hint},
                    {"persona", r.persona},
                    {"verdict", r.verdict},
                    {"detail", r.detail}});
  out += "\n## Resolution\n";
  put_fields(out, {{"root_cause", f.resolution.root_cause},
                   {"fix", f.resolution.fix},
                   {"verification", f.resolution.verification},
                   {"prevention", f.resolution.prevention}});
  return out;
}

Expected<DebugFile> parse(std::string_view text, const std::string& origin) {
  std::vector<Line> lines;
  {
    size_t start = 0;
    int n = 0;
    while (start < text.size()) {
      size_t nl = text.find('\n', start);
      if (nl == std::string_view::npos)
        return bad(origin, n + 1, "the last line has no newline (a cut file)");
      lines.push_back({std::string(text.substr(start, nl - start)), ++n});
      start = nl + 1;
    }
  }
  if (lines.empty() || lines[0].text != "---") return bad(origin, 1, "expected `---`");
  std::map<std::string, Json> kv;
  size_t i = 1;
  for (; i < lines.size() && lines[i].text != "---"; ++i) {
    const std::string& l = lines[i].text;
    size_t colon = l.find(": ");
    if (colon == std::string::npos) return bad(origin, lines[i].number, "expected `key: JSON`");
    auto v = parse_json(l.substr(colon + 2), origin + ":" + std::to_string(lines[i].number));
    if (!v) return v.error();
    kv[l.substr(0, colon)] = std::move(*v);
  }
  if (i == lines.size()) return bad(origin, static_cast<int>(i), "the front matter never ends");
  DebugFile f;
  DG_CHECK(read_front(kv, f, origin));
  std::map<std::string, std::vector<Line>> sections;
  std::string current;
  for (++i; i < lines.size(); ++i) {
    const Line& l = lines[i];
    if (l.text.rfind("## ", 0) == 0) {
      current = l.text.substr(3);
      bool known = false;
      for (const char* s : kSections) known = known || current == s;
      if (!known) return bad(origin, l.number, "unknown section `" + current + "`");
      sections[current];
      continue;
    }
    if (l.text.empty() || l.text.rfind("# ", 0) == 0) continue;
    if (current.empty()) return bad(origin, l.number, "text before the first section");
    sections[current].push_back(l);
  }
  DG_TRY(auto focus, read_fields(sections["Current Focus"], "", origin));
  f.hypothesis = field(focus, "hypothesis");
  f.next_action = field(focus, "next_action");
  DG_TRY(auto symptoms, read_fields(sections["Symptoms"], "", origin));
  f.reported = field(symptoms, "reported");
  f.details = field(symptoms, "details");
  DG_TRY(auto evidence, read_entries(sections["Evidence"], origin));
  for (const auto& e : evidence)
    f.evidence.push_back(
        {field(e, "timestamp"), field(e, "checked"), field(e, "found"), field(e, "implication")});
  DG_TRY(auto eliminated, read_entries(sections["Eliminated"], origin));
  for (const auto& e : eliminated)
    f.eliminated.push_back({field(e, "timestamp"), field(e, "hypothesis"), field(e, "evidence")});
  DG_TRY(auto reviews, read_entries(sections["Specialist Review"], origin));
  for (const auto& r : reviews)
    f.reviews.push_back({field(r, "timestamp"), field(r, "hint"), field(r, "persona"),
                         field(r, "verdict"), field(r, "detail")});
  DG_TRY(auto res, read_fields(sections["Resolution"], "", origin));
  f.resolution = {field(res, "root_cause"), field(res, "fix"), field(res, "verification"),
                  field(res, "prevention")};
  return f;
}

std::string slug_from(std::string_view text) {
  std::string out;
  for (char ch : text) {
    unsigned char c = static_cast<unsigned char>(ch);
    if (c >= 'A' && c <= 'Z') c = static_cast<unsigned char>(c - 'A' + 'a');
    if ((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9')) {
      out += static_cast<char>(c);
    } else if (!out.empty() && out.back() != '-') {
      out += '-';
    }
    if (out.size() > 60) break;
  }
  if (out.size() > 40) {
    size_t cut = out.rfind('-', 40);
    out.resize(cut != std::string::npos && cut >= 12 ? cut : 40);
  }
  while (!out.empty() && out.back() == '-') out.pop_back();
  if (out.empty() || out == "resolved") return "session";
  return out;
}

Status check_slug(const std::string& slug) {
  bool ok = !slug.empty() && slug.size() <= kMaxSlug && slug != "resolved" && slug[0] != '-' &&
            slug.find_first_not_of("abcdefghijklmnopqrstuvwxyz0123456789-") == std::string::npos;
  if (!ok)
    return fail(ErrorKind::usage, "not a session slug: " + py_repr(clip(slug, 80)) +
                                      " (lower-case letters, digits and '-', at most " +
                                      std::to_string(kMaxSlug) + " bytes, not `resolved`)");
  return {};
}

std::string Paths::call(int step) const {
  return join_path(join_path(session, "calls"), std::to_string(step));
}

Paths paths_of(const std::string& develop_home, const std::string& slug) {
  Paths p;
  p.home = join_path(develop_home, "debug");
  p.file = join_path(p.home, slug + ".md");
  p.resolved = join_path(join_path(p.home, "resolved"), slug + ".md");
  p.lock = join_path(p.home, slug + ".lock");
  p.session = join_path(p.home, slug);
  p.events = join_path(p.session, "events.jsonl");
  return p;
}

std::string current_path(const Paths& paths) {
  if (path_exists(paths.file)) return paths.file;
  if (path_exists(paths.resolved)) return paths.resolved;
  return "";
}

Expected<DebugFile> load(const Paths& paths) {
  std::string path = current_path(paths);
  if (path.empty()) return fail(ErrorKind::not_found, "no debug session at " + paths.file);
  DG_TRY(auto text, read_file(path));
  return parse(text, path);
}

Status save(const std::string& path, const DebugFile& file) {
  DG_CHECK(make_directories(dirname_of(path)));
  return write_file_atomic(path, render(file));
}

Expected<std::optional<SessionLock>> SessionLock::try_take(const Paths& paths,
                                                           std::string* holder) {
  DG_CHECK(make_directories(paths.home));
  DG_TRY(auto lock, FileLock::try_acquire(paths.lock));
  if (!lock) {
    if (holder) {
      // The note is the holder's pid; a lock taken but not yet noted says nothing.
      auto probe = read_file(paths.lock);
      *holder = probe ? one_line(*probe, 40) : "";
    }
    return std::optional<SessionLock>();
  }
  (void)lock->write_note(std::to_string(::getpid()));  // a hint for a refused successor
  return std::optional<SessionLock>(SessionLock(std::move(*lock)));
}

}  // namespace devgraph::debug
