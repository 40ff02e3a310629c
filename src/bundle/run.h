// One call that wires the headless tech lead together: skill, graph, state
// schema, run store, persona runtime (with the chosen agent backend) and the
// driver. Shared by `devgraph run-bundle` and `devgraph demo`.
#pragma once

#include <chrono>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "agents/backend.h"
#include "bundle/launcher.h"
#include "graph/graph.h"
#include "util/json.h"

namespace devgraph::bundle {

struct RunBundleRequest {
  std::string run_dir;
  std::string bundle;
  std::optional<std::string> skill;  // --skill
  std::string agent = "claude";      // --agent: a backend name
  std::string agent_bin;             // --claude-bin (any backend's binary)
  std::optional<std::string> model;
  std::optional<int> max_parallel;
  std::optional<std::string> base;
  double api_backoff_seconds = 60.0;
  // --persona-timeout-seconds: overrides GRAPH.yaml's
  // headless.persona_timeout_minutes (whole minutes) with a finer limit.
  std::optional<double> persona_timeout_seconds;
  std::string sim_scenario;  // for --agent sim
  // --agent-command: the argv template of --agent command (agents/backend.h
  // lists its placeholders).
  std::vector<std::string> agent_command;
  std::optional<std::string> agent_command_text;  // the flag as given, for the critics
  // --discuss-rounds: the plan and the finished branch are critiqued
  // (GRAPH.yaml discuss.rounds; bundle/critique_gate.h).
  bool discuss_rounds = false;
  std::function<void(const Json&)> on_log;
  // The live view's feeds (bundle/view.h); each may be empty. on_log above
  // receives the driver's and the persona runtime's log records.
  std::function<void(const Json&)> on_state;
  // Every tick_every while personas or the bundle's test and build
  // commands run.
  std::function<void()> on_tick;
  // Called once, before any record, with the order a task passes the
  // lane's nodes (GRAPH.yaml's task lane, then its shared nodes).
  std::function<void(const std::vector<std::string>&)> on_node_order;
  std::chrono::milliseconds tick_every{250};
  // The run's limits socket (bundle/limits_client.h; `devgraph run` sets
  // DEVGRAPH_LIMITS_SOCKET): every persona launch waits for a slot there.
  // Empty: no run-wide limits. An address nobody listens at is an error
  // before any work (exit 3).
  std::string limits_socket;
  // Tests only: wraps the launcher the driver uses (e.g. to hold
  // completions back and hand them over together).
  std::function<std::unique_ptr<Launcher>(std::unique_ptr<Launcher>)> wrap_launcher;
};

struct RunBundleReport {
  int exit_code = 0;  // 0 DONE*, 2 BLOCKED/NEEDS_CONTEXT, 3 usage or state error
  Json result;        // the RESULT_JSON object
};

RunBundleReport run_bundle(const RunBundleRequest& request);

// The live view's node order for `graph`: the task lane's nodes, then the
// shared ones.
std::vector<std::string> view_node_order(const Graph& graph);

}  // namespace devgraph::bundle
