// What the end-to-end tests of `devgraph run` share: the repository's test
// runner script, the simulated agent's one-task-per-bundle scenario (one
// scenario for every bundle, through {bundle}), and reading a RESULT_JSON
// line back.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "support/test_util.h"
#include "util/json.h"

namespace devgraph::test {

// run-tests.sh: runs every tests/*.sh, fails when one fails.
extern const char* const kRunTests;

// The files of the repository the run tests use, not yet committed:
// run-tests.sh, tests/base.sh and .devgraph/commands.json naming
// `sh run-tests.sh` as its test and build commands.
void write_widgets_files(const std::string& repo);

// A sim rule's file and a DONE result (with `artifacts` when given).
Json file(const std::string& path, const std::string& content);
Json done(const std::string& summary, Json artifacts = Json());
// A test writer's DONE naming its check (the commands devgraph runs to see
// the new test fail, then pass).
Json red(const std::string& summary, const std::string& check);

struct OneTaskScenario {
  long long latency_ms = 20;       // every persona's time
  std::optional<double> cost_usd;  // every persona call reports it
  Json first_planner;              // a planner rule played before the normal one
  std::vector<std::string> hang;   // bundles whose developer hangs on its first launch
};

// One task per bundle: src/<bundle>.txt must hold the bundle's id, and
// tests/<bundle>.sh says so; everyone but the planner, the tdd-writer and
// the developer approves.
Json one_task_scenario(const OneTaskScenario& options = {});

// one_task_scenario() where two bundles wait for a person until a
// dispatch holds XYZZY: b1's planner asks for context (its branch gets no
// commit), b2's developer is blocked (its task waits, its test committed).
Json two_waiting_scenario(const OneTaskScenario& options = {});

// The non-empty lines of `text`.
std::vector<std::string> lines_of(const std::string& text);

// The last RESULT_JSON object on stdout; {} (and a test failure) when
// there is none or it does not parse.
Json result_of(const ProcessResult& r);

}  // namespace devgraph::test
