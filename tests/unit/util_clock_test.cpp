#include "util/clock.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <random>
#include <vector>

namespace devgraph {
namespace {

using std::chrono::seconds;
using std::chrono::system_clock;

TEST(SystemClock, WallTimeIsTheSystemsRealTime) {
  // wall() asks the kernel directly; it must agree with the library's clock.
  const auto before = std::chrono::system_clock::now();
  const auto wall = devgraph::system_clock().wall();
  const auto after = std::chrono::system_clock::now();
  EXPECT_LE(before - std::chrono::milliseconds(1), wall);
  EXPECT_LE(wall, after + std::chrono::milliseconds(1));
  EXPECT_GT(wall.time_since_epoch().count(), 0);
}

TEST(IsoUtc, WritesTheStampTheReferenceWrites) {
  EXPECT_EQ(iso_utc(system_clock::time_point{}), "1970-01-01T00:00:00+00:00");
  // 2026-09-03T20:00:05Z, with a fraction that is dropped.
  auto t = system_clock::time_point{seconds(1788465605)} + std::chrono::milliseconds(999);
  EXPECT_EQ(iso_utc(t), "2026-09-03T20:00:05+00:00");
  EXPECT_EQ(iso_utc(system_clock::time_point{seconds(951782400)}), "2000-02-29T00:00:00+00:00");
}

TEST(IsoUtc, AgreesWithGmtimeOverTheClocksRange) {
  std::mt19937_64 rng(7);
  // system_clock counts nanoseconds in 64 bits: about 1678 to 2262. Seconds
  // from 1700-01-01 to 2260-12-31, and the days around 1970.
  std::uniform_int_distribution<long long> any(-8520336000LL, 9183110399LL);
  std::vector<long long> samples = {-1, 0, 1, 86399, 86400, -86400, -86401, 68169600, 4107542399LL};
  for (int i = 0; i < 20000; ++i) samples.push_back(any(rng));
  for (long long s : samples) {
    const std::time_t secs = static_cast<std::time_t>(s);
    std::tm tm{};
    ASSERT_NE(::gmtime_r(&secs, &tm), nullptr);
    char want[64];
    std::snprintf(want, sizeof want, "%04d-%02d-%02dT%02d:%02d:%02d+00:00", tm.tm_year + 1900,
                  tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec);
    ASSERT_EQ(iso_utc(system_clock::time_point{seconds(s)}), want) << s;
  }
}

TEST(IsoUtc, IgnoresTheLocalTimeZone) {
  const char* old = std::getenv("TZ");
  std::string saved = old ? old : "";
  setenv("TZ", "America/New_York", 1);
  tzset();
  EXPECT_EQ(iso_utc(system_clock::time_point{seconds(1788465605)}), "2026-09-03T20:00:05+00:00");
  if (old) {
    setenv("TZ", saved.c_str(), 1);
  } else {
    unsetenv("TZ");
  }
  tzset();
}

}  // namespace
}  // namespace devgraph

namespace devgraph {
namespace {

TEST(UtcStamp, NamesTheSameInstantAsIsoUtc) {
  auto t = std::chrono::system_clock::time_point(std::chrono::seconds(1788465600));
  EXPECT_EQ(iso_utc(t), "2026-09-03T20:00:00+00:00");
  EXPECT_EQ(utc_stamp(t), "20260903T200000Z");
}

}  // namespace
}  // namespace devgraph
