#include "support/stderr_process.h"
#include "support/build_paths.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdlib>

namespace devgraph::test {

StderrProcess::StderrProcess(const std::vector<std::string>& args,
                             const std::map<std::string, std::string>& env, const std::string& cwd,
                             const std::string& out_path) {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) return;
  pid_ = ::fork();
  if (pid_ == 0) {
    ::setpgid(0, 0);
    // Stop signals at their defaults, whatever the shell that ran the
    // tests left (a background job starts with SIGINT ignored).
    for (int sig : {SIGINT, SIGTERM, SIGHUP}) ::signal(sig, SIG_DFL);
    sigset_t none;
    sigemptyset(&none);
    ::sigprocmask(SIG_SETMASK, &none, nullptr);
    int out = ::open(out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (out < 0 || ::dup2(out, 1) < 0 || ::dup2(fds[1], 2) < 0 || ::chdir(cwd.c_str()) != 0)
      ::_exit(127);
    for (const auto& [k, v] : env)
      v.empty() ? ::unsetenv(k.c_str()) : ::setenv(k.c_str(), v.c_str(), 1);
    std::vector<std::string> argv = {DEVGRAPH_BIN};
    argv.insert(argv.end(), args.begin(), args.end());
    std::vector<char*> c;
    for (auto& a : argv) c.push_back(a.data());
    c.push_back(nullptr);
    ::execv(c[0], c.data());
    ::_exit(127);
  }
  ::close(fds[1]);
  err_fd_ = fds[0];
  if (pid_ > 0) ::setpgid(pid_, pid_);
}

StderrProcess::~StderrProcess() {
  if (err_fd_ >= 0) ::close(err_fd_);
  if (pid_ > 0 && !reaped_) {
    ::kill(-pid_, SIGKILL);
    ::waitpid(pid_, nullptr, 0);
  }
}

bool StderrProcess::wait_for(const std::string& text, std::chrono::seconds limit) {
  auto deadline = std::chrono::steady_clock::now() + limit;
  while (err_.find(text) == std::string::npos)
    if (!read_some(deadline)) return false;
  return true;
}

int StderrProcess::wait(std::chrono::seconds limit) {
  auto deadline = std::chrono::steady_clock::now() + limit;
  while (read_some(deadline)) {
  }
  int st = 0;
  if (::waitpid(pid_, &st, 0) == pid_) reaped_ = true;
  return st;
}

bool StderrProcess::read_some(std::chrono::steady_clock::time_point deadline) {
  while (true) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) return false;
    pollfd p = {err_fd_, POLLIN, 0};
    int n = ::poll(&p, 1, static_cast<int>(left.count()) + 1);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    char buf[4096];
    ssize_t got = ::read(err_fd_, buf, sizeof buf);
    if (got <= 0) return false;
    err_.append(buf, static_cast<size_t>(got));
    return true;
  }
}

std::string http_get(int port, const std::string& path, std::chrono::seconds limit) {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in sa{};
  sa.sin_family = AF_INET;
  sa.sin_port = htons(static_cast<std::uint16_t>(port));
  ::inet_pton(AF_INET, "127.0.0.1", &sa.sin_addr);
  std::string got;
  if (::connect(fd, reinterpret_cast<sockaddr*>(&sa), sizeof sa) == 0) {
    std::string req = "GET " + path + " HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n";
    ::send(fd, req.data(), req.size(), MSG_NOSIGNAL);
    auto deadline = std::chrono::steady_clock::now() + limit;
    while (true) {
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
          deadline - std::chrono::steady_clock::now());
      pollfd p = {fd, POLLIN, 0};
      if (left.count() <= 0 || ::poll(&p, 1, static_cast<int>(left.count())) <= 0) break;
      char buf[65536];
      ssize_t n = ::read(fd, buf, sizeof buf);
      if (n <= 0) break;
      got.append(buf, static_cast<size_t>(n));
    }
  }
  ::close(fd);
  return got;
}

EventStream::EventStream(int port) {
  fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in sa{};
  sa.sin_family = AF_INET;
  sa.sin_port = htons(static_cast<std::uint16_t>(port));
  ::inet_pton(AF_INET, "127.0.0.1", &sa.sin_addr);
  if (::connect(fd_, reinterpret_cast<sockaddr*>(&sa), sizeof sa) != 0) return;
  std::string req = "GET /events HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n";
  connected_ =
      ::send(fd_, req.data(), req.size(), MSG_NOSIGNAL) == static_cast<ssize_t>(req.size());
}

EventStream::~EventStream() {
  ::close(fd_);
}

bool EventStream::read_until(const std::string& part, std::chrono::seconds limit) {
  auto deadline = std::chrono::steady_clock::now() + limit;
  while (text_.find(part) == std::string::npos) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    pollfd p = {fd_, POLLIN, 0};
    if (left.count() <= 0 || ::poll(&p, 1, static_cast<int>(left.count()) + 1) <= 0) return false;
    char buf[8192];
    ssize_t n = ::read(fd_, buf, sizeof buf);
    if (n <= 0) return false;
    text_.append(buf, static_cast<size_t>(n));
  }
  return true;
}

TakenPort::TakenPort() {
  fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in sa{};
  sa.sin_family = AF_INET;
  ::inet_pton(AF_INET, "127.0.0.1", &sa.sin_addr);
  socklen_t len = sizeof sa;
  if (::bind(fd_, reinterpret_cast<sockaddr*>(&sa), sizeof sa) == 0 && ::listen(fd_, 1) == 0 &&
      ::getsockname(fd_, reinterpret_cast<sockaddr*>(&sa), &len) == 0)
    port_ = ntohs(sa.sin_port);
}

TakenPort::~TakenPort() {
  ::close(fd_);
}

int port_after(const std::string& text, const std::string& prefix) {
  const std::string at = prefix + "http://127.0.0.1:";
  auto i = text.find(at);
  if (i == std::string::npos) return 0;
  return std::atoi(text.c_str() + i + at.size());
}

}  // namespace devgraph::test
