// Replaying a run: `devgraph validate run RUN_DIR` reads events.jsonl from
// the first line to the last, moves every cursor the way the recorded
// checkpoints moved it, and reports each place where the log breaks the
// graph or disagrees with state.json. It only reads files; it never takes
// the run lock and never writes, so it is safe beside a live run (a line
// being appended at that instant shows up as a torn last line).
//
// What a log carries (the checkpoint writers' format): every event has
// "seq", "type", "node" (the orchestrator's node after the event) and
// "detail". An orchestrator move (go, handoff, resume) has detail "from"
// and "to"; a bundle or task move has detail "cursor" ("B" or "B/T"),
// "lane_from" and "lane_to".
//
// Problems reported:
// - a line that is not a JSON object, or lacks seq/type/node;
// - seq not 1, 2, 3, ... (gaps, duplicates, reordering);
// - events past state.event_seq (a writer appended and then died before
//   saving state), or state.event_seq past the last event (lost lines);
// - event types outside GRAPH.yaml's vocabulary (runs of graph version 4 or
//   later; older runs named events freely);
// - unknown nodes (names that are neither nodes nor retired legacy nodes);
// - a cursor on a node outside its lanes: bundle cursors live in the
//   `bundle` lane, task cursors in `task`, the orchestrator in every other
//   lane; `shared` is open to all;
// - transitions the graph does not allow (graph version 4 or later), see
//   below;
// - a move whose recorded origin is not where the replay has the cursor
//   (a write that bypassed the log, or lost lines);
// - the replayed position of every cursor at state.event_seq disagreeing
//   with state.json (node and status of each cursor, the orchestrator node,
//   cursors present on one side only).
//
// Which transitions are legal. The rules accept every move the graph's
// writers legitimately make, so a report is always a real anomaly:
// - staying on the same node (re-recording, schedulers that wait);
// - following a `routes` or `next` edge of the node being left;
// - a new cursor starting at an entry of its lane: a node of the lane that
//   a node of another lane routes to (a scheduler spawning it);
// - entering an interrupt node (a human may be asked from anywhere) or a
//   pause state (a capacity handoff may happen at any node);
// - leaving a detour (a shared node, an interrupt or a pause state) back
//   to the node the cursor stood on before the detour (retry_previous,
//   resume), to one of that node's successors where the detour routes to
//   resume_previous_successor, or along the detour's own routes; and a run
//   whose detour began at a terminal state (it had ended, then one of its
//   pull requests needed a person) leaving it for its orchestrator lane's
//   scheduler, as an answer reopens it;
// - anything touching a retired (legacy) node, whose old edges the current
//   graph no longer knows.
// Route edges into another cursor's lane are spawns, not moves: the
// orchestrator parks at bundle_scheduler while bundle cursors start at
// plan_bundle, and a bundle cursor parks at task_scheduler while its tasks
// run.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "graph/graph.h"
#include "util/expected.h"
#include "util/json.h"

namespace devgraph {

struct ReplayCursor {
  std::string key;                  // "B" or "B/T"
  std::string lane;                 // "bundle" or "task"
  std::optional<std::string> node;  // where the replay has it
  std::string status;               // active, complete, waiting_human
  int moves = 0;
};

struct ReplayReport {
  std::vector<std::string> problems;  // one line each, in log order
  long long events = 0;               // well-formed events read
  long long state_event_seq = 0;
  std::string orchestrator_node;                // at state.event_seq
  std::map<std::string, ReplayCursor> cursors;  // at state.event_seq
};

// Replays `events_jsonl` (the text of events.jsonl) against `graph` and
// compares the result with `state` (state.json already parsed).
ReplayReport replay_run(const Graph& graph, const Json& state, std::string_view events_jsonl);

// Reads RUN_DIR/state.json and RUN_DIR/events.jsonl and replays them. A
// missing directory or file, or a state.json that is not a JSON object, is
// an error naming the file.
Expected<ReplayReport> replay_run_dir(const Graph& graph, const std::string& run_dir);

}  // namespace devgraph
