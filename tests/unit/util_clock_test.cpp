#include "util/clock.h"

#include <gtest/gtest.h>

#include <cstdlib>

namespace devgraph {
namespace {

using std::chrono::seconds;
using std::chrono::system_clock;

TEST(IsoUtc, WritesTheStampTheReferenceWrites) {
  EXPECT_EQ(iso_utc(system_clock::time_point{}), "1970-01-01T00:00:00+00:00");
  // 2026-09-03T20:00:05Z, with a fraction that is dropped.
  auto t = system_clock::time_point{seconds(1788465605)} + std::chrono::milliseconds(999);
  EXPECT_EQ(iso_utc(t), "2026-09-03T20:00:05+00:00");
  EXPECT_EQ(iso_utc(system_clock::time_point{seconds(951782400)}), "2000-02-29T00:00:00+00:00");
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
