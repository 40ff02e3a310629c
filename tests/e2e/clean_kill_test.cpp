// `devgraph clean` killed with SIGKILL at random instants, then run again
// until it finishes: the repository ends exactly as an undisturbed clean
// leaves it, nothing is lost, and no throwaway branch or worktree is left.
//
// Each round is a fresh repository (a bare origin that a clone reaches
// through `url.<bare>.insteadOf` as https://github.com/acme/widgets.git, and
// a fake gh on PATH with no pull request) holding a merged branch, two
// branches to integrate, one checked out at its canonical worktree and one
// that conflicts with main. A kill lands when the run's event log reaches a
// random number of lines, or as soon as an integration's throwaway worktree
// appears (inside `git worktree add`, a rebase or a merge); one or two
// kills per round. Fixed seeds, so a failing round can be replayed.
#include <signal.h>
#include <sys/wait.h>

#include <gtest/gtest.h>

#include <random>
#include <set>

#include "support/kill_harness.h"
#include "support/run_scenario.h"
#include "support/test_util.h"
#include "util/fs.h"
#include "util/json.h"

namespace devgraph {
namespace {

using test::Background;
using test::Waited;
using test::Watch;

constexpr const char* kOrigin = "https://github.com/acme/widgets.git";
constexpr auto kLimit = std::chrono::seconds(60);  // a failure condition, never a wait

struct Round {
  test::Scratch s;
  std::string bare = s / "origin.git";
  std::string repo = s / "widgets";
  std::string ai = s / "ai";
  std::string bin = s / "bin";
  std::string gh = s / "gh";
  std::string worktrees = ai + "/worktrees/acme/widgets";
  std::map<std::string, std::string> env;

  Round() {
    env = test::quiet_git_env();
    env["AI_ROOT"] = ai;
    env["FAKE_GH_DIR"] = gh;
    env["PATH"] = bin + ":" + (std::getenv("PATH") ? std::getenv("PATH") : "/usr/bin:/bin");
    env["NO_COLOR"] = "1";
  }

  std::string git(const std::vector<std::string>& args, const std::string& dir = "") {
    std::vector<std::string> argv = {"git"};
    argv.insert(argv.end(), args.begin(), args.end());
    auto r = test::run_process(argv, env, dir.empty() ? repo : dir);
    EXPECT_EQ(r.exit_code, 0) << "git " << args[0] << ": " << r.err;
    std::string o = r.out;
    while (!o.empty() && o.back() == '\n') o.pop_back();
    return o;
  }

  void commit(const std::string& file, const std::string& text, const std::string& subject,
              const std::string& dir = "") {
    test::write_text((dir.empty() ? repo : dir) + "/" + file, text);
    git({"add", "--", file}, dir);
    git({"commit", "-q", "-m", subject}, dir);
  }

  void build() {
    ASSERT_TRUE(make_directories(bin));
    ASSERT_TRUE(make_directories(gh));
    ASSERT_EQ(
        ::symlink((test::test_dir() + "/fixtures/bundle/fake-gh").c_str(), (bin + "/gh").c_str()),
        0);
    ASSERT_TRUE(make_directories(repo));
    git({"init", "-q", "--bare", "-b", "main", bare}, s.path());
    git({"init", "-q", "-b", "main"});
    git({"remote", "add", "origin", kOrigin});
    git({"config", "url." + bare + ".insteadOf", kOrigin});
    commit("a.txt", "a\n", "base");
    git({"push", "-q", "-u", "origin", "main"});
    git({"branch", "old/merged"});
    for (const char* b : {"x", "y", "z"}) {
      git({"checkout", "-q", "-b", std::string("feature/") + b, "main"});
      commit(std::string(b) + ".txt", std::string(b) + "\n", std::string("add ") + b);
    }
    git({"checkout", "-q", "-b", "feature/conflict", "main"});
    commit("a.txt", "theirs\n", "change a their way");
    git({"checkout", "-q", "main"});
    commit("a.txt", "ours\n", "change a our way");
    git({"push", "-q", "origin", "main"});
    ASSERT_TRUE(make_directories(worktrees));
    git({"worktree", "add", "-q", worktrees + "/feature-z", "feature/z"});
  }

  // Every commit any ref of the clone or the origin reaches.
  std::set<std::string> reachable() {
    std::set<std::string> out;
    for (const auto& dir : {repo, bare})
      for (const auto& c : test::lines_of(git({"rev-list", "--all"}, dir) + "\n"))
        if (!c.empty()) out.insert(c);
    return out;
  }

  std::string runs() const { return ai + "/develop/acme/widgets/runs"; }
  // The newest run directory, "" before the first.
  std::string newest_run() const {
    auto names = test::names_in(runs());
    return names.empty() ? "" : runs() + "/" + names.back();
  }
};

struct Shard {
  const char* strategy;
  unsigned seed;
  int rounds;
};

class CleanKill : public ::testing::TestWithParam<Shard> {};

TEST_P(CleanKill, KilledAtRandomInstantsThenRunAgainItFinishesTheJobAndLosesNothing) {
  const Shard shard = GetParam();
  const std::string strategy = shard.strategy;
  const bool integrates = strategy != "none";
  const int rounds = test::kUnderSanitizers ? 2 : shard.rounds;
  test::adopt_orphans();
  std::mt19937 rng(shard.seed);
  // An undisturbed run writes 16 event lines (6 with strategy none): a
  // kill at one of the first 15 (5) lands before it ends.
  std::uniform_int_distribution<size_t> line(1, integrates ? 15 : 5);
  std::bernoulli_distribution twice(0.5), at_throwaway(0.4);
  const std::vector<std::string> args = {"clean", "--strategy", strategy, "--no-live"};
  int kills = 0;
  for (int round = 1; round <= rounds; ++round) {
    Round r;
    r.build();
    if (HasFatalFailure()) return;
    const std::string conflict_tip = r.git({"rev-parse", "feature/conflict"});
    const std::string main_before = r.git({"rev-parse", "origin/main"});
    std::map<std::string, std::string> tips;
    for (const char* b : {"feature/x", "feature/y", "feature/z"}) tips[b] = r.git({"rev-parse", b});
    const auto before = r.reachable();

    int planned = twice(rng) ? 2 : 1;
    std::string what = strategy + " seed " + std::to_string(shard.seed) + " round " +
                       std::to_string(round) + ": kills at";
    const std::string log = r.s / "clean.log";
    for (int k = 0; k < planned; ++k) {
      bool throwaway = k == 0 && integrates && at_throwaway(rng);
      size_t target = line(rng);
      what += throwaway ? " throwaway" : " line " + std::to_string(target);
      Watch watch;
      ASSERT_TRUE(watch.ok());
      Background bg;
      test::start_background(bg, args, r.env, r.repo, log);
      if (HasFatalFailure()) return;
      auto dirs = [&] {
        std::vector<std::string> d = {
            r.ai,     r.ai + "/develop", r.ai + "/develop/acme", r.ai + "/develop/acme/widgets",
            r.runs(), r.worktrees};
        if (auto n = r.newest_run(); !n.empty()) d.push_back(n);
        return d;
      };
      auto reached = [&] {
        if (throwaway) {
          for (const auto& n : test::names_in(r.worktrees))
            if (n.rfind("clean-integrated-", 0) == 0) return true;
          return false;
        }
        auto n = r.newest_run();
        return !n.empty() && test::event_lines(n) >= target;
      };
      auto why = test::wait_until(watch, bg.pidfd, dirs, reached,
                                  std::chrono::steady_clock::now() + kLimit);
      if (why != Waited::kExited) ::kill(bg.pid, SIGKILL);
      int st = bg.wait();
      test::reap_exited();
      ASSERT_NE(why, Waited::kTimedOut) << what << "\n" << test::slurp(log);
      if (WIFEXITED(st)) {  // it finished before the kill
        ASSERT_EQ(WEXITSTATUS(st), 0) << what << "\n" << test::slurp(log);
        break;
      }
      ASSERT_TRUE(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL) << what;
      ++kills;
    }
    SCOPED_TRACE(what);
    // Run again until it finishes.
    auto last = test::run_devgraph(args, r.env, r.repo);
    ASSERT_EQ(last.exit_code, 0) << what << "\n" << last.out << last.err << test::slurp(log);
    Json res = test::result_of(last);
    EXPECT_EQ(res["status"], "COMPLETE") << last.out;

    // The repository as an undisturbed clean leaves it.
    std::string branches = r.git({"for-each-ref", "--format=%(refname:short)", "refs/heads/"});
    std::string want = integrates ? "feature/conflict\nmain"
                                  : "feature/conflict\nfeature/x\nfeature/y\nfeature/z\nmain";
    EXPECT_EQ(branches, want) << what;
    EXPECT_EQ(r.git({"rev-parse", "feature/conflict"}), conflict_tip);
    std::string trees = r.git({"worktree", "list", "--porcelain"});
    EXPECT_EQ(trees.find("clean-integrated-"), std::string::npos) << trees;
    EXPECT_EQ(trees.find("feature-z") != std::string::npos, !integrates) << trees;
    for (const auto& n : test::names_in(r.worktrees))
      EXPECT_NE(n.rfind("clean-integrated-", 0), 0u) << n << " left in " << r.worktrees;
    std::string files = r.git({"ls-tree", "--name-only", "origin/main"});
    if (integrates) {
      EXPECT_EQ(files, "a.txt\nx.txt\ny.txt\nz.txt") << what;
      EXPECT_EQ(r.git({"show", "origin/main:a.txt"}), "ours");
    } else {
      EXPECT_EQ(r.git({"rev-parse", "origin/main"}), main_before);
    }
    // Nothing lost: a commit no ref reaches any more is one of a branch the
    // report says was integrated by a strategy that rewrites (rebase,
    // squash), recorded at that tip, its content verified on origin/main.
    const auto after = r.reachable();
    std::set<std::string> rewritten;
    // A run killed inside its first transaction has a directory and no
    // state.json yet: it holds nothing.
    std::vector<std::string> made;
    for (const auto& dir : test::names_in(r.runs()))
      if (path_exists(r.runs() + "/" + dir + "/state.json")) made.push_back(dir);
    for (const auto& dir : made) {
      Json st = *parse_json(test::slurp(r.runs() + "/" + dir + "/state.json"), "state");
      for (const auto& b : st["clean"]["branches"])
        if (json_str(b, "outcome") == "verified" && json_str(b, "strategy") != "merge" &&
            tips[json_str(b, "branch")] == json_str(b, "before"))
          rewritten.insert(json_str(b, "before"));
    }
    for (const auto& c : before)
      if (!after.count(c)) {
        EXPECT_TRUE(rewritten.count(c)) << what << ": lost " << c;
      }
    for (const auto& dir : made) {
      auto v = test::run_devgraph({"validate", "run", r.runs() + "/" + dir}, r.env, r.repo);
      EXPECT_EQ(v.exit_code, 0) << dir << ": " << v.out << v.err;
    }
    test::expect_no_process_left(r.newest_run(), what);
    if (HasFailure()) {
      std::cout << "failed: " << what << "\n" << test::slurp(log) << last.out << last.err;
      return;
    }
  }
  EXPECT_GE(kills, rounds);
  RecordProperty("clean_kills", kills);
  std::cout << strategy << " seed " << shard.seed << ": " << rounds << " rounds, " << kills
            << " kills\n";
}

std::string shard_name(const ::testing::TestParamInfo<Shard>& info) {
  return std::string(info.param.strategy) + std::to_string(info.param.seed);
}

// 32 rounds over every strategy, four shards side by side under ctest -j.
INSTANTIATE_TEST_SUITE_P(Rounds, CleanKill,
                         ::testing::Values(Shard{"rebase", 1, 8}, Shard{"merge", 2, 8},
                                           Shard{"squash", 3, 8}, Shard{"none", 4, 8}),
                         shard_name);

// A run killed after it recorded an integration and before it pushed it:
// the next run lands that integration first, so the ones after it are cut
// from a default branch that holds it, and every branch reaches origin.
class CleanKillBeforeThePush : public ::testing::TestWithParam<const char*> {};

TEST_P(CleanKillBeforeThePush, TheNextRunLandsTheRecordedIntegrationBeforeCuttingTheNext) {
  const std::string strategy = GetParam();
  test::adopt_orphans();
  Round r;
  r.build();
  if (HasFatalFailure()) return;
  const std::vector<std::string> args = {"clean", "--strategy", strategy, "--no-live"};
  auto crash_env = r.env;
  crash_env["DEVGRAPH_BUNDLE_CRASH_AT"] = "integrated:feature/x";
  auto killed = test::run_devgraph(args, crash_env, r.repo);
  ASSERT_EQ(killed.signal, SIGKILL) << killed.out << killed.err;
  EXPECT_EQ(r.git({"ls-tree", "--name-only", "origin/main"}), "a.txt");

  auto last = test::run_devgraph(args, r.env, r.repo);
  ASSERT_EQ(last.exit_code, 0) << last.out << last.err;
  EXPECT_EQ(test::result_of(last)["status"], "COMPLETE") << last.out;
  EXPECT_EQ(r.git({"ls-tree", "--name-only", "origin/main"}), "a.txt\nx.txt\ny.txt\nz.txt");
  EXPECT_EQ(r.git({"for-each-ref", "--format=%(refname:short)", "refs/heads/"}),
            "feature/conflict\nmain");
  EXPECT_EQ(last.out.find("rejected"), std::string::npos) << last.out;
  test::expect_no_process_left(r.newest_run(), strategy);
}

INSTANTIATE_TEST_SUITE_P(Strategies, CleanKillBeforeThePush,
                         ::testing::Values("rebase", "merge", "squash"));

}  // namespace
}  // namespace devgraph
