#include "bundle/context_search.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <set>
#include <tuple>

#include "util/stem.h"

namespace devgraph::bundle {
namespace {

// Words that carry no subject of their own in a question.
const std::set<std::string, std::less<>>& stop_words() {
  static const std::set<std::string, std::less<>> words = {
      "the",    "and",      "for",     "are",     "but",      "not",      "you",    "all",
      "any",    "can",      "had",     "her",     "was",      "one",      "our",    "out",
      "has",    "have",     "his",     "how",     "its",      "may",      "new",    "now",
      "old",    "see",      "two",     "way",     "who",      "did",      "does",   "doing",
      "done",   "get",      "got",     "let",     "put",      "say",      "she",    "too",
      "use",    "used",     "uses",    "using",   "what",     "which",    "when",   "where",
      "why",    "will",     "with",    "would",   "should",   "could",    "shall",  "must",
      "this",   "that",     "these",   "those",   "there",    "their",    "they",   "them",
      "then",   "than",     "from",    "into",    "onto",     "upon",     "about",  "over",
      "under",  "here",     "some",    "such",    "each",     "every",    "other",  "more",
      "most",   "much",     "many",    "very",    "just",     "only",     "also",   "been",
      "being",  "were",     "is",      "it",      "be",       "do",       "if",     "in",
      "of",     "on",       "or",      "to",      "we",       "an",       "as",     "at",
      "by",     "my",       "no",      "so",      "up",       "me",       "want",   "need",
      "needs",  "know",     "like",    "make",    "take",     "whether",  "either", "neither",
      "please", "unclear",  "clear",   "exactly", "supposed", "expected", "meant",  "mean",
      "means",  "question", "missing", "context", "tell",     "told",     "sure",   "right",
      "way",    "ways",     "kind",    "sort",    "thing",    "things",   "task",   "brief"};
  return words;
}

std::string lower(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

bool word_char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
}

// The identifier-like tokens of `text`: runs of word characters joined by
// '.', '/', '-' or ':' ("docs/conventions.md", "max_retries", "parseDate").
std::vector<std::string> tokens(std::string_view text) {
  std::vector<std::string> out;
  size_t i = 0;
  while (i < text.size()) {
    if (!word_char(text[i])) {
      ++i;
      continue;
    }
    size_t j = i;
    while (j < text.size() &&
           (word_char(text[j]) || ((text[j] == '.' || text[j] == '/' || text[j] == '-') &&
                                   j + 1 < text.size() && word_char(text[j + 1]))))
      ++j;
    out.emplace_back(text.substr(i, j - i));
    i = j;
  }
  return out;
}

// The plain words of `text` (letters and digits only).
std::vector<std::string> words_of(std::string_view text) {
  std::vector<std::string> out;
  std::string w;
  for (char c : text) {
    if (std::isalnum(static_cast<unsigned char>(c))) {
      w += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    } else if (!w.empty()) {
      out.push_back(std::move(w));
      w.clear();
    }
  }
  if (!w.empty()) out.push_back(std::move(w));
  return out;
}

bool is_identifier(const std::string& token) {
  bool inner_upper = false;
  for (size_t i = 1; i < token.size(); ++i)
    inner_upper |= std::isupper(static_cast<unsigned char>(token[i])) &&
                   std::islower(static_cast<unsigned char>(token[i - 1]));
  return token.find_first_of("_./") != std::string::npos || inner_upper;
}

void add_once(std::vector<std::string>& list, std::string s) {
  if (std::find(list.begin(), list.end(), s) == list.end()) list.push_back(std::move(s));
}

std::string one_line_clip(std::string_view text, size_t max) {
  std::string out;
  for (char c : text) out += (c == '\n' || c == '\r' || c == '\t') ? ' ' : c;
  size_t a = out.find_first_not_of(' ');
  out = a == std::string::npos ? "" : out.substr(a);
  while (!out.empty() && out.back() == ' ') out.pop_back();
  if (out.size() <= max) return out;
  size_t cut = max;
  while (cut > 0 && (static_cast<unsigned char>(out[cut]) & 0xC0) == 0x80) --cut;
  return out.substr(0, cut) + "...";
}

}  // namespace

std::vector<std::string> SearchTerms::all() const {
  std::vector<std::string> out = words;
  for (const auto& i : identifiers) out.push_back(i);
  return out;
}

SearchTerms question_terms(std::string_view question) {
  SearchTerms t;
  for (const auto& tok : tokens(question))
    if (is_identifier(tok)) add_once(t.identifiers, tok);
  for (const auto& w : words_of(question)) {
    if (w.size() < 3 || stop_words().count(w)) continue;
    if (std::all_of(w.begin(), w.end(), [](unsigned char c) { return std::isdigit(c); })) continue;
    add_once(t.words, w);
  }
  return t;
}

std::string_view source_name(Source s) {
  switch (s) {
    case Source::brief:
      return "brief";
    case Source::spec:
      return "spec";
    case Source::plan:
      return "plan";
    case Source::repository:
      return "repository";
    case Source::history:
      return "history";
    case Source::issue:
      return "issue";
    case Source::artifact:
      break;
  }
  return "artifact";
}

std::vector<SourceLine> lines_of(Source source, const std::string& path, std::string_view text) {
  std::vector<SourceLine> out;
  size_t pos = 0;
  int n = 0;
  while (pos < text.size()) {
    size_t eol = text.find('\n', pos);
    std::string_view line = text.substr(pos, eol == std::string_view::npos ? eol : eol - pos);
    ++n;
    if (!line.empty()) out.push_back(SourceLine{source, path, n, std::string(line)});
    if (eol == std::string_view::npos) break;
    pos = eol + 1;
  }
  return out;
}

std::string Pointer::text() const {
  return line > 0 ? path + ":" + std::to_string(line) + ": " + excerpt : path + ": " + excerpt;
}

int score_line(const SearchTerms& terms, std::string_view line, bool* enough) {
  std::set<std::string> stems;
  for (const auto& w : words_of(line)) stems.insert(word_stem(w));
  const std::string low = lower(line);
  int score = 0, matched_words = 0, matched_ids = 0;
  for (const auto& w : terms.words)
    if (stems.count(word_stem(w))) {
      ++score;
      ++matched_words;
    }
  for (const auto& id : terms.identifiers)
    if (low.find(lower(id)) != std::string::npos) {
      score += 3;
      ++matched_ids;
    }
  if (enough) {
    size_t total = terms.words.size() + terms.identifiers.size();
    *enough = matched_ids > 0 || (total == 1 ? matched_words == 1 : matched_words >= 2);
  }
  return score;
}

std::vector<Pointer> rank(const SearchTerms& terms, const std::vector<SourceLine>& lines,
                          size_t max) {
  std::vector<Pointer> found;
  if (terms.empty() || max == 0) return found;
  std::set<std::pair<std::string, int>> seen;
  for (const auto& l : lines) {
    bool enough = false;
    int score = score_line(terms, l.text, &enough);
    if (!enough || !seen.insert({l.path, l.line}).second) continue;
    found.push_back(Pointer{l.source, l.path, l.line, one_line_clip(l.text, 160), score});
  }
  std::stable_sort(found.begin(), found.end(), [](const Pointer& a, const Pointer& b) {
    return std::make_tuple(-a.score, static_cast<int>(a.source), a.path, a.line) <
           std::make_tuple(-b.score, static_cast<int>(b.source), b.path, b.line);
  });
  if (found.size() > max) found.resize(max);
  return found;
}

std::vector<std::string> grep_args(const SearchTerms& terms, int per_file) {
  std::vector<std::string> args = {"grep", "-n", "-z", "-I", "-i", "-F"};
  if (per_file > 0) args.push_back("--max-count=" + std::to_string(per_file));
  for (const auto& t : terms.all()) {
    args.push_back("-e");
    args.push_back(t);
  }
  args.push_back("--");
  return args;
}

std::vector<SourceLine> parse_grep(std::string_view out) {
  std::vector<SourceLine> lines;
  size_t pos = 0;
  while (pos < out.size()) {
    size_t eol = out.find('\n', pos);
    std::string_view rec = out.substr(pos, eol == std::string_view::npos ? eol : eol - pos);
    pos = eol == std::string_view::npos ? out.size() : eol + 1;
    size_t a = rec.find('\0');
    if (a == std::string_view::npos || a == 0) continue;
    size_t b = rec.find('\0', a + 1);
    if (b == std::string_view::npos) continue;
    std::string_view num = rec.substr(a + 1, b - a - 1);
    if (num.empty() || num.size() > 9 ||
        !std::all_of(num.begin(), num.end(), [](unsigned char c) { return std::isdigit(c); }))
      continue;
    lines.push_back(SourceLine{Source::repository, std::string(rec.substr(0, a)),
                               std::stoi(std::string(num)), std::string(rec.substr(b + 1))});
  }
  return lines;
}

}  // namespace devgraph::bundle
