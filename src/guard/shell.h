// A shell-word parser for the placement guard.
//
// It understands enough of the POSIX/bash grammar to see every command a
// line would run and every file it would open for writing: quoting ('...',
// "...", $'...', backslash), the list operators ; && || | |& & and newline,
// subshells ( ), groups { }, command and process substitution ($( ),
// backticks, <( ), >( )), arithmetic $(( )), parameter expansion, comments,
// here-documents (whose bodies are scanned for substitutions unless the
// delimiter is quoted) and every redirection form (>, >>, >|, <, <>, &>,
// &>>, N>&M, <<<).
//
// Contracts:
// - parse_shell() never throws and never recurses deeper than kMaxDepth
//   nested constructs; input it cannot parse (unbalanced quotes, a missing
//   `)`, a here-document without its terminator, too deep) is an Error.
// - Reserved words (if, then, while, do, {, }, ...) are kept as ordinary
//   words; the analysis decides what they mean. Subshells, command
//   substitutions and here-document bodies become nested Scripts.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "util/expected.h"

namespace devgraph::guard::shell {

inline constexpr int kMaxDepth = 48;

struct Script;

// One piece of a word. Literal text is already unquoted.
struct Part {
  enum Kind {
    kLiteral,  // text; `quoted` says whether it came from quotes
    kTilde,    // an unquoted leading `~` or `~user` (text is the user)
    kParam,    // $name or ${...}; text is the name (or the raw ${...} body)
    kSubst,    // $( ), backticks, <( ), >( ): `script` holds the inner command
    kArith,    // $(( )): its value is unknown
  };
  Kind kind = kLiteral;
  std::string text;
  bool quoted = false;
  std::shared_ptr<Script> script;
};

struct Word {
  std::vector<Part> parts;
  std::string raw;  // the word as written, for messages
};

struct Redirect {
  int fd = -1;     // explicit fd before the operator, -1 when none
  std::string op;  // ">", ">>", ">|", "<", "<>", "&>", "&>>", ">&", "<&", "<<", "<<-", "<<<"
  Word target;     // file, fd number, or here-doc delimiter
  // The here-document body ("<<", "<<-"): literal when the delimiter was
  // quoted, otherwise with its substitutions as kSubst parts. Filled in
  // when the parser reaches the end of the line.
  std::shared_ptr<Word> heredoc;
};

struct Command {
  enum Kind { kSimple, kSubshell };
  Kind kind = kSimple;
  std::vector<Word> words;  // kSimple: assignments and arguments, in order
  std::vector<Redirect> redirects;
  std::shared_ptr<Script> body;  // kSubshell
};

struct Pipeline {
  std::vector<Command> commands;
};

// Pipelines joined by && / ||; ops[i] joins pipelines[i] and [i+1].
struct AndOr {
  std::vector<Pipeline> pipelines;
  std::vector<std::string> ops;
  bool background = false;
};

struct Script {
  std::vector<AndOr> lists;
};

Expected<Script> parse_shell(std::string_view text);

// True when the word is a NAME=value assignment (unquoted NAME).
bool is_assignment(const Word& word);

}  // namespace devgraph::guard::shell
