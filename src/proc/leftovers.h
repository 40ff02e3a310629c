// Children that outlive a killed supervisor.
//
// Every child runs in its own process group, so when the supervising
// process is SIGKILLed its agents keep running: a resumed driver would then
// launch a second writer into a worktree the first one is still changing.
// A ChildLoop given a record file (ChildLoop::record_children_in) keeps in
// it one line per live child: its pid (= its process group) and its start
// time from /proc, which tells the same process from a later one that got
// the same pid. The next supervisor calls end_leftover_children() on the
// same file before it starts anything.
//
// Contracts:
// - The file is replaced atomically but without fsync: a kill loses nothing
//   written, and after a machine crash no recorded process is alive.
// - end_leftover_children() signals only a group whose leader is still the
//   recorded process (same pid and start time); a pid now used by another
//   process is left alone. It returns once every signalled leader has
//   exited (a pidfd, no polling), or after `wait_at_most`.
// - With a `term_grace`, each group is first asked to stop (SIGTERM) and
//   gets SIGKILL only if its leader has not exited within the grace. A
//   leftover that supervises children of its own (a bundle driver) then
//   ends them and finishes the command it waits for (a `git commit` holding
//   the index lock) instead of leaving them to race its successor.
#pragma once

#include <chrono>
#include <map>
#include <optional>
#include <string>

#include "util/expected.h"

namespace devgraph {

// The start time of `pid` (clock ticks since boot, /proc/PID/stat field
// 22); nullopt when there is no such process, or when it has exited and
// awaits reaping (a zombie) unless `zombies_too`.
std::optional<unsigned long long> process_start_time(int pid, bool zombies_too = false);

class ChildRecord {
 public:
  explicit ChildRecord(std::string path) : path_(std::move(path)) {}
  void add(int pid);
  void remove(int pid);
  const std::string& path() const { return path_; }

 private:
  void save();
  std::string path_;
  std::map<int, unsigned long long> live_;
};

// Ends the process groups a previous supervisor recorded in `path` and
// removes the file. Returns how many groups were signalled.
Expected<int> end_leftover_children(
    const std::string& path, std::chrono::milliseconds wait_at_most = std::chrono::seconds(10),
    std::optional<std::chrono::milliseconds> term_grace = std::nullopt);

}  // namespace devgraph
