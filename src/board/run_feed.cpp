#include "board/run_feed.h"

#include <fcntl.h>
#include <malloc.h>
#include <sys/inotify.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "board/view.h"
#include "util/fs.h"

namespace devgraph::board {

RunFeed::~RunFeed() {
  if (inotify_ >= 0) ::close(inotify_);
}

bool RunFeed::refresh() {
  bool changed = false;
  int fd = ::open((run_dir_ + "/events.jsonl").c_str(), O_RDONLY | O_CLOEXEC);
  if (fd >= 0) {
    char buf[65536];
    while (true) {
      ssize_t n = ::pread(fd, buf, sizeof buf, static_cast<off_t>(offset_));
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) break;
      offset_ += static_cast<std::uint64_t>(n);
      partial_.append(buf, static_cast<size_t>(n));
    }
    ::close(fd);
    size_t at = 0;
    while (true) {
      size_t nl = partial_.find('\n', at);
      if (nl == std::string::npos) break;
      std::string line = partial_.substr(at, nl - at);
      at = nl + 1;
      auto ev = parse_json(line, "event");
      if (!ev || !ev->is_object() || !ev->contains("seq") || !(*ev)["seq"].is_number_unsigned())
        continue;
      std::uint64_t seq = (*ev)["seq"].get<std::uint64_t>();
      if (!events_.empty() && seq <= events_.back().first) continue;  // never twice
      events_.emplace_back(seq, line);
      parsed_.push_back(std::move(*ev));
      changed = true;
    }
    partial_.erase(0, at);
  }
  if (auto text = read_file(run_dir_ + "/state.json"); text && *text != state_text_) {
    if (auto st = parse_json(*text, "state"); st && st->is_object()) {
      state_text_ = std::move(*text);
      state_ = std::move(*st);
      changed = true;
    }
  }
  if (changed) cached_text_.reset();
  return changed;
}

Json RunFeed::snapshot() {
  Json events = Json::array();
  size_t from = parsed_.size() > kSnapshotEvents ? parsed_.size() - kSnapshotEvents : 0;
  for (size_t i = from; i < parsed_.size(); ++i) events.push_back(parsed_[i]);
  return Json{{"run_dir", run_dir_},
              {"state", state_},
              {"events", std::move(events)},
              {"event_seq", newest()},
              {"view", board_view(shipped_graph(), state_, parsed_)}};
}

std::shared_ptr<const std::string> RunFeed::snapshot_text() {
  if (!cached_text_) {
    cached_text_ = std::make_shared<const std::string>(dump_py(snapshot()) + "\n");
    // Building it takes several times its size in small blocks, freed
    // again at once; a long-lived board gives those pages back rather
    // than holding its peak for good (glibc keeps them otherwise).
    ::malloc_trim(0);
  }
  return cached_text_;
}

std::vector<std::pair<std::uint64_t, std::string>> RunFeed::events_after(std::uint64_t after) {
  auto it = std::upper_bound(events_.begin(), events_.end(), after,
                             [](std::uint64_t n, const auto& e) { return n < e.first; });
  return {it, events_.end()};
}

std::uint64_t RunFeed::newest() {
  return events_.empty() ? 0 : events_.back().first;
}

Expected<int> RunFeed::watch() {
  if (inotify_ >= 0) return inotify_;
  int fd = ::inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
  if (fd < 0) return fail("board: inotify: " + std::string(std::strerror(errno)));
  if (::inotify_add_watch(fd, run_dir_.c_str(), IN_MODIFY | IN_MOVED_TO | IN_CLOSE_WRITE) < 0) {
    std::string why = std::strerror(errno);
    ::close(fd);
    return fail(ErrorKind::not_found, "board: cannot watch " + run_dir_ + ": " + why);
  }
  inotify_ = fd;
  return fd;
}

void RunFeed::drain() {
  if (inotify_ < 0) return;
  alignas(inotify_event) char buf[4096];
  while (::read(inotify_, buf, sizeof buf) > 0) {
  }
}

Json session_snapshot(const Json& record, const std::string& path) {
  // Anything not an object is taken as empty (value() would throw).
  const Json session = record.is_object() ? record : Json::object();
  Json replay = session.value("replay", Json::object());
  if (!replay.is_object()) replay = Json::object();
  Json state = {{"run_id", session.value("run_id", Json())},
                {"repo", session.value("repo", Json())},
                {"node", session.value("node", Json())},
                {"status", session.value("status", Json())},
                {"bundles", replay.value("bundles", Json::array())},
                {"bundles_runtime", replay.value("bundles_runtime", Json::object())},
                {"tasks_runtime", replay.value("tasks_runtime", Json::object())},
                {"prs", replay.value("prs", Json::array())}};
  Json all = replay.value("events", Json::array());
  if (!all.is_array()) all = Json::array();
  Json events = Json::array();
  size_t from = all.size() > kSnapshotEvents ? all.size() - kSnapshotEvents : 0;
  std::uint64_t newest = 0;
  for (size_t i = 0; i < all.size(); ++i) {
    if (!all[i].is_object()) continue;
    if (all[i].contains("seq") && all[i]["seq"].is_number_unsigned())
      newest = std::max(newest, all[i]["seq"].get<std::uint64_t>());
    if (i >= from) events.push_back(all[i]);
  }
  std::vector<Json> all_events;
  for (const auto& e : all)
    if (e.is_object()) all_events.push_back(e);
  Json view = board_view(shipped_graph(), state, all_events);
  return Json{{"run_dir", session.value("run_dir", Json())},
              {"state", state},
              {"view", std::move(view)},
              {"events", events},
              {"event_seq", newest},
              {"source",
               {{"kind", "session"},
                {"path", path},
                {"recorded_at", session.value("recorded_at", Json())},
                {"wall_seconds", session.value("wall_seconds", Json())}}}};
}

}  // namespace devgraph::board
