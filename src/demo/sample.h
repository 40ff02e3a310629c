// The demo's sample project and the simulated agents' script for it.
//
// The sample is a tiny Python package ("tally", text statistics) whose test
// command is the standard library's unittest runner, so it runs offline on
// any machine with python3. The bundle adds five modules as five tasks with
// real dependencies (normalize -> counts -> report -> cli, lines -> report)
// and real parallelism (normalize and lines start together). Each task's
// test file imports a module the base code does not have, so the tests
// written first fail on the base code and pass once the module lands.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "util/json.h"

namespace devgraph::demo {

struct SampleFile {
  std::string path;  // relative to the repository root
  std::string content;
};

struct SampleTask {
  std::string id;
  std::string title;
  std::vector<std::string> depends_on;
  SampleFile test;  // written by tdd-writer
  SampleFile impl;  // written by developer
};

// The base repository's files (committed on main).
std::vector<SampleFile> sample_base_files();
// The planned tasks, in plan order.
std::vector<SampleTask> sample_tasks();

inline constexpr const char* kSampleTestCommand = "python3 -m unittest discover -s tests -t .";
inline constexpr const char* kSampleBuildCommand = "python3 -m compileall -q .";

// The bundle's spec text (bundle_dir/spec.md).
std::string sample_spec(const std::string& bundle);

// The sim scenario that plays every persona for `bundle`: the planner
// writes the plan and tasks.json, tdd-writer the tests, developer the
// modules, everyone else approves. `latency_ms` is each persona's time.
Json sample_scenario(const std::string& bundle, long long latency_ms);

}  // namespace devgraph::demo
