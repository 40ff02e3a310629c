// The board as one HTML file that opens with no server: `devgraph board
// build`, and the snapshot `devgraph run` leaves when it stops (GRAPH.yaml
// observability.snapshot_on_terminal).
//
// Contract:
// - snapshot_page(data) is the page (page.h board_snapshot_page) with
//   `data`, what /data.json would answer, marked "snapshot": true.
// - run_snapshot(run_dir) is the data of a run directory as it is now (a
//   RunFeed read once; nothing in the run is written or locked).
// - write_run_snapshot() writes snapshot_page(run_snapshot(run_dir)) to
//   `path` by atomic replace (util/fs.h) and returns the newest event seq
//   it holds; `path` is the only file written.
#pragma once

#include <cstdint>
#include <string>

#include "util/expected.h"
#include "util/json.h"

namespace devgraph::board {

std::string snapshot_page(Json data);
Json run_snapshot(const std::string& run_dir);
Expected<std::uint64_t> write_run_snapshot(const std::string& run_dir, const std::string& path);

}  // namespace devgraph::board
