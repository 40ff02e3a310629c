// What the kill tests share: a `devgraph` process started in the
// background in a process group of its own, watched without a timer
// (inotify on the directories a run writes, a pidfd for its exit), the test
// as the subreaper of every process the runs start, and readers of a run's
// event log.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <functional>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace devgraph::test {

// What a kill test's runs and git commands share: git's identity and no
// background gc or maintenance (a detached child would outlive the command
// that started it, and the test waits for every process its runs leave).
std::map<std::string, std::string> quiet_git_env();

// The names in `dir` (no dot entries), sorted; empty when it does not exist.
std::vector<std::string> names_in(const std::string& dir);

// Makes the test the subreaper of everything its runs start: a killed
// orchestrator's drivers and personas are re-parented to it, so the test
// reaps them and can tell when one is left.
void adopt_orphans();
void reap_exited();
// Adopted processes still alive (not zombies).
std::vector<pid_t> adopted_alive();

// A run's record of live processes (live-drivers, live-children): its
// "pid start-time" pairs; empty when there is none.
std::vector<std::pair<int, unsigned long long>> recorded_processes(const std::string& path);

// Every record of live processes in the run (live-drivers, each bundle's
// live-children) names only processes that are gone, and no process the
// test adopted is alive. Anything left is ended (it is a driver or persona
// this test's runs started) after the failure.
void expect_no_process_left(const std::string& run, const std::string& what);

// inotify on the directories a run writes, each added once it exists.
class Watch {
 public:
  Watch();
  ~Watch();
  Watch(const Watch&) = delete;
  Watch& operator=(const Watch&) = delete;
  bool ok() const { return fd_ >= 0; }
  int fd() const { return fd_; }
  // Watches `dir` when it exists (again is a no-op); true when watched.
  bool add(const std::string& dir);
  void drain();

 private:
  int fd_;
};

enum class Waited { kReached, kExited, kTimedOut };

// Until `reached()` holds or the process behind `pidfd` exits, woken by
// changes in the directories `dirs()` names (each watched as soon as it
// exists, before `reached()` is asked again, so no change is missed);
// gives up at `deadline`.
Waited wait_until(Watch& watch, int pidfd, const std::function<std::vector<std::string>()>& dirs,
                  const std::function<bool()>& reached,
                  std::chrono::steady_clock::time_point deadline);

// A `devgraph` process in the background: its pid (a process group of its
// own, as a shell's job would be) and a pidfd for it.
struct Background {
  pid_t pid = -1;
  int pidfd = -1;
  Background() = default;
  Background(const Background&) = delete;
  Background& operator=(const Background&) = delete;
  ~Background();
  // Waits for its exit: the wait status.
  int wait();
};

// Starts `devgraph ARGS` in `cwd` with `env` (an empty value unsets), stdin
// from /dev/null and stdout and stderr appended to `log`. Fails the test
// (fatally) when it cannot.
void start_background(Background& bg, const std::vector<std::string>& args,
                      const std::map<std::string, std::string>& env, const std::string& cwd,
                      const std::string& log);

// Complete lines in a run's events.jsonl (a torn last line is not one).
size_t event_lines(const std::string& run);
// One line per event (seq, type, the cursor or bundle, from -> to), for a
// failing round's report.
std::string event_summary(const std::string& run);
// Whether the run has recorded its end: the last event state.json counts is
// RUN_COMPLETE. A run killed after that has nothing left to resume.
bool end_committed(const std::string& run);

}  // namespace devgraph::test
