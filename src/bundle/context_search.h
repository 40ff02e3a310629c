// The search context recovery makes before anyone is asked: a persona's
// question, in its own words, turned into search terms, and the lines of
// the sources that mention them ranked into a few pointers
// (`path:line: excerpt`) the persona can open.
//
// Contract (every function here is pure):
// - question_terms(): the question's words, lower case, without stop words
//   or words under three letters, each once; identifiers (snake_case,
//   camelCase, dotted or slashed names) and file names are kept whole as
//   well. A question with no word left has no terms.
// - A term matches a word of a line when their stems are equal (a plural
//   or -ing/-ed form matches its base word) or, for an identifier or file
//   name, when the line holds it (case-insensitive).
// - rank() scores each line by the distinct terms it matches (an
//   identifier or a file name counts three, a word one), keeps a line only
//   when it matches every term of a one-term question, or at least two
//   terms (or one identifier) otherwise, and orders by score, then by the
//   documented order of the sources (kSourceOrder), then by path and line.
//   At most `max` pointers, one per path and line, excerpts clipped to 160
//   bytes on one line.
// - parse_grep() reads `git grep -n -z` output ("path\0line\0text" lines);
//   lines it cannot read are skipped.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace devgraph::bundle {

struct SearchTerms {
  std::vector<std::string> words;        // lower case, without stop words
  std::vector<std::string> identifiers;  // as written: names and file names
  bool empty() const { return words.empty() && identifiers.empty(); }
  // Every term, words first.
  std::vector<std::string> all() const;
};

SearchTerms question_terms(std::string_view question);

// Where a line comes from, in the order DESIGN.md gives for context
// recovery: the brief, spec and plan; the repository's files; its history;
// the bundle's issues and their comments; the run's artifacts.
enum class Source { brief, spec, plan, repository, history, issue, artifact };
std::string_view source_name(Source s);

struct SourceLine {
  Source source = Source::repository;
  std::string path;  // a worktree-relative path, a run file, or "commit <hash>"
  int line = 0;      // 1-based; 0 when the source has no lines (a commit)
  std::string text;
};

// `text` as numbered lines of `path`.
std::vector<SourceLine> lines_of(Source source, const std::string& path, std::string_view text);

struct Pointer {
  Source source = Source::repository;
  std::string path;
  int line = 0;
  std::string excerpt;
  int score = 0;
  // "path:line: excerpt" ("path: excerpt" without a line).
  std::string text() const;
};

int score_line(const SearchTerms& terms, std::string_view line, bool* enough = nullptr);
std::vector<Pointer> rank(const SearchTerms& terms, const std::vector<SourceLine>& lines,
                          size_t max);

// The argv after `git` for searching the tracked files of a worktree for
// the terms (fixed strings, case-insensitive, line numbers, NUL after the
// path and line, binary files skipped, at most `per_file` lines per file).
std::vector<std::string> grep_args(const SearchTerms& terms, int per_file);
std::vector<SourceLine> parse_grep(std::string_view out);

}  // namespace devgraph::bundle
