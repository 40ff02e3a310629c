#include "util/clock.h"

#include <sys/syscall.h>
#include <unistd.h>

#include <ctime>

namespace devgraph {

std::chrono::system_clock::time_point SystemClock::wall() const {
  // The vDSO's clock reads two pages of its own, and on the virtual
  // machines devgraph runs on their first touch is two page faults, about
  // 25 us. A checkpoint reads the wall clock once per process, and the
  // system call costs about 1 us. (steady() stays on the vDSO: it serves
  // the long-lived processes that time out children, where it is read
  // often.)
  timespec ts{};
  if (::syscall(SYS_clock_gettime, CLOCK_REALTIME, &ts) != 0)
    return std::chrono::system_clock::now();
  using namespace std::chrono;
  return system_clock::time_point{
      duration_cast<system_clock::duration>(seconds{ts.tv_sec} + nanoseconds{ts.tv_nsec})};
}

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
  // Digits by hand: printf's machinery is a page of code a checkpoint
  // would run for this stamp alone.
  std::string out = "0000-00-00T00:00:00+00:00";
  auto put = [&out](size_t at, unsigned value, size_t width) {
    for (size_t k = width; k-- > 0; value /= 10) out[at + k] = static_cast<char>('0' + value % 10);
  };
  put(0, static_cast<unsigned>(static_cast<int>(date.year())), 4);
  put(5, static_cast<unsigned>(date.month()), 2);
  put(8, static_cast<unsigned>(date.day()), 2);
  put(11, static_cast<unsigned>(clock.hours().count()), 2);
  put(14, static_cast<unsigned>(clock.minutes().count()), 2);
  put(17, static_cast<unsigned>(clock.seconds().count()), 2);
  return out;
}

std::string utc_stamp(std::chrono::system_clock::time_point t) {
  std::string iso = iso_utc(t);  // 2026-09-03T20:00:00+00:00
  std::string out;
  for (char c : iso.substr(0, 19))
    if (c != '-' && c != ':') out += c;
  return out + "Z";
}

}  // namespace devgraph
