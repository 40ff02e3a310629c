// The board's view of a run: what the page draws, computed from the run's
// state and its events by one pure function (no clock, no file), so every
// figure on the page is unit-tested here and the page only lays it out.
//
// Contract: board_view(graph, state, events) is
// {"as_of", "totals", "lanes", "bundles", "timeline", "traces", "costs",
//  "waiting"}:
// - lanes: the graph's lanes in file order, each node with the cursors
//   standing on it (the run's own, every bundle's, every task's) as
//   {kind: orchestrator|bundle|task, id, status}; a cursor on a node no
//   lane lists is shown in a lane "other".
// - bundles: state.bundles in order, each with its cursor, PR link, the
//   times it started and ended, cost and tokens (metrics' compute_costs),
//   waiting (compute_waiting) and its tasks (state's task list merged with
//   tasks_runtime) with each task's persona runs.
// - timeline: spans {kind: persona|backoff|pause|human, bundle, task,
//   label, start, end (null while open), reason}, oldest first. A persona
//   run starts at its PERSONA_DISPATCHED and ends at the first later event
//   of its cursor that names its handle or moves that cursor.
// - traces: {"bundles": {id: [entry]}, "issues": {number: {"bundle",
//   "entries"}}}: the decisions read from the events (bundled, started,
//   retried, backed off, paused, parked, findings, repaired, verified,
//   delivered, ...), each {seq, ts, kind, what, evidence}, the evidence a
//   short text built from the event's own fields.
// - Events that are not objects, or lack a type, are skipped; nothing here
//   throws on a run's data, however malformed.
#pragma once

#include <vector>

#include "graph/graph.h"
#include "util/json.h"

namespace devgraph::board {

Json board_view(const Graph& graph, const Json& state, const std::vector<Json>& events);

// The graph devgraph ships (GRAPH.yaml as the library was built with it).
const Graph& shipped_graph();

}  // namespace devgraph::board
