#include "support/kill_harness.h"
#include "support/build_paths.h"

#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/inotify.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <sstream>

#include "proc/leftovers.h"
#include "support/run_scenario.h"
#include "support/test_util.h"
#include "util/fs.h"
#include "util/json.h"

namespace devgraph::test {

std::map<std::string, std::string> quiet_git_env() {
  return {{"GIT_CONFIG_COUNT", "4"},
          {"GIT_CONFIG_KEY_0", "user.name"},
          {"GIT_CONFIG_VALUE_0", "devgraph test"},
          {"GIT_CONFIG_KEY_1", "user.email"},
          {"GIT_CONFIG_VALUE_1", "test@devgraph.invalid"},
          {"GIT_CONFIG_KEY_2", "maintenance.auto"},
          {"GIT_CONFIG_VALUE_2", "false"},
          {"GIT_CONFIG_KEY_3", "gc.auto"},
          {"GIT_CONFIG_VALUE_3", "0"}};
}

std::vector<std::pair<int, unsigned long long>> recorded_processes(const std::string& path) {
  std::vector<std::pair<int, unsigned long long>> out;
  auto text = read_file(path);
  if (!text) return out;
  std::istringstream in(*text);
  int pid = 0;
  unsigned long long start = 0;
  while (in >> pid >> start) out.emplace_back(pid, start);
  return out;
}

std::vector<std::string> names_in(const std::string& dir) {
  std::vector<std::string> out;
  DIR* d = ::opendir(dir.c_str());
  if (!d) return out;
  while (auto* e = ::readdir(d)) {
    std::string n = e->d_name;
    if (n != "." && n != "..") out.push_back(n);
  }
  ::closedir(d);
  std::sort(out.begin(), out.end());
  return out;
}

void adopt_orphans() {
  static const bool ok = ::prctl(PR_SET_CHILD_SUBREAPER, 1) == 0;
  EXPECT_TRUE(ok);
}

void reap_exited() {
  while (::waitpid(-1, nullptr, WNOHANG) > 0) {
  }
}

std::vector<pid_t> adopted_alive() {
  reap_exited();
  std::vector<pid_t> out;
  const std::string self = std::to_string(::getpid());
  for (const auto& n : names_in("/proc")) {
    if (n.find_first_not_of("0123456789") != std::string::npos) continue;
    auto stat = read_file("/proc/" + n + "/stat");
    if (!stat) continue;
    auto close = stat->rfind(')');
    if (close == std::string::npos) continue;
    std::istringstream f(stat->substr(close + 1));
    std::string state, ppid;
    f >> state >> ppid;
    if (ppid == self && state != "Z") out.push_back(static_cast<pid_t>(std::stol(n)));
  }
  return out;
}

// Every record of live processes in the run names only processes that are
// gone, and no process the test adopted is alive. Anything left is ended
// (it is a driver or persona this test's runs started) after the failure.
void expect_no_process_left(const std::string& run, const std::string& what) {
  SCOPED_TRACE(what);
  std::vector<std::string> records = {run + "/live-drivers"};
  for (const auto& b : names_in(run + "/bundles"))
    records.push_back(run + "/bundles/" + b + "/live-children");
  reap_exited();
  for (const auto& rec : records) {
    for (const auto& [pid, start] : recorded_processes(rec)) {
      auto now = process_start_time(pid);
      bool alive = now && *now == start;
      EXPECT_FALSE(alive) << rec << " names pid " << pid << ", still running";
      if (alive) ::kill(-pid, SIGKILL);
    }
  }
  for (pid_t pid : adopted_alive()) {
    auto cmd = read_file("/proc/" + std::to_string(pid) + "/cmdline");
    std::string c = cmd ? *cmd : "";
    std::replace(c.begin(), c.end(), '\0', ' ');
    ADD_FAILURE() << "pid " << pid << " (" << c << ") outlived every run";
    ::kill(pid, SIGKILL);
  }
  reap_exited();
}

Watch::Watch() : fd_(::inotify_init1(IN_CLOEXEC | IN_NONBLOCK)) {}

Watch::~Watch() {
  if (fd_ >= 0) ::close(fd_);
}

bool Watch::add(const std::string& dir) {
  return ::inotify_add_watch(fd_, dir.c_str(),
                             IN_MODIFY | IN_CREATE | IN_MOVED_TO | IN_CLOSE_WRITE) >= 0;
}

void Watch::drain() {
  alignas(inotify_event) char buf[4096];
  while (::read(fd_, buf, sizeof buf) > 0) {
  }
}

Waited wait_until(Watch& watch, int pidfd, const std::function<std::vector<std::string>()>& dirs,
                  const std::function<bool()>& reached,
                  std::chrono::steady_clock::time_point deadline) {
  while (true) {
    for (const auto& d : dirs()) watch.add(d);
    pollfd p[2] = {{pidfd, POLLIN, 0}, {watch.fd(), POLLIN, 0}};
    // Exit first: a run that finished on its own is not killed.
    if (::poll(p, 1, 0) > 0) return Waited::kExited;
    if (reached()) return Waited::kReached;
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) return Waited::kTimedOut;
    int n = ::poll(p, 2, static_cast<int>(left.count()) + 1);
    if (n < 0 && errno != EINTR) return Waited::kTimedOut;
    if (p[1].revents & POLLIN) watch.drain();
  }
}

Background::~Background() {
  if (pidfd >= 0) ::close(pidfd);
}

int Background::wait() {
  int st = 0;
  EXPECT_EQ(::waitpid(pid, &st, 0), pid);
  return st;
}

void start_background(Background& bg, const std::vector<std::string>& args,
                      const std::map<std::string, std::string>& env, const std::string& cwd,
                      const std::string& log) {
  std::vector<std::string> argv = {DEVGRAPH_BIN};
  argv.insert(argv.end(), args.begin(), args.end());
  pid_t pid = ::fork();
  if (pid == 0) {
    ::setpgid(0, 0);
    for (int sig : {SIGINT, SIGTERM, SIGHUP, SIGPIPE}) ::signal(sig, SIG_DFL);
    sigset_t none;
    sigemptyset(&none);
    ::sigprocmask(SIG_SETMASK, &none, nullptr);
    int fd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    int in = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
    if (fd < 0 || in < 0 || ::chdir(cwd.c_str()) != 0) ::_exit(127);
    ::dup2(in, 0);
    ::dup2(fd, 1);
    ::dup2(fd, 2);
    for (const auto& [k, v] : env)
      v.empty() ? ::unsetenv(k.c_str()) : ::setenv(k.c_str(), v.c_str(), 1);
    std::vector<char*> c;
    for (auto& a : argv) c.push_back(a.data());
    c.push_back(nullptr);
    ::execv(c[0], c.data());
    ::_exit(127);
  }
  ASSERT_GT(pid, 0);
  ::setpgid(pid, pid);
  bg.pid = pid;
  bg.pidfd = static_cast<int>(::syscall(SYS_pidfd_open, pid, 0));
  if (bg.pidfd < 0) ::kill(pid, SIGKILL);
  ASSERT_GE(bg.pidfd, 0) << "pidfd_open: " << std::strerror(errno);
}

size_t event_lines(const std::string& run) {
  if (run.empty()) return 0;
  auto text = read_file(run + "/events.jsonl");
  return text ? static_cast<size_t>(std::count(text->begin(), text->end(), '\n')) : 0;
}

std::string event_summary(const std::string& run) {
  std::string out;
  if (run.empty()) return out;
  for (const auto& l : lines_of(slurp(run + "/events.jsonl"))) {
    auto e = parse_json(l, "event");
    if (!e) {
      out += "(not JSON) " + l + "\n";
      continue;
    }
    const Json d = e->value("detail", Json::object());
    out += std::to_string(e->value("seq", 0LL)) + " " + json_str(*e, "type") + " " +
           json_str(d, "cursor", json_str(d, "bundle")) + " " + json_str(d, "from") + "->" +
           json_str(d, "to", json_str(d, "lane_to")) + "\n";
  }
  return out;
}

bool end_committed(const std::string& run) {
  if (run.empty()) return false;
  auto text = read_file(run + "/state.json");  // none before the first record
  if (!text) return false;
  auto state = parse_json(*text, "state");
  if (!state || !state->is_object()) return false;
  long long seq = state->value("event_seq", 0LL);
  auto lines = lines_of(slurp(run + "/events.jsonl"));  // the last may be torn
  if (seq < 1 || static_cast<size_t>(seq) > lines.size()) return false;
  auto last = parse_json(lines[static_cast<size_t>(seq) - 1], "event");
  return last && json_str(*last, "type") == "RUN_COMPLETE";
}

}  // namespace devgraph::test
