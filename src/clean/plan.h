// What `devgraph clean` decides, as pure functions over facts git gave: the
// strategy and where it came from, each branch's bucket and reason, and the
// report. No process, no file: clean/clean_run.h gathers the facts and
// carries the decisions out.
//
// Contract:
// - resolve_strategy(): the first of --strategy, the repository's
//   project.yaml `develop.clean.strategy`, GRAPH.yaml
//   `cleanup.default_strategy` and "rebase" that names one (GRAPH.yaml
//   cleanup.strategy_precedence); a name that is not a strategy is an
//   error (usage) naming where it came from, never a fallback.
// - project_strategy() reads project.yaml's text: nullopt without the key;
//   an error (usage) for text that is not YAML or a key that is not a
//   strategy name's string.
// - classify() gives one bucket per branch, the first that applies:
//   PROTECTED (an open pull request, a bundle of an unfinished run, or a
//   name a default branch has: main, master, trunk),
//   HUMAN_REVIEW (a name kept out of paths, a worktree away from its
//   canonical path, conflicts, uncommitted changes, untracked files),
//   MERGED (reachable from the default ref), ELIGIBLE (the rest; with
//   strategy none, HUMAN_REVIEW "not integrated: strategy none").
// - safe_branch_name(): only [A-Za-z0-9._/-], no empty component, none
//   starting with '.' or '-', no "..": a name that may become a path and
//   a branch name of devgraph's own.
// - branch_json()/render_report(): the result's entry per branch and the
//   human report (integration apart from clean-up, every branch left with
//   its reason, "Commit-history preservation: no" for squash).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "util/expected.h"
#include "util/json.h"

namespace devgraph::clean {

inline constexpr std::string_view kStrategies[] = {"rebase", "merge", "squash", "none"};
bool is_strategy(std::string_view name);

struct Strategy {
  std::string name;    // rebase | merge | squash | none
  std::string source;  // cli | repository_config | skill_config | default
};
Expected<Strategy> resolve_strategy(const std::optional<std::string>& cli,
                                    const std::optional<std::string>& repository_config,
                                    const std::string& skill_default);
Expected<std::optional<std::string>> project_strategy(std::string_view project_yaml);

bool safe_branch_name(std::string_view name);
// main, master, trunk: what a default branch is usually called. Such a
// branch that is not the default is never cleaned: a local clone on a
// feature branch takes that branch as its default, and its real main must
// not be cleaned away as merged into it.
bool default_branch_name(std::string_view name);

struct BranchFacts {
  std::string branch;
  std::string tip;              // the commit it points at
  std::string worktree;         // where it is checked out ("" nowhere)
  std::string canonical;        // where its worktree belongs
  std::optional<long long> pr;  // an open pull request with it as head
  std::string unfinished_run;   // a run whose bundle it is ("" none)
  bool conflicts = false;       // unmerged paths, or a merge or rebase in progress
  bool dirty = false;           // tracked files changed or staged
  bool untracked = false;       // files git neither tracks nor ignores
  bool merged = false;          // tip reachable from the default ref
};

enum class Bucket { merged, protected_, eligible, human_review };
std::string_view bucket_name(Bucket b);  // "MERGED", "PROTECTED", ...
std::optional<Bucket> bucket_from(std::string_view name);

struct Classified {
  Bucket bucket = Bucket::human_review;
  std::string reason;  // "" for MERGED and ELIGIBLE
};
Classified classify(const BranchFacts& facts, const std::string& strategy);

// The throwaway branch and worktree directory name of an integration.
std::string throwaway_branch(const std::string& branch);  // develop/clean-integrated-<slug>
std::string throwaway_slug(const std::string& branch);    // clean-integrated-<slug>

// The report of a finished (or planned) clean run, from state.clean.
std::string render_report(const Json& clean, bool dry_run);

}  // namespace devgraph::clean
