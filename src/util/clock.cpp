#include "util/clock.h"

#include <cstdio>
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
  // Not strftime: glibc's reads the time zone file first, which a UTC
  // stamp does not need (and every checkpoint writes one).
  char buf[64];
  std::snprintf(buf, sizeof buf, "%04d-%02d-%02dT%02d:%02d:%02d+00:00", tm.tm_year + 1900,
                tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec);
  return buf;
}

}  // namespace devgraph
