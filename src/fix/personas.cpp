#include "fix/personas.h"

#include "agents/headless.h"
#include "agents/runtime.h"
#include "contracts/schema.h"
#include "skill/skill.h"
#include "util/fs.h"

namespace devgraph::fix {

Expected<PersonaAnswer> RuntimePersonas::run(const PersonaCall& call) {
  auto kind = agents::parse_backend(call.backend);
  if (!kind)
    return fail(ErrorKind::usage,
                "backend " + call.backend + ": expected one of " + agents::backend_choices());
  agents::RuntimeConfig cfg;
  cfg.backend = agents::headless_backend(
      graph_.headless,
      agents::BackendFlags{*kind, *kind == agents::BackendKind::claude ? flags_.agent_bin : "",
                           call.model, flags_.sim_scenario, flags_.agent_command});
  cfg.backend.effort = call.effort;
  if (call.role != "fix" && call.role != "debug") {
    // Reviewers, the diagnosis and specialists read; the fixer and the
    // debugger write.
    cfg.backend.allowed_tools = {"Read", "Grep", "Glob"};
    for (const char* t : {"Edit", "Write", "NotebookEdit"})
      cfg.backend.disallowed_tools.push_back(t);
  }
  DG_CHECK(make_directories(call.dir));
  cfg.backend.config_dir = join_path(call.dir, "cli");
  cfg.backend.sim_state_dir =
      flags_.sim_state_dir.empty() ? join_path(call.dir, "sim") : flags_.sim_state_dir;
  cfg.backend.bundle = call.role;
  cfg.bundle = call.role;
  cfg.log_path = join_path(call.dir, "persona.log");
  cfg.prompt_dir = join_path(call.dir, "prompts");
  cfg.children_record = join_path(call.dir, "live-children");
  cfg.result_schema = result_schema_path(skill_dir_);
  cfg.watch_stop_signals = true;
  agents::apply_headless_minutes(cfg, graph_.headless.persona_timeout_minutes,
                                 graph_.headless.api_retry_minutes);
  if (flags_.persona_timeout) cfg.persona_timeout = *flags_.persona_timeout;
  agents::LaunchRequest launch;
  launch.persona = call.persona;
  launch.dispatch = call.dispatch;
  launch.worktree = worktree_;
  launch.run_dir = call.dir;
  launch.skill_dir = skill_dir_;
  launch.output_path = join_path(call.dir, "output.log");
  auto done = agents::run_to_completion(cfg, launch);
  if (!done && done.error().kind == ErrorKind::interrupted) return done.error();
  PersonaAnswer a;
  if (!done) {
    a.outcome = "launch_failed";
    a.result = Json{{"status", "BLOCKED"},
                    {"summary", done.error().message},
                    {"evidence", Json::array()},
                    {"blockers", Json::array({done.error().message})}};
    return a;
  }
  a.result = done->result;
  a.outcome = std::string(agents::outcome_name(done->outcome));
  a.handle = done->handle;
  a.session_id = done->session_id;
  a.cost_usd = done->cost_usd;
  return a;
}

}  // namespace devgraph::fix
