// `devgraph doctor [--repo DIR] [--json] [--agent A] [--claude-bin P]`:
// whether this machine and this repository are ready for devgraph
// (src/doctor/doctor.h), one line per check with its fix, or one JSON
// object for scripts. It changes nothing.
//
// Exit codes: 0 no problem (warnings allowed); 1 at least one problem;
// 3 a usage error.
#include <cstdlib>

#include "agents/backend.h"
#include "cli/verbs.h"
#include "doctor/doctor.h"
#include "skill/skill.h"
#include "util/args.h"
#include "util/console.h"
#include "util/fs.h"

namespace devgraph {
namespace {

constexpr int kExitUsage = 3;

int report(const Error& e) {
  Error u = e;
  if (u.exit_code == 2) u.exit_code = kExitUsage;
  return report_error("doctor", u);
}

std::string env(const char* name) {
  const char* v = std::getenv(name);
  return v ? v : "";
}

}  // namespace

ArgParser verb_doctor_parser() {
  ArgParser p("devgraph doctor");
  p.description(
       "Check whether this machine and this repository are ready for devgraph: git, gh, the "
       "agent CLIs and the argv devgraph gives them, the repository as `devgraph run` takes it, "
       "the placement guard, devgraph's grants, disk space, and what runs left behind. Changes "
       "nothing. Exit 0 without a problem (warnings allowed), 1 with one, 3 on a usage error.")
      .option("repo", "the repository")
      .default_value("the current directory")
      .hint(ValueHint::directory)
      .option("agent",
              "the backend `devgraph run` would use: its CLI missing is a problem, the others' "
              "a warning",
              false, {"claude", "codex", "gemini", "command", "sim"})
      .default_value("claude")
      .option("claude-bin", "the claude binary, as for run")
      .default_value("$DEVELOP_CLAUDE_BIN, else claude")
      .hint(ValueHint::file)
      .option("skill", "asset directory (GRAPH.yaml: the agents' settings)")
      .default_value(kSkillDefault)
      .hint(ValueHint::directory)
      .flag("json", "print one JSON object: {\"ok\": ..., \"checks\": [...]}");
  return p;
}

int verb_doctor(const VerbArgs& args) {
  ArgParser p = verb_parser("doctor");
  auto a = p.parse(args);
  if (!a) return report(a.error());

  doctor::Options o;
  o.repo_given = a->has("repo");
  o.repo = a->get_or("repo", ".");
  o.agent =
      agents::parse_backend(a->get_or("agent", "claude")).value_or(agents::BackendKind::claude);
  o.claude_bin = a->get_or("claude-bin", "");
  o.skill = a->get("skill");
  o.roots = guard::Roots::from_env();
  o.install.home = env("HOME");
  o.install.devgraph_bin = self_executable();
  for (const char* var : {"CLAUDE_CONFIG_DIR", "CODEX_HOME", "COPILOT_HOME"})
    o.install.env[var] = env(var);
  o.install.location = absolute_path(o.repo);
  o.path = env("PATH");

  RealCommandRunner runner;
  auto findings = doctor::run_doctor(o, runner);
  if (a->flag("json"))
    out() << dump_py(doctor::to_json(findings), 2) << "\n";
  else
    out() << doctor::render_table(findings);
  return doctor::exit_code(findings);
}

}  // namespace devgraph
