// `devgraph clean` on a terminal: with stdin and stderr on a
// pseudo-terminal (stdout a pipe, as when its output is kept) and neither
// --yes nor --dry-run, it prints its plan, then "Go ahead? [y/N] ", and
// reads one line. y, Y or yes goes ahead; any other answer, and the end of
// input, stops with nothing changed: no ref or worktree moves and no run
// directory is made, exit 0 with RESULT_JSON status DECLINED listing the
// plan's branches. The test reads the terminal until the question is
// there before it answers; its deadline is only a failure condition.
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <map>
#include <string>
#include <vector>

#include "support/build_paths.h"
#include "support/clean_repo.h"
#include "support/run_scenario.h"
#include "support/test_util.h"
#include "util/fs.h"
#include "util/json.h"

extern char** environ;

namespace devgraph {
namespace {

using test::contains;
using test::result_of;
using test::Snapshot;

constexpr const char* kQuestion = "Go ahead? [y/N] ";
constexpr auto kLimit = std::chrono::seconds(120);  // a failure condition, never a wait

// One `devgraph` process with stdin and stderr on a pseudo-terminal and
// stdout on a pipe. The test holds the terminal's slave side open too, so
// the master never reads as hung up before the child has opened it; the
// child opens it by name.
class Terminal {
 public:
  ~Terminal() {
    if (pid_ > 0) {
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, nullptr, 0);
    }
    for (int fd : {master_, slave_, out_, pidfd_})
      if (fd >= 0) ::close(fd);
  }

  // Starts DEVGRAPH_BIN ARGS in `cwd` with the extra environment `env`;
  // false (and a failure) when it cannot.
  bool start(const std::vector<std::string>& args, const std::map<std::string, std::string>& env,
             const std::string& cwd) {
    master_ = ::posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
    if (master_ < 0 || ::grantpt(master_) != 0 || ::unlockpt(master_) != 0) {
      ADD_FAILURE() << "no pseudo-terminal: " << errno;
      return false;
    }
    char name[128];
    if (::ptsname_r(master_, name, sizeof name) != 0) {
      ADD_FAILURE() << "ptsname_r: " << errno;
      return false;
    }
    slave_ = ::open(name, O_RDWR | O_NOCTTY | O_CLOEXEC);
    int out[2];
    if (slave_ < 0 || ::pipe2(out, O_CLOEXEC) != 0) {
      ADD_FAILURE() << "slave or pipe: " << errno;
      return false;
    }
    out_ = out[0];
    // Everything the child needs is made before fork: between fork and
    // exec it calls only async-signal-safe functions.
    std::vector<std::string> argv = {DEVGRAPH_BIN};
    argv.insert(argv.end(), args.begin(), args.end());
    // This process's environment with `env` over it (an empty value
    // unsets).
    std::map<std::string, std::string> merged;
    for (char** e = environ; *e; ++e) {
      std::string kv = *e;
      auto eq = kv.find('=');
      if (eq != std::string::npos) merged[kv.substr(0, eq)] = kv.substr(eq + 1);
    }
    for (const auto& [k, v] : env) merged[k] = v;
    std::vector<std::string> envs;
    for (const auto& [k, v] : merged)
      if (!v.empty()) envs.push_back(k + "=" + v);
    std::vector<char*> cargv, cenv;
    for (auto& a : argv) cargv.push_back(a.data());
    cargv.push_back(nullptr);
    for (auto& e : envs) cenv.push_back(e.data());
    cenv.push_back(nullptr);
    pid_ = ::fork();
    if (pid_ == 0) {
      struct sigaction dfl = {};
      dfl.sa_handler = SIG_DFL;
      for (int sig : {SIGPIPE, SIGINT, SIGTERM, SIGHUP}) ::sigaction(sig, &dfl, nullptr);
      sigset_t none;
      sigemptyset(&none);
      ::sigprocmask(SIG_SETMASK, &none, nullptr);
      int tty = ::open(name, O_RDWR | O_NOCTTY);
      if (tty < 0 || ::dup2(tty, 0) < 0 || ::dup2(tty, 2) < 0 || ::dup2(out[1], 1) < 0)
        ::_exit(127);
      if (::chdir(cwd.c_str()) != 0) ::_exit(127);
      ::execve(cargv[0], cargv.data(), cenv.data());
      ::_exit(127);
    }
    ::close(out[1]);
    if (pid_ < 0) {
      ADD_FAILURE() << "fork: " << errno;
      return false;
    }
    pidfd_ = static_cast<int>(::syscall(SYS_pidfd_open, pid_, 0));
    if (pidfd_ < 0) {
      ADD_FAILURE() << "pidfd_open: " << errno;
      return false;
    }
    ::fcntl(master_, F_SETFL, O_NONBLOCK);
    ::fcntl(out_, F_SETFL, O_NONBLOCK);
    deadline_ = std::chrono::steady_clock::now() + kLimit;
    return true;
  }

  // Reads the terminal and stdout until the terminal shows `text`; false
  // when the process exits or the deadline passes first.
  bool read_until(const std::string& text) {
    while (!contains(screen_, text)) {
      if (exited_ || !pump()) return false;
    }
    return true;
  }

  // Types `keys` on the terminal.
  bool type(const std::string& keys) {
    size_t done = 0;
    while (done < keys.size()) {
      ssize_t n = ::write(master_, keys.data() + done, keys.size() - done);
      if (n < 0 && errno != EINTR && errno != EAGAIN) return false;
      if (n > 0) done += static_cast<size_t>(n);
    }
    return true;
  }

  // Reads on until the process has exited and closed stdout; its exit code
  // and output (stderr is what the terminal showed). exit_code -1 (and a
  // failure) when the deadline passed: the process is then killed.
  test::ProcessResult finish() {
    test::ProcessResult r;
    while (!exited_ || out_ >= 0) {
      if (!pump()) {
        ADD_FAILURE() << "devgraph clean did not finish; the terminal showed:\n" << screen_;
        r.out = out_text_;
        r.err = screen_;
        return r;
      }
    }
    drain_master();
    int status = 0;
    ::waitpid(pid_, &status, 0);
    pid_ = -1;
    if (WIFEXITED(status)) r.exit_code = WEXITSTATUS(status);
    if (WIFSIGNALED(status)) r.signal = WTERMSIG(status);
    r.out = out_text_;
    r.err = screen_;
    return r;
  }

  const std::string& screen() const { return screen_; }

 private:
  // One poll of the terminal, stdout and the exit; false at the deadline.
  bool pump() {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline_ - std::chrono::steady_clock::now());
    if (left.count() <= 0) return false;
    pollfd p[3] = {{master_, POLLIN, 0}, {out_, POLLIN, 0}, {exited_ ? -1 : pidfd_, POLLIN, 0}};
    int n = ::poll(p, 3, static_cast<int>(left.count()));
    if (n < 0 && errno == EINTR) return true;
    if (n <= 0) return false;
    if (p[0].revents) drain_master();
    if (p[1].revents) {
      char buf[4096];
      for (;;) {
        ssize_t got = ::read(out_, buf, sizeof buf);
        if (got > 0) {
          out_text_.append(buf, static_cast<size_t>(got));
          continue;
        }
        if (got == 0) {
          ::close(out_);
          out_ = -1;
        }
        break;
      }
    }
    if (p[2].revents) exited_ = true;
    return true;
  }

  void drain_master() {
    char buf[4096];
    for (ssize_t got; (got = ::read(master_, buf, sizeof buf)) > 0;)
      screen_.append(buf, static_cast<size_t>(got));
  }

  int master_ = -1, slave_ = -1, out_ = -1, pidfd_ = -1;
  pid_t pid_ = -1;
  bool exited_ = false;
  std::string screen_, out_text_;
  std::chrono::steady_clock::time_point deadline_;
};

class CleanPrompt : public test::CleanRepo {
 protected:
  // A merged branch to delete and one to integrate once main has moved on.
  void SetUp() override {
    CleanRepo::SetUp();
    if (HasFatalFailure()) return;
    init_github();
    make_merged("feature/merged");
    make_clean();
    advance_main();
  }

  // `devgraph clean` on the terminal, answered with `keys` once the
  // question is on the screen; `plan` is what the screen showed before it.
  test::ProcessResult answered(const std::string& keys, std::string* plan = nullptr) {
    Terminal t;
    if (!t.start({"clean"}, env(), repo)) return {};
    bool asked = t.read_until(kQuestion);
    EXPECT_TRUE(asked) << "no question on the terminal; it showed:\n" << t.screen();
    if (asked) {
      if (plan) *plan = t.screen().substr(0, t.screen().find(kQuestion));
      EXPECT_TRUE(t.type(keys));
    }
    return t.finish();
  }

  // Declined: exit 0, "nothing changed", RESULT_JSON DECLINED with the
  // plan's branches; no ref of the clone or origin and no worktree moved,
  // and nothing under AI_ROOT but the repository's lock file (taken before
  // the question, so that no other run starts between the plan and the
  // answer) appeared: no run directory.
  void expect_declined(const test::ProcessResult& r, const Snapshot& before,
                       const std::string& worktrees) {
    EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
    EXPECT_TRUE(contains(r.out, "nothing changed\n")) << r.out;
    Json res = result_of(r);
    EXPECT_EQ(res["status"], "DECLINED") << r.out;
    expect_lists_every_branch(res, before);
    for (const auto& e : res.value("branches", Json::array())) {
      EXPECT_EQ(test::field(e, "deleted"), false) << dump_py(e);
      EXPECT_NE(json_str(e, "outcome"), "cleaned") << dump_py(e);
    }
    EXPECT_EQ(git_out({"for-each-ref", "--format=%(objectname) %(refname)"}), before.clone_refs);
    EXPECT_EQ(origin_out({"for-each-ref", "--format=%(objectname) %(refname)"}),
              before.origin_refs);
    EXPECT_EQ(git_out({"worktree", "list", "--porcelain"}), worktrees);
    EXPECT_FALSE(path_exists(ai_root + "/develop/" + owner_repo + "/runs"))
        << test::tree_of(ai_root);
    std::vector<std::string> paths = test::lines_of(before.ai_tree);
    std::string home = "develop/" + owner_repo;
    for (const std::string& p :
         {std::string("develop"), dirname_of(home), home, home + "/orchestrator.lock"})
      if (std::find(paths.begin(), paths.end(), p) == paths.end()) paths.push_back(p);
    std::sort(paths.begin(), paths.end());
    std::string want;
    for (const auto& p : paths) want += p + "\n";
    EXPECT_EQ(test::tree_of(ai_root), want);
    expect_nothing_lost(before, res);
  }
};

TEST_F(CleanPrompt, AnsweringNoLeavesEveryRefAndWorktreeAsItWas) {
  Snapshot before = snapshot();
  std::string worktrees = git_out({"worktree", "list", "--porcelain"});
  std::string plan;
  auto r = answered("n\n", &plan);
  EXPECT_TRUE(contains(plan, "would delete branch feature/merged")) << plan;
  EXPECT_TRUE(contains(plan, "feature/clean: would integrate by rebase")) << plan;
  expect_declined(r, before, worktrees);
}

TEST_F(CleanPrompt, AnyOtherAnswerIsNo) {
  for (const char* keys : {"\n", "yep\n", "no\n", " y\n"}) {
    SCOPED_TRACE(testing::PrintToString(std::string(keys)));
    Snapshot before = snapshot();
    std::string worktrees = git_out({"worktree", "list", "--porcelain"});
    expect_declined(answered(keys), before, worktrees);
  }
}

TEST_F(CleanPrompt, EndOfInputOnTheTerminalLeavesEveryRefAndWorktreeAsItWas) {
  Snapshot before = snapshot();
  std::string worktrees = git_out({"worktree", "list", "--porcelain"});
  // The terminal's end-of-file character (^D) at the start of a line.
  expect_declined(answered("\x04"), before, worktrees);
}

TEST_F(CleanPrompt, AnsweringYesGoesAheadAndCleans) {
  Snapshot before = snapshot();
  auto r = answered("y\n");
  Json res = finished(r);
  expect_branch(res, before, "feature/merged", {"MERGED", "cleaned", "", true, false});
  expect_clean_landed(res, before, "rebase");
  expect_no_throwaways();
  expect_nothing_lost(before, res);
}

TEST_F(CleanPrompt, UpperCaseYAndYesGoAheadToo) {
  for (const char* keys : {"Y\n", "yes\n"}) {
    SCOPED_TRACE(testing::PrintToString(std::string(keys)));
    // main as origin has it after the round before, and a branch merged
    // into it for this round to delete.
    git({"fetch", "-q", "origin"});
    git({"merge", "-q", "--ff-only", "origin/main"});
    std::string name = std::string("feature/merged-") + (keys[0] == 'Y' ? "upper" : "word");
    make_merged(name);
    Snapshot before = snapshot();
    Json res = finished(answered(keys));
    expect_branch(res, before, name, {"MERGED", "cleaned", "", true, false});
    expect_nothing_lost(before, res);
  }
}

TEST_F(CleanPrompt, YesOnTheCommandLineAsksNothing) {
  Snapshot before = snapshot();
  Terminal t;
  ASSERT_TRUE(t.start({"clean", "--yes"}, env(), repo));
  auto r = t.finish();
  EXPECT_FALSE(contains(r.err, kQuestion)) << r.err;
  Json res = finished(r);
  expect_branch(res, before, "feature/merged", {"MERGED", "cleaned", "", true, false});
  expect_clean_landed(res, before, "rebase");
  expect_nothing_lost(before, res);
}

}  // namespace
}  // namespace devgraph
