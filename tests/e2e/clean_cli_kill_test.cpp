// `devgraph clean` stopped part way and run again: by SIGTERM (it hands the
// run off and exits 143) and by SIGKILL of its whole process group at each
// of its first events; the next `devgraph clean` continues the same run
// and ends where an unbroken run ends (tests/support/clean_repo.h),
// nothing lost, nothing done twice.
#include <signal.h>
#include <sys/wait.h>

#include <gtest/gtest.h>

#include <string>

#include "support/clean_repo.h"
#include "support/run_scenario.h"
#include "support/test_util.h"
#include "util/fs.h"
#include "util/json.h"

namespace devgraph {
namespace {

using CleanCli = test::CleanRepo;
using test::result_of;
using test::Snapshot;

TEST_F(CleanCli, StoppedBySigtermItExits143AndTheNextCleanContinuesThatRun) {
  init_github();
  make_branch_set();
  Snapshot before = snapshot();
  std::string dir;
  bool sent = false;
  int st = stop_at(3, SIGTERM, {"--no-live"}, dir, sent);
  ASSERT_TRUE(sent) << "the run finished before its third event: "
                    << test::slurp(scratch / "clean.log");
  ASSERT_TRUE(WIFEXITED(st)) << st;
  EXPECT_EQ(WEXITSTATUS(st), 128 + SIGTERM) << test::slurp(scratch / "clean.log");
  std::string state = test::slurp(dir + "/state.json");

  // A plain `devgraph run` never resumes the clean run.
  std::string scenario = scratch / "scenario.json";
  test::write_text(scenario, dump_py(test::one_task_scenario(), 2));
  auto ordinary = test::run_devgraph(
      {"run", "--agent", "sim", "--sim-scenario", scenario, "--api-backoff-seconds", "0"}, env(),
      repo);
  EXPECT_EQ(test::slurp(dir + "/state.json"), state) << ordinary.out << ordinary.err;

  auto r = clean();
  Json res = finished(r);
  EXPECT_EQ(json_str(res, "run_dir"), dir) << r.out << r.err;
  expect_rebase_end(res, before);
}

class CleanCliKill : public CleanCli, public ::testing::WithParamInterface<size_t> {};

// SIGKILLed (its whole process group) once its event log holds N lines,
// then run again: the next `devgraph clean` continues the same run and
// ends where an unbroken run ends, the clean branch landed once, nothing
// lost.
TEST_P(CleanCliKill, KilledAtAnEventTheNextCleanFinishesItDoingNothingTwice) {
  init_github();
  make_branch_set();
  Snapshot before = snapshot();
  std::string dir;
  bool sent = false;
  int st = stop_at(GetParam(), SIGKILL, {"--no-live"}, dir, sent);
  Json res;
  if (!sent || WIFEXITED(st)) {
    // It ended before the signal reached it: its own result is the end.
    EXPECT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0) << test::slurp(scratch / "clean.log");
    test::ProcessResult own;
    own.out = test::slurp(scratch / "clean.log");
    res = result_of(own);
  } else {
    EXPECT_TRUE(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL) << st;
    auto ended = read_file(dir + "/state.json");
    auto killed_state = ended ? parse_json(*ended, "state") : Expected<Json>(fail("no state"));
    if (killed_state && json_str(*killed_state, "status") == "complete") {
      // Killed after its last transaction, while it wrote its traces: the
      // run had ended, so its state is the end, and the next clean is a
      // new run with nothing left to integrate.
      const Json& c = (*killed_state)["clean"];
      Json branches = Json::array();
      for (Json b : c["branches"]) {
        b.erase("canonical");
        branches.push_back(std::move(b));
      }
      res = Json{{"status", "COMPLETE"}, {"run_dir", dir}, {"strategy", c["strategy"]},
                 {"branches", branches}};
      expect_rebase_end(res, before);
      auto again = finished(clean());
      EXPECT_NE(json_str(again, "run_dir"), dir);
      return;
    }
    auto r = clean();
    res = finished(r);
    // A kill inside the first transaction (its event appended, state.json
    // not yet in place) leaves no run to continue: the next is a new one.
    if (path_exists(dir + "/state.json")) {
      EXPECT_EQ(json_str(res, "run_dir"), dir) << r.out << r.err;
    }
  }
  expect_rebase_end(res, before);
}

INSTANTIATE_TEST_SUITE_P(, CleanCliKill, ::testing::Values(1, 2, 3, 4, 5, 6, 7, 8, 9, 10));

}  // namespace
}  // namespace devgraph
