#include "board/browser.h"

#include <fcntl.h>
#include <spawn.h>
#include <sys/epoll.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <memory>

#include "proc/spawn.h"

extern char** environ;

namespace devgraph::board {

std::vector<std::string> browser_argv(std::string_view browser, const std::string& url) {
  return {browser.empty() ? std::string("xdg-open") : std::string(browser), url};
}

Status open_in_browser(FdHost& host, const std::string& url) {
  const char* b = std::getenv("BROWSER");
  std::vector<std::string> args = browser_argv(b ? b : "", url);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  for (int fd : {0, 1, 2})
    posix_spawn_file_actions_addopen(&fa, fd, "/dev/null", fd == 0 ? O_RDONLY : O_WRONLY, 0);
  posix_spawnattr_t attr;
  init_child_spawn_attr(&attr);
  std::vector<char*> argv = c_argv(args);
  pid_t pid = -1;
  int rc = ::posix_spawnp(&pid, argv[0], &fa, &attr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&fa);
  posix_spawnattr_destroy(&attr);
  if (rc != 0)
    return fail(ErrorKind::not_found,
                "cannot start the browser " + args[0] + ": " + std::strerror(rc));
  // Reaped when it exits; without a pidfd (an old kernel) it is left to
  // be collected when this process ends.
  struct Child {
    pid_t pid = -1;
    int pidfd = -1;
    HostWatch watch = 0;
  };
  auto child = std::make_shared<Child>();
  child->pid = pid;
  child->pidfd = static_cast<int>(::syscall(SYS_pidfd_open, pid, 0));
  if (child->pidfd < 0) return {};
  auto w = host.watch(child->pidfd, EPOLLIN, [&host, child](std::uint32_t) {
    int status = 0;
    if (::waitpid(child->pid, &status, WNOHANG) == 0) return;
    host.unwatch(child->watch);
    ::close(child->pidfd);
  });
  if (!w) {
    ::close(child->pidfd);
    return {};
  }
  child->watch = *w;
  return {};
}

}  // namespace devgraph::board
