// Fuzzes the guard's shell parser and the command analysis on top of it.
// The first byte picks the working directory (a primary clone, a linked
// worktree or a plain directory, built once in a temporary directory); the
// rest is the command line. Any crash, sanitizer report or hang is a bug:
// the guard runs on every agent tool call and must answer for any input.
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdint>
#include <fstream>
#include <string>

#include "guard/guard.h"
#include "guard/shell.h"

namespace {

devgraph::guard::Roots g_roots;
std::string g_dirs[3];

void put(const std::string& path, const std::string& text) {
  std::ofstream(path) << text;
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  char tmpl[] = "/tmp/devgraph-guard-fuzz-XXXXXX";
  std::string root = mkdtemp(tmpl);
  std::string primary = root + "/primary";
  mkdir(primary.c_str(), 0755);
  mkdir((primary + "/.git").c_str(), 0755);
  mkdir((primary + "/.git/worktrees").c_str(), 0755);
  mkdir((primary + "/.git/worktrees/feat").c_str(), 0755);
  put(primary + "/.git/HEAD", "ref: refs/heads/main\n");
  put(primary + "/.git/config", "[remote \"origin\"]\n\turl = git@github.com:acme/widgets.git\n");
  std::string linked = root + "/wt/acme/widgets/feat";
  mkdir((root + "/wt").c_str(), 0755);
  mkdir((root + "/wt/acme").c_str(), 0755);
  mkdir((root + "/wt/acme/widgets").c_str(), 0755);
  mkdir(linked.c_str(), 0755);
  put(linked + "/.git", "gitdir: " + primary + "/.git/worktrees/feat\n");
  symlink(primary.c_str(), (linked + "/up").c_str());
  std::string scratch = root + "/scratch";
  mkdir(scratch.c_str(), 0755);
  g_dirs[0] = primary;
  g_dirs[1] = linked;
  g_dirs[2] = scratch;
  g_roots.home = scratch;
  g_roots.worktrees = root + "/wt";
  g_roots.develop_home = root + "/home";
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const std::string& cwd = g_dirs[data[0] % 3];
  std::string text(reinterpret_cast<const char*>(data + 1), size - 1);
  auto parsed = devgraph::guard::shell::parse_shell(text);
  (void)parsed;
  auto verdict = devgraph::guard::check_bash(text, cwd, g_roots);
  (void)verdict;
  return 0;
}
