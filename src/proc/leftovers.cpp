#include "proc/leftovers.h"

#include <poll.h>
#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <sstream>
#include <vector>

#include "util/fs.h"
#include "util/unsynced_files.h"

namespace devgraph {

std::optional<unsigned long long> process_start_time(int pid, bool zombies_too) {
  auto read = read_file("/proc/" + std::to_string(pid) + "/stat");
  if (!read) return std::nullopt;
  const std::string& text = *read;
  // The command name (field 2) may hold spaces and parentheses: count the
  // fields after its last ')'. Field 3 is the state, field 22 start time.
  size_t close = text.rfind(')');
  if (close == std::string::npos) return std::nullopt;
  std::istringstream fields(text.substr(close + 1));
  std::string field;
  for (int n = 3; n <= 22; ++n) {
    if (!(fields >> field)) return std::nullopt;
    if (n == 3 && field == "Z" && !zombies_too) return std::nullopt;  // exited, not reaped
  }
  try {
    return std::stoull(field);
  } catch (...) {
    return std::nullopt;
  }
}

void ChildRecord::add(int pid) {
  // A child that already exited is a zombie until reaped: still recorded,
  // so the record always lists every child not yet reaped.
  if (auto start = process_start_time(pid, true)) {
    live_[pid] = *start;
    save();
  }
}

void ChildRecord::remove(int pid) {
  if (live_.erase(pid) != 0) save();
}

void ChildRecord::save() {
  std::string text;
  for (const auto& [pid, start] : live_)
    text += std::to_string(pid) + " " + std::to_string(start) + "\n";
  // Best effort: a failed write only means a later resume cannot end this
  // child, which is what happened before the record existed.
  if (live_.empty()) {
    ::unlink(path_.c_str());
  } else {
    (void)replace_file(path_, text);
  }
}

Expected<int> end_leftover_children(const std::string& path, std::chrono::milliseconds wait_at_most,
                                    std::optional<std::chrono::milliseconds> term_grace) {
  if (!path_exists(path)) return 0;
  DG_TRY(std::string text, read_file(path));
  std::istringstream lines(text);
  int pid = 0;
  unsigned long long start = 0;
  std::vector<std::pair<int, int>> signalled;  // pidfd, pid
  while (lines >> pid >> start) {
    if (pid <= 1) continue;
    // Open the pidfd first, then compare start times: the pidfd then
    // refers to the very process that was checked.
    int fd = static_cast<int>(::syscall(SYS_pidfd_open, pid, 0));
    if (fd < 0) continue;  // gone
    auto now = process_start_time(pid);
    if (!now || *now != start) {
      ::close(fd);  // another process has this pid now
      continue;
    }
    ::kill(-pid, term_grace ? SIGTERM : SIGKILL);
    signalled.emplace_back(fd, pid);
  }
  // Waits until every leader has exited or `deadline`; true when all have.
  auto wait_until = [&](std::chrono::steady_clock::time_point deadline) {
    bool all = true;
    for (const auto& entry : signalled) {
      const int fd = entry.first;
      while (true) {
        auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                        deadline - std::chrono::steady_clock::now())
                        .count();
        pollfd p{fd, POLLIN, 0};
        int rc = ::poll(&p, 1, static_cast<int>(std::max<long long>(left, 0)));
        if (rc < 0 && errno == EINTR) continue;
        if (rc <= 0) all = false;
        break;
      }
    }
    return all;
  };
  if (term_grace && !wait_until(std::chrono::steady_clock::now() + *term_grace)) {
    // The pidfd of a leader that exited is readable, and its pid is not
    // reused before it is reaped: only the ones still running get KILL.
    for (const auto& [fd, leader] : signalled) {
      pollfd p{fd, POLLIN, 0};
      if (::poll(&p, 1, 0) == 0) ::kill(-leader, SIGKILL);
    }
  }
  (void)wait_until(std::chrono::steady_clock::now() + wait_at_most);
  for (const auto& entry : signalled) ::close(entry.first);
  ::unlink(path.c_str());
  return static_cast<int>(signalled.size());
}

}  // namespace devgraph
