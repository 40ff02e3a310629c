// Starting a bundle: its worktree on its branch, its cursor on the bundle
// lane's first node (GRAPH.yaml), and its spec in the run. One function for
// everyone who starts a bundle (the demo, the tests, the orchestrator).
//
// Contract: every step is skipped when it is already done (a worktree that
// is there, a cursor that exists, a spec already written), so a start
// killed halfway is finished by calling it again with the same request,
// and a started bundle is never moved back. Placement is the caller's
// check (bundle/placement.h, guard/): start_bundle writes where it is told.
#pragma once

#include <string>

#include "bundle/layout.h"
#include "git/git.h"
#include "graph/graph.h"
#include "store/run_store.h"
#include "util/expected.h"

namespace devgraph::bundle {

struct StartRequest {
  std::string bundle;
  std::string worktree;  // absolute; `git worktree add -b <branch> <worktree> <base>` when missing
  std::string branch;
  std::string base;
  std::string spec;  // the bundle's specification (markdown), written to <bundle>/spec.md
};

// `repo` is git in the primary clone (only `worktree add` is asked of it).
Expected<BundleLayout> start_bundle(RunStore& store, const Graph& graph, git::Git& repo,
                                    const StartRequest& request);

}  // namespace devgraph::bundle
