// `devgraph demo`: builds the sample repository, starts a run, creates the
// bundle worktree at its canonical place, and drives one bundle to
// BRANCH_READY with the simulated agent (or a real agent CLI), offline.
//
// Everything goes under $AI_ROOT when it is set, else under a fresh
// temporary directory; either way the directory is printed, and AI_ROOT is
// set for everything the demo starts so the placement rules agree.
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
  std::vector<std::string> agent_command;  // --agent command's argv template
  std::optional<std::string> model;
  std::optional<std::string> skill;
  std::optional<std::string> ai_root;  // overrides $AI_ROOT
  long long latency_ms = 300;          // each simulated persona's time
  int max_parallel = 3;
  // Draw the live view (bundle/view.h) of this size on the output while
  // the bundle runs; nullopt: plain progress lines.
  std::optional<bundle::FrameSize> live;
  // Where the live view reads the terminal's size again (a resized
  // terminal); empty: the size above stays.
  std::function<bundle::FrameSize()> live_measure;
};

struct DemoReport {
  int exit_code = 0;
  std::string ai_root;
  std::string repo;
  std::string worktree;
  std::string run_dir;
  std::string branch;
};

// Runs the demo, printing progress to `out`. Fails for set-up problems
// (no git, no python3, an unwritable root).
Expected<DemoReport> run_demo(const DemoOptions& options, std::ostream& out);

}  // namespace devgraph::demo
