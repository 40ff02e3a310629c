#include "board/snapshot.h"

#include "board/page.h"
#include "board/run_feed.h"
#include "util/fs.h"

namespace devgraph::board {

std::string snapshot_page(Json data) {
  data["snapshot"] = true;
  return board_snapshot_page(data);
}

Json run_snapshot(const std::string& run_dir) {
  RunFeed feed(run_dir);
  feed.refresh();
  return feed.snapshot();
}

Expected<std::uint64_t> write_run_snapshot(const std::string& run_dir, const std::string& path) {
  Json data = run_snapshot(run_dir);
  DG_CHECK(write_file_atomic(path, snapshot_page(data)));
  return data.value("event_seq", std::uint64_t{0});
}

}  // namespace devgraph::board
