// `devgraph board serve [TARGET] [--port P] [--bind ADDR] [--open]`: the
// live run board of one run (src/board/): TARGET is a run directory, or a
// repository whose newest run is shown (default: the current directory).
// It prints the board's URL on stdout, serves until SIGINT, SIGTERM or
// SIGHUP, and never writes into the run; --open also opens the URL in the
// user's browser (board/browser.h; one that cannot be started is a line
// on stderr, and serving goes on). `devgraph run --board` serves the same
// board on the run's own loop while the run runs (orchestrator/run_board.h). `devgraph board build
// [TARGET]
// [-o FILE] [--run-id ID]` writes the board as one HTML file holding the
// run's data; TARGET may also be a session record (`metrics record`), so a
// run replays after its directory is gone.
//
// Exit codes: 0 stopped by a signal; 1 the port cannot be had or the loop
// failed; 3 a usage error, or no run at TARGET.
#include <dirent.h>
#include <sys/epoll.h>

#include <algorithm>

#include "board/live_board.h"
#include "board/page.h"
#include "board/snapshot.h"
#include "cli/help.h"
#include "cli/verbs.h"
#include "inbox/inbox.h"
#include "metrics/metrics.h"
#include "proc/stop_signals.h"
#include "proc/supervisor.h"
#include "util/args.h"
#include "util/console.h"
#include "util/fs.h"
#include "util/text.h"

namespace devgraph {
namespace {

constexpr int kExitUsage = 3;

int report(const Error& e) {
  Error u = e;
  if ((u.kind == ErrorKind::usage || u.kind == ErrorKind::not_found) && u.exit_code != 0)
    u.exit_code = kExitUsage;
  return report_error("board", u);
}

// The run directory TARGET names: itself when it holds a state.json, else
// the repository's current run (its develop home's `current-run`, else the
// newest of its runs).
Expected<std::string> run_of(const std::string& target) {
  if (path_exists(join_path(target, "state.json"))) return absolute_path(target);
  if (!is_directory(target)) return fail(ErrorKind::usage, target + ": no such directory");
  auto home = inbox::develop_home_of(target);
  if (!home) return fail(ErrorKind::usage, target + ": " + home.error().message);
  if (auto pointer = read_file(join_path(*home, "current-run"))) {
    std::string dir = *pointer;
    while (!dir.empty() && (dir.back() == '\n' || dir.back() == ' ')) dir.pop_back();
    if (path_exists(join_path(dir, "state.json"))) return dir;
  }
  const std::string runs = join_path(*home, "runs");
  std::string newest;
  if (DIR* d = ::opendir(runs.c_str())) {
    while (auto* e = ::readdir(d)) {
      std::string name = e->d_name;
      if (name[0] != '.' && name > newest && path_exists(join_path(runs, name + "/state.json")))
        newest = name;
    }
    ::closedir(d);
  }
  if (newest.empty()) return fail(ErrorKind::not_found, "no run of " + target + " to show");
  return join_path(runs, newest);
}

// TARGET is optional: every word that is neither a flag nor the value of
// one of `valued`. `-o` is --output.
void split_target(const VerbArgs& args, const std::vector<std::string>& valued, VerbArgs& flags,
                  std::vector<std::string>& targets) {
  for (size_t i = 0; i < args.size(); ++i) {
    std::string w = args[i] == "-o" ? "--output" : args[i];
    bool takes = std::find(valued.begin(), valued.end(), w) != valued.end();
    if (takes && i + 1 < args.size()) {
      flags.push_back(w);
      flags.push_back(args[++i]);
    } else if (w.rfind("-", 0) == 0) {
      flags.push_back(w);
    } else {
      targets.push_back(w);
    }
  }
}

ArgParser build_parser() {
  ArgParser p("devgraph board build");
  p.description(
       "Write a run's board as one self-contained HTML file, which opens with no server "
       "(TARGET: a run directory, a repository, or a session record written by `devgraph "
       "metrics record`; default: the current directory).")
      .positional("target", "a run directory, a repository or a session record (.jsonl)")
      .optional()
      .hint(ValueHint::file)
      .option("output", "the file to write (also -o)")
      .default_value("standard output")
      .hint(ValueHint::file)
      .option("run-id", "with a session record (.jsonl) as TARGET: the run to show")
      .default_value("the latest started");
  return p;
}

ArgParser serve_parser() {
  ArgParser p("devgraph board serve");
  p.description(
       "Serve the live board of a run (TARGET: a run directory or a repository; default: the "
       "current directory) until stopped.")
      .positional("target", "a run directory or a repository")
      .optional()
      .hint(ValueHint::directory)
      .option("port", "the TCP port; 0: one the system picks")
      .default_value("0")
      .option("bind", "the IPv4 address to listen on")
      .default_value("127.0.0.1")
      .flag("open", "open the board in the browser ($BROWSER, else xdg-open)");
  return p;
}

// The options of `p` that take a value, as split_target() wants them.
std::vector<std::string> valued(const ArgParser& p) {
  std::vector<std::string> names;
  for (const auto& o : p.options())
    if (!o.is_flag) names.push_back("--" + o.name);
  return names;
}

int build(const VerbArgs& args) {
  ArgParser p = build_parser();
  VerbArgs flags;
  std::vector<std::string> targets;
  split_target(args, valued(p), flags, targets);
  auto a = p.parse(flags);
  if (!a) return report(a.error());
  if (targets.size() > 1)
    return report(p.usage_error("expected at most one TARGET, got: " + join(targets, " ")));
  const std::string target = targets.empty() ? std::string(".") : targets[0];
  Json data;
  std::string what;
  if (target.size() > 6 && target.substr(target.size() - 6) == ".jsonl" && !is_directory(target)) {
    // A session record: the run replayed after its directory is gone.
    if (!path_exists(target)) return report(fail(ErrorKind::usage, target + ": no such file"));
    auto sessions = metrics::load_sessions(target);
    if (!sessions) return report(fail(ErrorKind::usage, sessions.error().message));
    auto session = metrics::pick_session(*sessions, target, a->get("run-id"));
    if (!session) return report(fail(ErrorKind::usage, session.error().message));
    data = board::session_snapshot(*session, target);
    what = "the record of run " + json_str(*session, "run_id") + " in " + target;
  } else {
    auto run = run_of(target);
    if (!run) return report(run.error());
    data = board::run_snapshot(*run);
    what = *run;
  }
  std::string page = board::snapshot_page(data);
  if (auto o = a->get("output")) {
    if (auto st = write_file_atomic(*o, page); !st) return report(st.error());
    err() << "devgraph board: wrote " << *o << " (" << data.value("event_seq", 0ULL)
          << " events of " << what << ")" << std::endl;
  } else {
    out() << page;
  }
  return 0;
}

int serve(const VerbArgs& args) {
  ArgParser p = serve_parser();
  VerbArgs flags;
  std::vector<std::string> targets;
  split_target(args, valued(p), flags, targets);
  auto a = p.parse(flags);
  if (!a) return report(a.error());
  if (targets.size() > 1)
    return report(p.usage_error("expected at most one TARGET, got: " + join(targets, " ")));
  board::ServeOptions opt;
  opt.bind = a->get_or("bind", "127.0.0.1");
  if (auto port = a->get("port")) {
    auto n = parse_int(*port);
    if (!n || *n < 0 || *n > 65535)
      return report(p.usage_error("argument --port: not a port: '" + *port + "'"));
    opt.port = static_cast<int>(*n);
  }
  auto run = run_of(targets.empty() ? std::string(".") : targets[0]);
  if (!run) return report(run.error());

  auto live = board::LiveBoard::open(*run, std::move(opt), std::nullopt);
  if (!live) return report(live.error());
  board::LiveBoard& b = **live;
  if (auto st = b.loop().watch_stop_signals(); !st) return report(st.error());
  out() << b.url() << std::endl;
  err() << "devgraph board: serving " << *run << " at " << b.url() << " (Ctrl-C stops it)"
        << std::endl;
  if (a->flag("open"))
    if (auto opened = b.open_browser(); !opened)
      err() << "devgraph board: " << opened.error().message << "; the board is still served"
            << std::endl;
  while (auto e = b.loop().wait()) {
    if (auto* stop = std::get_if<StopRequested>(&*e)) {
      err() << "devgraph board: stopped by " << stop_signal_name(stop->signal) << std::endl;
      return 0;
    }
    b.dispatch(*e);
  }
  return report(fail("the board's event loop ended"));
}

}  // namespace

ArgParser verb_board_parser() {
  ArgParser p("devgraph board");
  p.description(
      "The run board in a browser: `serve` prints its URL and pushes each event of the run to "
      "every open page; `build` writes one HTML file that opens with no server.");
  return p;
}

std::vector<Subcommand> verb_board_subcommands() {
  return {{"serve", "serve a run's live board until stopped", serve_parser()},
          {"build", "write a run's board as one HTML file", build_parser()}};
}

int verb_board(const VerbArgs& args) {
  const Verb& verb = *find_verb("board");
  if (!args.empty() && (args[0] == "--help" || args[0] == "-h")) {
    out() << verb_help(verb);
    return 0;
  }
  const std::string usage = verb_usage(verb) + "\n\n" + verb_board_parser().description() + "\n";
  if (args.empty()) {
    out() << usage;
    return kExitUsage;
  }
  if (args[0] == "serve") return serve(VerbArgs(args.begin() + 1, args.end()));
  if (args[0] == "build") return build(VerbArgs(args.begin() + 1, args.end()));
  err() << usage << "devgraph board: error: unknown command '" << args[0] << "'\n";
  return kExitUsage;
}

}  // namespace devgraph
