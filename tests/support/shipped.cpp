#include "support/shipped.h"

#include <gtest/gtest.h>

#include <cstdlib>

#include "skill/skill.h"
#include "support/test_util.h"

namespace devgraph::test {
namespace {

template <class T>
T must(Expected<T> e, const char* what) {
  if (!e) {
    ADD_FAILURE() << what << ": " << e.error().message;
    std::abort();  // every later line of the test would read a broken asset
  }
  return std::move(e).value();
}

}  // namespace

Graph shipped_graph() {
  return must(Graph::load(source_dir() + "/skill"), "the shipped GRAPH.yaml");
}

Schema shipped_state_schema() {
  return must(Schema::load(state_schema_path(source_dir() + "/skill")), "the state schema");
}

}  // namespace devgraph::test
