// The skill's shipped assets, loaded for tests that run against the real
// graph and contracts; a failure to load them fails the test at once.
#pragma once

#include <string>
#include <vector>

#include "bundle/crash_points.h"
#include "contracts/schema.h"
#include "graph/graph.h"

namespace devgraph::test {

Graph shipped_graph();
Schema shipped_state_schema();

// Crash points that only record the names reached ("commit:b1/T2").
class RecordingCrashPoints final : public bundle::CrashPoints {
 public:
  void reach(std::string_view label, std::string_view subject) override {
    names.push_back(std::string(label) + ":" + std::string(subject));
  }
  std::vector<std::string> names;
};

}  // namespace devgraph::test
