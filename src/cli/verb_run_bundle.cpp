// `devgraph run-bundle RUN_DIR --bundle B ...`: the headless tech lead.
// Flags and exit codes follow the reference's run_bundle script; the last
// line on stdout is the RESULT_JSON line the orchestrator reads.
#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <limits>
#include <memory>
#include <optional>

#include "agents/backend.h"
#include "bundle/limits_protocol.h"
#include "bundle/run.h"
#include "bundle/view.h"
#include "cli/verbs.h"
#include "util/args.h"
#include "util/console.h"

namespace devgraph {
namespace {}  // namespace

ArgParser verb_run_bundle_parser() {
  ArgParser p("devgraph run-bundle");
  p.description("Drive one bundle: plan, tasks, gates, pull request or ready branch.")
      .positional("run_dir", "the run directory (state.json, events.jsonl)")
      .hint(ValueHint::directory)
      .option("bundle", "bundle id", true)
      .hint(ValueHint::bundle)
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
      .option("max-parallel", "tasks in flight at once")
      .default_value("GRAPH.yaml concurrency.max_parallel_tasks_per_bundle")
      .option("poll-seconds",
              "accepted for the reference's callers and ignored; devgraph waits on events")
      .hidden()
      .option("base", "base ref of the bundle branch")
      .default_value("the run's default branch")
      .option("api-backoff-seconds", "first wait after a failing agent CLI; doubles per attempt")
      .default_value("60")
      .option("persona-timeout-seconds", "wall-clock limit of one persona run")
      .default_value("GRAPH.yaml headless.persona_timeout_minutes")
      .option("sim-scenario", "scenario file for --agent sim")
      .hint(ValueHint::file)
      .option("agent-command",
              "argv template for --agent command, e.g. 'mycli --prompt-file {prompt_file}' "
              "(also {worktree} {persona} {task} {model} {run_dir})")
      .flag("discuss-rounds",
            "critique the plan and the finished branch (GRAPH.yaml discuss.rounds)")
      .flag("no-live", "plain log lines even on a terminal (also NO_COLOR, TERM=dumb)");
  return p;
}

int verb_run_bundle(const VerbArgs& args) {
  ArgParser p = verb_parser("run-bundle");
  auto a = p.parse(args);
  if (!a) return report_error("run-bundle", a.error());
  bundle::RunBundleRequest req;
  req.run_dir = a->positionals()[0];
  req.bundle = *a->get("bundle");
  req.skill = a->get("skill");
  req.agent = a->get_or("agent", "claude");
  req.agent_bin = a->get_or("claude-bin", "");
  req.model = a->get("model");
  req.base = a->get("base");
  req.sim_scenario = a->get_or("sim-scenario", "");
  // `devgraph run` hands its drivers the run's limits (bundle/limits_client.h).
  if (const char* limits = std::getenv(bundle::kLimitsSocketEnv)) req.limits_socket = limits;
  auto tmpl = agent_command_template(a->get("agent-command"), req.agent);
  if (!tmpl) return report_error("run-bundle", p.usage_error(tmpl.error().message));
  req.agent_command = std::move(*tmpl);
  req.agent_command_text = a->get("agent-command");
  req.discuss_rounds = a->flag("discuss-rounds");
  if (auto mp = a->get("max-parallel")) {
    auto n = parse_int(*mp);
    if (!n || *n < 1 || *n > std::numeric_limits<int>::max())
      return report_error(
          "run-bundle", p.usage_error("argument --max-parallel: invalid int value: '" + *mp + "'"));
    req.max_parallel = static_cast<int>(*n);
  }
  if (auto b = a->get("api-backoff-seconds")) {
    auto v = parse_seconds(*b);
    if (!v || *v < 0)
      return report_error(
          "run-bundle",
          p.usage_error("argument --api-backoff-seconds: invalid float value: '" + *b + "'"));
    req.api_backoff_seconds = *v;
  }
  if (auto t = a->get("persona-timeout-seconds")) {
    auto v = parse_seconds(*t);
    if (!v || *v <= 0)
      return report_error(
          "run-bundle",
          p.usage_error("argument --persona-timeout-seconds: invalid positive float value: '" + *t +
                        "'"));
    req.persona_timeout_seconds = *v;
  }
  // On a terminal, the live view on stdout; else one JSON line per log
  // record on stderr. Either way RESULT_JSON is the last line on stdout.
  std::unique_ptr<bundle::LiveView> view;
  if (bundle::live_view_wanted(STDOUT_FILENO, a->flag("no-live"))) {
    view = std::make_unique<bundle::LiveView>(out(), req.bundle, system_clock(),
                                              bundle::terminal_size(STDOUT_FILENO));
    view->measure_with([] { return bundle::terminal_size(STDOUT_FILENO); });
    req.on_log = [&view](const Json& rec) { view->on_log(rec); };
    req.on_state = [&view](const Json& state) { view->on_state(state); };
    req.on_tick = [&view] { view->tick(); };
    req.on_node_order = [&view](const std::vector<std::string>& order) {
      view->set_node_order(order);
    };
  } else {
    req.on_log = [](const Json& rec) { err() << dump_py(rec) << "\n"; };
  }
  auto report = bundle::run_bundle(req);
  if (view) view->finish();
  out() << "RESULT_JSON: " << dump_py(report.result) << std::endl;
  return report.exit_code;
}

}  // namespace devgraph
