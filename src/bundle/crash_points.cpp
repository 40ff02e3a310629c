#include "bundle/crash_points.h"

#include <signal.h>
#include <unistd.h>

#include <cstdlib>

namespace devgraph::bundle {

EnvCrashPoints::EnvCrashPoints() {
  const char* v = std::getenv("DEVGRAPH_BUNDLE_CRASH_AT");
  *this = EnvCrashPoints(v ? v : "");
}

EnvCrashPoints::EnvCrashPoints(std::string spec) {
  auto at = spec.rfind('@');
  if (at != std::string::npos) {
    want_ = std::atoi(spec.c_str() + at + 1);
    spec.resize(at);
  }
  name_ = std::move(spec);
}

void EnvCrashPoints::reach(std::string_view label, std::string_view subject) {
  if (name_.empty()) return;
  std::string full = std::string(label) + ":" + std::string(subject);
  if (name_ != label && name_ != full) return;
  if (++hits_ == want_) ::kill(::getpid(), SIGKILL);
}

}  // namespace devgraph::bundle
