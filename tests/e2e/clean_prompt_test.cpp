// `devgraph clean` on a terminal: with stdin and stderr on a pseudo-
// terminal and neither --yes nor --dry-run, it shows its plan and asks
// before the first change. The test reads the terminal until the question
// is there (no timing guessed: the limit only fails the test), then
// answers. Only "y", "Y" or "yes" goes ahead; "n" and an end of input
// (Ctrl-D) change nothing.
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <map>
#include <string>
#include <vector>

#include "support/kill_harness.h"
#include "support/run_scenario.h"
#include "support/test_util.h"
#include "util/fs.h"
#include "util/json.h"

namespace devgraph {
namespace {

constexpr const char* kQuestion = "Go ahead? [y/N] ";

class CleanPrompt : public ::testing::Test {
 protected:
  void SetUp() override {
    repo = scratch / "widgets";
    ai_root = scratch / "ai";
    ASSERT_TRUE(make_directories(repo));
    git({"init", "-q", "-b", "main"});
    test::write_text(repo + "/README.md", "widgets\n");
    git({"add", "README.md"});
    git({"commit", "-q", "-m", "base"});
    git({"branch", "feature/done"});  // on main already: MERGED, deleted
  }

  std::map<std::string, std::string> env() const {
    auto e = test::quiet_git_env();
    e.insert({{"AI_ROOT", ai_root},
              {"GIT_AUTHOR_NAME", "t"},
              {"GIT_AUTHOR_EMAIL", "t@example.invalid"},
              {"GIT_COMMITTER_NAME", "t"},
              {"GIT_COMMITTER_EMAIL", "t@example.invalid"},
              {"NO_COLOR", "1"}});
    return e;
  }

  void git(const std::vector<std::string>& args) {
    std::vector<std::string> argv = {"git"};
    argv.insert(argv.end(), args.begin(), args.end());
    auto r = test::run_process(argv, env(), repo);
    ASSERT_EQ(r.exit_code, 0) << r.err;
  }

  std::string branches() {
    return test::run_process({"git", "for-each-ref", "--format=%(refname)", "refs/heads"}, env(),
                             repo)
        .out;
  }

  struct Answered {
    int status = -1;       // wait status
    std::string terminal;  // what the terminal showed
    Json result;           // the RESULT_JSON line of stdout
  };

  // `devgraph clean` with stdin and stderr on a new terminal; once the
  // terminal shows the question, `answer` is typed into it.
  Answered run_with_terminal(const std::string& answer) {
    Answered got;
    int master = ::posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
    EXPECT_GE(master, 0);
    EXPECT_EQ(::grantpt(master), 0);
    EXPECT_EQ(::unlockpt(master), 0);
    const std::string slave = ::ptsname(master);
    const std::string out_path = scratch / "clean.out";
    const auto e = env();
    pid_t pid = ::fork();
    if (pid == 0) {
      ::setsid();
      int tty = ::open(slave.c_str(), O_RDWR);  // the session's terminal
      int out = ::open(out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      if (tty < 0 || out < 0 || ::dup2(tty, 0) < 0 || ::dup2(out, 1) < 0 || ::dup2(tty, 2) < 0 ||
          ::chdir(repo.c_str()) != 0)
        ::_exit(127);
      for (int sig : {SIGINT, SIGTERM, SIGHUP}) ::signal(sig, SIG_DFL);
      sigset_t none;
      sigemptyset(&none);
      ::sigprocmask(SIG_SETMASK, &none, nullptr);
      for (const auto& [k, v] : e) ::setenv(k.c_str(), v.c_str(), 1);
      ::execl(DEVGRAPH_BIN, DEVGRAPH_BIN, "clean", static_cast<char*>(nullptr));
      ::_exit(127);
    }
    EXPECT_GT(pid, 0);
    // The question, then the answer; then whatever the terminal shows until
    // clean lets go of it.
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
    bool asked = false;
    while (true) {
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
          deadline - std::chrono::steady_clock::now());
      pollfd p = {master, POLLIN, 0};
      if (left.count() <= 0 || ::poll(&p, 1, static_cast<int>(left.count()) + 1) <= 0) break;
      char buf[4096];
      ssize_t n = ::read(master, buf, sizeof buf);
      if (n <= 0) break;  // EIO: no process holds the terminal any more
      got.terminal.append(buf, static_cast<size_t>(n));
      if (!asked && got.terminal.find(kQuestion) != std::string::npos) {
        asked = true;
        EXPECT_EQ(::write(master, answer.data(), answer.size()),
                  static_cast<ssize_t>(answer.size()));
      }
    }
    EXPECT_TRUE(asked) << got.terminal;
    ::waitpid(pid, &got.status, 0);
    ::close(master);
    got.result = test::result_of(test::ProcessResult{0, 0, test::slurp(out_path), ""});
    return got;
  }

  test::Scratch scratch;
  std::string repo, ai_root;
};

TEST_F(CleanPrompt, NoOnTheTerminalChangesNothing) {
  const std::string before = branches();
  auto r = run_with_terminal("n\n");
  ASSERT_TRUE(WIFEXITED(r.status)) << r.terminal;
  EXPECT_EQ(WEXITSTATUS(r.status), 0) << r.terminal;
  // The plan came first, naming the branch and what would happen to it.
  auto asked = r.terminal.find(kQuestion);
  EXPECT_NE(r.terminal.substr(0, asked).find("feature/done"), std::string::npos) << r.terminal;
  EXPECT_EQ(r.result["status"], "DECLINED");
  EXPECT_EQ(branches(), before);
  EXPECT_FALSE(path_exists(ai_root + "/develop/local/widgets/runs"));
}

TEST_F(CleanPrompt, AnEndOfInputChangesNothing) {
  const std::string before = branches();
  auto r = run_with_terminal("\x04");  // Ctrl-D on an empty line
  ASSERT_TRUE(WIFEXITED(r.status)) << r.terminal;
  EXPECT_EQ(WEXITSTATUS(r.status), 0) << r.terminal;
  EXPECT_EQ(r.result["status"], "DECLINED");
  EXPECT_EQ(branches(), before);
  EXPECT_FALSE(path_exists(ai_root + "/develop/local/widgets/runs"));
}

TEST_F(CleanPrompt, YesOnTheTerminalGoesAhead) {
  auto r = run_with_terminal("y\n");
  ASSERT_TRUE(WIFEXITED(r.status)) << r.terminal;
  EXPECT_EQ(WEXITSTATUS(r.status), 0) << r.terminal;
  EXPECT_EQ(r.result["status"], "COMPLETE") << r.result;
  EXPECT_EQ(branches(), "refs/heads/main\n");
}

}  // namespace
}  // namespace devgraph
