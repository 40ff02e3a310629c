// `devgraph demo`: the README's quick start. Builds a sample repository,
// files its issues and runs the orchestrator over them: three bundles, two
// or more at once, each to a ready branch, with the simulated agent,
// offline (demo/demo.h).
#include <unistd.h>

#include "agents/backend.h"
#include "bundle/view.h"
#include "cli/verbs.h"
#include "demo/demo.h"
#include "util/args.h"
#include "util/console.h"

namespace devgraph {

ArgParser verb_demo_parser() {
  ArgParser p("devgraph demo");
  p.description(
       "Build a sample repository with five local issues and run devgraph over them: "
       "three bundles, several at once, each to a ready branch, offline. Everything goes "
       "under $AI_ROOT, else a fresh temporary directory.")
      .option("agent", "agent backend: " + agents::backend_choices())
      .default_value("sim")
      .option("claude-bin", "the agent CLI binary")
      .default_value(kAgentBinDefault)
      .hint(ValueHint::file)
      .option("agent-command", "argv template for --agent command (see run-bundle --help)")
      .option("model", "pin every persona to this model")
      .default_value("each persona's own")
      .option("skill", "asset directory (GRAPH.yaml, agents/, templates/)")
      .default_value(kSkillDefault)
      .hint(ValueHint::directory)
      .option("latency-ms", "each simulated persona's time")
      .default_value("300")
      .flag("no-live", "plain progress lines even on a terminal (also NO_COLOR, TERM=dumb)");
  return p;
}

int verb_demo(const VerbArgs& args) {
  ArgParser p = verb_parser("demo");
  auto a = p.parse(args);
  if (!a) return report_error("demo", a.error());
  demo::DemoOptions o;
  o.agent = a->get_or("agent", "sim");
  if (!agents::parse_backend(o.agent))
    return report_error("demo",
                        p.usage_error("argument --agent: invalid choice: '" + o.agent + "'"));
  o.agent_bin = a->get_or("claude-bin", "");
  auto tmpl = agent_command_template(a->get("agent-command"), o.agent);
  if (!tmpl) return report_error("demo", p.usage_error(tmpl.error().message));
  o.agent_command = a->get("agent-command");
  o.model = a->get("model");
  o.skill = a->get("skill");
  if (auto l = a->get("latency-ms")) {
    auto n = parse_int(*l);
    if (!n || *n < 0)
      return report_error("demo",
                          p.usage_error("argument --latency-ms: invalid int value: '" + *l + "'"));
    o.latency_ms = *n;
  }
  if (bundle::live_view_wanted(STDOUT_FILENO, a->flag("no-live"))) {
    o.live = bundle::terminal_size(STDOUT_FILENO);
    o.live_measure = [] { return bundle::terminal_size(STDOUT_FILENO); };
  }
  auto r = demo::run_demo(o, out());
  if (!r) return report_error("demo", r.error());
  return r->exit_code;
}

}  // namespace devgraph
