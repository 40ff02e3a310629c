// `devgraph issue new|list|show|close`: the local issues
// (issues/local_store.h) of the repository at --repo (default: the current
// directory), kept in <develop_home>/issues/ where the placement guard puts
// the repository's develop home.
//
// Exit codes: 0 done; 1 refused or failed (no such issue, a corrupt issue
// file, the file system); 3 a usage error (with the usage line), or no git
// repository at --repo, found before anything is written.
#include <unistd.h>

#include <cerrno>
#include <cstdio>

#include "bundle/placement.h"
#include "cli/help.h"
#include "cli/verbs.h"
#include "guard/guard.h"
#include "issues/local_store.h"
#include "util/args.h"
#include "util/console.h"
#include "util/fs.h"
#include "util/json.h"
#include "util/text.h"

namespace devgraph {
namespace {

constexpr int kExitUsage = 3;

std::string process_cwd() {
  char buf[4096];
  return getcwd(buf, sizeof buf) ? std::string(buf) : std::string("/");
}

int verb_usage_error(const std::string& message) {
  err() << verb_usage(*find_verb("issue")) << "\ndevgraph issue: error: " << message << "\n";
  return kExitUsage;
}

// Reports `e` for subcommand parser `p`: a usage error, from the parser
// or from the store's checks, with the usage line and exit 3.
int report(const ArgParser& p, const Error& e) {
  if (e.exit_code == 0 || e.kind != ErrorKind::usage) return report_error("issue", e);
  Error u = e.message.rfind("usage:", 0) == 0 ? e : p.usage_error(e.message);
  u.exit_code = kExitUsage;
  return report_error("issue", u);
}

// The issues directory of the repository at `repo` (default: the current
// directory); `for_writing` also puts it to the placement guard.
Expected<std::string> issues_dir(const std::optional<std::string>& repo, bool for_writing) {
  const guard::Roots roots = guard::Roots::from_env();
  const std::string cwd = process_cwd();
  const std::string dir = guard::resolve_path(repo.value_or(cwd), cwd, roots.home);
  auto placement = guard::resolve_placement(dir, std::nullopt, roots);
  if (!placement) return Error{placement.error().message, kExitUsage, ErrorKind::refused};
  std::string issues = join_path(placement->develop_home, "issues");
  if (for_writing)
    if (auto deny = bundle::check_write_root("issues directory", issues, roots))
      return Error{"placement guard: " + *deny, kExitUsage, ErrorKind::refused};
  return issues;
}

// A positive issue number, "#3" or "3".
Expected<long long> issue_number(const ArgParser& p, const std::string& text) {
  std::string digits = text.rfind('#', 0) == 0 ? text.substr(1) : text;
  auto n = parse_int(digits);
  if (!n || *n <= 0 || digits.find_first_not_of("0123456789") != std::string::npos)
    return p.usage_error("argument number: invalid issue number: " + py_repr(text));
  return *n;
}

// Untrusted one-line text for a terminal: control characters (C0, DEL,
// C1) are shown escaped, so a title cannot break a line or move a cursor.
std::string printable(const std::string& s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    const auto c = static_cast<unsigned char>(s[i]);
    char buf[8];
    if (c == '\n') {
      out += "\\n";
    } else if (c == '\t') {
      out += "\\t";
    } else if (c == '\r') {
      out += "\\r";
    } else if (c < 0x20 || c == 0x7f) {
      std::snprintf(buf, sizeof buf, "\\x%02x", c);
      out += buf;
    } else if (c == 0xc2 && i + 1 < s.size() && static_cast<unsigned char>(s[i + 1]) >= 0x80 &&
               static_cast<unsigned char>(s[i + 1]) <= 0x9f) {
      std::snprintf(buf, sizeof buf, "\\u%04x", static_cast<unsigned char>(s[++i]));
      out += buf;
    } else {
      out.push_back(static_cast<char>(c));
    }
  }
  return out;
}

Json issue_json(const issues::Issue& i) {
  auto or_null = [](const std::string& s) { return s.empty() ? Json(nullptr) : Json(s); };
  Json j = Json::object();
  j["number"] = i.number;
  j["title"] = i.title;
  j["state"] = i.state;
  j["labels"] = i.labels;
  j["parent"] = i.parent ? Json(*i.parent) : Json(nullptr);
  j["priority"] = or_null(i.priority);
  j["created"] = i.created;
  j["updated"] = or_null(i.updated);
  j["branch"] = i.branch ? Json(*i.branch) : Json(nullptr);
  j["head"] = i.head ? Json(*i.head) : Json(nullptr);
  j["close_reason"] = or_null(i.close_reason);
  j["body"] = i.body;
  return j;
}

Expected<std::string> read_stdin() {
  std::string text;
  char buf[65536];
  while (true) {
    ssize_t n = ::read(0, buf, sizeof buf);
    if (n > 0) {
      text.append(buf, static_cast<size_t>(n));
    } else if (n == 0) {
      return text;
    } else if (errno != EINTR) {
      return fail("cannot read standard input");
    }
  }
}

// --repo, which every sub-command takes.
void repo_flag(ArgParser& p) {
  p.option("repo", "a directory of the repository")
      .default_value("the current directory")
      .hint(ValueHint::directory);
}

ArgParser new_parser() {
  ArgParser p("devgraph issue new");
  p.description("File a local issue and print its number.")
      .positional("title", "the issue's title (at most 256 bytes)")
      .option("body", "the body text")
      .default_value("empty")
      .option("body-file", "read the body from this file ('-': standard input)")
      .hint(ValueHint::file)
      .repeated("label", "a label; repeat for more (no whitespace or commas)")
      .option("parent", "the number of the issue this one is part of")
      .hint(ValueHint::issue)
      .option("priority", "the issue's priority", false, {"P0", "P1", "P2"})
      .default_value("none, or one its labels name");
  repo_flag(p);
  return p;
}

ArgParser list_parser() {
  ArgParser p("devgraph issue list");
  p.description("List the local issues, by number.")
      .option("state", "which issues", false, {"open", "closed", "all"})
      .default_value("open")
      .flag("json", "a JSON array of the issues, bodies included");
  repo_flag(p);
  return p;
}

ArgParser show_parser() {
  ArgParser p("devgraph issue show");
  p.description("Print one local issue: its fields, then its body.")
      .positional("number", "the issue's number (3 or #3)")
      .hint(ValueHint::issue);
  repo_flag(p);
  return p;
}

ArgParser close_parser() {
  ArgParser p("devgraph issue close");
  p.description("Close a local issue (an issue already closed is left as it is).")
      .positional("number", "the issue's number (3 or #3)")
      .hint(ValueHint::issue)
      .option("reason", "why it is closed")
      .default_value("none");
  repo_flag(p);
  return p;
}

int run_new(const VerbArgs& args) {
  ArgParser p = new_parser();
  auto a = p.parse(args);
  if (!a) return report(p, a.error());
  issues::NewIssue issue;
  issue.title = a->positionals()[0];
  issue.labels = a->all("label");
  issue.priority = a->get_or("priority", "");
  if (a->has("body") && a->has("body-file"))
    return report(p, p.usage_error("argument --body-file: not allowed with argument --body"));
  issue.body = a->get_or("body", "");
  if (auto file = a->get("body-file")) {
    auto text = *file == "-" ? read_stdin() : read_file(*file);
    if (!text) return report(p, p.usage_error("argument --body-file: " + text.error().message));
    issue.body = std::move(*text);
  }
  if (auto parent = a->get("parent")) {
    auto n = parse_int(*parent);
    if (!n || *n <= 0)
      return report(p,
                    p.usage_error("argument --parent: invalid issue number: " + py_repr(*parent)));
    issue.parent = *n;
  }
  if (auto st = issues::check_new_issue(issue); !st) return report(p, st.error());
  auto dir = issues_dir(a->get("repo"), true);
  if (!dir) return report(p, dir.error());
  auto made = issues::LocalIssues(*dir).create(issue);
  if (!made) return report(p, made.error());
  write_out(std::to_string(made->number) + "\n");
  return 0;
}

int run_list(const VerbArgs& args) {
  ArgParser p = list_parser();
  auto a = p.parse(args);
  if (!a) return report(p, a.error());
  const std::string state = a->get_or("state", "open");
  auto dir = issues_dir(a->get("repo"), false);
  if (!dir) return report(p, dir.error());
  auto all = issues::LocalIssues(*dir).list();
  if (!all) return report(p, all.error());
  Json array = Json::array();
  std::string text;
  for (const auto& i : *all) {
    if (state != "all" && i.state != state) continue;
    if (a->flag("json")) {
      array.push_back(issue_json(i));
      continue;
    }
    text += "#" + std::to_string(i.number) + "  " + i.state + "  " + printable(i.title);
    if (!i.labels.empty()) text += "  [" + printable(join(i.labels, ", ")) + "]";
    text += "\n";
  }
  // Bodies are any bytes: what is not UTF-8 is shown as U+FFFD.
  if (a->flag("json")) text = array.dump(2, ' ', true, Json::error_handler_t::replace) + "\n";
  write_out(text);
  return 0;
}

int run_show(const VerbArgs& args) {
  ArgParser p = show_parser();
  auto a = p.parse(args);
  if (!a) return report(p, a.error());
  auto number = issue_number(p, a->positionals()[0]);
  if (!number) return report(p, number.error());
  auto dir = issues_dir(a->get("repo"), false);
  if (!dir) return report(p, dir.error());
  auto i = issues::LocalIssues(*dir).get(*number);
  if (!i) return report(p, i.error());
  std::string text;
  auto field = [&text](const char* name, const std::string& value) {
    text += std::string(name) + ": " + printable(value) + "\n";
  };
  field("number", std::to_string(i->number));
  field("title", i->title);
  field("state", i->state);
  field("labels", join(i->labels, ", "));
  if (i->parent) field("parent", std::to_string(*i->parent));
  if (!i->priority.empty()) field("priority", i->priority);
  field("created", i->created);
  if (!i->updated.empty()) field("updated", i->updated);
  if (i->branch) field("branch", *i->branch);
  if (i->head) field("head", *i->head);
  if (!i->close_reason.empty()) field("close_reason", i->close_reason);
  if (!i->body.empty()) text += "\n" + i->body + (i->body.back() == '\n' ? "" : "\n");
  write_out(text);
  return 0;
}

int run_close(const VerbArgs& args) {
  ArgParser p = close_parser();
  auto a = p.parse(args);
  if (!a) return report(p, a.error());
  auto number = issue_number(p, a->positionals()[0]);
  if (!number) return report(p, number.error());
  auto dir = issues_dir(a->get("repo"), true);
  if (!dir) return report(p, dir.error());
  issues::LocalIssues store(*dir);
  auto before = store.get(*number);
  if (!before) return report(p, before.error());
  auto closed = store.close(*number, a->get_or("reason", ""));
  if (!closed) return report(p, closed.error());
  write_out("#" + std::to_string(*number) +
            (before->state == "closed" ? " was already closed\n" : " closed\n"));
  return 0;
}

}  // namespace

ArgParser verb_issue_parser() {
  ArgParser p("devgraph issue");
  p.description(
      "Local issues: one Markdown file per issue in <develop_home>/issues/, the default issue "
      "tracker of `devgraph run`.");
  return p;
}

std::vector<Subcommand> verb_issue_subcommands() {
  return {{"new", "file an issue; prints its number", new_parser()},
          {"list", "the issues, by number", list_parser()},
          {"show", "one issue's fields and body", show_parser()},
          {"close", "close an issue", close_parser()}};
}

int verb_issue(const VerbArgs& args) {
  if (args.empty()) return verb_usage_error("the following arguments are required: subcommand");
  const std::string& sub = args[0];
  const VerbArgs rest(args.begin() + 1, args.end());
  if (sub == "-h" || sub == "--help") {
    out() << verb_help(*find_verb("issue"));
    return 0;
  }
  if (sub == "new") return run_new(rest);
  if (sub == "list") return run_list(rest);
  if (sub == "show") return run_show(rest);
  if (sub == "close") return run_close(rest);
  return verb_usage_error("argument subcommand: invalid choice: " + py_repr(sub) +
                          " (choose from 'new', 'list', 'show', 'close')");
}

}  // namespace devgraph
