#include "proc/command.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <optional>

#include "proc/spawn.h"
#include "proc/stop_signals.h"

extern char** environ;

namespace devgraph {
namespace {

using Clock = std::chrono::steady_clock;

std::vector<std::string> merged_environment(const std::map<std::string, std::string>& overrides) {
  std::vector<std::string> out;
  for (char** e = environ; e && *e; ++e) {
    std::string entry(*e);
    std::string key = entry.substr(0, entry.find('='));
    if (overrides.count(key)) continue;
    out.push_back(std::move(entry));
  }
  for (const auto& [k, v] : overrides)
    if (!v.empty()) out.push_back(k + "=" + v);
  return out;
}

void append_bounded(std::string& sink, const char* data, size_t n, size_t cap, bool& truncated) {
  sink.append(data, n);
  if (sink.size() > cap) {
    // Keep the tail: the end of a failing command's output says why.
    sink.erase(0, sink.size() - cap);
    truncated = true;
  }
}

}  // namespace

std::string describe_argv(const std::vector<std::string>& argv) {
  std::string s;
  for (const auto& a : argv) {
    if (!s.empty()) s += ' ';
    bool plain = !a.empty() && a.find_first_of(" \t\n'\"\\$`") == std::string::npos;
    s += plain ? a : "'" + a + "'";
  }
  return s;
}

Expected<CommandResult> RealCommandRunner::run(const CommandSpec& spec) {
  if (spec.argv.empty()) return fail("cannot run an empty command");
  std::optional<StopSignals> stop;
  if (spec.stop_on_signal) {
    DG_TRY(StopSignals watched, StopSignals::watch());
    stop.emplace(std::move(watched));
    if (int sig = stop->take()) {
      CommandResult stopped;
      stopped.interrupted_by = sig;
      return stopped;
    }
  }
  int out_pipe[2], err_pipe[2], in_pipe[2] = {-1, -1};
  if (::pipe2(out_pipe, O_CLOEXEC) != 0) return fail(std::string("pipe: ") + std::strerror(errno));
  if (::pipe2(err_pipe, O_CLOEXEC) != 0) {
    ::close(out_pipe[0]);
    ::close(out_pipe[1]);
    return fail(std::string("pipe: ") + std::strerror(errno));
  }
  if (!spec.input.empty() && ::pipe2(in_pipe, O_CLOEXEC) != 0) {
    for (int fd : {out_pipe[0], out_pipe[1], err_pipe[0], err_pipe[1]}) ::close(fd);
    return fail(std::string("pipe: ") + std::strerror(errno));
  }

  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  if (in_pipe[0] >= 0)
    posix_spawn_file_actions_adddup2(&fa, in_pipe[0], 0);
  else
    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&fa, out_pipe[1], 1);
  posix_spawn_file_actions_adddup2(&fa, err_pipe[1], 2);
  if (!spec.cwd.empty()) posix_spawn_file_actions_addchdir_np(&fa, spec.cwd.c_str());

  posix_spawnattr_t attr;
  init_child_spawn_attr(&attr);

  std::vector<std::string> env = merged_environment(spec.env);
  std::vector<char*> envp;
  for (auto& e : env) envp.push_back(e.data());
  envp.push_back(nullptr);
  std::vector<char*> argv = c_argv(spec.argv);

  pid_t pid = -1;
  int rc = ::posix_spawnp(&pid, argv[0], &fa, &attr, argv.data(), envp.data());
  posix_spawn_file_actions_destroy(&fa);
  posix_spawnattr_destroy(&attr);
  ::close(out_pipe[1]);
  ::close(err_pipe[1]);
  if (in_pipe[0] >= 0) ::close(in_pipe[0]);
  if (rc != 0) {
    ::close(out_pipe[0]);
    ::close(err_pipe[0]);
    if (in_pipe[1] >= 0) ::close(in_pipe[1]);
    return fail("cannot run " + spec.argv[0] + ": " + std::strerror(rc));
  }

  CommandResult result;
  int fds[2] = {out_pipe[0], err_pipe[0]};
  std::string* sinks[2] = {&result.out, &result.err};
  int in_fd = in_pipe[1];
  size_t written = 0;
  if (in_fd >= 0) ::fcntl(in_fd, F_SETFL, O_NONBLOCK);

  const auto deadline = Clock::now() + spec.timeout;
  Clock::time_point kill_at{};
  bool term_sent = false, kill_sent = false;
  const bool ticking = static_cast<bool>(spec.on_wait) && spec.wait_tick.count() > 0;
  auto next_tick = Clock::now() + spec.wait_tick;
  // The child's exit is an event too: a command that closes its output and
  // keeps running is still bound by the timeout. (Without pidfds, an old
  // kernel, the exit is collected after the output ends, as before.)
  int pidfd = static_cast<int>(::syscall(SYS_pidfd_open, pid, 0));
  bool exited = false;
  int status = 0;
  // The first stop signal starts the TERM-then-KILL sequence (unless a
  // timeout already has); a second one KILLs at once.
  auto on_stop = [&](int sig) {
    if (sig == 0) return;
    if (result.interrupted_by == 0) {
      result.interrupted_by = sig;
      if (!term_sent) {
        ::kill(-pid, SIGTERM);
        term_sent = true;
        kill_at = Clock::now() + spec.kill_grace;
      }
    } else if (!kill_sent) {
      ::kill(-pid, SIGKILL);
      kill_sent = true;
    }
  };
  while (fds[0] >= 0 || fds[1] >= 0 || pidfd >= 0) {
    if (stop && stop->has_unseen()) on_stop(stop->take());
    pollfd p[5];
    int which[5];
    nfds_t n = 0;
    for (int i = 0; i < 2; ++i)
      if (fds[i] >= 0) {
        p[n] = {fds[i], POLLIN, 0};
        which[n++] = i;
      }
    if (in_fd >= 0) {
      p[n] = {in_fd, POLLOUT, 0};
      which[n++] = 2;
    }
    if (pidfd >= 0) {
      p[n] = {pidfd, POLLIN, 0};
      which[n++] = 3;
    }
    if (stop) {
      p[n] = {stop->fd(), POLLIN, 0};
      which[n++] = 4;
    }
    auto now = Clock::now();
    if (ticking && now >= next_tick) {
      spec.on_wait();
      now = Clock::now();
      next_tick = now + spec.wait_tick;
    }
    auto wake = term_sent ? kill_at : deadline;
    auto until = [&](Clock::time_point t) {
      return t <= now
                 ? 0
                 : static_cast<int>(
                       std::chrono::duration_cast<std::chrono::milliseconds>(t - now).count()) +
                       1;
    };
    int wait_ms = kill_sent ? -1 : until(wake);
    if (ticking && (wait_ms < 0 || until(next_tick) < wait_ms)) wait_ms = until(next_tick);
    int ready = ::poll(p, n, wait_ms);
    if (ready < 0 && errno != EINTR) break;
    if (ready == 0 || Clock::now() >= wake) {
      if (!term_sent && Clock::now() >= deadline) {
        result.timed_out = true;
        ::kill(-pid, SIGTERM);
        term_sent = true;
        kill_at = Clock::now() + spec.kill_grace;
      } else if (term_sent && !kill_sent && Clock::now() >= kill_at) {
        ::kill(-pid, SIGKILL);
        kill_sent = true;
      }
      if (ready <= 0) continue;
    }
    for (nfds_t k = 0; k < n; ++k) {
      if (!p[k].revents) continue;
      if (which[k] == 4) {
        on_stop(stop->take());
        continue;
      }
      if (which[k] == 3) {
        // Reaped here, so the pid cannot be reused while the group may
        // still be signalled: its other members keep the group alive.
        if (::waitpid(pid, &status, WNOHANG) == pid) exited = true;
        ::close(pidfd);
        pidfd = -1;
        continue;
      }
      if (which[k] == 2) {
        ssize_t w = ::write(in_fd, spec.input.data() + written, spec.input.size() - written);
        if (w > 0) written += static_cast<size_t>(w);
        if ((w < 0 && errno != EAGAIN) || written == spec.input.size()) {
          ::close(in_fd);
          in_fd = -1;
        }
        continue;
      }
      char buf[65536];
      ssize_t got = ::read(p[k].fd, buf, sizeof buf);
      if (got > 0) {
        append_bounded(*sinks[which[k]], buf, static_cast<size_t>(got), spec.max_output_bytes,
                       result.output_truncated);
      } else if (got == 0 || errno != EINTR) {
        ::close(p[k].fd);
        fds[which[k]] = -1;
      }
    }
  }
  if (in_fd >= 0) ::close(in_fd);
  while (!exited && ::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (WIFEXITED(status)) {
    result.exit_code = WEXITSTATUS(status);
  } else if (WIFSIGNALED(status)) {
    result.term_signal = WTERMSIG(status);
  }
  return result;
}

Expected<CommandResult> run_command(const CommandSpec& spec) {
  RealCommandRunner runner;
  return runner.run(spec);
}

}  // namespace devgraph
