// Files that must be whole or absent after a kill, but need not survive a
// machine crash, written without fsync: the bundle driver's bookkeeping
// (persona result files, task briefs, the cost ledger) and the supervisor's
// record of live children.
//
// Why no fsync: the failure resume is built for is the driver being killed
// (SIGKILL at any instant). A killed process loses nothing it has written
// to the page cache, so an atomic rename is all a result file needs to be
// found whole or not at all. Only a machine crash can lose these writes, and
// each loss is one resume already handles: a missing result file re-runs
// that persona, a missing brief is written again, a missing ledger line
// undercounts one persona's cost. The run state itself (state.json,
// events.jsonl) stays fully durable in the RunStore. On the project's disk
// the fsyncs saved are 15 to 20 ms per persona, all of them on the path
// from one persona's end to the next one's start.
#pragma once

#include <string>
#include <string_view>

#include "util/expected.h"

namespace devgraph {

// Replaces `path` atomically (temporary file, rename); no fsync.
Status replace_file(const std::string& path, std::string_view content);

// Appends `content` with one write(2) on an O_APPEND descriptor, so
// concurrent writers never interleave inside it; no fsync.
Status append_file(const std::string& path, std::string_view content);

}  // namespace devgraph
