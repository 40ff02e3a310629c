// create_pr, the bundle lane's last node: the branch is pushed and a pull
// request opened (github delivery), or the branch is recorded as ready
// (local delivery); the move onto create_pr completes the bundle.
//
// Contract: each effect happens once however often the driver is killed
// and resumed. The push is skipped when the remote branch already points
// at HEAD; a pull request is looked up (`gh pr view`) before `gh pr
// create`; auto-merge (merge policy auto_when_checks_pass) is asked for
// only when the pull request does not have it yet. A NOTE with the intent
// is recorded before each effect. gh runs as argv with `--json`, never
// through a shell, never `--jq` or `gh api`.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "bundle/bundle_run.h"
#include "util/expected.h"
#include "util/json.h"

namespace devgraph::bundle {

struct PrText {
  std::string bundle;
  std::string title;
  std::vector<std::pair<std::string, std::string>> tasks;  // (id, title) in plan order
  std::string test_command;
  std::string build_command;
  std::vector<std::string> issues;  // issue numbers, without '#'
  // Strays kept out of the branch (bundle/quarantine.h), by path.
  std::vector<std::string> quarantined;
};

// The pull request's body: what was delivered, how it was verified, what
// was kept out of it (each stray's path in code quotes, control characters
// and backticks replaced), and one closing keyword per bundled issue. Pure.
std::string pr_body(const PrText& text);
// The bundle's issue numbers and title from state.json's `bundles` list.
std::vector<std::string> bundle_issues(const Json& state, const std::string& bundle);
std::string bundle_title(const Json& state, const std::string& bundle);

// Delivers HEAD; returns the pull request ({number, url, auto_merge}) or
// null for local delivery. `cost` and `runs` ride on the final move.
Expected<Json> deliver(BundleRun& run, const PrText& text, const std::string& head, double cost,
                       int runs);

}  // namespace devgraph::bundle
