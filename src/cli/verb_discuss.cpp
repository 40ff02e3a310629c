// `devgraph discuss ARTIFACT --round ID`: every perspective critiques the
// artifact at once, each on its own agent backend, and code decides
// whether they agree (discuss/panel.h, discuss/rules.h). The discussion
// record goes to <out>/discussions/<round>-discussion.md; stdout's last
// line is RESULT_JSON.
//
// Exit codes: 0 consensus reached, 2 consensus blocked, 1 a failure (a
// missing artifact included), 3 a usage error (nothing run), 128+N
// stopped by signal N.
#include <map>

#include "agents/backend.h"
#include "cli/verbs.h"
#include "discuss/panel.h"
#include "util/args.h"
#include "util/console.h"
#include "util/text.h"

namespace devgraph {
namespace {

constexpr int kExitUsage = 3;

int usage_exit(Error e) {
  if (e.exit_code == 2 || e.exit_code == 1) e.exit_code = kExitUsage;
  return report_error("discuss", e);
}

}  // namespace

ArgParser verb_discuss_parser() {
  ArgParser p("devgraph discuss");
  p.description(
       "Multi-perspective critique of one artifact: each perspective (GRAPH.yaml "
       "discuss.perspectives) rates it on its own agent backend, all at once; code finds where "
       "they diverge, decides consensus and severity, and writes the discussion record.")
      .positional("artifact", "the file to critique")
      .hint(ValueHint::file)
      .option("round", "the round's id; names the record's file", true)
      .option("perspectives", "comma-separated")
      .default_value("every perspective of GRAPH.yaml")
      .option("context", "the requirements the coverage perspective checks the artifact against")
      .default_value("none: coverage is left out")
      .hint(ValueHint::file)
      .option("out", "where discussions/ goes")
      .default_value("the current directory")
      .hint(ValueHint::directory)
      .option("agent-map", "perspective=backend,... for the perspectives named")
      .option("agent", "every perspective's first backend: " + agents::backend_choices())
      .default_value("each perspective's own (GRAPH.yaml)")
      .option("fallback",
              "backends tried after a perspective's own fails, comma-separated, or none")
      .default_value("GRAPH.yaml discuss.fallback_backends")
      .flag("sign-off", "the final sign-off round: a HIGH block always goes to a person")
      .flag("revised", "the artifact was already revised once: a HIGH block goes to a person")
      .option("skill", "asset directory (GRAPH.yaml, agents/, templates/)")
      .default_value(kSkillDefault)
      .hint(ValueHint::directory)
      .option("claude-bin", "the claude CLI binary (tests pass a fake)")
      .default_value(kAgentBinDefault)
      .hint(ValueHint::file)
      .option("model", "pin every critic to this model")
      .default_value("the critic's own")
      .option("sim-scenario", "scenario file for the sim backend")
      .hint(ValueHint::file)
      .option("agent-command", "argv template for the command backend")
      .option("persona-timeout-seconds", "wall-clock limit of one critic's attempt")
      .default_value("GRAPH.yaml headless.persona_timeout_minutes");
  return p;
}

int verb_discuss(const VerbArgs& args) {
  ArgParser p = verb_parser("discuss");
  auto a = p.parse(args);
  if (!a) return usage_exit(a.error());
  discuss::PanelRequest req;
  req.artifact = a->positionals()[0];
  req.round = *a->get("round");
  req.perspectives = split_list(a->get_or("perspectives", ""));
  req.context = a->get_or("context", "");
  req.out = a->get_or("out", ".");
  req.agent = a->get("agent");
  for (const auto& pair : split_list(a->get_or("agent-map", ""))) {
    auto eq = pair.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == pair.size())
      return usage_exit(
          p.usage_error("argument --agent-map: expected perspective=backend, got '" + pair + "'"));
    req.agent_map[pair.substr(0, eq)] = pair.substr(eq + 1);
  }
  if (auto f = a->get("fallback"))
    req.fallback = *f == "none" ? std::vector<std::string>{} : split_list(*f);
  req.final_sign_off = a->flag("sign-off");
  req.already_revised = a->flag("revised");
  req.skill = a->get("skill");
  req.agent_bin = a->get_or("claude-bin", "");
  req.model = a->get("model");
  req.sim_scenario = a->get_or("sim-scenario", "");
  if (auto c = a->get("agent-command")) {
    if (auto tmpl = agent_command_template(c, "command"); !tmpl)
      return usage_exit(p.usage_error(tmpl.error().message));
    req.agent_command = *c;
  }
  if (auto v = a->get("persona-timeout-seconds")) {
    auto s = parse_seconds(*v);
    if (!s || *s <= 0)
      return usage_exit(p.usage_error(
          "argument --persona-timeout-seconds: invalid positive float value: '" + *v + "'"));
    req.persona_timeout_seconds = *s;
  }
  auto rep = discuss::run_panel(req);
  if (!rep) {
    if (rep.error().exit_code == kExitUsage) return report_error("discuss", rep.error());
    err() << "devgraph discuss: " << rep.error().message << "\n";
    out() << "RESULT_JSON: " << dump_py(Json{{"status", "ERROR"}, {"summary", rep.error().message}})
          << std::endl;
    return rep.error().exit_code;
  }
  err() << "devgraph discuss: record at " << rep->record_path << std::endl;
  out() << "RESULT_JSON: " << dump_py(rep->result) << std::endl;
  return rep->exit_code;
}

}  // namespace devgraph
