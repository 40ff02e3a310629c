#include "proc/supervisor.h"

#include "proc/leftovers.h"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/epoll.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <unordered_map>

#include "proc/spawn.h"
#include "proc/stop_signals.h"

namespace devgraph {
namespace {

// epoll tokens: the low two bits say what the descriptor is, the rest is
// the child or watch id.
enum Tag : std::uint64_t { kPidfd = 0, kStdout = 1, kStderr = 2, kWatch = 3 };
std::uint64_t token(std::uint64_t id, Tag tag) {
  return (id << 2) | tag;
}
// Ids start at 1, so watch id 0 is free for the stop-signal descriptor.
constexpr std::uint64_t kStopToken = (0 << 2) | kWatch;

int open_pidfd(pid_t pid) {
  return static_cast<int>(::syscall(SYS_pidfd_open, pid, 0));
}

std::string errno_text(int err) {
  return std::strerror(err);
}

// A bounded sink that keeps the tail. It grows to twice the cap before
// dropping the oldest bytes, so a flood costs amortised O(1) per byte
// instead of a memmove of the whole buffer on every read.
void append_tail(std::string& sink, const char* data, size_t n, size_t cap, bool& truncated) {
  if (n >= cap) {
    sink.assign(data + (n - cap), cap);
    truncated = true;
    return;
  }
  sink.append(data, n);
  if (sink.size() > 2 * cap) {
    sink.erase(0, sink.size() - cap);
    truncated = true;
  }
}

void trim_tail(std::string& sink, size_t cap, bool& truncated) {
  if (sink.size() > cap) {
    sink.erase(0, sink.size() - cap);
    truncated = true;
  }
}

}  // namespace

struct ChildLoop::Impl {
  enum class TimerKind { user, child_timeout, child_kill };
  struct Timer {
    SteadyTime when;
    TimerKind kind;
    ChildId child = 0;
  };
  struct Child {
    ChildId id = 0;
    pid_t pid = -1;
    int pidfd = -1;
    int fds[2] = {-1, -1};  // stdout, stderr read ends
    std::string buf[2];
    bool truncated = false;
    size_t cap = 0;
    SteadyTime started;
    std::chrono::milliseconds grace{0};
    TimerId timeout_timer = 0;
    TimerId kill_timer = 0;
    bool timed_out = false;
    bool term_sent = false;
    std::vector<std::string> marks;  // ChildSpec::stdout_line_marks
    std::string line;                // the stdout line read so far, for marks
    bool line_cut = false;           // `line` reached kMaxMarkedLine
  };

  const Clock* clock = nullptr;
  int epfd = -1;
  std::uint64_t next_id = 1;
  std::unordered_map<ChildId, Child> children;
  std::multimap<SteadyTime, TimerId> deadlines;
  std::unordered_map<TimerId, Timer> timers;
  std::unordered_map<WatchId, int> watches;
  std::deque<LoopEvent> ready;
  std::optional<ChildRecord> record;  // see proc/leftovers.h
  std::optional<StopSignals> stop;    // see watch_stop_signals()

  ~Impl() {
    for (auto& [id, c] : children) {
      ::kill(-c.pid, SIGKILL);
      int status = 0;
      while (::waitpid(c.pid, &status, 0) < 0 && errno == EINTR) {
      }
      if (record) record->remove(c.pid);
      close_child_fds(c);
    }
    if (epfd >= 0) ::close(epfd);
  }

  TimerId add_timer(SteadyTime when, TimerKind kind, ChildId child) {
    TimerId id = next_id++;
    timers.emplace(id, Timer{when, kind, child});
    deadlines.emplace(when, id);
    return id;
  }

  void cancel_timer(TimerId id) {
    auto it = timers.find(id);
    if (it == timers.end()) return;
    auto range = deadlines.equal_range(it->second.when);
    for (auto d = range.first; d != range.second; ++d) {
      if (d->second == id) {
        deadlines.erase(d);
        break;
      }
    }
    timers.erase(it);
  }

  void close_fd(int& fd) {
    if (fd < 0) return;
    ::epoll_ctl(epfd, EPOLL_CTL_DEL, fd, nullptr);
    ::close(fd);
    fd = -1;
  }

  void close_child_fds(Child& c) {
    close_fd(c.fds[0]);
    close_fd(c.fds[1]);
    close_fd(c.pidfd);
  }

  // Reads what is there now; closes the descriptor at end of file.
  void drain(Child& c, int which) {
    char chunk[1 << 16];
    while (c.fds[which] >= 0) {
      ssize_t got = ::read(c.fds[which], chunk, sizeof chunk);
      if (got > 0) {
        append_tail(c.buf[which], chunk, static_cast<size_t>(got), c.cap, c.truncated);
        if (which == 0 && !c.marks.empty()) look_for_marks(c, chunk, static_cast<size_t>(got));
        continue;
      }
      if (got < 0 && errno == EINTR) continue;
      if (got < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return;
      close_fd(c.fds[which]);  // EOF or a read error: nothing more to come
    }
  }

  // Complete stdout lines of `data` that carry a mark become OutputLine
  // events; the unfinished end waits in c.line for the next read.
  void look_for_marks(Child& c, const char* data, size_t n) {
    size_t at = 0;
    while (at < n) {
      const void* nl = std::memchr(data + at, '\n', n - at);
      size_t end = nl ? static_cast<size_t>(static_cast<const char*>(nl) - data) : n;
      size_t room = kMaxMarkedLine - std::min(kMaxMarkedLine, c.line.size());
      c.line.append(data + at, std::min(room, end - at));
      if (end - at > room) c.line_cut = true;
      if (!nl) return;
      for (const auto& m : c.marks) {
        if (c.line.find(m) != std::string::npos) {
          ready.emplace_back(OutputLine{c.id, c.line});
          break;
        }
      }
      c.line.clear();
      c.line_cut = false;
      at = end + 1;
    }
  }

  void begin_termination(Child& c) { begin_termination(c, c.grace); }

  void begin_termination(Child& c, std::chrono::milliseconds grace) {
    SteadyTime kill_at = clock->steady() + grace;
    if (c.term_sent) {
      if (c.kill_timer == 0) return;  // the KILL has been sent
      if (timers.at(c.kill_timer).when <= kill_at) return;
      cancel_timer(c.kill_timer);
      c.kill_timer = 0;
    } else {
      c.term_sent = true;
      ::kill(-c.pid, SIGTERM);
    }
    if (grace.count() <= 0) {
      ::kill(-c.pid, SIGKILL);
      return;
    }
    c.kill_timer = add_timer(kill_at, TimerKind::child_kill, c.id);
  }

  // Queues a StopRequested for a stop signal not reported yet, if any.
  void take_stop() {
    if (!stop) return;
    if (int sig = stop->take()) ready.emplace_back(StopRequested{sig});
  }

  void on_exit(ChildId id) {
    auto it = children.find(id);
    if (it == children.end()) return;
    Child& c = it->second;
    // The leader is a zombie now, so its pid (and group id) cannot be
    // reused yet: kill whatever is left of the group, then collect the
    // output already in the pipes, then reap.
    ::kill(-c.pid, SIGKILL);
    drain(c, 0);
    drain(c, 1);
    int status = 0;
    while (::waitpid(c.pid, &status, 0) < 0 && errno == EINTR) {
    }
    ChildExit ex;
    ex.id = c.id;
    ex.pid = c.pid;
    if (WIFEXITED(status)) {
      ex.exit_code = WEXITSTATUS(status);
    } else if (WIFSIGNALED(status)) {
      ex.term_signal = WTERMSIG(status);
    }
    ex.timed_out = c.timed_out;
    trim_tail(c.buf[0], c.cap, c.truncated);
    trim_tail(c.buf[1], c.cap, c.truncated);
    ex.output_truncated = c.truncated;
    ex.out = std::move(c.buf[0]);
    ex.err = std::move(c.buf[1]);
    ex.elapsed = std::chrono::duration_cast<std::chrono::milliseconds>(clock->steady() - c.started);
    cancel_timer(c.timeout_timer);
    cancel_timer(c.kill_timer);
    close_child_fds(c);
    if (record) record->remove(c.pid);
    children.erase(it);
    ready.emplace_back(std::move(ex));
  }

  void fire_due_timers() {
    SteadyTime now = clock->steady();
    while (!deadlines.empty() && deadlines.begin()->first <= now) {
      TimerId id = deadlines.begin()->second;
      deadlines.erase(deadlines.begin());
      auto it = timers.find(id);
      if (it == timers.end()) continue;
      Timer t = it->second;
      timers.erase(it);
      if (t.kind == TimerKind::user) {
        ready.emplace_back(TimerFired{id});
        continue;
      }
      auto c = children.find(t.child);
      if (c == children.end()) continue;
      if (t.kind == TimerKind::child_timeout) {
        c->second.timeout_timer = 0;
        c->second.timed_out = true;
        begin_termination(c->second);
      } else {
        c->second.kill_timer = 0;
        ::kill(-c->second.pid, SIGKILL);
      }
    }
  }

  void dispatch(const epoll_event& ev) {
    std::uint64_t tag = ev.data.u64 & 3;
    std::uint64_t id = ev.data.u64 >> 2;
    if (ev.data.u64 == kStopToken) {
      take_stop();
      return;
    }
    if (tag == kWatch) {
      auto w = watches.find(id);
      if (w != watches.end()) ready.emplace_back(FdReady{id, w->second, ev.events});
      return;
    }
    auto it = children.find(id);
    if (it == children.end()) return;
    if (tag == kPidfd) {
      on_exit(id);
    } else {
      drain(it->second, tag == kStdout ? 0 : 1);
    }
  }
};

Expected<ChildLoop> ChildLoop::create(const Clock& clock) {
  int ep = ::epoll_create1(EPOLL_CLOEXEC);
  if (ep < 0) return fail("epoll_create1: " + errno_text(errno));
  auto* impl = new Impl;
  impl->clock = &clock;
  impl->epfd = ep;
  return ChildLoop(impl);
}

ChildLoop::ChildLoop(Impl* impl) : impl_(impl) {}
ChildLoop::ChildLoop(ChildLoop&& other) noexcept : impl_(other.impl_) {
  other.impl_ = nullptr;
}
ChildLoop& ChildLoop::operator=(ChildLoop&& other) noexcept {
  if (this != &other) {
    delete impl_;
    impl_ = other.impl_;
    other.impl_ = nullptr;
  }
  return *this;
}
void ChildLoop::record_children_in(const std::string& path) {
  impl_->record.emplace(path);
}

ChildLoop::~ChildLoop() {
  delete impl_;
}

Expected<ChildId> ChildLoop::spawn(const ChildSpec& spec) {
  if (spec.argv.empty() || spec.argv[0].empty()) return fail("cannot run an empty command");
  if (!spec.cwd.empty()) {
    struct stat st {};
    if (::stat(spec.cwd.c_str(), &st) != 0 || !S_ISDIR(st.st_mode))
      return fail("cannot run " + spec.argv[0] + ": working directory " + spec.cwd +
                  " is not a directory");
  }
  int out_pipe[2], err_pipe[2];
  if (::pipe2(out_pipe, O_CLOEXEC) != 0) return fail("pipe: " + errno_text(errno));
  if (::pipe2(err_pipe, O_CLOEXEC) != 0) {
    ::close(out_pipe[0]);
    ::close(out_pipe[1]);
    return fail("pipe: " + errno_text(errno));
  }
  // Only our ends are non-blocking; the child writes as it always would.
  for (int fd : {out_pipe[0], err_pipe[0]}) {
    ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) | O_NONBLOCK);
    ::fcntl(fd, F_SETPIPE_SZ, 1 << 20);  // fewer wake-ups for chatty children
  }

  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&fa, out_pipe[1], 1);
  posix_spawn_file_actions_adddup2(&fa, err_pipe[1], 2);
  if (!spec.cwd.empty()) posix_spawn_file_actions_addchdir_np(&fa, spec.cwd.c_str());
  posix_spawnattr_t attr;
  init_child_spawn_attr(&attr);

  std::vector<char*> argv = c_argv(spec.argv);
  std::vector<char*> envp;
  for (const auto& e : spec.env) envp.push_back(const_cast<char*>(e.c_str()));
  envp.push_back(nullptr);

  pid_t pid = -1;
  int rc = ::posix_spawnp(&pid, argv[0], &fa, &attr, argv.data(), envp.data());
  posix_spawn_file_actions_destroy(&fa);
  posix_spawnattr_destroy(&attr);
  ::close(out_pipe[1]);
  ::close(err_pipe[1]);
  if (rc != 0) {
    ::close(out_pipe[0]);
    ::close(err_pipe[0]);
    return fail("cannot run " + spec.argv[0] + ": " + errno_text(rc));
  }
  int pidfd = open_pidfd(pid);
  if (pidfd < 0) {
    int err = errno;
    ::kill(-pid, SIGKILL);
    int status = 0;
    ::waitpid(pid, &status, 0);
    ::close(out_pipe[0]);
    ::close(err_pipe[0]);
    return fail("pidfd_open: " + errno_text(err) + " (devgraph needs Linux 5.3 or later)");
  }

  Impl& im = *impl_;
  ChildId id = im.next_id++;
  Impl::Child c;
  c.id = id;
  c.pid = pid;
  c.pidfd = pidfd;
  if (im.record) im.record->add(pid);
  c.fds[0] = out_pipe[0];
  c.fds[1] = err_pipe[0];
  c.cap = spec.max_output_bytes ? spec.max_output_bytes : 1;
  c.started = im.clock->steady();
  c.grace = spec.kill_grace;
  c.marks = spec.stdout_line_marks;
  c.timeout_timer = im.add_timer(c.started + spec.timeout, Impl::TimerKind::child_timeout, id);
  const std::pair<int, Tag> regs[] = {
      {pidfd, kPidfd}, {out_pipe[0], kStdout}, {err_pipe[0], kStderr}};
  for (const auto& [fd, tag] : regs) {
    epoll_event ev{};
    ev.events = EPOLLIN;
    ev.data.u64 = token(id, tag);
    ::epoll_ctl(im.epfd, EPOLL_CTL_ADD, fd, &ev);
  }
  im.children.emplace(id, std::move(c));
  return id;
}

void ChildLoop::terminate(ChildId id) {
  auto it = impl_->children.find(id);
  if (it != impl_->children.end()) impl_->begin_termination(it->second);
}

void ChildLoop::terminate(ChildId id, std::chrono::milliseconds grace) {
  auto it = impl_->children.find(id);
  if (it != impl_->children.end()) impl_->begin_termination(it->second, grace);
}

Status ChildLoop::watch_stop_signals() {
  Impl& im = *impl_;
  if (im.stop) return {};
  DG_TRY(StopSignals stop, StopSignals::watch());
  epoll_event ev{};
  ev.events = EPOLLIN;
  ev.data.u64 = kStopToken;
  if (::epoll_ctl(im.epfd, EPOLL_CTL_ADD, stop.fd(), &ev) != 0)
    return fail("cannot watch the stop signals: " + errno_text(errno));
  im.stop.emplace(std::move(stop));
  return {};
}

TimerId ChildLoop::add_timer(SteadyTime when) {
  return impl_->add_timer(when, Impl::TimerKind::user, 0);
}

void ChildLoop::cancel_timer(TimerId id) {
  auto it = impl_->timers.find(id);
  if (it != impl_->timers.end() && it->second.kind == Impl::TimerKind::user)
    impl_->cancel_timer(id);
}

Expected<WatchId> ChildLoop::watch_fd(int fd, std::uint32_t events) {
  WatchId id = impl_->next_id++;
  epoll_event ev{};
  ev.events = events;
  ev.data.u64 = token(id, kWatch);
  if (::epoll_ctl(impl_->epfd, EPOLL_CTL_ADD, fd, &ev) != 0)
    return fail("cannot watch descriptor " + std::to_string(fd) + ": " + errno_text(errno));
  impl_->watches.emplace(id, fd);
  return id;
}

void ChildLoop::unwatch_fd(WatchId id) {
  auto it = impl_->watches.find(id);
  if (it == impl_->watches.end()) return;
  ::epoll_ctl(impl_->epfd, EPOLL_CTL_DEL, it->second, nullptr);
  impl_->watches.erase(it);
  // Drop readiness already queued for it.
  std::erase_if(impl_->ready, [id](const LoopEvent& e) {
    const auto* f = std::get_if<FdReady>(&e);
    return f && f->id == id;
  });
}

std::optional<LoopEvent> ChildLoop::wait(std::optional<SteadyTime> until) {
  Impl& im = *impl_;
  for (;;) {
    // A stop signal another watcher read (a command run meanwhile) is
    // news here too.
    if (im.stop && im.stop->has_unseen()) im.take_stop();
    if (im.ready.empty()) im.fire_due_timers();
    if (!im.ready.empty()) {
      LoopEvent ev = std::move(im.ready.front());
      im.ready.pop_front();
      return ev;
    }
    if (!until && im.children.empty() && im.timers.empty() && im.watches.empty()) {
      im.take_stop();
      if (im.ready.empty()) return std::nullopt;
      continue;
    }
    SteadyTime now = im.clock->steady();
    std::optional<SteadyTime> wake = until;
    if (!im.deadlines.empty() && (!wake || im.deadlines.begin()->first < *wake))
      wake = im.deadlines.begin()->first;
    int timeout_ms = -1;
    if (wake) {
      auto left = std::chrono::ceil<std::chrono::milliseconds>(*wake - now).count();
      timeout_ms = left <= 0 ? 0 : static_cast<int>(std::min<long long>(left, 1 << 30));
    }
    epoll_event evs[64];
    int n = ::epoll_wait(im.epfd, evs, 64, timeout_ms);
    if (n < 0 && errno != EINTR) return std::nullopt;
    for (int i = 0; i < n; ++i) im.dispatch(evs[i]);
    if (n <= 0 && im.ready.empty() && until && im.clock->steady() >= *until) {
      im.fire_due_timers();
      if (im.ready.empty()) return std::nullopt;
    }
  }
}

size_t ChildLoop::running() const {
  return impl_->children.size();
}
size_t ChildLoop::timers() const {
  return impl_->timers.size();
}
const Clock& ChildLoop::clock() const {
  return *impl_->clock;
}

}  // namespace devgraph
