// The demo's sample project, its issues, and the simulated agents' script
// for them.
//
// The sample is a tiny Python package ("tally", text statistics) whose test
// command is the standard library's unittest runner, so it runs offline on
// any machine with python3; project/commands.h detects kSampleTestCommand
// and kSampleBuildCommand from its files exactly. Its issues are one epic
// ("A text report for tally") with two children that share a bundle
// (normalize words, then count them: the second task depends on the first)
// and two standalone issues (line statistics, character classes), so a run
// forms three bundles, each independent of the others: every branch starts
// from main and touches files no other bundle touches.
//
// Contract:
// - Each issue's tasks add one module and its test file. Each test file
//   imports a module the base code does not have, so the tests written
//   first fail on main and pass once the module lands.
// - sample_plan() numbers the tasks of the issues it is given T1, T2, ...
//   in that order; a task that depends on a task of an issue not given is
//   an error (ErrorKind::usage) naming both.
// - sample_scenario() plays the planner, tdd-writer and developer of every
//   bundle it is given with rules for that bundle only ("bundle"); every
//   other persona approves (the scenario's default).
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "util/expected.h"
#include "util/json.h"

namespace devgraph::demo {

struct SampleFile {
  std::string path;  // relative to the repository root
  std::string content;
};

struct SampleTask {
  std::string key;  // unique in the sample: "normalize"
  std::string id;   // in its bundle's plan ("T1"); set by sample_plan()
  std::string title;
  std::vector<std::string> after;       // keys of the tasks it depends on
  std::vector<std::string> depends_on;  // their ids; set by sample_plan()
  SampleFile test;                      // written by tdd-writer
  SampleFile impl;                      // written by developer
};

struct SampleIssue {
  std::string key;  // "epic", "normalize", ...
  std::string title;
  std::string body;  // the demo ends a child's body with "Part of #<parent>"
  std::vector<std::string> labels;
  std::string parent;             // key of the parent issue; "" for none
  bool epic = false;              // filed with the graph's epic label
  std::vector<SampleTask> tasks;  // empty for the epic
};

// The base repository's files (committed on main).
std::vector<SampleFile> sample_base_files();
// The issues, in the order they are filed: a parent before its children.
std::vector<SampleIssue> sample_issues();
// The issue with this title, or nullptr.
const SampleIssue* sample_issue(const std::vector<SampleIssue>& issues, const std::string& title);

inline constexpr const char* kSampleTestCommand = "python3 -m unittest discover -s tests -t .";
inline constexpr const char* kSampleBuildCommand = "python3 -m compileall -q .";

// The tasks of one bundle delivering the issues titled `titles`, in order.
Expected<std::vector<SampleTask>> sample_plan(const std::vector<std::string>& titles);

struct SampleBundle {
  std::string id;  // "b1"
  std::vector<SampleTask> tasks;
};

// One scenario for every bundle of the run: per bundle, the planner writes
// the plan and tasks.json, tdd-writer each task's test, developer each
// module. `latency_ms` is each persona's time.
Json sample_scenario(const std::vector<SampleBundle>& bundles, long long latency_ms);

}  // namespace devgraph::demo
