// Footprint globs: one engine for both "does this path belong to the task"
// and "may these two tasks run at once".
//
// Matching runs a small NFA over the path (a set of pattern positions per
// character) instead of a backtracking matcher or std::regex: the cost is
// bounded by path length x pattern length whatever the pattern.
#include <algorithm>

#include "schedule/schedule.h"

namespace devgraph::schedule {
namespace {

constexpr std::string_view kSpace = " \t\n\r\f\v";

bool is_wildcard(char c) {
  return c == '*' || c == '?';
}

std::string_view trim(std::string_view s, std::string_view chars) {
  size_t b = s.find_first_not_of(chars);
  if (b == std::string_view::npos) return {};
  size_t e = s.find_last_not_of(chars);
  return s.substr(b, e - b + 1);
}

// Segments of a slash-separated path without empty and "." segments, so
// `./src//a/` and `src/a` are the same footprint (git never reports a path
// with either).
std::vector<std::string_view> segments(std::string_view s) {
  std::vector<std::string_view> out;
  size_t i = 0;
  while (i <= s.size()) {
    size_t j = s.find('/', i);
    if (j == std::string_view::npos) j = s.size();
    std::string_view seg = s.substr(i, j - i);
    if (!seg.empty() && seg != ".") out.push_back(seg);
    i = j + 1;
  }
  return out;
}

std::string join(const std::vector<std::string_view>& segs) {
  std::string out;
  for (size_t i = 0; i < segs.size(); ++i) {
    if (i) out.push_back('/');
    out.append(segs[i]);
  }
  return out;
}

// The glob as matched: whitespace and outer slashes trimmed, empty and "."
// segments dropped.
std::string normalize(std::string_view glob) {
  return join(segments(trim(trim(glob, kSpace), "/")));
}

// Matching works on code points, not bytes, so `?` takes one character
// (é is one `?`, as in the reference) whatever its UTF-8 length. Bytes that
// are not valid UTF-8 become lone surrogates (0xDC00 + byte), which no
// valid sequence decodes to, so such paths still match themselves exactly.
std::u32string decode(std::string_view s) {
  std::u32string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size();) {
    auto c = static_cast<unsigned char>(s[i]);
    int extra = c < 0x80             ? 0
                : (c & 0xE0) == 0xC0 ? 1
                : (c & 0xF0) == 0xE0 ? 2
                : (c & 0xF8) == 0xF0 ? 3
                                     : -1;
    char32_t cp = extra == 0 ? c : extra == 1 ? (c & 0x1F) : extra == 2 ? (c & 0x0F) : (c & 0x07);
    bool valid = extra >= 0 && i + static_cast<size_t>(std::max(extra, 0)) < s.size();
    for (int k = 1; valid && k <= extra; ++k) {
      auto cc = static_cast<unsigned char>(s[i + static_cast<size_t>(k)]);
      if ((cc & 0xC0) != 0x80) valid = false;
      cp = (cp << 6) | (cc & 0x3F);
    }
    // Reject overlong forms, surrogates and out-of-range values.
    if (valid && extra > 0) {
      static const char32_t kMin[] = {0, 0x80, 0x800, 0x10000};
      valid = cp >= kMin[extra] && cp <= 0x10FFFF && (cp < 0xD800 || cp > 0xDFFF);
    }
    if (!valid) {
      out.push_back(0xDC00 + c);
      ++i;
    } else {
      out.push_back(cp);
      i += static_cast<size_t>(extra) + 1;
    }
  }
  return out;
}

// Program atoms live above the Unicode range; anything below is a literal.
constexpr char32_t kOne = 0x110001;       // `?`: one character other than '/'
constexpr char32_t kStar = 0x110002;      // `*`: any run without '/'
constexpr char32_t kGlobStar = 0x110003;  // `**`: any run
constexpr char32_t kDirStar = 0x110004;   // `**/`: nothing, or any run ending in '/'

std::u32string compile(std::string_view g) {
  std::u32string steps;
  std::u32string text = decode(g);
  std::u32string_view t = text;
  for (size_t i = 0; i < t.size();) {
    if (t.compare(i, 3, U"**/") == 0) {
      steps.push_back(kDirStar);
      i += 3;
    } else if (t.compare(i, 2, U"**") == 0) {
      steps.push_back(kGlobStar);
      i += 2;
    } else if (t[i] == U'*') {
      steps.push_back(kStar);
      ++i;
    } else if (t[i] == U'?') {
      steps.push_back(kOne);
      ++i;
    } else {
      steps.push_back(t[i]);
      ++i;
    }
  }
  return steps;
}

// Thompson-style simulation. State i < n means "about to match step i";
// state n accepts. A kDirStar at i also has an "inside" state: part of its
// run consumed, waiting for the '/' that ends it.
bool nfa_match(std::u32string_view program, std::string_view raw_path) {
  const std::u32string path = decode(raw_path);
  const size_t n = program.size();
  std::vector<char> cur(n + 1, 0), nxt(n + 1, 0), inside(n, 0), inside_nxt(n, 0);
  auto close = [&](std::vector<char>& set) {
    // Zero-width moves only go forward, so one pass in order suffices.
    for (size_t i = 0; i < n; ++i)
      if (set[i] && (program[i] == kStar || program[i] == kGlobStar || program[i] == kDirStar))
        set[i + 1] = 1;
  };
  cur[0] = 1;
  close(cur);
  for (char32_t c : path) {
    std::fill(nxt.begin(), nxt.end(), 0);
    std::fill(inside_nxt.begin(), inside_nxt.end(), 0);
    bool any = false;
    for (size_t i = 0; i < n; ++i) {
      if (inside[i]) {
        inside_nxt[i] = 1;
        any = true;
        if (c == U'/') nxt[i + 1] = 1;
      }
      if (!cur[i]) continue;
      switch (program[i]) {
        case kOne:
          if (c != U'/') nxt[i + 1] = 1, any = true;
          break;
        case kStar:
          if (c != U'/') nxt[i] = 1, any = true;
          break;
        case kGlobStar:
          nxt[i] = 1, any = true;
          break;
        case kDirStar:
          inside_nxt[i] = 1, any = true;
          if (c == U'/') nxt[i + 1] = 1;
          break;
        default:
          if (c == program[i]) nxt[i + 1] = 1, any = true;
          break;
      }
    }
    if (!any) return false;
    close(nxt);
    cur.swap(nxt);
    inside.swap(inside_nxt);
  }
  return cur[n] != 0;
}

// prefixes_conflict for prefixes that are already normalized (as every
// Glob's is): plain string comparison, no allocation. `conflicts` compares
// millions of pairs on a large plan.
bool normalized_prefixes_conflict(std::string_view a, std::string_view b) {
  if (a.size() > b.size()) std::swap(a, b);
  if (a.empty()) return true;
  return b.compare(0, a.size(), a) == 0 && (b.size() == a.size() || b[a.size()] == '/');
}

}  // namespace

Glob::Glob(std::string_view pattern) : pattern_(pattern), glob_(normalize(pattern)) {
  has_wildcard_ = std::any_of(glob_.begin(), glob_.end(), is_wildcard);
  prefix_ = schedule::literal_prefix(glob_);
  if (has_wildcard_) program_ = compile(glob_);
}

bool Glob::matches(std::string_view raw_path) const {
  std::string_view path = trim(raw_path, "/");
  if (!has_wildcard_) {
    // A bare path: that file, or everything beneath that directory.
    if (glob_.empty()) return path.empty();
    if (path.size() < glob_.size() || path.compare(0, glob_.size(), glob_) != 0) return false;
    return path.size() == glob_.size() || path[glob_.size()] == '/';
  }
  // Cheap rejection: a match starts with the literal directory prefix.
  if (!prefix_.empty() &&
      (path.size() <= prefix_.size() || path.compare(0, prefix_.size(), prefix_) != 0 ||
       path[prefix_.size()] != '/'))
    return false;
  return nfa_match(program_, path);
}

std::string literal_prefix(std::string_view glob) {
  std::string g = normalize(glob);
  size_t cut = g.find_first_of("*?");
  if (cut == std::string::npos) return g;
  std::string literal = g.substr(0, cut);
  // A wildcard mid-segment: back up to the enclosing directory.
  size_t slash = literal.rfind('/');
  literal = slash == std::string::npos ? std::string() : literal.substr(0, slash);
  return std::string(trim(literal, "/"));
}

bool prefixes_conflict(std::string_view a, std::string_view b) {
  auto sa = segments(a);
  auto sb = segments(b);
  size_t shorter = std::min(sa.size(), sb.size());
  return std::equal(sa.begin(), sa.begin() + static_cast<long>(shorter), sb.begin());
}

bool glob_matches(std::string_view glob, std::string_view path) {
  return Glob(glob).matches(path);
}

std::vector<GlobPair> footprint_conflicts(const std::vector<std::string>& a,
                                          const std::vector<std::string>& b) {
  std::vector<std::string> pa, pb;
  for (const auto& g : a) pa.push_back(literal_prefix(g));
  for (const auto& g : b) pb.push_back(literal_prefix(g));
  std::vector<GlobPair> out;
  for (size_t i = 0; i < a.size(); ++i)
    for (size_t j = 0; j < b.size(); ++j)
      if (normalized_prefixes_conflict(pa[i], pb[j])) out.emplace_back(a[i], b[j]);
  return out;
}

Footprint::Footprint(const std::vector<std::string>& globs) {
  globs_.reserve(globs.size());
  for (const auto& g : globs) globs_.emplace_back(g);
}

bool Footprint::contains(std::string_view path) const {
  return std::any_of(globs_.begin(), globs_.end(), [&](const Glob& g) { return g.matches(path); });
}

bool Footprint::conflicts_with(const Footprint& other) const {
  for (const auto& a : globs_)
    for (const auto& b : other.globs_)
      if (normalized_prefixes_conflict(a.literal_prefix(), b.literal_prefix())) return true;
  return false;
}

}  // namespace devgraph::schedule
