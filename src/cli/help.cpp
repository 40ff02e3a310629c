#include "cli/help.h"

#include <cctype>

#include "util/text.h"

namespace devgraph {

std::vector<std::pair<std::string, std::string>> exit_codes(const Verb& v) {
  std::vector<std::pair<std::string, std::string>> codes;
  const std::string text = v.exit_status;
  size_t i = 0;
  while (i < text.size()) {
    size_t end = text.find('\n', i);
    if (end == std::string::npos) end = text.size();
    const std::string line = text.substr(i, end - i);
    const size_t space = line.find(' ');
    if (space != std::string::npos)
      codes.emplace_back(line.substr(0, space), line.substr(space + 1));
    i = end + 1;
  }
  return codes;
}

namespace {


// `synopsis` wrapped at its top-level spaces, so "[--repo REPO]" stays
// on one line.
std::string wrap_synopsis(const std::string& synopsis, size_t indent, size_t first_column) {
  std::string joined;
  int depth = 0;
  for (char c : synopsis) {
    depth += c == '[' || c == '{' ? 1 : c == ']' || c == '}' ? -1 : 0;
    joined.push_back(c == ' ' && depth > 0 ? '\x1f' : c);
  }
  std::string out = wrap_words(joined, indent, first_column, 79);
  for (char& c : out)
    if (c == '\x1f') c = ' ';
  return out;
}

std::string subcommands_help(const Verb& v) {
  std::string h = "sub-commands:\n";
  for (const Subcommand& s : v.subcommands()) {
    const std::string synopsis = s.parser.synopsis();
    const std::string head = "  " + s.name + (synopsis.empty() ? "" : " ");
    h += head + wrap_synopsis(synopsis, 6, head.size()) + "\n";
    h += "      " + wrap_words(s.summary, 6, 6, 79) + "\n";
    h += s.parser.arguments_help(true, true, 6);
  }
  return h;
}

}  // namespace

std::string help_epilog(const Verb& v) {
  std::string e;
  if (v.subcommands != nullptr) e += subcommands_help(v) + "\n";
  e += std::string("example:\n  ") + v.example + "\n";
  const auto codes = exit_codes(v);
  if (!codes.empty()) {
    e += "\nexit status:\n";
    for (const auto& [code, meaning] : codes) {
      std::string head = "  " + code;
      head += std::string(head.size() < 9 ? 9 - head.size() : 1, ' ');
      e += head + wrap_words(meaning, 9, head.size(), 79) + "\n";
    }
  }
  return e;
}

std::string verb_usage(const Verb& v) {
  if (v.usage != nullptr) return v.usage;
  const ArgParser top = v.parser();
  if (v.subcommands == nullptr) return top.usage();
  for (const auto& p : top.positionals())
    if (p.hint == ValueHint::subcommand) return top.usage();
  std::string names;
  for (const Subcommand& s : v.subcommands()) names += (names.empty() ? "" : ",") + s.name;
  return "usage: devgraph " + std::string(v.name) + " [-h] {" + names + "} ...";
}

std::string verb_help(const Verb& v) {
  const std::string help = verb_parser(v.name).help();
  // The parser's usage line gives way to the verb's (the same line but
  // for a verb whose sub-command is no positional of its parser).
  const std::string first = wrap_usage(v.parser().usage());
  if (help.compare(0, first.size(), first) != 0) return help;
  return wrap_usage(verb_usage(v)) + help.substr(first.size());
}

std::string top_help() {
  std::string h =
      "usage: devgraph <verb> [args...]\n\n"
      "devgraph runs software development as a persistent graph: issues become\n"
      "bundles, agent CLIs do the bounded work inside each node, and code decides\n"
      "the rest.\n";
  for (VerbGroup g : {VerbGroup::loop, VerbGroup::look, VerbGroup::bundle, VerbGroup::blocks}) {
    h += std::string("\n") + group_title(g) + ":\n";
    for (const Verb& v : verb_table()) {
      if (v.group != g || v.internal) continue;
      std::string head = std::string("  ") + v.name;
      head += std::string(head.size() < 15 ? 15 - head.size() : 1, ' ');
      h += head + wrap_words(v.summary, 15, head.size(), 79) + "\n";
    }
  }
  h += "\n`devgraph <verb> --help` describes one verb, its flags and their defaults;\n"
       "`devgraph completion bash|zsh|fish` prints a shell completion script.\n"
       "Every verb (the internal ones too) and its exit codes: docs/reference.md,\n"
       "docs/exit-codes.md, and the man pages (man devgraph).\n";
  return h;
}

}  // namespace devgraph
