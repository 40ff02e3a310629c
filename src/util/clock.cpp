#include "util/clock.h"

#include <cstdio>

namespace devgraph {

const Clock& system_clock() {
  static const SystemClock clock;
  return clock;
}

std::string iso_utc(std::chrono::system_clock::time_point t) {
  // Calendar arithmetic, not gmtime_r or strftime: glibc's read the time
  // zone file (gmtime_r for leap seconds, which POSIX time does not count
  // anyway), and every checkpoint writes a stamp.
  using namespace std::chrono;
  const auto secs = floor<seconds>(t);
  const auto day = floor<days>(secs);
  const year_month_day date{day};
  const hh_mm_ss<seconds> clock{secs - day};
  char buf[64];
  std::snprintf(buf, sizeof buf, "%04d-%02u-%02uT%02d:%02d:%02d+00:00",
                static_cast<int>(date.year()), static_cast<unsigned>(date.month()),
                static_cast<unsigned>(date.day()), static_cast<int>(clock.hours().count()),
                static_cast<int>(clock.minutes().count()),
                static_cast<int>(clock.seconds().count()));
  return buf;
}

}  // namespace devgraph
