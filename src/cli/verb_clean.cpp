// `devgraph clean`: the clean lane over the repository's own branches
// (clean/clean_run.h). The report, then RESULT_JSON as the last stdout
// line; exit codes: 0 the clean run finished (whatever it left for a
// person, each with its reason), 3 usage, state or placement error
// (nothing written), 1 anything else, 128+N stopped by signal N (the next
// `devgraph clean` resumes it). A board port that cannot be had is exit 3,
// refused before anything is done.
#include <unistd.h>

#include <memory>

#include "board/live_board.h"
#include "clean/clean_run.h"
#include "cli/verbs.h"
#include "util/args.h"
#include "util/console.h"

namespace devgraph {
namespace {

constexpr int kExitUsage = 3;

int usage_exit(Error e) {
  if (e.exit_code == 2) e.exit_code = kExitUsage;
  return report_error("clean", e);
}

int stop_with(const std::string& why, int code) {
  err() << "devgraph clean: " << why << "\n";
  out() << "RESULT_JSON: " << dump_py(Json{{"status", "ERROR"}, {"summary", why}}) << std::endl;
  return code;
}

}  // namespace

ArgParser verb_clean_parser() {
  ArgParser p("devgraph clean");
  p.description(
       "Clean up the repository's own branches: delete what is merged, integrate what can be "
       "integrated on a throwaway branch, land and verify it, and leave everything else for a "
       "person with its reason. Never rewrites a branch, never forces, loses nothing.")
      .option("repo", "the primary clone")
      .default_value("the current directory")
      .hint(ValueHint::directory)
      .option("strategy", "rebase, merge, squash or none")
      .default_value(
          "project.yaml develop.clean.strategy, else GRAPH.yaml cleanup.default_strategy")
      .flag("dry-run", "print the classification and the plan; change nothing")
      .flag("yes", "do not ask before the first change (asked only on a terminal)")
      .flag("new", "start a new clean run instead of resuming an unfinished one")
      .flag("no-live", "plain progress lines (the only kind clean prints)")
      .option("skill", "asset directory (GRAPH.yaml, agents/, templates/)")
      .default_value(kSkillDefault)
      .hint(ValueHint::directory);
  declare_board_flags(p);
  return p;
}

int verb_clean(const VerbArgs& args) {
  ArgParser p = verb_parser("clean");
  auto a = p.parse(args);
  if (!a) return usage_exit(a.error());
  auto bound = bind_board(p, *a, a->flag("dry-run"));
  if (!bound && bound.error().kind == ErrorKind::refused)
    return stop_with(bound.error().message, kExitUsage);
  if (!bound) return usage_exit(bound.error());
  clean::CleanRequest req;
  req.repo = a->get_or("repo", ".");
  req.strategy = a->get("strategy");
  req.skill = a->get("skill");
  req.dry_run = a->flag("dry-run");
  req.fresh = a->flag("new");
  req.on_line = [](const std::string& l) { err() << "devgraph clean: " << l << std::endl; };
  if (!a->flag("yes") && !req.dry_run && isatty(STDIN_FILENO) && isatty(STDERR_FILENO))
    req.confirm = [](const std::string& plan) {
      err() << plan << "Go ahead? [y/N] " << std::flush;
      auto answer = read_stdin_line();
      return answer && (*answer == "y" || *answer == "Y" || *answer == "yes");
    };
  // The board is served from the moment the run directory holds the run
  // until the run stops, on a thread of its own: clean's git commands do
  // not wait on a loop it could share.
  std::unique_ptr<board::LiveBoard> live;
  if (*bound)
    req.on_run_dir = [&, open = a->flag("open")](const std::string& run_dir) {
      auto b = board::LiveBoard::open(run_dir, board::ServeOptions{}, std::move(**bound));
      if (!b) {
        err() << "devgraph clean: the board is not served: " << b.error().message << std::endl;
        return;
      }
      if (open)
        if (auto opened = (*b)->open_browser(); !opened)
          err() << "devgraph clean: " << opened.error().message << "; the board is still served"
                << std::endl;
      if (auto serving = (*b)->serve_in_background(); !serving) {
        err() << "devgraph clean: the board is not served: " << serving.error().message
              << std::endl;
        return;
      }
      live = std::move(*b);
      err() << "devgraph clean: board at " << live->url() << std::endl;
    };
  auto rep = clean::run_clean(req);
  live.reset();
  if (!rep) return stop_with(rep.error().message, rep.error().exit_code);
  out() << rep->report;
  out() << "RESULT_JSON: " << dump_py(rep->result) << std::endl;
  return rep->exit_code;
}

}  // namespace devgraph
