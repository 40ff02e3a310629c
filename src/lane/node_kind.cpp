#include "lane/node_kind.h"

#include <algorithm>

namespace devgraph::lane {
namespace {

bool has_route(const GraphNode& n, std::string_view route) {
  return std::any_of(n.routes.begin(), n.routes.end(),
                     [&](const auto& r) { return r.first == route; });
}

}  // namespace

NodeKind node_kind(const Graph& graph, std::string_view node) {
  const GraphNode* n = graph.node(node);
  const GraphLane* lane = graph.lane("bundle");
  if (!n || !lane || graph.lane_of(node) != lane) return NodeKind::unknown;
  if (node == lane->complete_at) return NodeKind::deliver;
  if (n->type == "scheduler") return NodeKind::schedule;
  if (n->type == "deterministic") return has_route(*n, "passed") ? NodeKind::verify : NodeKind::unknown;
  if (n->type != "agent" || n->owners.size() != 1) return NodeKind::unknown;
  const std::string& owner = n->owners.front();
  if (owner == "planner") return NodeKind::plan;
  if (owner == "code-reviewer") return NodeKind::review;
  if (owner == "documentation-reviewer") return NodeKind::docs;
  if (owner == "developer" || owner == "iac-developer") return NodeKind::repair;
  if (has_route(*n, "approved")) return NodeKind::review;
  return NodeKind::unknown;
}

std::string_view node_kind_name(NodeKind kind) {
  switch (kind) {
    case NodeKind::plan: return "plan";
    case NodeKind::schedule: return "schedule";
    case NodeKind::verify: return "verify";
    case NodeKind::review: return "review";
    case NodeKind::repair: return "repair";
    case NodeKind::docs: return "docs";
    case NodeKind::deliver: return "deliver";
    case NodeKind::unknown: break;
  }
  return "unknown";
}

}  // namespace devgraph::lane
