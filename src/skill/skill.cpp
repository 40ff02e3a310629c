#include "skill/skill.h"

#include <unistd.h>

#include <cstdlib>

#include "skill/build_paths.h"
#include "util/fs.h"

namespace devgraph {
namespace {

bool has_graph(const std::string& dir) {
  return path_exists(join_path(dir, "GRAPH.yaml"));
}

}  // namespace

std::string self_executable() {
  char buf[4096];
  ssize_t n = ::readlink("/proc/self/exe", buf, sizeof buf - 1);
  if (n <= 0) return {};
  return std::string(buf, static_cast<size_t>(n));
}

Expected<std::string> locate_skill(const std::optional<std::string>& flag) {
  if (flag) {
    if (!has_graph(*flag)) return fail("--skill " + *flag + ": no GRAPH.yaml in that directory");
    return absolute_path(*flag);
  }
  if (const char* env = std::getenv("DEVGRAPH_SKILL"); env && *env) {
    if (!has_graph(env))
      return fail(std::string("DEVGRAPH_SKILL=") + env + ": no GRAPH.yaml in that directory");
    return absolute_path(env);
  }
  std::string exe = self_executable();
  if (!exe.empty()) {
    std::string installed = join_path(dirname_of(dirname_of(exe)), DEVGRAPH_INSTALL_SKILL_SUBDIR);
    if (has_graph(installed)) return absolute_path(installed);
  }
  if (has_graph(kBuildSkillDir)) return std::string(kBuildSkillDir);
  return fail(
      "cannot find devgraph's skill directory (GRAPH.yaml); pass --skill DIR or set "
      "DEVGRAPH_SKILL");
}

}  // namespace devgraph
