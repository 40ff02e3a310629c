// A `devgraph` verb a test runs in the background and talks to while it
// runs: its stderr read as it comes (the URL a board prints, the line that
// says the run got somewhere), and one HTTP GET of what it serves.
// Nothing here sleeps: every limit is a failure condition, never a wait.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <map>
#include <string>
#include <vector>

namespace devgraph::test {

// `devgraph ARGS` (the binary under test) in a process group of its own,
// with the stop signals at their defaults, `env` over this process's
// environment (an empty value unsets), stdout to `out_path` and stderr to
// a pipe. The destructor KILLs the group if the test left it running.
class StderrProcess {
 public:
  StderrProcess(const std::vector<std::string>& args, const std::map<std::string, std::string>& env,
                const std::string& cwd, const std::string& out_path);
  ~StderrProcess();
  StderrProcess(const StderrProcess&) = delete;
  StderrProcess& operator=(const StderrProcess&) = delete;

  pid_t pid() const { return pid_; }
  const std::string& err() const { return err_; }

  // Reads stderr until it holds `text` (true) or ends (false); the
  // deadline is a failure condition, never a wait.
  bool wait_for(const std::string& text, std::chrono::seconds limit);
  // Reads stderr to its end, then reaps the process: its wait status.
  int wait(std::chrono::seconds limit);

 private:
  pid_t pid_ = -1;
  int err_fd_ = -1;
  bool reaped_ = false;
  std::string err_;

  // One read of stderr; false at its end or past the deadline.
  bool read_some(std::chrono::steady_clock::time_point deadline);
};

// One HTTP GET of 127.0.0.1:port, read to the end; empty when nothing
// answers within `limit` (a failure condition, never a wait).
std::string http_get(int port, const std::string& path, std::chrono::seconds limit);

// A connection to a board's /events on 127.0.0.1:port, read as the run
// writes; text() is everything read, headers included.
class EventStream {
 public:
  explicit EventStream(int port);
  ~EventStream();
  EventStream(const EventStream&) = delete;
  EventStream& operator=(const EventStream&) = delete;

  bool connected() const { return connected_; }
  const std::string& text() const { return text_; }
  // Reads until the stream holds `part` (true), ends or `limit` passes.
  bool read_until(const std::string& part, std::chrono::seconds limit);

 private:
  int fd_ = -1;
  bool connected_ = false;
  std::string text_;
};

// A port of 127.0.0.1 held by a listening socket for as long as this
// lives: a server asked for it is refused.
class TakenPort {
 public:
  TakenPort();
  ~TakenPort();
  TakenPort(const TakenPort&) = delete;
  TakenPort& operator=(const TakenPort&) = delete;
  int port() const { return port_; }

 private:
  int fd_ = -1;
  int port_ = 0;
};

// The port in "<prefix>http://127.0.0.1:PORT/..." in `text`; 0 if absent.
int port_after(const std::string& text, const std::string& prefix);

}  // namespace devgraph::test
