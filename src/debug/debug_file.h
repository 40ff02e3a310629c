// The debug file: the single source of truth of one debug session
// (`devgraph debug`), `<develop_home>/debug/<slug>.md`, moved to
// `debug/resolved/<slug>.md` once the session is resolved. A person reads
// it, the debugger persona is told its path, and only devgraph writes it.
//
// Layout: a front matter of `key: JSON` lines between two `---` lines (the
// session's facts, slug, status, trigger, goal, tdd, created, updated,
// then the loop's own keys: the phase it goes on at, the pending question,
// the answered ones, the step and cycle counts, the TDD test, the fix),
// then the sections Current Focus, Symptoms, Evidence, Eliminated,
// Specialist Review and Resolution. A section's fields are `key: value`
// lines; a value that is empty, spans lines or has blanks at either end is
// written `key: |` followed by its lines, each indented two spaces past
// the field. List sections hold entries opening with `- `. Nothing a
// persona or a person wrote ever starts a line at column 0, so no text can
// pose as a heading, a field or the front matter's end.
//
// Contract:
// - parse() and render() are pure and inverse: parse(render(f)) == f for
//   any file whose texts went through clean_text() (the setters do), and
//   render(parse(t)) == t for any text render() wrote. A file that does not
//   parse is an error naming the file and line, never half read.
// - Slugs: [a-z0-9][a-z0-9-]*, at most kMaxSlug bytes, never "resolved"
//   (the archive's directory). slug_from() derives one from untrusted text
//   by that filter alone; check_slug() refuses anything else, so no slug
//   is ever a path.
// - save() replaces the file atomically; the caller holds the session lock
//   (SessionLock, `<develop_home>/debug/<slug>.lock`, flock): one writer,
//   and so one debugger, per session at a time.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "util/expected.h"
#include "util/fs.h"
#include "util/json.h"

namespace devgraph::debug {

inline constexpr size_t kMaxSlug = 48;
// Longest text kept in one field (a persona's evidence, a person's answer).
inline constexpr size_t kMaxText = 8000;

struct Evidence {
  std::string timestamp, checked, found, implication;
  bool operator==(const Evidence&) const = default;
};

struct Eliminated {
  std::string timestamp, hypothesis, evidence;
  bool operator==(const Eliminated&) const = default;
};

// One specialist's word on a proposed fix direction.
struct Review {
  std::string timestamp, hint, persona, verdict, detail;
  bool operator==(const Review&) const = default;
};

struct Resolution {
  std::string root_cause, fix, verification, prevention;
  bool operator==(const Resolution&) const = default;
};

// A question for a person. `choices` empty: any text answers it. Else a
// choice answers it; `text_choice` (1-based, 0 none) is the choice a text
// alone stands for, and `needs_text` the choices that must come with one.
struct Question {
  std::string id;    // unique in the session: "q<step>-<kind>"
  std::string kind;  // checkpoint, fix_choice, inconclusive, guardrail, malformed, cycles
  std::string text;  // what is asked, for a person (quotes the debugger)
  std::vector<std::string> choices;
  int text_choice = 0;
  std::vector<int> needs_text;
  // What a go-ahead resumes (cycles, malformed): the held launch's mode
  // and directive.
  std::string held_mode, held_directive;

  Json to_json() const;
  static Expected<Question> from_json(const Json& j);
  bool operator==(const Question&) const = default;
};

// The loop's own state, kept in the front matter.
struct Machine {
  // What the loop does next: launch, ask, tdd_red, tdd_green, specialist,
  // commit, deliver, archive, done.
  std::string phase = "launch";
  int step = 1;                      // the number of the next persona call
  std::string mode = "investigate";  // the next launch: investigate, fix, tdd_red, tdd_green
  std::string directive;             // what the next launch is told (data wrapped)
  int malformed = 0;                 // unreadable returns in a row
  int cycles_investigation = 0, cycles_fix = 0;
  int cycles_since_person = 0;
  std::optional<Question> pending;
  std::vector<std::string> answered;  // question ids, in order
  std::vector<std::string> test_command;
  std::string test_file;
  std::string tdd_state;  // "", red_confirmed, green_confirmed
  bool tdd_used = false;  // a TDD gate ran in this session
  std::string fix_direction, specialist_hint;
  std::vector<std::string> fix_files;
  std::string commit;  // the fix commit
  std::string end;     // "", resolved, stopped
  std::string stop_reason;
  // Placement, fixed when the session starts.
  std::string worktree, branch, base, default_branch, delivery = "local";
  Json delivered;  // null until delivered: {branch, head[, pr: {number, url}]}

  bool operator==(const Machine&) const = default;
};

struct DebugFile {
  std::string slug, status, trigger, goal;
  bool tdd = false, specialists = false;
  std::string created, updated;
  Machine m;
  std::string hypothesis, next_action;  // Current Focus
  std::string reported, details;        // Symptoms
  std::vector<Evidence> evidence;
  std::vector<Eliminated> eliminated;
  std::vector<Review> reviews;
  Resolution resolution;

  bool operator==(const DebugFile&) const = default;
};

// Untrusted text made fit for a field: CR LF and CR become LF, other
// control characters are dropped, blanks at the end go, and it is cut at
// kMaxText bytes (on a UTF-8 boundary).
std::string clean_text(std::string_view text);

std::string render(const DebugFile& file);
Expected<DebugFile> parse(std::string_view text, const std::string& origin);

// A slug from untrusted text: lower-cased ASCII letters and digits, every
// other run one '-', cut to 40 bytes at a '-' where there is one; "session"
// when nothing is left.
std::string slug_from(std::string_view text);
// ErrorKind::usage, one line, unless `slug` is a slug.
Status check_slug(const std::string& slug);

// Every path of one session.
struct Paths {
  std::string home;                  // <develop_home>/debug
  std::string file;                  // <home>/<slug>.md
  std::string resolved;              // <home>/resolved/<slug>.md
  std::string lock;                  // <home>/<slug>.lock
  std::string session;               // <home>/<slug>/ (calls, TDD output, events)
  std::string events;                // <session>/events.jsonl
  std::string call(int step) const;  // <session>/calls/<step>
};
Paths paths_of(const std::string& develop_home, const std::string& slug);

// The session's file: the active one, else the resolved one; not_found
// when neither exists.
Expected<DebugFile> load(const Paths& paths);
// Which of the two holds the session ("" when none).
std::string current_path(const Paths& paths);
Status save(const std::string& path, const DebugFile& file);

// The session lock. try_take() never waits: nullopt when another process
// holds it (`holder` then names it as the holder's note says).
class SessionLock {
 public:
  static Expected<std::optional<SessionLock>> try_take(const Paths& paths, std::string* holder);

 private:
  explicit SessionLock(FileLock lock) : lock_(std::move(lock)) {}
  FileLock lock_;
};

}  // namespace devgraph::debug
