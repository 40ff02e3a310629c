// `devgraph doctor`'s checks of devgraph's own set-up on this machine: the
// placement guard, devgraph's grants in each agent tool's configuration
// (`devgraph install`), and the free space where runs and worktrees live.
//
// Contract:
// - Gathering only reads: the guard is asked through its own functions
//   (guard::self_check builds its samples in a temporary directory of its
//   own and removes it; check_write and check_worktree never write), the
//   grants through install::plan_install (which returns what it would
//   change and writes nothing), the space through statvfs.
// - The check_* functions are pure.
// - Levels: a guard whose self-check fails, or that would refuse the
//   canonical worktree or the develop home, is a problem; one that lets a
//   write into the primary clone through (DEVELOP_GUARD_EXEMPT) is a
//   warning. Missing grants or hook are warnings (they matter only to an
//   agent driven by hand), and only for a tool in use (its configuration
//   or its CLI is there). Free space under kLowDiskBytes is a warning,
//   under kNoDiskBytes a problem.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "doctor/finding.h"
#include "guard/guard.h"
#include "install/install.h"
#include "util/expected.h"

namespace devgraph::doctor {

// The branch whose canonical worktree the guard is asked about.
inline constexpr const char* kSampleBranch = "develop/doctor-check";

struct GuardFacts {
  std::vector<std::string> self_check_failures;
  // With a primary clone (primary_top set): what the guard answers for a
  // write into it (must deny), for the canonical worktree of kSampleBranch
  // and a write inside it (must allow), and for a write into the develop
  // home (must allow).
  std::optional<std::string> primary_top;
  guard::Verdict primary_write;
  std::string worktree_path;
  guard::Verdict worktree_placement;
  guard::Verdict worktree_write;
  std::string develop_home;
  guard::Verdict develop_home_write;
};

GuardFacts gather_guard(const std::optional<guard::Placement>& clone, const guard::Roots& roots);
std::vector<Finding> check_guard(const GuardFacts& facts);

struct InstallFacts {
  install::Tool tool = install::Tool::claude;
  std::string config;   // the tool's first configuration file
  bool in_use = false;  // a configuration file exists, or the tool's CLI is on PATH
  // Whether plan_install would change nothing (grants present), or why it
  // cannot tell (a file it cannot read).
  Expected<bool> grants = false;
  // claude only: the same with the guard hook.
  std::optional<Expected<bool>> hook;
};

// `path` is $PATH, where the tool's CLI is looked for.
InstallFacts gather_install(install::Tool tool, const install::Context& ctx,
                            const std::string& path);
Finding check_install(const InstallFacts& facts);

inline constexpr std::uint64_t kLowDiskBytes = std::uint64_t{5} << 30;
inline constexpr std::uint64_t kNoDiskBytes = std::uint64_t{1} << 30;

struct DiskFacts {
  std::string root;      // the directory devgraph writes under (worktrees, develop home)
  std::string measured;  // the nearest existing directory at or above it
  std::optional<std::uint64_t> free_bytes;  // for an unprivileged user
  std::string error;                        // why it could not be measured
};

// One per file system among the worktrees root and the develop home
// (both under AI_ROOT unless set apart).
std::vector<DiskFacts> gather_disk(const guard::Roots& roots);
Finding check_disk(const DiskFacts& facts);

}  // namespace devgraph::doctor
