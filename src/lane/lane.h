// The lane engine's view of GRAPH.yaml: where a cursor goes next, which
// personas a node runs, and the limits a node spends. Every transition the
// bundle and task lanes make is asked of a Walker; no module keeps its own
// copy of a route, a node order, a persona or a limit.
//
// Contract:
// - next(node, route) is the node's `routes[route]`, or its `next` for the
//   route "next". A route the graph does not have, or one the engine does
//   not declare in kRoutesTaken (lane/routes.h), is an internal error: the
//   code and the graph disagree, and the caller stops rather than guess.
// - follow() resolves the two targets that are not plain nodes:
//   `retry_previous` goes back to the cursor's previous node, and a
//   terminal interrupt of another lane (`human_required`, the run's own
//   stop) parks a bundle or task cursor at the shared cursor interrupt
//   (`awaiting_human`): a cursor cannot leave its lane, and one cursor
//   waiting for a person never stops the others.
// - personas(node, selection) reads the node's owner: one persona, a list
//   (agent_parallel, joined by all), or a selector (`dynamic` owner):
//   iac_if_infrastructure_else_developer and finding_owner. A node whose
//   type is neither agent nor agent_parallel runs no persona, whoever owns
//   it: it is code.
// - max_cycles/max_retries are the node's guards, else the graph's
//   defaults.
// Pure functions over the graph: no I/O, no clock.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "graph/graph.h"
#include "util/expected.h"

namespace devgraph::lane {

// What a selector chooses from.
struct Selection {
  // The task is infrastructure (terraform, workflows, ...): for
  // iac_if_infrastructure_else_developer.
  bool infrastructure = false;
  // The persona whose work the findings are about: for finding_owner.
  std::string finding_owner;
};

class Walker {
 public:
  explicit Walker(const Graph& graph) : graph_(graph) {}

  const Graph& graph() const { return graph_; }

  // The target of `route` at `node` as GRAPH.yaml writes it (a node name,
  // or retry_previous).
  Expected<std::string> next(std::string_view node, std::string_view route) const;
  // The node a cursor of `lane` standing on `node` (previously on
  // `previous`) moves to by `route`.
  Expected<std::string> follow(std::string_view lane, std::string_view node, std::string_view route,
                               std::string_view previous) const;
  // The personas `node` runs; empty for a node that is code.
  Expected<std::vector<std::string>> personas(std::string_view node,
                                              const Selection& selection = {}) const;
  int max_cycles(std::string_view node) const;
  int max_retries(std::string_view node) const;
  // The lane's nodes in file order (the live view groups tasks by it).
  std::vector<std::string> lane_nodes(std::string_view lane) const;
  // The shared node whose type is `type` (recovery nodes by policy
  // aside): where a cursor waits for a person.
  std::optional<std::string> shared_node_of_type(std::string_view type) const;
  // The first node of `lane` whose type is `type` (its scheduler, say).
  std::optional<std::string> node_of_type(std::string_view lane, std::string_view type) const;
  // A recovery node's route for giving up: the one that is not
  // `recovered` (context_recovery's unresolved, blocker_recovery's
  // exhausted).
  std::string giving_up_route(std::string_view node) const;

 private:
  const Graph& graph_;
};

// The persona a repair is for: `test_writer` when every finding names a
// file the task's test writer wrote (its reported artifacts), else
// `implementer` (the persona that implemented the task). Findings are the
// verifiers' objects; one names a file by "file" or "path" (a "file:line"
// suffix is ignored). A finding that names no file is the implementer's.
std::string finding_owner(const std::vector<std::string>& finding_files,
                          const std::vector<std::string>& test_artifacts,
                          const std::string& test_writer, const std::string& implementer);

}  // namespace devgraph::lane
