// The verb reference in Markdown (cli/help.h): docs/reference.md, from the
// verb table, the way man.cpp writes the man pages.
#include <cctype>

#include "cli/help.h"

namespace devgraph {
namespace {

// Text for Markdown prose: outside `code spans`, the characters that would
// start markup (a tag, emphasis, a table cell, an escape) are escaped, so
// a help text reads as it does in --help.
std::string md(std::string_view text, bool in_table = false) {
  std::string out;
  bool code = false;
  for (char c : text) {
    if (c == '`') code = !code;
    if (in_table && c == '|') {
      out += "\\|";
      continue;
    }
    if (!code && c == '<') {
      out += "&lt;";
      continue;
    }
    if (!code && (c == '*' || c == '\\')) out.push_back('\\');
    out.push_back(c == '\n' ? ' ' : c);
  }
  return out;
}

// A summary ("turn issues into bundles") as a sentence.
std::string sentence(std::string_view text) {
  std::string out = md(text);
  if (!out.empty()) out[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(out[0])));
  if (!out.empty() && out.back() != '.') out.push_back('.');
  return out;
}

// One list item per positional and option of `p`.
std::string arguments(const ArgParser& p) {
  std::string out;
  for (const auto& a : p.positionals()) {
    std::string name;
    for (char c : a.name) name.push_back(static_cast<char>(std::toupper(c)));
    out += "- `" + (a.choices.empty() ? name : braces(a.choices)) + "`" +
           (a.optional ? " (optional)" : "") + ": " +
           md(a.help.empty() ? "see the usage" : a.help) + "\n";
  }
  for (const auto& o : p.options()) {
    std::string invocation = "--" + o.name;
    if (o.optional_value)
      invocation += " [" + o.metavar + "]";
    else if (!o.choices.empty())
      invocation += " " + braces(o.choices);
    else if (!o.is_flag)
      invocation += " " + o.value_name();
    std::string text = md(o.help.empty() ? "(no description)" : o.help);
    if (o.required) text += " (required)";
    if (o.repeated) text += " (may be repeated)";
    if (o.default_value) text += " (default: " + md(*o.default_value) + ")";
    if (o.hidden) text += " (internal: not in --help)";
    out += "- `" + invocation + "`: " + text + "\n";
  }
  return out;
}

std::string verb_section(const Verb& v) {
  const ArgParser top = v.parser();
  std::string out = "### " + std::string(v.name) + "\n\n";
  out += sentence(v.summary) +
         (v.internal ? " Internal: started by devgraph itself, not in --help." : "") + "\n\n";
  out += "```\n";
  if (v.subcommands == nullptr) {
    out += wrap_usage("devgraph " + std::string(v.name) +
                      (top.synopsis().empty() ? "" : " " + top.synopsis())) +
           "\n";
  } else {
    for (const Subcommand& s : v.subcommands())
      out += wrap_usage("devgraph " + std::string(v.name) + " " + s.name +
                        (s.parser.synopsis().empty() ? "" : " " + s.parser.synopsis())) +
             "\n";
  }
  out += "```\n\n";
  if (!top.description().empty()) out += md(top.description()) + "\n\n";
  if (!top.options().empty() || !top.positionals().empty()) out += arguments(top) + "\n";
  if (v.subcommands != nullptr)
    for (const Subcommand& s : v.subcommands()) {
      out += "#### " + std::string(v.name) + " " + s.name + "\n\n" + sentence(s.summary) + "\n\n";
      const std::string args = arguments(s.parser);
      if (!args.empty()) out += args + "\n";
    }
  out += "Example:\n\n```\n" + std::string(v.example) + "\n```\n\n";
  const auto codes = exit_codes(v);
  if (!codes.empty()) {
    out += "| exit | meaning |\n| --- | --- |\n";
    for (const auto& [code, meaning] : codes)
      out += "| " + code + " | " + md(meaning, true) + " |\n";
    out += "\n";
  }
  return out;
}

}  // namespace

std::string reference_markdown() {
  std::string out =
      "# devgraph verb reference\n\n"
      "<!-- Generated from the verb table (src/cli/verbs.cpp) by `devgraph completion "
      "reference`; do not edit. Regenerate: cmake --build build --target reference -->\n\n"
      "Every verb, in the order of `devgraph --help`, with every flag and its default, an "
      "example and the verb's exit codes; the same text as `devgraph VERB --help` and the man "
      "page devgraph-VERB(1). Exit codes across verbs: [exit-codes.md](exit-codes.md).\n\n";
  const VerbGroup groups[] = {VerbGroup::loop, VerbGroup::look, VerbGroup::bundle,
                              VerbGroup::blocks};
  for (VerbGroup g : groups) {
    std::string names;
    for (const Verb& v : verb_table())
      if (v.group == g && !v.internal)
        names += (names.empty() ? "" : ", ") + std::string("[") + v.name + "](#" + v.name + ")";
    out += "- " + std::string(group_title(g)) + ": " + names + "\n";
  }
  std::string internal;
  for (const Verb& v : verb_table())
    if (v.internal)
      internal += (internal.empty() ? "" : ", ") + std::string("[") + v.name + "](#" + v.name + ")";
  if (!internal.empty()) out += "- Internal: " + internal + "\n";
  out += "\n";
  for (VerbGroup g : groups) {
    out += "## " + std::string(group_title(g)) + "\n\n";
    for (const Verb& v : verb_table())
      if (v.group == g && !v.internal) out += verb_section(v);
  }
  if (!internal.empty()) {
    out +=
        "## Internal verbs\n\nStarted by devgraph itself (or by tests), not listed by "
        "`devgraph --help`.\n\n";
    for (const Verb& v : verb_table())
      if (v.internal) out += verb_section(v);
  }
  while (out.size() > 1 && out[out.size() - 2] == '\n' && out.back() == '\n') out.pop_back();
  return out;
}

}  // namespace devgraph
