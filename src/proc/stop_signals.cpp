#include "proc/stop_signals.h"

#include <pthread.h>
#include <signal.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace devgraph {
namespace {

// What all watchers share: the signals are per thread and the descriptor
// is one, so there is one of this per process.
struct Shared {
  int users = 0;
  int fd = -1;
  sigset_t watched;            // the stop signals not ignored at the first watch
  sigset_t unblock;            // those of them the first watch found unblocked
  std::uint64_t received = 0;  // stop signals read so far, by anyone
  int latest = 0;              // the last of them
};

Shared& shared() {
  static Shared s;
  return s;
}

bool ignored(int sig) {
  struct sigaction now {};
  if (::sigaction(sig, nullptr, &now) != 0) return false;
  return !(now.sa_flags & SA_SIGINFO) && now.sa_handler == SIG_IGN;
}

void read_pending(Shared& s) {
  signalfd_siginfo info{};
  for (;;) {
    ssize_t got = ::read(s.fd, &info, sizeof info);
    if (got == static_cast<ssize_t>(sizeof info)) {
      ++s.received;
      s.latest = static_cast<int>(info.ssi_signo);
      continue;
    }
    if (got < 0 && errno == EINTR) continue;
    return;  // EAGAIN: nothing more is pending
  }
}

}  // namespace

Expected<StopSignals> StopSignals::watch() {
  Shared& s = shared();
  if (s.users == 0) {
    sigemptyset(&s.watched);
    for (int sig : {SIGINT, SIGTERM, SIGHUP})
      if (!ignored(sig)) sigaddset(&s.watched, sig);
    sigset_t before;
    if (int rc = ::pthread_sigmask(SIG_BLOCK, &s.watched, &before); rc != 0)
      return fail(std::string("cannot block the stop signals: ") + std::strerror(rc));
    // Only what this watch blocked is unblocked again: a signal the caller
    // had blocked itself stays blocked.
    sigemptyset(&s.unblock);
    for (int sig : {SIGINT, SIGTERM, SIGHUP})
      if (sigismember(&s.watched, sig) && !sigismember(&before, sig)) sigaddset(&s.unblock, sig);
    int fd = ::signalfd(-1, &s.watched, SFD_NONBLOCK | SFD_CLOEXEC);
    if (fd < 0) {
      int err = errno;
      ::pthread_sigmask(SIG_UNBLOCK, &s.unblock, nullptr);
      return fail(std::string("signalfd: ") + std::strerror(err));
    }
    s.fd = fd;
  }
  ++s.users;
  StopSignals w;
  w.active_ = true;
  w.seen_ = s.received;
  return w;
}

StopSignals::StopSignals(StopSignals&& other) noexcept
    : active_(other.active_), seen_(other.seen_) {
  other.active_ = false;
}

StopSignals& StopSignals::operator=(StopSignals&& other) noexcept {
  if (this != &other) {
    release();
    active_ = other.active_;
    seen_ = other.seen_;
    other.active_ = false;
  }
  return *this;
}

StopSignals::~StopSignals() {
  release();
}

void StopSignals::release() {
  if (!active_) return;
  active_ = false;
  Shared& s = shared();
  if (--s.users > 0) return;
  ::close(s.fd);
  s.fd = -1;
  ::pthread_sigmask(SIG_UNBLOCK, &s.unblock, nullptr);
}

int StopSignals::fd() const {
  return active_ ? shared().fd : -1;
}

int StopSignals::take() {
  if (!active_) return 0;
  Shared& s = shared();
  read_pending(s);
  if (seen_ == s.received) return 0;
  seen_ = s.received;
  return s.latest;
}

bool StopSignals::has_unseen() const {
  return active_ && seen_ != shared().received;
}

std::string stop_signal_name(int signal) {
  switch (signal) {
    case SIGINT:
      return "SIGINT";
    case SIGTERM:
      return "SIGTERM";
    case SIGHUP:
      return "SIGHUP";
    default:
      return "signal " + std::to_string(signal);
  }
}

}  // namespace devgraph
