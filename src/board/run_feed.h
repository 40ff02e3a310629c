// A run directory as the board shows it. A pure reader: it opens the
// run's files read-only and never takes the run's lock, so the run never
// waits on its board.
//
// Contract:
// - refresh() reads what events.jsonl gained since the last call (a last
//   line without its newline waits for it; a line that is not an event
//   object with a seq is skipped) and state.json as it is now (a state
//   being replaced is read whole or not at all: the run renames it into
//   place). It says whether anything changed.
// - snapshot() is {"run_dir", "state", "events": the newest kSnapshotEvents
//   events, "event_seq": the newest seq, "view": board_view (view.h) of
//   every event}; snapshot_text() is its text, worked out once per change
//   of the run and shared by every send until the next (memory the build
//   took is given back to the system). events_after(n) is every event with
//   a seq above n, oldest first, as the run wrote it.
// - watch() puts an inotify watch on the run directory, so a host's loop
//   wakes when the run appends an event or replaces its state; drain()
//   empties it.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "board/server.h"

namespace devgraph::board {

inline constexpr size_t kSnapshotEvents = 500;

class RunFeed final : public BoardFeed {
 public:
  explicit RunFeed(std::string run_dir) : run_dir_(std::move(run_dir)) {}
  ~RunFeed() override;
  RunFeed(const RunFeed&) = delete;
  RunFeed& operator=(const RunFeed&) = delete;

  bool refresh();
  Json snapshot() override;
  std::shared_ptr<const std::string> snapshot_text() override;
  std::vector<std::pair<std::uint64_t, std::string>> events_after(std::uint64_t after) override;
  std::uint64_t newest() override;

  // The inotify descriptor (IN_NONBLOCK) watching the run directory.
  Expected<int> watch();
  void drain();

  const std::string& run_dir() const { return run_dir_; }

 private:
  std::string run_dir_;
  std::uint64_t offset_ = 0;  // bytes of events.jsonl read
  std::string partial_;       // a last line not yet ended
  std::vector<std::pair<std::uint64_t, std::string>> events_;
  std::vector<Json> parsed_;  // the same events, parsed
  // snapshot()'s text until the run changes, shared with the sends (the
  // snapshot itself is not kept: its text is a fraction of its size).
  std::shared_ptr<const std::string> cached_text_;
  Json state_ = Json::object();
  std::string state_text_;
  int inotify_ = -1;
};

// The board's data from a session record (metrics.h), so a run replays
// after its directory is gone: the state rebuilt from the record's fields
// and its `replay` (bundles, cursors, pull requests), the newest
// kSnapshotEvents of its events, and where it came from. A record without
// a replay has no events.
Json session_snapshot(const Json& session, const std::string& path);

}  // namespace devgraph::board
