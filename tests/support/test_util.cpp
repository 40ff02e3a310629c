#include "support/test_util.h"
#include "support/build_paths.h"

#include <csignal>

#include <fcntl.h>
#include <poll.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <sstream>
#include <stdexcept>

#include <gtest/gtest.h>

#include "cli/verbs.h"

extern char** environ;

namespace devgraph::test {
namespace {

TempDir make_temp() {
  auto d = TempDir::create("devgraph-test");
  if (!d) throw std::runtime_error(d.error().message);
  return std::move(d).value();
}

}  // namespace

Scratch::Scratch() : dir_(make_temp()) {}

ProcessResult run_process(const std::vector<std::string>& argv,
                          const std::map<std::string, std::string>& env, const std::string& cwd,
                          const std::string& input) {
  // A child may exit without reading its input: the write then fails with
  // EPIPE instead of killing the test with SIGPIPE. The child gets the
  // default disposition back before exec (an ignored signal stays ignored
  // across exec).
  static const bool sigpipe_ignored = (std::signal(SIGPIPE, SIG_IGN), true);
  (void)sigpipe_ignored;
  int in_pipe[2], out_pipe[2], err_pipe[2];
  if (::pipe2(in_pipe, O_CLOEXEC) || ::pipe2(out_pipe, O_CLOEXEC) || ::pipe2(err_pipe, O_CLOEXEC))
    throw std::runtime_error("pipe failed");
  pid_t pid = ::fork();
  if (pid < 0) throw std::runtime_error("fork failed");
  if (pid == 0) {
    std::signal(SIGPIPE, SIG_DFL);
    ::dup2(in_pipe[0], 0);
    ::dup2(out_pipe[1], 1);
    ::dup2(err_pipe[1], 2);
    for (const auto& [k, v] : env) {
      if (v.empty())
        ::unsetenv(k.c_str());
      else
        ::setenv(k.c_str(), v.c_str(), 1);
    }
    if (!cwd.empty() && ::chdir(cwd.c_str()) != 0) _exit(127);
    std::vector<char*> cargv;
    for (const auto& a : argv) cargv.push_back(const_cast<char*>(a.c_str()));
    cargv.push_back(nullptr);
    ::execvp(cargv[0], cargv.data());
    _exit(127);
  }
  ::close(in_pipe[0]);
  ::close(out_pipe[1]);
  ::close(err_pipe[1]);
  ProcessResult r;
  size_t written = 0;
  int in_fd = in_pipe[1];
  if (input.empty()) {
    ::close(in_fd);
    in_fd = -1;
  } else {
    ::fcntl(in_fd, F_SETFL, O_NONBLOCK);
  }
  int fds[2] = {out_pipe[0], err_pipe[0]};
  std::string* sinks[2] = {&r.out, &r.err};
  while (fds[0] >= 0 || fds[1] >= 0 || in_fd >= 0) {
    pollfd p[3];
    int n = 0;
    int map[3];
    for (int i = 0; i < 2; ++i)
      if (fds[i] >= 0) {
        p[n] = {fds[i], POLLIN, 0};
        map[n++] = i;
      }
    if (in_fd >= 0) {
      p[n] = {in_fd, POLLOUT, 0};
      map[n++] = 2;
    }
    if (::poll(p, static_cast<nfds_t>(n), -1) < 0) continue;
    for (int k = 0; k < n; ++k) {
      if (!p[k].revents) continue;
      if (map[k] == 2) {
        ssize_t w = ::write(in_fd, input.data() + written, input.size() - written);
        if (w > 0) written += static_cast<size_t>(w);
        if (w < 0 || written == input.size()) {
          ::close(in_fd);
          in_fd = -1;
        }
        continue;
      }
      char buf[65536];
      ssize_t got = ::read(p[k].fd, buf, sizeof buf);
      if (got > 0) {
        sinks[map[k]]->append(buf, static_cast<size_t>(got));
      } else {
        ::close(p[k].fd);
        fds[map[k]] = -1;
      }
    }
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  if (WIFEXITED(status)) {
    r.exit_code = WEXITSTATUS(status);
  } else if (WIFSIGNALED(status)) {
    r.signal = WTERMSIG(status);
  }
  return r;
}

namespace {

// Where session records go when a test names no place for them: one
// directory of this test process, removed at its exit, never the home
// directory's ~/.ai.
// The name lives in a static buffer, not a std::string: the exit handler
// that removes the directory runs after static objects are destroyed.
char metrics_dir_name[] = "/tmp/devgraph-test-metrics-XXXXXX";

const char* test_metrics_dir() {
  static const char* dir = [] {
    const char* made = ::mkdtemp(metrics_dir_name);
    if (!made) return "/tmp";
    std::atexit([] { (void)remove_tree(metrics_dir_name); });
    return static_cast<const char*>(metrics_dir_name);
  }();
  return dir;
}

}  // namespace

ProcessResult run_devgraph(const std::vector<std::string>& args,
                           const std::map<std::string, std::string>& env, const std::string& cwd,
                           const std::string& input) {
  std::vector<std::string> argv{DEVGRAPH_BIN};
  argv.insert(argv.end(), args.begin(), args.end());
  auto e = env;
  if (!e.count("DEVELOP_METRICS_DIR") && !e.count("AI_ROOT") && !e.count("HOME") &&
      !std::getenv("DEVELOP_METRICS_DIR") && !std::getenv("AI_ROOT"))
    e["DEVELOP_METRICS_DIR"] = test_metrics_dir();
  ProcessResult r = run_process(argv, e, cwd, input);
  expect_documented_exit(args, r);
  return r;
}

std::vector<std::string> documented_exit_codes(std::string_view verb) {
  std::vector<std::string> codes;
  const Verb* v = find_verb(verb);
  if (v == nullptr) return codes;
  std::string_view table = v->exit_status;
  while (!table.empty()) {
    size_t nl = table.find('\n');
    std::string_view line = table.substr(0, nl);
    codes.emplace_back(line.substr(0, line.find(' ')));
    if (nl == std::string_view::npos) break;
    table.remove_prefix(nl + 1);
  }
  return codes;
}

void expect_documented_exit(const std::vector<std::string>& args, const ProcessResult& r) {
  if (args.empty() || r.exit_code < 0) return;
  auto codes = documented_exit_codes(args[0]);
  if (codes.empty()) return;
  std::string code = std::to_string(r.exit_code);
  for (const auto& c : codes)
    if (c == code || (c == "128+N" && r.exit_code > 128 && r.exit_code < 160)) return;
  std::string listed;
  for (const auto& c : codes) listed += (listed.empty() ? "" : ", ") + c;
  ADD_FAILURE() << "devgraph " << args[0] << " exited " << code
                << ", a code its exit-code table (src/cli/verbs.cpp) does not list (" << listed
                << ")\nstderr: " << r.err;
}

std::string reference_dir() {
  return DEVGRAPH_REFERENCE_DIR;
}
std::string source_dir() {
  return DEVGRAPH_SOURCE_DIR;
}
std::string test_dir() {
  return DEVGRAPH_TEST_DIR;
}

std::string slurp(const std::string& path) {
  auto text = read_file(path);
  if (!text) throw std::runtime_error(text.error().message);
  return *text;
}

std::string entries(const std::string& dir) {
  return run_process({"ls", "-A", dir}).out;
}

std::map<std::string, std::string> tree_snapshot(const std::string& dir) {
  std::map<std::string, std::string> out;
  if (!std::filesystem::exists(dir)) return out;
  for (auto& e : std::filesystem::recursive_directory_iterator(dir))
    out[e.path().string()] = e.is_regular_file() && !e.is_symlink() ? slurp(e.path().string()) : "";
  return out;
}

int dead_pid() {
  pid_t pid = ::fork();
  if (pid == 0) ::_exit(0);
  int status = 0;
  ::waitpid(pid, &status, 0);
  return pid;
}

std::vector<Json> read_jsonl(const std::string& path) {
  std::vector<Json> out;
  if (!path_exists(path)) return out;
  std::istringstream in(slurp(path));
  std::string line;
  while (std::getline(in, line))
    if (!line.empty()) out.push_back(Json::parse(line));
  return out;
}

void write_text(const std::string& path, const std::string& text) {
  auto st = make_directories(dirname_of(path));
  if (st) st = write_file_atomic(path, text);
  if (!st) throw std::runtime_error(st.error().message);
}

pid_t spawn_group(const std::vector<std::string>& argv, const std::string& log,
                  const std::map<std::string, std::string>& env) {
  pid_t pid = ::fork();
  if (pid == 0) {
    ::setpgid(0, 0);
    for (int sig : {SIGINT, SIGTERM, SIGHUP}) ::signal(sig, SIG_DFL);
    sigset_t none;
    sigemptyset(&none);
    ::sigprocmask(SIG_SETMASK, &none, nullptr);
    int fd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
    if (fd < 0 || ::dup2(fd, 1) < 0 || ::dup2(fd, 2) < 0) ::_exit(127);
    for (const auto& [k, v] : env)
      v.empty() ? ::unsetenv(k.c_str()) : ::setenv(k.c_str(), v.c_str(), 1);
    std::vector<std::string> copy = argv;
    std::vector<char*> c;
    for (auto& a : copy) c.push_back(a.data());
    c.push_back(nullptr);
    ::execv(c[0], c.data());
    ::_exit(127);
  }
  if (pid > 0) ::setpgid(pid, pid);
  return pid;
}

}  // namespace devgraph::test
