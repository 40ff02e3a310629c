// What a bundle-lane node does, read from what GRAPH.yaml declares about
// it, never from its name: the lane's completion node (`complete_at`) is
// delivery wherever a route leads to it; a scheduler node runs the task
// lane; a deterministic node with a `passed` route runs the recorded test
// and build commands; an agent node does what its owner persona does (the
// planner plans, the code reviewer reviews, the documentation reviewer
// reviews the documentation, a developer repairs), and an agent node of any
// other persona with an `approved` route is a review.
#pragma once

#include <string>
#include <string_view>

#include "graph/graph.h"

namespace devgraph::lane {

enum class NodeKind { plan, schedule, verify, review, repair, docs, deliver, unknown };

// `node`'s kind in `graph`'s bundle lane; unknown for a node the graph
// does not declare, a node of another lane, or one declared with nothing
// the bundle driver can run.
NodeKind node_kind(const Graph& graph, std::string_view node);

// The kind's name, for messages.
std::string_view node_kind_name(NodeKind kind);

}  // namespace devgraph::lane
