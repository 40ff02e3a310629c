// What every part of one bundle's driver shares: where the bundle lives,
// the graph walker, the journal, persona dispatch, git and the command
// runner. The parts (task lane, gates, delivery) are functions of a
// BundleRun; the driver builds one and wires them together.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "bundle/crash_points.h"
#include "bundle/dispatch.h"
#include "bundle/journal.h"
#include "bundle/layout.h"
#include "gh/gh.h"
#include "git/git.h"
#include "lane/lane.h"
#include "proc/command.h"
#include "templates/render.h"
#include "util/expected.h"
#include "util/json.h"
#include "util/text.h"

namespace devgraph::bundle {

// What the driver read from state.json before doing anything.
struct BundleContext {
  std::string worktree;
  std::string branch;
  std::string base;
  std::string delivery;  // "github" | "local"
  std::string default_branch;
  std::string merge_policy;
  Json commands;
  std::string bundle_dir;  // <run>/bundles/<bundle>
};

struct BundleRun {
  const BundleContext& ctx;
  const BundleLayout& layout;
  const lane::Walker& walker;
  Journal& journal;
  PersonaDispatch& dispatch;
  git::Git& git;
  gh::Gh& gh;
  CommandRunner& runner;
  CrashPoints& crash;
  std::string skill_dir;
  std::string bundle_base;  // the commit the branch started from (trailer lookups)
  // DONE_WITH_CONCERNS notes that did not warrant a repair: they go into
  // the tech-lead result.
  std::vector<std::string> concerns;

  const std::string& bundle() const { return layout.bundle; }
  // A recorded command ("test", "build"), "" when none.
  std::string command(const char* key) const;
  Expected<std::string> render(std::string_view name, const templates::Values& values) const;
  // The commit that already carries trailer `key: value` on this branch.
  std::optional<std::string> committed_with(const std::string& key, const std::string& value);
};

// Trailers that make each commit of a bundle findable after a crash.
inline constexpr const char* kTaskTrailer = "Devgraph-Task";
inline constexpr const char* kBundleTrailer = "Devgraph-Bundle-Step";

}  // namespace devgraph::bundle
