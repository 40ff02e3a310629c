#include "bundle/run.h"

#include <cstdlib>

#include "agents/headless.h"
#include "agents/runtime.h"
#include "bundle/driver.h"
#include "bundle/launcher.h"
#include "bundle/limits_client.h"
#include "contracts/schema.h"
#include "graph/graph.h"
#include "lane/lane.h"
#include "proc/command.h"
#include "skill/skill.h"
#include "store/run_store.h"
#include "util/fs.h"

namespace devgraph::bundle {

namespace {

RunBundleReport usage_report(const std::string& why) {
  Json r = {{"status", "BLOCKED"},
            {"summary", why},
            {"evidence", Json::array()},
            {"blockers", Json::array({why})},
            {"human_required", true}};
  return {kExitUsage, r};
}

}  // namespace

std::vector<std::string> view_node_order(const Graph& graph) {
  lane::Walker w(graph);
  auto order = w.lane_nodes("task");
  for (auto& n : w.lane_nodes("shared")) order.push_back(std::move(n));
  return order;
}

RunBundleReport run_bundle(const RunBundleRequest& request) {
  auto kind = agents::parse_backend(request.agent);
  if (!kind)
    return usage_report("--agent " + request.agent + ": expected one of " +
                        agents::backend_choices());
  auto skill = locate_skill(request.skill);
  if (!skill) return usage_report(skill.error().message);
  auto graph = Graph::load(*skill);
  if (!graph) return usage_report(graph.error().message);
  if (request.on_node_order) request.on_node_order(view_node_order(*graph));
  auto schema = Schema::load(state_schema_path(*skill));
  if (!schema) return usage_report(schema.error().message);
  RunStore store(request.run_dir, *graph, *schema);
  RealCommandRunner runner;

  DriverOptions opt;
  opt.run_dir = request.run_dir;
  opt.bundle = request.bundle;
  opt.skill_dir = *skill;
  opt.max_parallel = request.max_parallel;
  opt.base = request.base;
  opt.on_log = request.on_log;
  opt.on_state = request.on_state;
  opt.on_wait = request.on_tick;
  opt.critique.enabled = request.discuss_rounds;
  opt.critique.agent = request.agent;
  // The critics run in the worktree: a relative path would not be found.
  auto absolute = [](const std::string& p) {
    return p.find('/') == std::string::npos ? p : absolute_path(p);
  };
  opt.critique.agent_bin = absolute(request.agent_bin);
  opt.critique.model = request.model;
  opt.critique.sim_scenario =
      request.sim_scenario.empty() ? "" : absolute_path(request.sim_scenario);
  opt.critique.agent_command = request.agent_command_text;
  opt.critique.persona_timeout_seconds = request.persona_timeout_seconds;
  auto driver = Driver::open(opt, DriverParts{store, *graph, runner});
  if (!driver) return usage_report(driver.error().message);
  const BundleContext& ctx = (*driver)->context();

  agents::RuntimeConfig cfg;
  const HeadlessSettings& h = graph->headless;
  cfg.backend = agents::headless_backend(
      h, agents::BackendFlags{*kind, request.agent_bin, request.model, request.sim_scenario,
                              request.agent_command});
  // The project's own test and build programs, and devgraph's read-only
  // verbs, are allowed too.
  auto recorded = [&](const char* key) {
    return ctx.commands.contains(key) && ctx.commands[key].is_string()
               ? ctx.commands[key].get<std::string>()
               : std::string();
  };
  for (auto& t : agents::persona_extra_tools(recorded("test"), recorded("build")))
    cfg.backend.allowed_tools.push_back(std::move(t));
  const BundleLayout& layout = (*driver)->layout();
  cfg.backend.sim_state_dir = layout.sim_state();  // counters per bundle
  cfg.backend.bundle = request.bundle;
  cfg.bundle = request.bundle;
  cfg.log_path = layout.log();
  cfg.children_record = layout.live_children();
  cfg.on_log = request.on_log;  // the runtime's records too, as the reference prints them
  cfg.result_schema = result_schema_path(*skill);
  // Ctrl-C, a TERM from a supervisor or a closed terminal end the personas
  // and stop the driver cleanly (bundle/driver.h), never leave them running.
  cfg.watch_stop_signals = true;
  agents::apply_headless_minutes(cfg, h.persona_timeout_minutes, h.api_retry_minutes);
  if (request.persona_timeout_seconds)
    cfg.persona_timeout = std::chrono::milliseconds(
        static_cast<long long>(*request.persona_timeout_seconds * 1000.0));
  cfg.backoff_base =
      std::chrono::milliseconds(static_cast<long long>(request.api_backoff_seconds * 1000.0));
  auto runtime = agents::PersonaRuntime::create(cfg);
  if (!runtime) return usage_report(runtime.error().message);
  auto launcher =
      runtime_launcher(std::move(*runtime), Ticker{request.tick_every, request.on_tick});
  if (!request.limits_socket.empty()) {
    auto gate = connect_limits(request.limits_socket, request.bundle);
    if (!gate) return usage_report(gate.error().message);
    launcher = gated_launcher(std::move(launcher), std::move(*gate));
  }
  if (request.wrap_launcher) launcher = request.wrap_launcher(std::move(launcher));
  DriverOutcome out = (*driver)->run(*launcher);
  return {out.exit_code, out.result};
}

}  // namespace devgraph::bundle
