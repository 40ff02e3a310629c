// The backend of a persona runtime from GRAPH.yaml `headless` and the
// backend flags every verb that runs personas shares (run-bundle,
// audit-merge, discuss, fix).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "agents/backend.h"
#include "graph/graph.h"

namespace devgraph::agents {

// The backend flags every verb that runs personas shares.
struct BackendFlags {
  BackendKind kind = BackendKind::claude;
  std::string binary;  // --claude-bin
  std::optional<std::string> model;
  std::string sim_scenario;
  std::vector<std::string> agent_command;
};

// A persona runtime's backend from GRAPH.yaml `headless` and the flags:
// --model over the graph's model, the permission mode, turns and tool
// lists, and the CLIs' telemetry as $DEVGRAPH_CLI_TELEMETRY says
// (agents/cli_setup.h). The caller adds what is its own (extra tools,
// state directories).
BackendOptions headless_backend(const HeadlessSettings& headless, const BackendFlags& flags);

}  // namespace devgraph::agents
