// For tests that send this process SIGINT, SIGTERM or SIGHUP: whatever the
// code under test does or fails to do, none of them may end the test run.
//
// While a sandbox lives, the three signals are blocked (so one that nobody
// reads stays pending instead of killing) and at their default
// dispositions (so the code under test watches all three). When it goes,
// any still pending is discarded, and the mask and dispositions it found
// are put back.
#pragma once

#include <signal.h>

namespace devgraph::test {

class StopSignalSandbox {
 public:
  StopSignalSandbox();
  ~StopSignalSandbox();
  StopSignalSandbox(const StopSignalSandbox&) = delete;
  StopSignalSandbox& operator=(const StopSignalSandbox&) = delete;

 private:
  sigset_t mask_before_;
  struct sigaction before_[3];
};

}  // namespace devgraph::test
