// One bundle "b1" ready for `devgraph run-bundle`, in a run under the
// repository's develop home (so `devgraph inbox` and `devgraph answer` find
// it): a real repository whose main holds run-tests.sh (which runs every
// tests/*.sh), the worktree on develop/b1, the run initialised and the
// bundle cursor at plan_bundle through the checkpoint verb, as
// `devgraph run` leaves them, and the bundle's spec.
//
// Contract: set_up() does all of it in the scratch directory it is given,
// with AI_ROOT and DEVELOP_HOME_ROOT inside it (env() carries them for
// every devgraph process of the test); each step that fails fails the test.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "support/test_util.h"
#include "util/json.h"

namespace devgraph::test {

struct DevelopHomeBundle {
  std::string repo, worktree, develop_home, run_dir, bundle_dir;
  std::map<std::string, std::string> env;

  void set_up(const Scratch& s, const std::string& title, const std::string& spec);
  static void sh(const std::string& cwd, const std::vector<std::string>& argv);
  void checkpoint(std::vector<std::string> args) const;
  Json state() const;
  std::vector<Json> events() const;
};

}  // namespace devgraph::test
