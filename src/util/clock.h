// Time as devgraph sees it. Code that stamps records or waits takes a Clock
// so tests run against a fake one and never sleep.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

namespace devgraph {

class Clock {
 public:
  virtual ~Clock() = default;
  // Wall-clock time, for timestamps written to files.
  virtual std::chrono::system_clock::time_point wall() const = 0;
  // Monotonic time, for timeouts and durations.
  virtual std::chrono::steady_clock::time_point steady() const = 0;
};

class SystemClock final : public Clock {
 public:
  // A system call, not the vDSO: see clock.cpp.
  std::chrono::system_clock::time_point wall() const override;
  std::chrono::steady_clock::time_point steady() const override {
    return std::chrono::steady_clock::now();
  }
};

// The process-wide real clock.
const Clock& system_clock();

// "2026-09-03T20:00:00+00:00": UTC, whole seconds, the reference's format.
std::string iso_utc(std::chrono::system_clock::time_point t);

// "20260903T200000Z": the same instant as a name (run directories).
std::string utc_stamp(std::chrono::system_clock::time_point t);

}  // namespace devgraph
