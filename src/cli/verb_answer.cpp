// `devgraph answer ITEM (--text TEXT | --file F | --approve | --reject
// [--text WHY]) [--repo DIR] [--run RUN_ID]`: answers one item of the
// inbox (src/inbox/inbox.h) and says what happens next, in one line.
// ITEM is taken from the newest run in which it waits, or from --run.
// ITEM `debug/<slug>` is a debug session's question (src/debug/): its
// answer (--text or --file; a choice's number as the text) is recorded as
// `devgraph debug answer SLUG --no-continue` records it, and `devgraph
// debug continue SLUG` goes on.
//
// Exit codes: 0 answered; 1 refused or failed (the item does not wait, the
// run refused the change); 3 a usage error or no git repository at
// --repo, found before anything is written.
#include "cli/verbs.h"
#include "contracts/schema.h"
#include "debug/decide.h"
#include "debug/session.h"
#include "debug/sessions.h"
#include "graph/graph.h"
#include "inbox/inbox.h"
#include "skill/skill.h"
#include "store/run_store.h"
#include "util/args.h"
#include "util/clock.h"
#include "util/console.h"
#include "util/fs.h"

namespace devgraph {
namespace {

constexpr int kExitUsage = 3;

// Usage errors (the parser's and this verb's own checks) exit 3.
int report(const Error& e) {
  Error u = e;
  if (u.kind == ErrorKind::usage && u.exit_code != 0) u.exit_code = kExitUsage;
  return report_error("answer", u);
}

// The answer's kind and text from the flags: exactly one of --text,
// --file, --approve and --reject, where --reject may take --text as its
// reason.
Expected<std::pair<inbox::AnswerKind, std::string>> answer_of(const ParsedArgs& a) {
  auto usage = [](const std::string& m) { return fail(ErrorKind::usage, m, kExitUsage); };
  bool text = a.has("text"), file = a.has("file");
  bool approve = a.flag("approve"), reject = a.flag("reject");
  int given = text + file + approve + reject - (reject && text);
  if (given == 0) return usage("one of --text, --file, --approve or --reject is required");
  if (given > 1)
    return usage(
        "--text, --file, --approve and --reject exclude each other (--reject takes --text as its "
        "reason)");
  if (reject) return std::pair{inbox::AnswerKind::reject, a.get_or("text", "")};
  if (approve) return std::pair{inbox::AnswerKind::approve, std::string()};
  std::string body;
  if (file) {
    auto read = read_file(*a.get("file"));
    if (!read) return fail("--file " + *a.get("file") + ": " + read.error().message);
    body = std::move(*read);
  } else {
    body = *a.get("text");
  }
  if (body.find_first_not_of(" \t\r\n") == std::string::npos)
    return usage(file ? "--file " + *a.get("file") + " is empty" : "--text is empty");
  return std::pair{inbox::AnswerKind::text, std::move(body)};
}

// The waiting item named `key`: in run `run` when given, else in the
// newest run in which it waits.
Expected<inbox::Item> find_item(const std::string& home, const std::string& key,
                                const std::optional<std::string>& run) {
  std::vector<inbox::Item> items;
  std::string where = "any live run of this repository";
  if (run) {
    std::string dir = join_path(join_path(home, "runs"), *run);
    auto state = read_run_state(dir);
    if (!state) return fail(ErrorKind::not_found, "--run " + *run + ": no such run in " + home);
    items = inbox::items_of_run(*state, dir);
    where = "run " + *run;
  } else {
    DG_TRY(items, inbox::list_items(home));
  }
  for (auto& i : items)
    if (i.key == key) return std::move(i);
  return fail(ErrorKind::not_found,
              key + " does not wait for a person in " + where + " (see `devgraph inbox`)");
}

// The command that continues a run the answer reopened.
std::string continue_command(const ParsedArgs& a) {
  std::string repo = a.get_or("repo", ".");
  return repo == "." ? "`devgraph run`" : "`devgraph run --repo " + repo + "`";
}

std::string what_next(const inbox::Item& item, inbox::AnswerKind kind, const inbox::Answered& a,
                      const std::string& command) {
  // A run that had ended waiting continues only when it is run again.
  std::string reopened = a.reopened
                             ? " (run " + item.run_id + " had ended waiting; it is reopened and " +
                                   command + " continues it)"
                             : "";
  if (kind == inbox::AnswerKind::reject)
    return "bundle " + item.bundle +
           " is rejected: `devgraph run` will not relaunch it and its work stays where it "
           "stopped" +
           (a.reopened ? " (run " + item.run_id + " reopened: nothing else waits in it; " +
                             command + " finishes it)"
                       : "") +
           "; the reason is in " + a.answer_path;
  std::string when = " when `devgraph run` resumes the run";
  if (a.continues_at)
    return item.key + " will continue at " + *a.continues_at + when + reopened +
           "; the answer is in " + a.answer_path;
  return "bundle " + item.bundle + " will be relaunched" + when + reopened + "; the answer is in " +
         a.answer_path;
}

// `debug/<slug>`: the debug session's pending question, answered under
// its lock; nothing else moves.
int answer_debug(const std::string& key, const ParsedArgs& a) {
  const std::string slug = key.substr(6);
  if (auto ok = debug::check_slug(slug); !ok)
    return report(Error{ok.error().message, kExitUsage, ErrorKind::usage});
  if (a.flag("approve") || a.flag("reject") || a.has("run"))
    return report(fail(ErrorKind::usage,
                       "a debug session takes --text or --file (a choice's number as the text)",
                       kExitUsage));
  auto what = answer_of(a);
  if (!what) return report(what.error());
  auto home = inbox::develop_home_of(a.get_or("repo", "."));
  if (!home) return report(home.error());
  debug::Paths paths = debug::paths_of(*home, slug);
  auto opened = debug::open_session(paths, slug);
  if (!opened) return report(opened.error());
  const std::string id = opened->file.m.pending ? opened->file.m.pending->id : "";
  auto next = debug::decide_answer(opened->file, debug::Answer{0, what->second},
                                   iso_utc(system_clock().wall()));
  if (!next)
    return report(
        Error{"session " + slug + ": " + next.error().message, kExitUsage, ErrorKind::usage});
  debug::SessionConfig cfg;
  cfg.paths = paths;
  cfg.now = [] { return iso_utc(system_clock().wall()); };
  if (auto r = debug::record(cfg, *next, "answered", Json{{"question", id}}); !r)
    return report(r.error());
  out() << "debug session " << slug << ": " << id << " answered; `devgraph debug continue " << slug
        << "` goes on\n";
  return 0;
}

}  // namespace

ArgParser verb_answer_parser() {
  ArgParser p("devgraph answer");
  p.description("Answer what a bundle or task waits for, so the run can go on.")
      .positional("item", "B or B/T, as `devgraph inbox` lists it")
      .hint(ValueHint::bundle)
      .option("text", "the answer (with --reject: the reason)")
      .option("file", "a file holding the answer")
      .hint(ValueHint::file)
      .flag("approve", "approve going on from where the work stopped")
      .flag("reject", "reject the bundle: it is never relaunched")
      .option("repo", "the repository")
      .default_value("the current directory")
      .hint(ValueHint::directory)
      .option("run", "the run id")
      .default_value("the newest run in which ITEM waits")
      .hint(ValueHint::run)
      .option("skill", "asset directory (GRAPH.yaml, contracts/)")
      .default_value(kSkillDefault)
      .hint(ValueHint::directory);
  return p;
}

int verb_answer(const VerbArgs& args) {
  ArgParser p = verb_parser("answer");
  auto a = p.parse(args);
  if (!a) return report(a.error());
  const std::string key = a->positionals()[0];
  if (key.rfind("debug/", 0) == 0) return answer_debug(key, *a);
  auto parsed = inbox::parse_key(key);
  if (!parsed) return report(parsed.error());
  auto run = a->get("run");
  if (run && !is_valid_id(*run))
    return report(
        fail(ErrorKind::usage, "--run " + py_repr(*run) + " is not a run id", kExitUsage));
  auto what = answer_of(*a);
  if (!what) return report(what.error());
  auto home = inbox::develop_home_of(a->get_or("repo", "."));
  if (!home) return report(home.error());
  auto item = find_item(*home, key, run);
  if (!item) return report(item.error());
  auto skill = locate_skill(a->get("skill"));
  if (!skill) return report(skill.error());
  auto graph = Graph::load(*skill);
  if (!graph) return report(graph.error());
  auto schema = Schema::load(state_schema_path(*skill));
  if (!schema) return report(schema.error());
  RunStore store(item->run_dir, *graph, *schema);
  auto done = inbox::answer(store, *graph, *item, what->first, what->second);
  if (!done) return report(done.error());
  out() << what_next(*item, what->first, *done, continue_command(*a)) << "\n";
  return 0;
}

}  // namespace devgraph
