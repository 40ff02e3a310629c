// The man pages (cli/help.h): devgraph(1) and devgraph-VERB(1), in roff,
// from the verb table.
#include <cctype>

#include "cli/help.h"

namespace devgraph {
namespace {

// Text for a roff line: backslashes and hyphens escaped (so a flag copied
// from the page is the flag), a line that would start a request guarded.
std::string roff(std::string_view text) {
  std::string out;
  bool line_start = true;
  for (char c : text) {
    if (line_start && (c == '.' || c == '\'')) out += "\\&";
    if (c == '\\')
      out += "\\e";
    else if (c == '-')
      out += "\\-";
    else
      out.push_back(c);
    line_start = c == '\n';
  }
  return out;
}

std::string upper(std::string s) {
  for (char& c : s) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return s;
}

std::string header(const std::string& page, const std::string& version) {
  return ".TH " + roff(upper(page)) + " 1 \"\" \"devgraph " + roff(version) +
         "\" \"devgraph manual\"\n";
}

// One .TP entry per positional and option of `p`.
std::string arguments(const ArgParser& p) {
  std::string out;
  for (const auto& a : p.positionals()) {
    out += ".TP\n.I " + roff(a.choices.empty() ? upper(a.name) : braces(a.choices)) + "\n";
    out += roff(a.help.empty() ? "(see the synopsis)" : a.help) + "\n";
  }
  for (const auto& o : p.options()) {
    std::string value;
    if (o.optional_value)
      value = " [" + o.metavar + "]";
    else if (!o.choices.empty())
      value = " " + braces(o.choices);
    else if (!o.is_flag)
      value = " " + o.value_name();
    out += ".TP\n";
    out += value.empty() ? ".B \\-\\-" + roff(o.name) + "\n"
                         : ".BI \\-\\-" + roff(o.name) + " \"" + roff(value) + "\"\n";
    std::string text = o.help;
    if (o.repeated) text += (text.empty() ? "" : " ") + std::string("(may be repeated)");
    if (o.default_value)
      text += (text.empty() ? "" : " ") + ("(default: " + *o.default_value + ")");
    if (o.hidden) text += (text.empty() ? "" : " ") + std::string("(internal: not in --help)");
    out += roff(text.empty() ? "(no description)" : text) + "\n";
  }
  return out;
}

std::string exit_status(const Verb& v) {
  const auto codes = exit_codes(v);
  if (codes.empty()) return "";
  std::string out = ".SH EXIT STATUS\n";
  for (const auto& [code, meaning] : codes)
    out += ".TP\n.B " + roff(code) + "\n" + roff(meaning) + "\n";
  return out;
}

std::string see_also(const Verb& self) {
  std::string out = ".SH SEE ALSO\n.BR devgraph (1)";
  for (const Verb& v : verb_table())
    if (v.group == self.group && &v != &self) out += ",\n.BR devgraph\\-" + roff(v.name) + " (1)";
  return out + "\n";
}

std::string verb_page(const Verb& v, const std::string& version) {
  const std::string page = "devgraph-" + std::string(v.name);
  const ArgParser top = v.parser();
  std::string out = header(page, version);
  out += ".SH NAME\n" + roff(page) + " \\- " + roff(v.summary) + "\n";
  out += ".SH SYNOPSIS\n";
  if (v.subcommands == nullptr) {
    out += ".B devgraph " + roff(v.name) + "\n" + roff(top.synopsis()) + "\n";
  } else {
    bool first = true;
    for (const Subcommand& s : v.subcommands()) {
      out += first ? "" : ".br\n";
      first = false;
      out += ".B devgraph " + roff(v.name) + " " + roff(s.name) + "\n" + roff(s.parser.synopsis()) +
             "\n";
    }
  }
  out +=
      ".SH DESCRIPTION\n" + roff(top.description().empty() ? v.summary : top.description()) + "\n";
  if (!top.options().empty() || !top.positionals().empty()) out += ".SH OPTIONS\n" + arguments(top);
  if (v.subcommands != nullptr) {
    out += ".SH COMMANDS\n";
    for (const Subcommand& s : v.subcommands())
      out += ".SS " + roff(s.name) + "\n" + roff(s.summary) + "\n" + arguments(s.parser);
  }
  out += ".SH EXAMPLE\n.PP\n.nf\n.RS\n" + roff(v.example) + "\n.RE\n.fi\n";
  out += exit_status(v);
  out += see_also(v);
  return out;
}

constexpr const char* kAbout =
    "devgraph turns a repository's open issues into pull requests by walking a graph of "
    "work. An orchestrator groups the issues into small bundles; for each bundle a headless "
    "tech lead has agent CLIs (claude, codex, gemini, any command, or a built-in simulated "
    "agent) plan it, write a failing test for each task, implement and verify the task and "
    "commit exactly its files, then test, build and review the whole branch and open a pull "
    "request or leave a ready branch.\n"
    ".PP\n"
    "The agents only do the bounded work inside a node. What happens next is decided by code, "
    "from the graph in GRAPH.yaml, and every step is recorded in the run directory "
    "(state.json and events.jsonl) before anything relies on it: a run can be killed at any "
    "moment and the same command resumes it.\n"
    ".PP\n"
    "When a run needs a person, what it waits for is listed by devgraph inbox and set going "
    "again by devgraph answer; devgraph board shows a run live in a browser, and devgraph "
    "metrics reports its time and cost.\n";

std::string main_page(const std::string& version) {
  std::string out = header("devgraph", version);
  out += ".SH NAME\ndevgraph \\- software development as a persistent, resumable graph\n";
  out +=
      ".SH SYNOPSIS\n.B devgraph\n.I verb\n[\\fIargs\\fR ...]\n.br\n.B devgraph\n"
      "[\\fIverb\\fR] \\-\\-help\n.br\n.B devgraph \\-\\-version\n";
  out += ".SH DESCRIPTION\n" + roff(kAbout);
  out += ".SH VERBS\n";
  for (VerbGroup g : {VerbGroup::loop, VerbGroup::look, VerbGroup::bundle, VerbGroup::blocks}) {
    out += ".SS " + roff(group_title(g)) + "\n";
    for (const Verb& v : verb_table())
      if (v.group == g)
        out += ".TP\n.B " + roff(v.name) + "\n" + roff(v.summary) + "; see\n.BR devgraph\\-" +
               roff(v.name) + " (1).\n";
  }
  out +=
      ".SH ENVIRONMENT\n"
      ".TP\n.B DEVGRAPH_SKILL\n" +
      roff(
          "devgraph's assets (GRAPH.yaml, contracts/, agents/, templates/) when --skill is "
          "not given; else the copy installed beside the binary.") +
      "\n.TP\n.B AI_ROOT\n" +
      roff("the root of the develop homes (runs, local issues) and worktrees; default ~/.ai.") +
      "\n.TP\n.B DEVELOP_WORKTREES_ROOT\n.TQ\n.B DEVELOP_HOME_ROOT\n" +
      roff("where worktrees and develop homes go, when not under AI_ROOT.") +
      "\n.TP\n.B DEVELOP_METRICS_DIR\n" + roff("where session records are written.") + "\n";
  out +=
      ".SH EXIT STATUS\n"
      ".TP\n.B 0\nsuccess\n"
      ".TP\n.B 1\n" +
      roff("the command was understood but refused or failed; the message says why") +
      "\n.TP\n.B 2\n" +
      roff("a usage error; for some verbs a denial, a violation or a wait for a person") +
      "\n.TP\n.B 3\n" +
      roff(
          "for run, run-bundle, issue, inbox, answer, board, clean, fix, discuss, critique "
          "and audit-merge: a usage, state or placement error, found before anything was "
          "written") +
      "\n.TP\n.B 70\n" + roff("an internal error (a bug)") + "\n.TP\n.B 128+N\n" +
      roff("stopped by signal N; the next run resumes") + "\n";
  out += ".PP\n" + roff("Each verb's page lists its own codes.") + "\n";
  out += ".SH SEE ALSO\n";
  bool first = true;
  for (const Verb& v : verb_table()) {
    out += (first ? "" : ",\n") + std::string(".BR devgraph\\-") + roff(v.name) + " (1)";
    first = false;
  }
  return out + "\n";
}

}  // namespace

std::map<std::string, std::string> man_pages(const std::string& version) {
  std::map<std::string, std::string> pages;
  pages["devgraph.1"] = main_page(version);
  for (const Verb& v : verb_table())
    pages["devgraph-" + std::string(v.name) + ".1"] = verb_page(v, version);
  return pages;
}

}  // namespace devgraph
