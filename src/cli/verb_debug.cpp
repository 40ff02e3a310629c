// `devgraph debug start|continue|answer|list|show`: checkpointed debug
// sessions (src/debug/). `start SYMPTOM` makes the session's debug file
// and its worktree on branch debug/<slug> and runs the loop; `continue
// SLUG` goes on from the file's phase; `answer SLUG` records a person's
// answer to the pending question and goes on (`--no-continue`: records
// only); `list` and `show` read. The backend a session started with is
// kept in <session>/backend.json and used again unless a flag overrides it.
//
// Exit codes: 0 the session is resolved (also `list` and `show`); 2 it
// waits for a person, or a person stopped it; 1 a failure, or a step that
// did not finish (CONTINUE_REQUIRED: `continue` goes on); 3 a usage or
// placement error, an unknown session, a refused answer, or a session
// another process is working on (nothing written); 128+N stopped by
// signal N (`continue` goes on).
#include <unistd.h>

#include "agents/backend.h"
#include "bundle/placement.h"
#include "cli/help.h"
#include "cli/verbs.h"
#include "debug/dispatch.h"
#include "debug/session.h"
#include "debug/sessions.h"
#include "fix/personas.h"
#include "gh/gh.h"
#include "git/git.h"
#include "graph/graph.h"
#include "guard/guard.h"
#include "inbox/inbox.h"
#include "skill/skill.h"
#include "util/args.h"
#include "util/clock.h"
#include "util/console.h"
#include "util/fs.h"
#include "util/text.h"

namespace devgraph {
namespace {

constexpr int kExitUsage = 3;
constexpr size_t kMaxSymptomsFile = 64 * 1024;
constexpr const char* kUsage = "usage: devgraph debug [-h] {start,continue,answer,list,show} ...";

int usage_exit(Error e) {
  if (e.exit_code == 2 || e.exit_code == 1) e.exit_code = kExitUsage;
  return report_error("debug", e);
}

int refuse(const std::string& why) {
  return usage_exit(fail(ErrorKind::usage, why, kExitUsage));
}

void declare_backend_flags(ArgParser& p) {
  p.option("skill", "asset directory (GRAPH.yaml, agents/, templates/)")
      .default_value(kSkillDefault)
      .hint(ValueHint::directory)
      .option("agent", "agent backend: " + agents::backend_choices())
      .default_value("claude, or the session's")
      .option("claude-bin", "the claude CLI binary (tests pass a fake)")
      .default_value(kAgentBinDefault)
      .hint(ValueHint::file)
      .option("model", "the debugger's model")
      .option("sim-scenario", "scenario file for --agent sim")
      .hint(ValueHint::file)
      .option("agent-command", "argv template for --agent command")
      .option("persona-timeout-seconds", "wall-clock limit of one persona run")
      .default_value("GRAPH.yaml headless.persona_timeout_minutes")
      .option("test-timeout-seconds", "wall-clock limit of one TDD test run")
      .default_value("600")
      .option("repo", "the repository")
      .default_value("the current directory")
      .hint(ValueHint::directory);
}

// The session's backend: backend.json, then the flags over it.
Expected<Json> backend_of(const ParsedArgs& a, Json kept) {
  if (!kept.is_object()) kept = Json{{"agent", "claude"}};
  for (const char* k : {"agent", "claude-bin", "model", "agent-command"})
    if (auto v = a.get(k)) kept[k] = *v;
  if (auto v = a.get("sim-scenario")) kept["sim-scenario"] = absolute_path(*v);
  for (const char* k : {"persona-timeout-seconds", "test-timeout-seconds"})
    if (auto v = a.get(k)) {
      auto s = parse_seconds(*v);
      if (!s || *s <= 0)
        return fail(ErrorKind::usage, std::string("argument --") + k +
                                          ": invalid positive float value: '" + *v + "'");
      kept[k] = *s;
    }
  const std::string agent = json_str(kept, "agent", "claude");
  if (!agents::parse_backend(agent))
    return fail(ErrorKind::usage, "argument --agent: invalid choice: '" + agent +
                                      "' (choose from " + agents::backend_choices() + ")");
  if (agent == "sim" && json_str(kept, "sim-scenario").empty())
    return fail(ErrorKind::usage, "--agent sim needs --sim-scenario");
  auto tmpl = agent_command_template(
      kept.contains("agent-command") ? std::optional<std::string>(json_str(kept, "agent-command"))
                                     : std::nullopt,
      agent);
  if (!tmpl) return fail(ErrorKind::usage, tmpl.error().message);
  return kept;
}

std::chrono::milliseconds seconds_ms(double s) {
  return std::chrono::milliseconds(static_cast<long long>(s * 1000));
}

// A question asked on the terminal: a choice's number (and any text after
// it), or a text; nullopt at the end of input.
std::optional<debug::Answer> ask_on_terminal(const debug::Question& q) {
  err() << "\n" << q.text << "\n";
  for (size_t i = 0; i < q.choices.size(); ++i)
    err() << "  " << (i + 1) << ". " << q.choices[i] << "\n";
  err() << (q.choices.empty() ? "Your answer: " : "Your choice (a number, then any text): ")
        << std::flush;
  auto line = read_stdin_line();
  if (!line) return std::nullopt;
  debug::Answer a;
  size_t digits = line->find_first_not_of("0123456789");
  if (!q.choices.empty() && digits != 0 &&
      (digits == std::string::npos || (*line)[digits] == ' ')) {
    a.choice = std::stoi(line->substr(0, std::min<size_t>(digits, 4)));
    a.text = digits == std::string::npos ? "" : line->substr(digits + 1);
  } else {
    a.text = *line;
  }
  return a;
}

struct Prepared {
  std::string skill;
  Graph graph;
  debug::Paths paths;
  Json backend;
};

// Runs the loop on an opened session and prints its summary.
int run_and_report(const Prepared& p, debug::DebugFile file, bool may_ask) {
  const Json& b = p.backend;
  fix::RuntimeFlags flags;
  flags.agent_bin = json_str(b, "claude-bin");
  flags.sim_scenario = json_str(b, "sim-scenario");
  if (auto t = agent_command_template(b.contains("agent-command")
                                          ? std::optional<std::string>(json_str(b, "agent-command"))
                                          : std::nullopt,
                                      json_str(b, "agent", "claude")))
    flags.agent_command = *t;
  if (b.contains("persona-timeout-seconds"))
    flags.persona_timeout = seconds_ms(b["persona-timeout-seconds"].get<double>());
  flags.sim_state_dir = join_path(p.paths.session, "sim");
  debug::SessionConfig cfg;
  cfg.paths = p.paths;
  cfg.skill_dir = p.skill;
  cfg.rules = p.graph.debug;
  cfg.backend = json_str(b, "agent", "claude");
  if (b.contains("model")) cfg.model = json_str(b, "model");
  if (b.contains("test-timeout-seconds"))
    cfg.test_timeout = seconds_ms(b["test-timeout-seconds"].get<double>());
  cfg.now = [] { return iso_utc(system_clock().wall()); };
  cfg.on_line = [](const std::string& l) { err() << "devgraph debug: " << l << std::endl; };
  if (may_ask && isatty(STDIN_FILENO) && isatty(STDERR_FILENO)) cfg.ask = ask_on_terminal;
  RealCommandRunner runner;
  fix::RuntimePersonas personas(p.graph, p.skill, file.m.worktree, flags);
  auto git = git::make_git(runner, file.m.worktree, {}, {p.graph.headless.run_git_hooks});
  std::unique_ptr<gh::Gh> gh;
  if (file.m.delivery == "github") gh = gh::make_gh(runner, file.m.worktree);
  debug::SessionParts parts{personas, runner, *git, gh.get()};
  auto outcome = debug::run_session(std::move(file), cfg, parts);
  if (!outcome) {
    err() << "devgraph debug: " << outcome.error().message << "\n";
    out() << "RESULT_JSON: "
          << dump_py(Json{
                 {"status",
                  outcome.error().kind == ErrorKind::interrupted ? "CONTINUE_REQUIRED" : "ERROR"},
                 {"summary", outcome.error().message}})
          << std::endl;
    return outcome.error().exit_code > 1 ? outcome.error().exit_code : 1;
  }
  out() << debug::summary_text(*outcome, p.paths);
  out() << "RESULT_JSON: " << dump_py(debug::summary_json(*outcome, p.paths)) << std::endl;
  return outcome->exit_code;
}

Expected<Prepared> prepare(const ParsedArgs& a, const std::string& develop_home,
                           const std::string& slug) {
  Prepared p;
  DG_TRY(p.skill, locate_skill(a.get("skill")));
  DG_TRY(p.graph, Graph::load(p.skill));
  if (p.graph.debug.debugger.empty())
    return fail(ErrorKind::usage, "GRAPH.yaml has no debug section naming the debugger");
  p.paths = debug::paths_of(develop_home, slug);
  return p;
}

Expected<std::string> home_for(const ParsedArgs& a) {
  auto home = inbox::develop_home_of(a.get_or("repo", "."));
  if (!home) return fail(ErrorKind::usage, home.error().message, kExitUsage);
  if (auto deny = bundle::check_write_root("debug directory", join_path(*home, "debug"),
                                           guard::Roots::from_env()))
    return fail(ErrorKind::usage, "placement guard: " + *deny, kExitUsage);
  return *home;
}

std::string git_line(CommandRunner& runner, const std::string& dir,
                     const std::vector<std::string>& args) {
  auto r = git::run_git(runner, dir, args, std::chrono::seconds(30), false);
  std::string out = r && r->ok() ? r->out : "";
  while (!out.empty() && (out.back() == '\n' || out.back() == '\r')) out.pop_back();
  return out;
}

// The session's worktree on debug/<slug>, made from the primary clone's
// HEAD when missing (a registered worktree whose directory is gone pruned
// first); fills the file's placement.
Status place(debug::DebugFile& f, const std::string& repo, const std::string& slug) {
  const guard::Roots roots = guard::Roots::from_env();
  const std::string branch = "debug/" + slug;
  auto placement = guard::resolve_placement(repo, branch, roots);
  if (!placement) return fail(ErrorKind::usage, placement.error().message, kExitUsage);
  if (!placement->worktree_path || !placement->primary_top)
    return fail(ErrorKind::usage, repo + ": no primary clone to place a worktree from", kExitUsage);
  RealCommandRunner runner;
  const std::string top = *placement->primary_top;
  const std::string worktree = *placement->worktree_path;
  std::string base = git_line(runner, top, {"rev-parse", "-q", "--verify", "HEAD"});
  if (base.empty()) return fail(ErrorKind::usage, top + " has no commit to start from", kExitUsage);
  if (!is_directory(worktree)) {
    // A worktree whose directory was deleted is still registered, and git
    // refuses its branch ("already checked out") until it is pruned: `git
    // worktree prune` forgets only such missing worktrees, nothing else.
    auto pruned = git::run_git(runner, top, {"worktree", "prune"}, std::chrono::seconds(30), false);
    if (!pruned || !pruned->ok())
      return fail(ErrorKind::usage,
                  "git worktree prune in " + top + ": " +
                      (pruned ? last_line(pruned->err) : pruned.error().message),
                  kExitUsage);
    auto g = git::make_git(runner, top, {});
    if (auto s = g->worktree_add(worktree, branch, base); !s)
      return fail(ErrorKind::usage,
                  "could not make the worktree " + worktree + ": " + s.error().message, kExitUsage);
  } else if (git_line(runner, worktree, {"symbolic-ref", "--short", "-q", "HEAD"}) != branch) {
    return fail(ErrorKind::usage, worktree + " exists and is not on " + branch, kExitUsage);
  }
  if (auto deny = bundle::check_bundle_worktree(worktree, roots))
    return fail(ErrorKind::usage, "placement guard: " + *deny, kExitUsage);
  std::string def =
      git_line(runner, top, {"symbolic-ref", "--short", "-q", "refs/remotes/origin/HEAD"});
  if (def.rfind("origin/", 0) == 0) def = def.substr(7);
  if (def.empty()) def = git_line(runner, top, {"symbolic-ref", "--short", "-q", "HEAD"});
  f.m.worktree = worktree;
  f.m.branch = branch;
  f.m.base = base;
  f.m.default_branch = def.empty() ? "main" : def;
  f.m.delivery = placement->delivery;
  return {};
}

ArgParser start_parser() {
  ArgParser p("devgraph debug start");
  p.description("Start a debug session on a symptom and run it.")
      .positional("symptom", "what goes wrong, in a person's words")
      .option("slug", "the session's name (default: from the symptom)")
      .option("goal", "find_root_cause_only or find_and_fix (default)")
      .flag("tdd", "a failing test, run by devgraph, before any fix")
      .flag("specialists", "a specialist reviews the fix direction (GRAPH.yaml debug.specialists)")
      .option("symptoms-file", "more about the symptoms (read as data)");
  declare_backend_flags(p);
  return p;
}

int debug_start(const VerbArgs& args) {
  ArgParser p = start_parser();
  auto a = p.parse(args);
  if (!a) return usage_exit(a.error());
  const std::string symptom = debug::clean_text(a->positionals()[0]);
  if (symptom.empty()) return refuse("the symptom is empty");
  const std::string goal = a->get_or("goal", "find_and_fix");
  if (goal != "find_and_fix" && goal != "find_root_cause_only")
    return refuse("argument --goal: invalid choice: '" + goal +
                  "' (choose from find_root_cause_only, find_and_fix)");
  std::string details;
  if (auto sf = a->get("symptoms-file")) {
    auto text = read_file_at_most(*sf, kMaxSymptomsFile);
    if (!text) return refuse("--symptoms-file " + *sf + ": " + text.error().message);
    details = debug::clean_text(*text);
  }
  auto home = home_for(*a);
  if (!home) return usage_exit(home.error());
  std::string slug;
  if (auto s = a->get("slug")) {
    if (auto ok = debug::check_slug(*s); !ok) return usage_exit(ok.error());
    slug = *s;
    auto paths = debug::paths_of(*home, slug);
    if (!debug::current_path(paths).empty())
      return refuse("session " + slug + " exists: `devgraph debug continue " + slug + "`");
  } else {
    const std::string stem = debug::slug_from(symptom);
    slug = stem;
    for (int n = 2; !debug::current_path(debug::paths_of(*home, slug)).empty(); ++n)
      slug = stem.substr(0, std::min<size_t>(stem.size(), debug::kMaxSlug - 4)) + "-" +
             std::to_string(n);
  }
  auto prepared = prepare(*a, *home, slug);
  if (!prepared) return usage_exit(prepared.error());
  auto backend = backend_of(*a, Json());
  if (!backend) return usage_exit(backend.error());
  prepared->backend = *backend;
  std::string holder;
  auto lock = debug::SessionLock::try_take(prepared->paths, &holder);
  if (!lock) return report_error("debug", lock.error());
  if (!*lock) return refuse("session " + slug + " is being started by another process");
  debug::DebugFile f;
  f.slug = slug;
  f.trigger = one_line(symptom, 200);
  f.goal = goal;
  f.tdd = a->flag("tdd");
  f.specialists = a->flag("specialists");
  f.created = iso_utc(system_clock().wall());
  f.reported = symptom;
  f.details = details;
  if (auto s = place(f, absolute_path(a->get_or("repo", ".")), slug); !s)
    return usage_exit(s.error());
  f = debug::begin(std::move(f));
  const auto& paths = prepared->paths;
  if (auto s = make_directories(paths.session); !s) return report_error("debug", s.error());
  if (auto s =
          write_file_atomic(join_path(paths.session, "backend.json"), dump_py(*backend, 2) + "\n");
      !s)
    return report_error("debug", s.error());
  debug::SessionConfig cfg;
  cfg.paths = paths;
  cfg.now = [] { return iso_utc(system_clock().wall()); };
  if (auto s = debug::record(cfg, f, "started", Json{{"branch", f.m.branch}}); !s)
    return report_error("debug", s.error());
  err() << "devgraph debug: session " << slug << " in " << paths.file << ", worktree "
        << f.m.worktree << "\n";
  return run_and_report(*prepared, std::move(f), true);
}

// The session named by the first positional, opened under its lock.
struct Session {
  Prepared prepared;
  debug::Opened opened;
};

Expected<Session> open_named(const ParsedArgs& a) {
  const std::string slug = a.positionals()[0];
  DG_CHECK(debug::check_slug(slug));
  DG_TRY(auto home, home_for(a));
  DG_TRY(auto prepared, prepare(a, home, slug));
  DG_TRY(auto opened, debug::open_session(prepared.paths, slug));
  auto kept = load_json_file(join_path(prepared.paths.session, "backend.json"));
  DG_TRY(prepared.backend, backend_of(a, kept ? *kept : Json()));
  return Session{std::move(prepared), std::move(opened)};
}

ArgParser continue_parser() {
  ArgParser p("devgraph debug continue");
  p.description("Go on with a debug session from where its file says it stopped.")
      .positional("slug", "the session")
      .hint(ValueHint::slug);
  declare_backend_flags(p);
  return p;
}

int debug_continue(const VerbArgs& args) {
  ArgParser p = continue_parser();
  auto a = p.parse(args);
  if (!a) return usage_exit(a.error());
  auto s = open_named(*a);
  if (!s) return usage_exit(s.error());
  return run_and_report(s->prepared, std::move(s->opened.file), true);
}

ArgParser answer_parser() {
  ArgParser p("devgraph debug answer");
  p.description("Answer the question a debug session waits on, then go on with it.")
      .positional("slug", "the session")
      .hint(ValueHint::slug)
      .option("choice", "the number of the choice")
      .option("text", "the answer's text (with --choice: what comes with the choice)")
      .option("file", "a file holding the answer's text")
      .flag("no-continue", "record the answer only; `devgraph debug continue` goes on");
  declare_backend_flags(p);
  return p;
}

int debug_answer(const VerbArgs& args) {
  ArgParser p = answer_parser();
  auto a = p.parse(args);
  if (!a) return usage_exit(a.error());
  debug::Answer answer;
  if (a->has("text") && a->has("file")) return refuse("--text and --file exclude each other");
  if (auto c = a->get("choice")) {
    auto n = parse_int(*c);
    if (!n || *n < 1 || *n > 99)
      return refuse("argument --choice: invalid choice number: '" + *c + "'");
    answer.choice = static_cast<int>(*n);
  }
  if (auto t = a->get("text")) answer.text = *t;
  if (auto f = a->get("file")) {
    auto text = read_file_at_most(*f, kMaxSymptomsFile);
    if (!text) return refuse("--file " + *f + ": " + text.error().message);
    answer.text = *text;
  }
  if (answer.choice == 0 && debug::clean_text(answer.text).empty())
    return refuse("one of --choice, --text or --file is required (and not empty)");
  auto s = open_named(*a);
  if (!s) return usage_exit(s.error());
  auto next = debug::decide_answer(s->opened.file, answer, iso_utc(system_clock().wall()));
  if (!next) return refuse("session " + s->opened.file.slug + ": " + next.error().message);
  const std::string id = s->opened.file.m.pending ? s->opened.file.m.pending->id : "";
  debug::SessionConfig cfg;
  cfg.paths = s->prepared.paths;
  cfg.now = [] { return iso_utc(system_clock().wall()); };
  if (auto r = debug::record(cfg, *next, "answered", Json{{"question", id}}); !r)
    return report_error("debug", r.error());
  err() << "devgraph debug: " << id << " answered\n";
  if (a->flag("no-continue")) {
    auto o = debug::outcome_of(std::move(*next));
    out() << "Answered " << id << ": `devgraph debug continue " << o.file.slug << "` goes on\n";
    out() << "RESULT_JSON: " << dump_py(debug::summary_json(o, s->prepared.paths)) << std::endl;
    return 0;
  }
  return run_and_report(s->prepared, std::move(*next), true);
}

ArgParser list_parser() {
  ArgParser p("devgraph debug list");
  p.description("List this repository's debug sessions.")
      .option("repo", "the repository (default: the current directory)")
      .option("skill", "asset directory (accepted by every verb; unused here)")
      .flag("json", "print one JSON array");
  return p;
}

int debug_list(const VerbArgs& args) {
  ArgParser p = list_parser();
  auto a = p.parse(args);
  if (!a) return usage_exit(a.error());
  auto home = inbox::develop_home_of(a->get_or("repo", "."));
  if (!home) return usage_exit(home.error());
  auto sessions = debug::list_sessions(*home);
  if (a->flag("json")) {
    Json list = Json::array();
    for (const auto& l : sessions)
      list.push_back({{"slug", l.slug},
                      {"file", l.file},
                      {"status", l.status},
                      {"phase", l.phase},
                      {"updated", l.updated},
                      {"trigger", l.trigger},
                      {"resolved", l.resolved},
                      {"question", l.question.empty() ? Json() : Json(l.question)},
                      {"error", l.error.empty() ? Json() : Json(l.error)}});
    out() << dump_py(list, 2) << "\n";
    return 0;
  }
  if (sessions.empty()) out() << "no debug sessions\n";
  for (const auto& l : sessions) {
    if (!l.error.empty()) {
      out() << l.slug << "  unreadable: " << l.error << "\n";
      continue;
    }
    out() << l.slug << "  " << l.status << "  " << l.updated << "  " << one_line(l.trigger, 80)
          << "\n";
    if (!l.question.empty()) out() << "  waits: " << one_line(l.question, 160) << "\n";
  }
  return 0;
}

ArgParser show_parser() {
  ArgParser p("devgraph debug show");
  p.description("Print a debug session's file.")
      .positional("slug", "the session")
      .hint(ValueHint::slug)
      .option("repo", "the repository (default: the current directory)")
      .option("skill", "asset directory (accepted by every verb; unused here)");
  return p;
}

int debug_show(const VerbArgs& args) {
  ArgParser p = show_parser();
  auto a = p.parse(args);
  if (!a) return usage_exit(a.error());
  const std::string slug = a->positionals()[0];
  if (auto ok = debug::check_slug(slug); !ok) return usage_exit(ok.error());
  auto home = inbox::develop_home_of(a->get_or("repo", "."));
  if (!home) return usage_exit(home.error());
  auto paths = debug::paths_of(*home, slug);
  std::string path = debug::current_path(paths);
  if (path.empty()) return refuse("no debug session " + slug + " (see `devgraph debug list`)");
  auto text = read_file(path);
  if (!text) return report_error("debug", text.error());
  out() << *text;
  return 0;
}

}  // namespace

ArgParser verb_debug_parser() {
  ArgParser p("devgraph debug");
  p.description(
      "Checkpointed debug sessions: a debugger persona investigates from a debug file "
      "(<develop_home>/debug/<slug>.md), a person is asked only at checkpoints, a TDD gate "
      "proves the bug before the fix, and an interrupted session continues where it stopped.");
  return p;
}

std::vector<Subcommand> verb_debug_subcommands() {
  return {{"start", "start a session on a symptom and run it", start_parser()},
          {"continue", "go on from where the session's file says it stopped", continue_parser()},
          {"answer", "answer the question a session waits on, then go on", answer_parser()},
          {"list", "the repository's debug sessions", list_parser()},
          {"show", "print a session's debug file", show_parser()}};
}

int verb_debug(const VerbArgs& args) {
  if (args.empty()) {
    err() << kUsage
          << "\ndevgraph debug: error: the following arguments are required: subcommand\n";
    return kExitUsage;
  }
  if (args[0] == "-h" || args[0] == "--help") {
    out() << verb_help(*find_verb("debug"));
    return 0;
  }
  const std::string sub = args[0];
  VerbArgs rest(args.begin() + 1, args.end());
  if (sub == "start") return debug_start(rest);
  if (sub == "continue") return debug_continue(rest);
  if (sub == "answer") return debug_answer(rest);
  if (sub == "list") return debug_list(rest);
  if (sub == "show") return debug_show(rest);
  err() << kUsage << "\ndevgraph debug: error: unknown subcommand " << py_repr(sub) << "\n";
  return kExitUsage;
}

}  // namespace devgraph
