#include "bundle/start.h"

#include "lane/lane.h"
#include "lane/routes.h"
#include "util/fs.h"

namespace devgraph::bundle {

Expected<BundleLayout> start_bundle(RunStore& store, const Graph& graph, git::Git& repo,
                                    const StartRequest& req) {
  if (!is_valid_id(req.bundle))
    return fail(ErrorKind::usage, "bundle id " + req.bundle + " is not a valid id");
  BundleLayout layout{store.run_dir(), req.bundle, req.worktree};
  if (!is_directory(req.worktree) || !path_exists(req.worktree + "/.git")) {
    DG_CHECK(make_directories(dirname_of(req.worktree)));
    DG_CHECK(repo.worktree_add(req.worktree, req.branch, req.base));
  }
  auto first = lane::Walker(graph).lane_nodes("bundle");
  if (first.empty()) return fail(ErrorKind::internal, "GRAPH.yaml has no bundle lane");
  DG_TRY(auto state, store.view());
  auto cursors = state->find("bundles_runtime");
  if (cursors == state->end() || !cursors->is_object() || !cursors->contains(req.bundle)) {
    MoveRequest mv;
    mv.bundle = req.bundle;
    mv.node = first.front();
    mv.event = std::string(lane::event::kBundleStarted);
    mv.merge = Json{{"worktree", req.worktree}, {"branch", req.branch}, {"base", req.base}};
    mv.detail = Json::object();
    DG_TRY(auto moved, store.move(mv));
    (void)moved;  // the cursor is in state.json now
  }
  DG_CHECK(make_directories(layout.dir()));
  if (!path_exists(layout.spec())) DG_CHECK(write_file_atomic(layout.spec(), req.spec));
  return layout;
}

}  // namespace devgraph::bundle
