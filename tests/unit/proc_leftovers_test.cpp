// Children of a SIGKILLed supervisor: recorded while they live, ended by
// the next supervisor, and nothing else is ever signalled.
#include "proc/leftovers.h"

#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "proc/supervisor.h"
#include "support/test_util.h"
#include "util/fs.h"

namespace devgraph {
namespace {

// The recorded pids, from the record file.
std::vector<int> recorded(const std::string& path) {
  std::vector<int> pids;
  std::ifstream in(path);
  int pid = 0;
  unsigned long long start = 0;
  while (in >> pid >> start) pids.push_back(pid);
  return pids;
}

bool alive(int pid) {
  return process_start_time(pid).has_value();  // a zombie counts as gone
}

TEST(Leftovers, TheRecordListsLiveChildrenOnly) {
  test::Scratch scratch;
  const std::string path = scratch / "live-children";
  auto loop = ChildLoop::create();
  ASSERT_TRUE(loop.ok());
  loop->record_children_in(path);
  ChildSpec quick;
  quick.argv = {"true"};
  ChildSpec slow;
  slow.argv = {"sleep", "1000"};
  ASSERT_TRUE(loop->spawn(quick).ok());
  auto s = loop->spawn(slow);
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(recorded(path).size(), 2u);
  auto ev = loop->wait();
  ASSERT_TRUE(ev.has_value());
  EXPECT_EQ(std::get<ChildExit>(*ev).exit_code, 0);
  EXPECT_EQ(recorded(path).size(), 1u) << "the reaped child left the record";
  loop->terminate(*s);
  ASSERT_TRUE(loop->wait().has_value());
  EXPECT_FALSE(path_exists(path)) << "no live child: no record";
}

TEST(Leftovers, ASuccessorEndsTheChildrenOfAKilledSupervisor) {
  test::Scratch scratch;
  const std::string path = scratch / "live-children";
  // The supervisor runs in a child process that starts two agents (one
  // with a background job in its group) and is then SIGKILLed.
  int ready[2];
  ASSERT_EQ(::pipe(ready), 0);
  pid_t supervisor = ::fork();
  ASSERT_GE(supervisor, 0);
  if (supervisor == 0) {
    auto loop = ChildLoop::create();
    if (!loop) ::_exit(1);
    loop->record_children_in(path);
    ChildSpec a;
    a.argv = {"sleep", "1000"};
    ChildSpec b;
    b.argv = {"sh", "-c", "sleep 1000 & sleep 1000; wait"};
    if (!loop->spawn(a) || !loop->spawn(b)) ::_exit(1);
    (void)!::write(ready[1], "x", 1);
    ::pause();
    ::_exit(0);
  }
  ::close(ready[1]);
  char c = 0;
  ASSERT_EQ(::read(ready[0], &c, 1), 1);
  ::close(ready[0]);
  ::kill(supervisor, SIGKILL);
  int status = 0;
  ASSERT_EQ(::waitpid(supervisor, &status, 0), supervisor);
  ASSERT_TRUE(WIFSIGNALED(status));

  std::vector<int> orphans = recorded(path);
  ASSERT_EQ(orphans.size(), 2u);
  for (int pid : orphans) EXPECT_TRUE(alive(pid)) << "the agents outlived their supervisor";

  auto ended = end_leftover_children(path);
  ASSERT_TRUE(ended.ok()) << ended.error().message;
  EXPECT_EQ(*ended, 2);
  for (int pid : orphans) EXPECT_FALSE(alive(pid)) << pid;
  EXPECT_FALSE(path_exists(path));
  auto again = end_leftover_children(path);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(*again, 0) << "nothing is left to end";
}

TEST(Leftovers, APidNowUsedByAnotherProcessIsLeftAlone) {
  test::Scratch scratch;
  const std::string path = scratch / "live-children";
  // This very process, recorded with a start time it does not have, and a
  // pid nobody has.
  const int self = static_cast<int>(::getpid());
  auto start = process_start_time(self);
  ASSERT_TRUE(start.has_value());
  test::write_text(path,
                   std::to_string(self) + " " + std::to_string(*start + 1) + "\n" + "4194303 1\n");
  auto ended = end_leftover_children(path);
  ASSERT_TRUE(ended.ok());
  EXPECT_EQ(*ended, 0);
  EXPECT_TRUE(alive(self));
}

// A leftover `sh` in a process group of its own, recorded in `path`, that
// has set `trap_term` for TERM and started `sleep 1000` in the background
// when this returns (it says so through a FIFO). A TERM to the group can
// reach the background child after its fork but before it has dropped the
// shell's trap and become `sleep`: the shell takes it and the sleep lives
// on, holding the test's output open. So a trap that lets the shell exit
// ends the child itself (`kill -KILL $!`), as a driver ends its personas.
pid_t recorded_shell(const std::string& path, const std::string& fifo,
                     const std::string& trap_term) {
  EXPECT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  pid_t pid = ::fork();
  if (pid == 0) {
    ::setpgid(0, 0);
    ::signal(SIGTERM, SIG_DFL);
    std::string script =
        "trap '" + trap_term + "' TERM; sleep 1000 & echo ready > '" + fifo + "'; wait";
    ::execlp("sh", "sh", "-c", script.c_str(), static_cast<char*>(nullptr));
    ::_exit(127);
  }
  EXPECT_GT(pid, 0);
  ::setpgid(pid, pid);
  std::ifstream ready(fifo);  // opens once the shell opens it for writing
  std::string word;
  ready >> word;
  EXPECT_EQ(word, "ready");
  ChildRecord record(path);
  record.add(pid);
  return pid;
}

TEST(Leftovers, WithAGraceALeftoverIsAskedToStopFirst) {
  test::Scratch scratch;
  const std::string path = scratch / "live-drivers";
  // Exits 0 on TERM, as a driver that stops cleanly does (ending its own
  // child first); a KILL would leave it no say.
  pid_t pid = recorded_shell(path, scratch / "fifo", "kill -KILL $! 2>/dev/null; exit 0");
  auto ended = end_leftover_children(path, std::chrono::seconds(10), std::chrono::seconds(10));
  ASSERT_TRUE(ended.ok()) << ended.error().message;
  EXPECT_EQ(*ended, 1);
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "status " << status;
  EXPECT_FALSE(path_exists(path));
}

TEST(Leftovers, ALeftoverThatIgnoresTheStopIsKilledAfterTheGrace) {
  test::Scratch scratch;
  const std::string path = scratch / "live-drivers";
  pid_t pid = recorded_shell(path, scratch / "fifo", "");
  auto ended = end_leftover_children(path, std::chrono::seconds(10), std::chrono::milliseconds(50));
  ASSERT_TRUE(ended.ok()) << ended.error().message;
  EXPECT_EQ(*ended, 1);
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL) << "status " << status;
}

}  // namespace
}  // namespace devgraph
