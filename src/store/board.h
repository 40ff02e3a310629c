// The run board a handoff leaves behind and a resume reports: every bundle
// cursor grouped as done, in flight or waiting on a human, plus the bundles
// formed but not started.
#pragma once

#include <string>

#include "util/json.h"

namespace devgraph {

struct Board {
  // Entries: {"bundle", "node", "status", "tech_lead_handle", "pr", "branch",
  // "head", "tasks": {task: [node, status]}}, sorted by bundle id.
  Json done = Json::array();
  Json in_flight = Json::array();
  Json blocked = Json::array();
  Json next_up = Json::array();  // state.bundles entries without a cursor
};

Board summarize_cursors(const Json& state);

struct HandoffText {
  std::string run_dir;
  std::string reason;
  std::string written_at;
};

// HANDOFF.md: who/where, the Done / In flight / Blocked / Next up board,
// PRs, the latest concerns, and how to resume with devgraph.
std::string render_handoff(const Json& state, const HandoffText& info);

}  // namespace devgraph
