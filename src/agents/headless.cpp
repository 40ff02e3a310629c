#include "agents/headless.h"

#include <cstdlib>

namespace devgraph::agents {

BackendOptions headless_backend(const HeadlessSettings& h, const BackendFlags& flags) {
  BackendOptions b;
  b.kind = flags.kind;
  b.binary = flags.binary;
  b.model = flags.model ? flags.model : h.model;
  b.permission_mode = h.permission_mode;
  b.max_turns = h.max_turns_per_persona;
  b.allowed_tools = h.allowed_tools;
  b.disallowed_tools = h.disallowed_tools;
  const char* telemetry = std::getenv("DEVGRAPH_CLI_TELEMETRY");
  b.cli_telemetry = telemetry && std::string_view(telemetry) == "1";
  b.sim_scenario = flags.sim_scenario;
  b.command_template = flags.agent_command;
  return b;
}
}  // namespace devgraph::agents
