// `devgraph audit-merge RUN_DIR --key KEY ...`: audits one merged pull
// request (orchestrator/merge_audit.h). Internal: `devgraph run` starts
// it, one child per merged PR, with run-bundle's backend flags. The last
// line on stdout is the RESULT_JSON line of RUN_DIR/audit/KEY/result.json.
#include <unistd.h>

#include <cstdlib>

#include "bundle/limits_protocol.h"
#include "cli/verbs.h"
#include "orchestrator/merge_audit.h"
#include "util/args.h"
#include "util/console.h"

namespace devgraph {
namespace {

int usage_exit(Error e) {
  if (e.exit_code == 2) e.exit_code = orchestrator::kAuditExitUsage;
  return report_error("audit-merge", e);
}

}  // namespace

ArgParser verb_audit_merge_parser() {
  ArgParser p("devgraph audit-merge");
  p.description(
       "Audit one merged pull request as RUN_DIR/audit/KEY/request.json describes it, with one "
       "merge-auditor; the answer goes to RUN_DIR/audit/KEY/result.json.")
      .positional("run_dir", "the run directory")
      .hint(ValueHint::directory)
      .option("key", "the audit's key, [a-z0-9._-]+ (e.g. pr-12)", true)
      .option("skill", "asset directory (GRAPH.yaml, agents/, templates/)")
      .default_value(kSkillDefault)
      .hint(ValueHint::directory)
      .option("agent", "agent backend: " + agents::backend_choices())
      .default_value("claude")
      .option("claude-bin", "the agent CLI binary (tests pass a fake)")
      .default_value(kAgentBinDefault)
      .hint(ValueHint::file)
      .option("model", "pin the auditor to this model")
      .default_value("the merge-auditor's own")
      .option("api-backoff-seconds", "first wait after a failing agent CLI; doubles per attempt")
      .default_value("60")
      .option("persona-timeout-seconds", "wall-clock limit of one persona run")
      .default_value("GRAPH.yaml headless.persona_timeout_minutes")
      .option("sim-scenario", "scenario file for --agent sim")
      .hint(ValueHint::file)
      .option("agent-command",
              "argv template for --agent command, e.g. 'mycli --prompt-file {prompt_file}'");
  return p;
}

int verb_audit_merge(const VerbArgs& args) {
  ArgParser p = verb_parser("audit-merge");
  auto a = p.parse(args);
  if (!a) return usage_exit(a.error());
  orchestrator::MergeAuditOptions opt;
  opt.run_dir = a->positionals()[0];
  opt.key = *a->get("key");
  opt.skill = a->get("skill");
  opt.agent = a->get_or("agent", "claude");
  opt.agent_bin = a->get_or("claude-bin", "");
  opt.model = a->get("model");
  opt.sim_scenario = a->get_or("sim-scenario", "");
  if (const char* limits = std::getenv(bundle::kLimitsSocketEnv)) opt.limits_socket = limits;
  auto tmpl = agent_command_template(a->get("agent-command"), opt.agent);
  if (!tmpl) return usage_exit(p.usage_error(tmpl.error().message));
  opt.agent_command = std::move(*tmpl);
  if (auto b = a->get("api-backoff-seconds")) {
    auto v = parse_seconds(*b);
    if (!v || *v < 0)
      return usage_exit(
          p.usage_error("argument --api-backoff-seconds: invalid float value: '" + *b + "'"));
    opt.api_backoff_seconds = *v;
  }
  if (auto t = a->get("persona-timeout-seconds")) {
    auto v = parse_seconds(*t);
    if (!v || *v <= 0)
      return usage_exit(p.usage_error(
          "argument --persona-timeout-seconds: invalid positive float value: '" + *t + "'"));
    opt.persona_timeout_seconds = *v;
  }
  // The runtime's records, one JSON line each on stderr (the run keeps
  // them in audit.log too).
  opt.on_log = [](const Json& rec) { err() << dump_py(rec) << "\n"; };
  RealCommandRunner runner;
  auto report = orchestrator::run_merge_audit(opt, runner);
  if (!report.error.empty()) {
    out().flush();
    err() << "devgraph audit-merge: " << report.error << "\n";
  }
  if (report.result) out() << "RESULT_JSON: " << dump_py(*report.result) << std::endl;
  return report.exit_code;
}

}  // namespace devgraph
