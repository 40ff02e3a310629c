#include "support/develop_home_bundle.h"

#include <gtest/gtest.h>

#include "guard/guard.h"
#include "support/run_scenario.h"
#include "util/fs.h"

namespace devgraph::test {

void DevelopHomeBundle::sh(const std::string& cwd, const std::vector<std::string>& argv) {
  auto r = run_process(argv, {}, cwd);
  ASSERT_EQ(r.exit_code, 0) << argv[0] << " " << argv[1] << ": " << r.err;
}

void DevelopHomeBundle::checkpoint(std::vector<std::string> args) const {
  args.insert(args.begin(), {"checkpoint", run_dir});
  auto r = run_devgraph(args, env);
  ASSERT_EQ(r.exit_code, 0) << r.err;
}

void DevelopHomeBundle::set_up(const Scratch& s, const std::string& title,
                               const std::string& spec) {
  repo = s / "repo";
  worktree = s / "wt/b1";
  ASSERT_TRUE(make_directories(repo).ok());
  sh(repo, {"git", "init", "-q", "-b", "main"});
  sh(repo, {"git", "config", "user.name", "Test"});
  sh(repo, {"git", "config", "user.email", "test@example.invalid"});
  write_text(repo + "/run-tests.sh", kRunTests);
  sh(repo, {"git", "add", "--", "run-tests.sh"});
  sh(repo, {"git", "commit", "-q", "-m", "base"});
  sh(repo, {"git", "worktree", "add", "-q", "-b", "develop/b1", worktree, "main"});
  env = {{"AI_ROOT", s / "ai"}, {"DEVELOP_HOME_ROOT", s / "develop"}};
  guard::Roots roots = guard::Roots::from_env();
  roots.develop_home = s / "develop";
  auto placement = guard::resolve_placement(repo, std::nullopt, roots);
  ASSERT_TRUE(placement.ok()) << placement.error().message;
  develop_home = placement->develop_home;
  run_dir = develop_home + "/runs/r1";
  bundle_dir = run_dir + "/bundles/b1";
  Json init = {
      {"delivery", "local"},
      {"merge_policy", "never"},
      {"commands", {{"test", "sh run-tests.sh"}, {"build", "sh -n run-tests.sh"}}},
      {"bundles",
       Json::array(
           {{{"id", "b1"}, {"title", title}, {"issues", Json::array()}, {"status", "running"}}})}};
  checkpoint({"init", "--repo", repo, "--default-branch", "main", "--merge", dump_py(init)});
  Json cursor = {{"worktree", worktree}, {"branch", "develop/b1"}, {"base", "main"}};
  checkpoint({"move", "--bundle", "b1", "--node", "plan_bundle", "--event", "BUNDLE_STARTED",
              "--merge", dump_py(cursor)});
  ASSERT_TRUE(make_directories(bundle_dir).ok());
  write_text(bundle_dir + "/spec.md", spec);
}

Json DevelopHomeBundle::state() const {
  return Json::parse(slurp(run_dir + "/state.json"));
}

std::vector<Json> DevelopHomeBundle::events() const {
  return read_jsonl(run_dir + "/events.jsonl");
}

}  // namespace devgraph::test
