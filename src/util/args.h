// A small command-line parser with argparse's observable behaviour: the
// verbs mirror Python scripts, so usage errors print "usage: ..." and
// "PROG: error: ..." on stderr and exit 2, and `-h`/`--help` prints the
// help on stdout and exits 0.
//
// Options are long flags (`--name VALUE`, `--name=VALUE`, or a bare
// `--name` for switches), each also taken by any unambiguous prefix
// (`--no` for `--node`). Positionals are taken in order. An option given
// twice keeps its last value; one declared with repeated() keeps them all
// (argparse's action="append"). The word after an option that takes a value
// is that value unless argparse would read it as an option (it names one,
// or starts with '-' and is neither a negative number nor has a space).
// An option declared with optional_value() may come bare or with a value
// (argparse's nargs='?'): `--name`, `--name VALUE` (the next word, by the
// same rule) or `--name=VALUE`.
//
// The declarations are also what the help, the shell completions and the
// man pages are made of (src/cli/help.h, src/cli/completion.h), so a flag
// is described once, where it is parsed.
//
// Contract:
// - usage() and the error texts are argparse's and do not depend on the
//   help-only fields (defaults, hints, positional choices, the epilog).
// - An unknown long option is "unrecognized arguments: --x", followed on
//   the same line by " (did you mean --y?)" when one declared option (or
//   --help) is close to it (util/suggest.h).
// - help() lists every declaration: each positional, -h, then each option
//   with its value's name or choices, its help and "(default: D)" when a
//   default is declared; then the epilog.
// - The modifiers default_value(), hint(), choices() and optional() change
//   the declaration made last (an option or a positional).
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "util/expected.h"

namespace devgraph {

// A usage text wrapped as argparse wraps it: each line longer than
// `width` broken at the spaces between its top-level parts ("[--repo
// REPO]" stays whole), the continuation lines under the first part after
// the program ("usage: devgraph run " wide).
std::string wrap_usage(const std::string& usage, size_t width = 79);

// A value's choices as help, man pages and the reference write them:
// "{a,b,c}".
std::string braces(const std::vector<std::string>& choices);

class ParsedArgs {
 public:
  std::optional<std::string> get(const std::string& name) const;
  std::string get_or(const std::string& name, const std::string& fallback) const;
  bool has(const std::string& name) const { return values_.count(name) > 0; }
  bool flag(const std::string& name) const { return flags_.count(name) > 0; }
  // Every value of a repeated() option, in the order given; none when absent.
  std::vector<std::string> all(const std::string& name) const;
  const std::vector<std::string>& positionals() const { return positionals_; }
  // Arguments after a literal "--" or everything after the positionals when
  // the parser was told to pass the remainder through.
  const std::vector<std::string>& rest() const { return rest_; }

 private:
  friend class ArgParser;
  std::map<std::string, std::string> values_;
  std::map<std::string, std::vector<std::string>> lists_;
  std::set<std::string> flags_;
  std::vector<std::string> positionals_;
  std::vector<std::string> rest_;
};

// What kind of value an option or positional takes, for the shell
// completions: the files or directories of the shell, or ids read from the
// repository's runs (src/cli/completion.h).
enum class ValueHint { none, file, directory, bundle, issue, run, slug, subcommand };

class ArgParser {
 public:
  struct Option {
    std::string name;
    std::string help;
    bool required = false;
    bool is_flag = false;
    std::vector<std::string> choices;
    bool repeated = false;
    bool optional_value = false;
    std::string metavar;
    std::optional<std::string> default_value;
    ValueHint hint = ValueHint::none;
    // Left out of help(), usage() and the completions (argparse's
    // SUPPRESS): a flag only tests or devgraph's own scripts pass. The man
    // pages and docs/reference.md still list it, marked internal.
    bool hidden = false;
    // The value's name in a usage line: the metavar, else NAME for --name.
    std::string value_name() const;
  };
  struct Positional {
    std::string name;
    std::string help;
    std::vector<std::string> choices;  // for help and completion; the caller checks
    bool optional = false;             // argparse's nargs='?'
    ValueHint hint = ValueHint::none;
  };

  explicit ArgParser(std::string prog) : prog_(std::move(prog)) {}

  ArgParser& positional(std::string name, std::string help = "");
  ArgParser& option(std::string name, std::string help = "", bool required = false,
                    std::vector<std::string> choices = {});
  ArgParser& flag(std::string name, std::string help = "");
  // An option that may be given several times; see ParsedArgs::all().
  ArgParser& repeated(std::string name, std::string help = "");
  // An option whose value may be left out: flag(name) says whether it was
  // given, get(name) its value when one came with it (the last spelling
  // given decides, so a bare one after a valued one has none). `metavar`
  // names the value in the usage ("--board [PORT]").
  ArgParser& optional_value(std::string name, std::string help, std::string metavar);
  // Keep unknown trailing words in rest() instead of failing.
  ArgParser& allow_rest() {
    allow_rest_ = true;
    return *this;
  }
  ArgParser& description(std::string text) {
    description_ = std::move(text);
    return *this;
  }
  // Text after the option list in help() (an example, the exit codes),
  // made only when the help is.
  ArgParser& epilog(std::function<std::string()> make) {
    epilog_ = std::move(make);
    return *this;
  }
  // The default of the option declared last, as help shows it: a value
  // ("127.0.0.1") or where it comes from ("GRAPH.yaml intake.label").
  ArgParser& default_value(std::string text);
  // What the value of the option or positional declared last is.
  ArgParser& hint(ValueHint h);
  // The values the positional declared last takes (help and completion).
  ArgParser& choices(std::vector<std::string> values);
  // The option declared last is hidden (Option::hidden).
  ArgParser& hidden();
  // The positional declared last may be left out (it must come after every
  // positional that may not).
  ArgParser& optional();

  // A usage error has exit_code 2 and its message is the full stderr text
  // (usage line plus "PROG: error: ..."). A help request has exit_code 0
  // and its message is the help text for stdout.
  Expected<ParsedArgs> parse(const std::vector<std::string>& args) const;
  std::string usage() const;
  std::string help() const;
  // The arguments as a man page's SYNOPSIS shows them, after the program:
  // positionals in capitals, then the options ("ITEM [--text TEXT]").
  std::string synopsis() const;
  // The entries of help()'s lists: the positionals, the options (without
  // -h), or both, one per line at argparse's columns (shifted right by
  // `indent` - 2 for a list inside a list).
  std::string arguments_help(bool positionals, bool options, size_t indent = 2) const;
  const std::string& prog() const { return prog_; }
  const std::string& description() const { return description_; }
  const std::vector<Option>& options() const { return opts_; }
  const std::vector<Positional>& positionals() const { return pos_; }
  // Builds a usage error (ErrorKind::usage, exit code 2) for checks the
  // caller makes after parsing.
  Error usage_error(const std::string& message) const;

 private:
  using Opt = Option;
  using Pos = Positional;
  const Opt* find(const std::string& name) const;
  // The option a long flag's name (without "--") selects: an exact name or
  // an unambiguous prefix, as argparse resolves them. `ambiguous` lists the
  // candidates ("--a, --b") when a prefix selects several.
  struct Match {
    const Opt* opt = nullptr;
    bool help = false;
    std::string ambiguous;
  };
  Match match(const std::string& name) const;
  bool looks_like_option(const std::string& word) const;

  std::string prog_;
  std::string description_;
  std::function<std::string()> epilog_;
  std::vector<Opt> opts_;
  std::vector<Pos> pos_;
  bool allow_rest_ = false;
  bool last_is_positional_ = false;
};

// Parses a decimal integer as Python's int() does for the flags argparse
// converts (surrounding whitespace, one sign, '_' between digits; ASCII
// digits only). nullopt on anything else; a well-formed number outside the
// 64-bit range also sets *out_of_range.
std::optional<long long> parse_int(std::string_view text, bool* out_of_range = nullptr);

// A number of seconds as the reference's float flags take it (whole text,
// finite); nullopt otherwise.
std::optional<double> parse_seconds(const std::string& text);

}  // namespace devgraph
