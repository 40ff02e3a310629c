// events.jsonl: the append-only record of a run, one JSON object per line.
//
// Contract: repair_event_log() makes the log agree with a state.json whose
// event_seq is `state_seq`, by looking only at the file's tail. Lines past
// the one whose seq equals `state_seq` are events whose state change never
// reached state.json (the writer died between its two steps): they are cut
// off, together with a torn, newline-less last line. When the log ends
// below `state_seq` (a run damaged by another writer) nothing can be
// recovered and only a torn last line is removed. It must be called with
// the run's lock held.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "util/expected.h"
#include "util/json.h"

namespace devgraph {

// What repair_event_log() found; for tests and diagnostics.
struct LogRepair {
  std::uint64_t size_before = 0;
  std::uint64_t size_after = 0;
  bool truncated() const { return size_after != size_before; }
};

// `state_seq` nullopt: the state predates event_seq, leave the log alone.
Expected<LogRepair> repair_event_log(const std::string& events_path,
                                     std::optional<long long> state_seq);

// Number of non-blank lines: the reference's fallback for a state without
// event_seq.
Expected<long long> count_event_lines(const std::string& events_path);

// One events.jsonl record: {"ts", "seq", "type", "node", "detail"}.
Json make_event(const std::string& ts, long long seq, const std::string& type, const Json& node,
                Json detail);

// The line as written: json.dumps() of the record plus "\n".
std::string event_line(const Json& event);

}  // namespace devgraph
