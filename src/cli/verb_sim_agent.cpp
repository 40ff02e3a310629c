// `devgraph sim-agent`: the simulated agent CLI behind `--agent sim`. The
// persona runtime runs it as a child process in the worktree; see
// agents/sim.h and docs/sim-scenario.md.

#include "agents/sim.h"
#include "cli/verbs.h"
#include "util/args.h"
#include "util/console.h"

namespace devgraph {

ArgParser verb_sim_agent_parser() {
  ArgParser p("devgraph sim-agent");
  p.description("Play one persona launch from a scenario file (the simulated agent backend).")
      .option("scenario", "the scenario file (JSON)", true)
      .hint(ValueHint::file)
      .option("persona", "the persona being simulated", true)
      .option("bundle", "the bundle id, when the launch has one")
      .hint(ValueHint::bundle)
      .option("task", "the task id, when the launch has one")
      .option("state", "directory for the per-persona launch counters")
      .default_value("none: every launch is the first")
      .hint(ValueHint::directory)
      .option("prompt-file", "the prompt, for dispatch_contains rules")
      .hint(ValueHint::file)
      .option("resume", "answer a resume call for this session id")
      .option("model", "the model the launch runs at, for setting rules")
      .option("effort", "the reasoning effort the launch runs at, for setting rules")
      .option("launched-at",
              "CLOCK_MONOTONIC nanoseconds when the call was launched; the latency counts from "
              "there")
      .default_value("when sim-agent starts");
  return p;
}

int verb_sim_agent(const VerbArgs& args) {
  ArgParser p = verb_parser("sim-agent");
  auto parsed = p.parse(args);
  if (!parsed) return report_error("sim-agent", parsed.error());
  agents::SimInvocation inv;
  inv.scenario = *parsed->get("scenario");
  inv.persona = *parsed->get("persona");
  inv.bundle = parsed->get_or("bundle", "");
  inv.task = parsed->get_or("task", "");
  inv.state_dir = parsed->get_or("state", "");
  inv.prompt_file = parsed->get_or("prompt-file", "");
  inv.resume = parsed->get_or("resume", "");
  inv.model = parsed->get_or("model", "");
  inv.effort = parsed->get_or("effort", "");
  if (auto at = parsed->get("launched-at")) {
    auto ns = parse_int(*at);
    if (!ns || *ns < 0)
      return report_error("sim-agent", p.usage_error("argument --launched-at: expected "
                                                     "nanoseconds, got '" +
                                                     *at + "'"));
    inv.launched_at_ns = *ns;
  }
  return agents::run_sim_agent(inv, out(), err());
}

}  // namespace devgraph
