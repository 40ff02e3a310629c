// `devgraph doctor`'s checks of the repository as `devgraph run` would
// take it: the primary clone, its origin and so the delivery mode, the
// default branch, and the test and build commands a new run records.
//
// Contract:
// - gather_repository() reuses what `run` calls before it writes anything
//   (orchestrator::check_repository, git::RepoQueries::default_branch,
//   project::detect_commands), so doctor and run never disagree; it only
//   reads.
// - check_repository() is pure. Whatever `run` refuses is a problem (not a
//   git repository when --repo names one, a bare repository, a linked
//   worktree, an origin that names no GitHub repository, no default
//   branch, a commands file it cannot read); no origin is a warning
//   (local delivery: ready branches, no pull requests); so is a
//   repository with neither a test nor a build command. Outside any git
//   repository without --repo, the repository's checks are skipped with a
//   warning, and the machine's checks still run.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "doctor/finding.h"
#include "guard/guard.h"
#include "orchestrator/run_setup.h"
#include "proc/command.h"
#include "project/commands.h"
#include "util/expected.h"

namespace devgraph::doctor {

struct RepositoryFacts {
  bool repo_given = false;  // --repo was given
  // Why git could not be run at all; then `check` is empty.
  std::optional<std::string> git_error;
  orchestrator::RepositoryCheck check;
  // Asked only when the check found no fault.
  std::optional<Expected<std::string>> default_branch;
  std::optional<Expected<project::Commands>> commands;

  // There is a primary clone (check.top and check.place are set), even if
  // `run` would refuse its origin.
  bool has_clone() const { return !git_error && !check.top.empty(); }
};

RepositoryFacts gather_repository(CommandRunner& runner, const std::string& repo, bool repo_given,
                                  const guard::Roots& roots);

std::vector<Finding> check_repository(const RepositoryFacts& facts);

}  // namespace devgraph::doctor
