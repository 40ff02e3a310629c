// `devgraph demo`: the whole loop on a sample repository, offline. It
// builds the sample repository (demo/sample.h) committed on main, files its
// issues as local issues (one epic with two children, two standalone
// issues), writes one simulated-agent scenario for the whole run, and runs
// the orchestrator (orchestrator/run_setup.h, as `devgraph run` does) with
// at most three bundles in flight: three bundles, each to a ready branch.
// Then it prints what there is to look at: every bundle's branch, commits
// and worktree, whether its tests pass there and fail on main, the issues
// with the branches that deliver them, the run directory, and how to run
// again. On a terminal the run is drawn as `devgraph run` draws it (one
// line per bundle, redrawn in place); elsewhere it prints plain lines.
//
// Contract:
// - Everything goes under $AI_ROOT when it is set (or `ai_root`), else
//   under a fresh temporary directory; either way the directory is
//   printed, and AI_ROOT is set for everything the demo starts so the
//   placement rules agree. The root, the sample repository and the
//   repository's develop home are put to the placement guard before
//   anything is written there.
// - The bundles the scenario plays are the ones the orchestrator forms from
//   the filed issues (orchestrator/bundling.h, GRAPH.yaml's intake and
//   bundling rules); a skill whose rules would split a task from the task
//   it depends on is an error before the run starts.
// - Set-up problems (no git, no python3, an unwritable root, a refusal of
//   the placement guard) are errors; the run's own outcome is exit_code
//   (the orchestrator's: 0 complete, 2 a person is needed, 128+N stopped).
#pragma once

#include <functional>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "bundle/view.h"
#include "util/expected.h"

namespace devgraph::demo {

struct DemoOptions {
  std::string agent = "sim";
  std::string agent_bin;
  std::optional<std::string> agent_command;  // --agent command's argv template, as typed
  std::optional<std::string> model;
  std::optional<std::string> skill;
  std::optional<std::string> ai_root;  // overrides $AI_ROOT
  long long latency_ms = 300;          // each simulated persona's time
  int max_bundles = 3;
  int max_parallel = 3;  // tasks in flight at once per bundle
  // Draw the run's live view (orchestrator/run_view.h) of this size on the
  // output while the bundles run; nullopt: plain progress lines.
  std::optional<bundle::FrameSize> live;
  // Where the live view reads the terminal's size again (a resized
  // terminal); empty: the size above stays.
  std::function<bundle::FrameSize()> live_measure;
};

struct DemoBundle {
  std::string id;
  std::string title;
  std::string status;  // the orchestrator's: "delivered", "parked", ...
  std::string branch;
  std::string worktree;
  std::string head;
  std::vector<long long> issues;
  bool tests_pass = false;  // the sample's test command in the worktree
};

struct DemoReport {
  int exit_code = 0;
  std::string ai_root;
  std::string repo;
  std::string develop_home;
  std::string run_dir;
  std::string scenario;  // the simulated agent's script ("" for another agent)
  std::vector<DemoBundle> bundles;
  int peak_in_flight = 0;  // bundles started and not yet finished, at most
  double seconds = 0;      // wall clock, from the first write to the last check
};

// Runs the demo, printing progress to `out`.
Expected<DemoReport> run_demo(const DemoOptions& options, std::ostream& out);

}  // namespace devgraph::demo
