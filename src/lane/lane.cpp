#include "lane/lane.h"

#include <algorithm>

#include "lane/routes.h"
#include "util/text.h"

namespace devgraph::lane {
namespace {

constexpr std::string_view kRetryPrevious = "retry_previous";
constexpr std::string_view kNextRoute = "next";
constexpr std::string_view kSharedLane = "shared";

bool declared(const Graph& graph, std::string_view node, std::string_view route) {
  if (std::any_of(std::begin(kRoutesTaken), std::end(kRoutesTaken),
                  [&](const RouteUse& u) { return u.node == node && u.route == route; }))
    return true;
  NodeKind kind = node_kind(graph, node);
  return kind != NodeKind::unknown &&
         std::any_of(std::begin(kBundleRoutesTaken), std::end(kBundleRoutesTaken),
                     [&](const KindRouteUse& u) { return u.kind == kind && u.route == route; });
}

// "src/x.py:12" names src/x.py.
std::string strip_line(const std::string& file) {
  auto colon = file.rfind(':');
  if (colon == std::string::npos || colon + 1 == file.size()) return file;
  bool digits = std::all_of(file.begin() + static_cast<std::ptrdiff_t>(colon) + 1, file.end(),
                            [](char c) { return c >= '0' && c <= '9'; });
  return digits ? file.substr(0, colon) : file;
}

bool same_file(const std::string& a, const std::string& b) {
  return path_ends_with(a, b) || path_ends_with(b, a);
}

}  // namespace

Expected<std::string> Walker::next(std::string_view node, std::string_view route) const {
  const GraphNode* n = graph_.node(node);
  if (!n) return fail(ErrorKind::internal, "the graph has no node " + std::string(node));
  if (route == kNextRoute) {
    if (n->next.empty())
      return fail(ErrorKind::internal, "node " + std::string(node) + " has no next");
    return n->next;
  }
  if (!declared(graph_, node, route))
    return fail(ErrorKind::internal, "the engine does not take route " + std::string(route) +
                                         " at " + std::string(node) + " (lane/routes.h)");
  for (const auto& [name, target] : n->routes)
    if (name == route) return target;
  return fail(ErrorKind::internal,
              "GRAPH.yaml: node " + std::string(node) + " has no route " + std::string(route));
}

Expected<std::string> Walker::follow(std::string_view lane, std::string_view node,
                                     std::string_view route, std::string_view previous) const {
  DG_TRY(std::string target, next(node, route));
  if (target == kRetryPrevious) {
    if (previous.empty())
      return fail(ErrorKind::internal,
                  "retry_previous at " + std::string(node) + " with no previous node");
    return std::string(previous);
  }
  const GraphLane* home = graph_.lane(lane);
  const GraphLane* there = graph_.lane_of(target);
  bool inside = there && (there == home || there->name == kSharedLane);
  if (inside) return target;
  const GraphNode* t = graph_.node(target);
  if (t && t->type == "terminal_interrupt")
    if (auto park = shared_node_of_type("cursor_interrupt")) return *park;
  return fail(ErrorKind::internal, "route " + std::string(route) + " at " + std::string(node) +
                                       " leads to " + target + ", outside lane " +
                                       std::string(lane));
}

Expected<std::vector<std::string>> Walker::personas(std::string_view node,
                                                    const Selection& selection) const {
  const GraphNode* n = graph_.node(node);
  if (!n) return fail(ErrorKind::internal, "the graph has no node " + std::string(node));
  std::vector<std::string> out;
  // Only agent nodes run personas; the others are code, whoever owns them.
  if (n->type != "agent" && n->type != "agent_parallel") return out;
  if (!n->selector.empty()) {
    if (n->selector == "iac_if_infrastructure_else_developer") {
      out.push_back(selection.infrastructure ? "iac-developer" : "developer");
    } else if (n->selector == "finding_owner") {
      if (selection.finding_owner.empty())
        return fail(ErrorKind::internal,
                    "node " + std::string(node) + " needs the findings' owner");
      out.push_back(selection.finding_owner);
    } else {
      return fail(ErrorKind::internal,
                  "GRAPH.yaml: node " + std::string(node) + " has unknown selector " + n->selector);
    }
  } else {
    for (const auto& o : n->owners)
      if (graph_.has_persona(o)) out.push_back(o);
  }
  for (const auto& p : out)
    if (!graph_.has_persona(p))
      return fail(ErrorKind::internal,
                  "node " + std::string(node) + " selects " + p + ", which is not a persona");
  return out;
}

int Walker::max_cycles(std::string_view node) const {
  const GraphNode* n = graph_.node(node);
  return n && n->max_cycles > 0 ? n->max_cycles : graph_.defaults.max_repair_cycles;
}

int Walker::max_retries(std::string_view node) const {
  const GraphNode* n = graph_.node(node);
  return n && n->max_retries > 0 ? n->max_retries : graph_.defaults.max_retries;
}

std::vector<std::string> Walker::lane_nodes(std::string_view lane) const {
  const GraphLane* l = graph_.lane(lane);
  return l ? l->nodes : std::vector<std::string>{};
}

std::optional<std::string> Walker::shared_node_of_type(std::string_view type) const {
  return node_of_type(kSharedLane, type);
}

std::optional<std::string> Walker::node_of_type(std::string_view lane,
                                                std::string_view type) const {
  const GraphLane* l = graph_.lane(lane);
  if (!l) return std::nullopt;
  for (const auto& name : l->nodes)
    if (const GraphNode* n = graph_.node(name); n && n->type == type) return name;
  return std::nullopt;
}

std::string Walker::giving_up_route(std::string_view node) const {
  const GraphNode* n = graph_.node(node);
  if (n)
    for (const auto& [name, target] : n->routes)
      if (name != route::kRecovered) return name;
  return std::string(route::kExhausted);
}

std::string finding_owner(const std::vector<std::string>& finding_files,
                          const std::vector<std::string>& test_artifacts,
                          const std::string& test_writer, const std::string& implementer) {
  if (finding_files.empty() || test_artifacts.empty()) return implementer;
  for (const auto& raw : finding_files) {
    std::string file = strip_line(raw);
    if (file.empty()) return implementer;
    bool tests = std::any_of(test_artifacts.begin(), test_artifacts.end(),
                             [&](const std::string& a) { return same_file(a, file); });
    if (!tests) return implementer;
  }
  return test_writer;
}

}  // namespace devgraph::lane
