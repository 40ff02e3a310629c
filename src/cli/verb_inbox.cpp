// `devgraph inbox [--repo DIR] [--json]`: what waits for a person in the
// repository's live runs (src/inbox/inbox.h) and its debug sessions
// (src/debug/sessions.h, keyed `debug/<slug>`), one block per item with
// the way to answer it, or a JSON array.
//
// Exit codes: 0 listed (also when nothing waits); 3 a usage error or no
// git repository at --repo.
#include "cli/verbs.h"
#include "debug/sessions.h"
#include "inbox/inbox.h"
#include "util/args.h"
#include "util/console.h"
#include "util/fs.h"
#include "util/text.h"

namespace devgraph {
namespace {

constexpr int kExitUsage = 3;

int report(const Error& e) {
  Error u = e;
  if (u.kind == ErrorKind::usage && u.exit_code != 0) u.exit_code = kExitUsage;
  return report_error("inbox", u);
}

}  // namespace

ArgParser verb_inbox_parser() {
  ArgParser p("devgraph inbox");
  p.description("List what waits for a person in this repository's runs.")
      .option("repo", "the repository")
      .default_value("the current directory")
      .hint(ValueHint::directory)
      .option("skill", "asset directory (accepted by every verb; unused here)")
      .default_value(kSkillDefault)
      .hint(ValueHint::directory)
      .flag("json", "print one JSON array of items");
  return p;
}

int verb_inbox(const VerbArgs& args) {
  ArgParser p = verb_parser("inbox");
  auto a = p.parse(args);
  if (!a) return report(a.error());
  auto home = inbox::develop_home_of(a->get_or("repo", "."));
  if (!home) return report(home.error());
  auto items = inbox::list_items(*home);
  if (!items) return report(items.error());
  std::vector<debug::Listed> sessions;
  for (auto& l : debug::list_sessions(*home))
    if (!l.question.empty()) sessions.push_back(std::move(l));
  if (a->flag("json")) {
    Json list = Json::array();
    for (const auto& i : *items) list.push_back(i.to_json());
    for (const auto& l : sessions)
      list.push_back({{"key", "debug/" + l.slug},
                      {"kind", "debug"},
                      {"reason", "debug session " + l.slug + " waits at " + l.question_id},
                      {"question", l.question},
                      {"evidence", l.file},
                      {"since", l.updated}});
    out() << dump_py(list, 2) << "\n";
    return 0;
  }
  if (items->empty() && sessions.empty()) {
    out() << "nothing waits for a person\n";
    return 0;
  }
  bool first = true;
  for (const auto& i : *items) {
    out() << (first ? "" : "\n") << i.key << "  (run " << i.run_id
          << (i.since.empty() ? "" : ", waiting since " + i.since) << ")\n"
          << "  reason:   " << i.reason << "\n"
          << "  question: " << i.question << "\n"
          << "  evidence: " << (i.evidence.empty() ? "none" : i.evidence) << "\n"
          << "  answer:   devgraph answer " << i.key << " --run " << i.run_id
          << " (--text TEXT | --file F | --approve | --reject [--text WHY])\n";
    first = false;
  }
  for (const auto& l : sessions) {
    out() << (first ? "" : "\n") << "debug/" << l.slug << "  (debug session"
          << (l.updated.empty() ? "" : ", waiting since " + l.updated) << ")\n"
          << "  reason:   the debugger reached " << l.question_id << "\n"
          << "  question: " << one_line(l.question, 400) << "\n"
          << "  evidence: " << l.file << "\n"
          << "  answer:   devgraph debug answer " << l.slug
          << " (--choice N | --text TEXT | --file F), or devgraph answer debug/" << l.slug
          << " (--text TEXT | --file F)\n";
    first = false;
  }
  return 0;
}

}  // namespace devgraph
