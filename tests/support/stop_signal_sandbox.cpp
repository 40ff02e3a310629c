#include "support/stop_signal_sandbox.h"

#include <pthread.h>

namespace devgraph::test {
namespace {

constexpr int kStopSignals[3] = {SIGINT, SIGTERM, SIGHUP};

}  // namespace

StopSignalSandbox::StopSignalSandbox() {
  sigset_t set;
  sigemptyset(&set);
  struct sigaction dfl {};
  dfl.sa_handler = SIG_DFL;
  sigemptyset(&dfl.sa_mask);
  for (int i = 0; i < 3; ++i) {
    sigaddset(&set, kStopSignals[i]);
    ::sigaction(kStopSignals[i], &dfl, &before_[i]);
  }
  ::pthread_sigmask(SIG_BLOCK, &set, &mask_before_);
}

StopSignalSandbox::~StopSignalSandbox() {
  // Ignoring a signal discards a pending one, blocked or not; only then is
  // it safe to unblock.
  struct sigaction ign {};
  ign.sa_handler = SIG_IGN;
  sigemptyset(&ign.sa_mask);
  for (int sig : kStopSignals) ::sigaction(sig, &ign, nullptr);
  ::pthread_sigmask(SIG_SETMASK, &mask_before_, nullptr);
  for (int i = 0; i < 3; ++i) ::sigaction(kStopSignals[i], &before_[i], nullptr);
}

}  // namespace devgraph::test
