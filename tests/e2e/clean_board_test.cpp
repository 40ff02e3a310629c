// `devgraph clean --board` end to end: the real binary in a local primary
// clone whose one merged branch the run deletes. The clone's
// reference-transaction hook holds the first ref update git prepares (the
// deletion) until the test lets it go, so the test sees the board of a
// clean run that is still running: the page, the run as /data.json shows
// it, and the lane's last events pushed on /events as they are written.
// Nothing waits on a timer: the hook says it holds by a file the test sees
// through inotify, and is let go by a line on a FIFO it holds open.
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
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
#include "support/stderr_process.h"
#include "support/test_util.h"
#include "util/fs.h"
#include "util/json.h"

namespace devgraph {
namespace {

using test::result_of;

class CleanBoard : public ::testing::Test {
 protected:
  void SetUp() override {
    repo = scratch / "widgets";
    ai_root = scratch / "ai";
    home = ai_root + "/develop/local/widgets";
    ASSERT_TRUE(make_directories(repo));
    git({"init", "-q", "-b", "main"});
    test::write_text(repo + "/README.md", "widgets\n");
    git({"add", "README.md"});
    git({"commit", "-q", "-m", "base"});
    // On main already: MERGED, deleted by the run.
    git({"branch", "feature/done"});
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
    auto r = test::run_process({"git", "for-each-ref", "--format=%(refname)", "refs/heads"}, env(),
                               repo);
    return r.out;
  }

  // The hook: the first ref transaction git prepares says so by `held`,
  // then waits for a line on `release` (opened read-write, so the open
  // never waits for the test); every later one passes.
  void hold_first_ref_update() {
    ASSERT_EQ(::mkfifo(release.c_str(), 0600), 0);
    std::string hook = repo + "/.git/hooks/reference-transaction";
    test::write_text(hook, "#!/bin/sh\n[ \"$1\" = prepared ] || exit 0\n[ -e '" + held +
                               "' ] && exit 0\nexec 3<>'" + release + "'\n: > '" + held +
                               "'\nread -r line <&3\nexit 0\n");
    ASSERT_EQ(::chmod(hook.c_str(), 0755), 0);
  }

  void let_go() {
    int fd = ::open(release.c_str(), O_WRONLY | O_NONBLOCK | O_CLOEXEC);
    ASSERT_GE(fd, 0) << "the hook holds no FIFO open";
    ASSERT_EQ(::write(fd, "go\n", 3), 3);
    ::close(fd);
  }

  test::Scratch scratch;
  std::string repo, ai_root, home;
  std::string held = scratch / "held";
  std::string release = scratch / "release";
};

Json body_of(const std::string& response) {
  auto at = response.find("\r\n\r\n");
  if (at == std::string::npos) return Json();
  auto j = parse_json(response.substr(at + 4), "body");
  return j ? *j : Json();
}

// The board is served from the moment the run holds its state until it
// stops, while the lane's git command waits; the stopped run leaves its
// snapshot and gives the port back.
TEST_F(CleanBoard, ServesTheLiveCleanRunWhileGitWaitsAndLeavesItsSnapshot) {
  hold_first_ref_update();
  test::StderrProcess clean({"clean", "--yes", "--board", "0"}, env(), repo, scratch / "clean.out");
  ASSERT_GT(clean.pid(), 0);
  ASSERT_TRUE(clean.wait_for("devgraph clean: board at http://", std::chrono::seconds(120)))
      << clean.err();
  ASSERT_TRUE(clean.wait_for("/\n", std::chrono::seconds(20))) << clean.err();
  int port = test::port_after(clean.err(), "devgraph clean: board at ");
  ASSERT_GT(port, 0) << clean.err();

  int pidfd = static_cast<int>(::syscall(SYS_pidfd_open, clean.pid(), 0));
  ASSERT_GE(pidfd, 0);
  test::Watch watch;
  auto holding = test::wait_until(
      watch, pidfd, [&] { return std::vector<std::string>{scratch.path()}; },
      [&] { return path_exists(held); },
      std::chrono::steady_clock::now() + std::chrono::seconds(120));
  ::close(pidfd);
  ASSERT_EQ(holding, test::Waited::kReached) << clean.err();

  auto runs = test::names_in(home + "/runs");
  ASSERT_EQ(runs.size(), 1u);
  const std::string dir = home + "/runs/" + runs[0];
  std::string page = test::http_get(port, "/", std::chrono::seconds(20));
  EXPECT_EQ(page.rfind("HTTP/1.1 200", 0), 0u) << page.substr(0, 200);
  EXPECT_NE(page.find("board-data"), std::string::npos);
  Json data = body_of(test::http_get(port, "/data.json", std::chrono::seconds(20)));
  ASSERT_TRUE(data.is_object());
  EXPECT_EQ(data["state"]["run_id"], runs[0]);
  EXPECT_EQ(data["state"]["mode"], "clean");
  EXPECT_EQ(data["state"]["status"], "running");
  EXPECT_EQ(data["state"]["node"], "clean_cleanup");
  EXPECT_EQ(data["event_seq"], test::read_jsonl(dir + "/events.jsonl").size());
  EXPECT_NE(dump_py(data["events"]).find("CLEAN_CLASSIFIED"), std::string::npos);
  EXPECT_EQ(dump_py(data["events"]).find("CLEAN_CLEANUP_DONE"), std::string::npos);
  EXPECT_NE(branches().find("refs/heads/feature/done"), std::string::npos);

  // What the run writes once git goes on reaches an open page.
  test::EventStream stream(port);
  ASSERT_TRUE(stream.connected());
  ASSERT_TRUE(stream.read_until("\r\n\r\n", std::chrono::seconds(20))) << stream.text();
  let_go();
  EXPECT_TRUE(stream.read_until("CLEAN_REPORT_DONE", std::chrono::seconds(120))) << stream.text();
  EXPECT_NE(stream.text().find("CLEAN_CLEANUP_DONE"), std::string::npos);

  int st = clean.wait(std::chrono::seconds(120));
  ASSERT_TRUE(WIFEXITED(st)) << clean.err();
  EXPECT_EQ(WEXITSTATUS(st), 0) << clean.err();
  Json res = result_of(test::ProcessResult{0, 0, test::slurp(scratch / "clean.out"), ""});
  EXPECT_EQ(res["status"], "COMPLETE");
  EXPECT_EQ(branches(), "refs/heads/main\n");
  EXPECT_NE(clean.err().find("devgraph clean: board snapshot at " + dir + "/run-board.html\n"),
            std::string::npos)
      << clean.err();
  std::string snap = test::slurp(dir + "/run-board.html");
  EXPECT_NE(snap.find("\"mode\": \"clean\""), std::string::npos);
  EXPECT_NE(snap.find("\"status\": \"complete\""), std::string::npos);
  // The port is given back: nothing answers there any more.
  EXPECT_EQ(test::http_get(port, "/", std::chrono::seconds(5)), "");
}

// A port that cannot be had stops clean before it does anything; so do
// the board's usage errors.
TEST_F(CleanBoard, APortInUseAndBoardUsageErrorsAreRefusedBeforeAnythingIsWritten) {
  test::TakenPort taken;
  ASSERT_GT(taken.port(), 0);
  const std::string port = std::to_string(taken.port());
  const std::string before = branches();
  struct Case {
    std::vector<std::string> args;
    std::string says;
  };
  const std::vector<Case> cases = {
      {{"clean", "--yes", "--board", port}, port},
      {{"clean", "--board", "0", "--dry-run"}, "--dry-run"},
      {{"clean", "--yes", "--open"}, "--open needs --board"},
      {{"clean", "--yes", "--bind", "127.0.0.1"}, "--bind needs --board"},
      {{"clean", "--yes", "--board", "port"}, "not a port"},
      {{"clean", "--yes", "--board", "0", "--bind", "localhost"}, "numeric IPv4"},
  };
  for (const auto& c : cases) {
    auto r = test::run_devgraph(c.args, env(), repo);
    EXPECT_EQ(r.exit_code, 3) << c.args.back() << "\n" << r.out << r.err;
    // One line that says why (a usage error's after the usage line).
    auto lines = test::lines_of(r.err);
    ASSERT_FALSE(lines.empty());
    EXPECT_NE(lines.back().find(c.says), std::string::npos) << r.err;
    EXPECT_EQ(lines.size(), c.args.back() == port ? 1u : 2u) << r.err;
    EXPECT_FALSE(path_exists(ai_root)) << c.args.back();
    EXPECT_EQ(branches(), before);
  }
}

}  // namespace
}  // namespace devgraph
