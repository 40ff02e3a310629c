#include "util/clock.h"

#include <ctime>

namespace devgraph {

const Clock& system_clock() {
  static const SystemClock clock;
  return clock;
}

std::string iso_utc(std::chrono::system_clock::time_point t) {
  std::time_t secs = std::chrono::system_clock::to_time_t(t);
  std::tm tm{};
  ::gmtime_r(&secs, &tm);
  char buf[40];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S+00:00", &tm);
  return buf;
}

}  // namespace devgraph
