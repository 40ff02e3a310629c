// `devgraph run`: the orchestrator lane, from the repository's open issues
// to delivered bundles, resumable after any crash. The last stdout line is
// RESULT_JSON; exit codes: 0 complete, 2 human required, 3 usage, state or
// placement error (a board port that cannot be had included, refused
// before anything is done), 1 anything else, 128+N stopped by signal N.
//
// `--board [PORT]` (alone, or PORT 0: one the system picks; `--bind ADDR`,
// default 127.0.0.1) serves the run's live board on the run's own loop
// while it runs and prints its URL on stderr; `--open` opens it in the
// browser (board/browser.h). The board only reads the run, and the run
// never waits for it. A run that stops (terminal state or handoff) leaves
// the board as one HTML file where GRAPH.yaml
// observability.snapshot_on_terminal says, and says where on stderr.
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdlib>
#include <limits>

#include "agents/backend.h"
#include "board/server.h"
#include "bundle/crash_points.h"
#include "bundle/view.h"
#include "cli/verbs.h"
#include "contracts/schema.h"
#include "gh/gh.h"
#include "git/git.h"
#include "git/repo.h"
#include "graph/graph.h"
#include "guard/guard.h"
#include "issues/local_store.h"
#include "orchestrator/orchestrator.h"
#include "orchestrator/run_setup.h"
#include "orchestrator/run_view.h"
#include "proc/command.h"
#include "proc/leftovers.h"
#include "skill/skill.h"
#include "store/run_store.h"
#include "util/args.h"
#include "util/clock.h"
#include "util/console.h"
#include "util/fs.h"

extern char** environ;

namespace devgraph {
namespace {

// Usage errors exit 3, as run-bundle's do (2 means a person is needed).
constexpr int kExitUsage = 3;

int usage_exit(Error e) {
  if (e.exit_code == 2) e.exit_code = kExitUsage;
  return report_error("run", e);
}

int usage(const ArgParser& p, const std::string& why) {
  return usage_exit(p.usage_error(why));
}

int stop_with(const std::string& why, int code, const Json& extra = Json::object()) {
  Json r = {{"status", "ERROR"}, {"summary", why}};
  for (auto& [k, v] : extra.items()) r[k] = v;
  err() << "devgraph run: " << why << "\n";
  out() << "RESULT_JSON: " << dump_py(r) << std::endl;
  return code;
}

}  // namespace

ArgParser verb_run_parser() {
  ArgParser p("devgraph run");
  p.description(
       "Turn the repository's eligible open issues into bundles and drive them to pull "
       "requests or ready branches, several at once; resumes the last unfinished run.")
      .option("repo", "the primary clone")
      .default_value("the current directory")
      .hint(ValueHint::directory)
      .option("issues", "where issues come from: github or local")
      .default_value("github with an origin on GitHub, else local")
      .option("label", "GitHub issues must carry this label")
      .default_value("GRAPH.yaml intake.label")
      .flag("all-issues", "every open GitHub issue is work (no label needed)")
      .option("max-bundles", "bundles in flight at once")
      .default_value("GRAPH.yaml concurrency.max_parallel_bundles")
      .option("watch", "after an empty scan, wait this many seconds and scan again")
      .default_value("off: stop after an empty scan")
      .option("budget-usd",
              "launch no new persona once the run's recorded cost reaches this many dollars "
              "(kept by a resume without the flag)")
      .default_value("none")
      .option("merge-policy",
              "never or auto_when_checks_pass: ask GitHub to merge each pull request once its "
              "checks pass (kept by a resume without the flag)")
      .default_value("GRAPH.yaml delivery.github.merge")
      .flag("new", "start a fresh run instead of resuming the last one")
      .flag("discuss-rounds",
            "critique every plan and finished branch (GRAPH.yaml discuss.rounds; kept by a "
            "resume without the flag)")
      .flag("dry-run", "print the bundles that would be formed and started; write nothing")
      .flag("no-live", "plain log lines even on a terminal")
      .option("skill", "asset directory (GRAPH.yaml, agents/, templates/)")
      .default_value(kSkillDefault)
      .hint(ValueHint::directory)
      .option("agent", "agent backend: " + agents::backend_choices())
      .default_value("claude")
      .option("claude-bin", "the agent CLI binary (tests pass a fake)")
      .default_value(kAgentBinDefault)
      .hint(ValueHint::file)
      .option("model", "pin every persona to this model")
      .default_value("each persona's own")
      .option("max-parallel", "tasks in flight at once per bundle")
      .default_value("GRAPH.yaml concurrency.max_parallel_tasks_per_bundle")
      .option("api-backoff-seconds", "first wait after a failing agent CLI; doubles per attempt")
      .default_value("60")
      .option("persona-timeout-seconds", "wall-clock limit of one persona run")
      .default_value("GRAPH.yaml headless.persona_timeout_minutes")
      .option("sim-scenario", "scenario file for --agent sim (one for every bundle)")
      .hint(ValueHint::file)
      .option("agent-command", "argv template for --agent command");
  declare_board_flags(p);
  return p;
}

int verb_run(const VerbArgs& args) {
  ArgParser p = verb_parser("run");
  auto a = p.parse(args);
  if (!a) return usage_exit(a.error());

  orchestrator::RunSetupRequest req;
  req.repo = a->get_or("repo", ".");
  req.issues = a->get("issues");
  req.label = a->get("label");
  req.all_issues = a->flag("all-issues");
  req.fresh = a->flag("new");
  req.discuss_rounds = a->flag("discuss-rounds");
  req.dry_run = a->flag("dry-run");
  req.skill = a->get("skill");
  if (req.issues && *req.issues != "github" && *req.issues != "local")
    return usage(p, "argument --issues: invalid choice: '" + *req.issues +
                        "' (choose from 'github', 'local')");
  req.merge_policy = a->get("merge-policy");
  if (req.merge_policy && *req.merge_policy != "never" &&
      *req.merge_policy != "auto_when_checks_pass")
    return usage(p, "argument --merge-policy: invalid choice: '" + *req.merge_policy +
                        "' (choose from 'never', 'auto_when_checks_pass')");
  if (req.label && req.all_issues) return usage(p, "--label and --all-issues exclude each other");
  if (auto mb = a->get("max-bundles")) {
    auto n = parse_int(*mb);
    if (!n || *n < 1 || *n > 1000)
      return usage(p, "argument --max-bundles: invalid int value: '" + *mb + "'");
    req.max_bundles = static_cast<int>(*n);
  }
  if (auto w = a->get("watch")) {
    auto v = parse_seconds(*w);
    if (!v || *v <= 0)
      return usage(p, "argument --watch: invalid positive float value: '" + *w + "'");
    req.watch = std::chrono::milliseconds(static_cast<long long>(*v * 1000));
  }
  if (auto b = a->get("budget-usd")) {
    auto v = parse_seconds(*b);
    if (!v || *v <= 0)
      return usage(p, "argument --budget-usd: invalid positive float value: '" + *b + "'");
    req.budget_usd = *v;
  }
  // Backend flags, checked here and handed to every driver as they are.
  std::string agent = a->get_or("agent", "claude");
  if (!agents::parse_backend(agent))
    return usage(p, "argument --agent: invalid choice: '" + agent + "' (choose from " +
                        agents::backend_choices() + ")");
  auto tmpl = agent_command_template(a->get("agent-command"), agent);
  if (!tmpl) return usage(p, tmpl.error().message);
  req.driver_flags = {"--agent", agent};
  for (const char* name : {"claude-bin", "model", "max-parallel", "api-backoff-seconds",
                           "persona-timeout-seconds", "sim-scenario", "agent-command", "skill"}) {
    if (auto v = a->get(name)) {
      std::string value = *v;
      if (std::string(name) == "sim-scenario" || std::string(name) == "claude-bin" ||
          std::string(name) == "skill")
        if (value.find('/') != std::string::npos) value = absolute_path(value);
      req.driver_flags.push_back(std::string("--") + name);
      req.driver_flags.push_back(value);
    }
  }
  if (auto mp = a->get("max-parallel")) {
    auto n = parse_int(*mp);
    if (!n || *n < 1 || *n > std::numeric_limits<int>::max())
      return usage(p, "argument --max-parallel: invalid int value: '" + *mp + "'");
  }
  for (const char* name : {"api-backoff-seconds", "persona-timeout-seconds"})
    if (auto v = a->get(name))
      if (auto s = parse_seconds(*v); !s || *s < 0)
        return usage(p, std::string("argument --") + name + ": invalid float value: '" + *v + "'");
  if (agent == "sim" && !a->get("sim-scenario"))
    return usage(p, "--agent sim needs --sim-scenario");

  // The board's port is bound before anything else is done, so a port in
  // use stops the run before it starts.
  auto bound = bind_board(p, *a, req.dry_run);
  if (!bound && bound.error().kind == ErrorKind::refused)
    return stop_with(bound.error().message, kExitUsage);
  if (!bound) return usage_exit(bound.error());
  board::Listener board;
  if (*bound) {
    board = std::move(**bound);
    req.board = &board;
    req.open_board = a->flag("open");
  }
  req.on_notice = [](const std::string& l) { err() << "devgraph run: " << l << std::endl; };

  std::unique_ptr<orchestrator::RunLiveView> view;
  if (bundle::live_view_wanted(STDOUT_FILENO, a->flag("no-live"))) {
    view = std::make_unique<orchestrator::RunLiveView>(out(), system_clock(),
                                                       bundle::terminal_size(STDOUT_FILENO));
    view->measure_with([] { return bundle::terminal_size(STDOUT_FILENO); });
    req.on_line = [&view](const std::string& l) { view->on_line(l); };
    req.on_state = [&view](const Json& s) { view->on_state(s); };
    req.on_tick = [&view] { view->tick(); };
  } else {
    req.on_line = [](const std::string& l) { err() << "devgraph run: " << l << "\n"; };
  }
  auto rep = orchestrator::run_repository(req, out());
  if (view) view->finish();
  if (!rep) return stop_with(rep.error().message, rep.error().exit_code);
  if (!rep->board_snapshot.empty())
    err() << "devgraph run: board snapshot at " << rep->board_snapshot << std::endl;
  if (!rep->summary.empty()) out() << rep->summary;
  out() << "RESULT_JSON: " << dump_py(rep->result) << std::endl;
  return rep->exit_code;
}

}  // namespace devgraph
