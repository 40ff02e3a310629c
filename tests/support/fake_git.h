// An in-memory Git for unit tests of code that drives git: a set of dirty
// paths stands for the working tree, a list of commits for history. It keeps
// the contracts of git.h that callers rely on (add only what the pathspec
// names, commit only what is staged, trailers findable afterwards) and
// counts calls so a test can assert an effect happened exactly once.
#pragma once

#include <functional>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "git/git.h"

namespace devgraph::git {

class FakeGit final : public Git {
 public:
  struct FakeCommit {
    std::string hash;
    std::string message;
    std::vector<std::string> paths;
  };

  explicit FakeGit(std::string dir = "/fake/worktree");

  // Test controls.
  void touch(const std::string& path) { dirty_.insert(path); }
  std::vector<FakeCommit> commits;  // oldest first
  std::vector<std::string> pushed;  // branches pushed
  int commit_calls = 0;
  // worktree_add calls, "<path> <branch> <base>" each.
  std::vector<std::string> worktrees_added;
  int push_calls = 0;
  std::string diff_text;
  // Hooks: `hooks` is GitOptions::run_hooks; `on_hook` answers each hook
  // run, "pre-commit" or "commit-msg" (empty: every hook passes), and may
  // touch paths as a rewriting hook would; hooks_run lists the hooks run,
  // in order.
  bool hooks = true;
  // `pathspec` is what the commit takes ({} for commit-msg).
  std::function<Status(FakeGit&, const std::string& name, const std::vector<std::string>& pathspec)>
      on_hook;
  std::vector<std::string> hooks_run;

  const std::string& dir() const override { return dir_; }
  Expected<std::string> rev_parse(const std::string& rev) override;
  Expected<std::vector<StatusEntry>> status() override;
  Status add(const std::vector<std::string>& pathspec) override;
  Expected<std::vector<std::string>> staged(const std::vector<std::string>& pathspec = {}) override;
  bool runs_hooks() const override { return hooks; }
  Status pre_commit(const std::vector<std::string>& pathspec) override;
  Expected<std::string> commit(const CommitRequest& request,
                               const std::vector<std::string>& pathspec = {},
                               bool pre_commit_done = false) override;
  Expected<std::vector<TrailerHit>> find_trailer(const std::string& key,
                                                 const std::string& since = "") override;
  Status worktree_add(const std::string& path, const std::string& branch,
                      const std::string& base) override;
  Expected<std::string> diff(const std::string& range) override;
  Status push(const std::string& remote, const std::string& branch) override;
  Expected<std::optional<std::string>> remote_head(const std::string& remote,
                                                   const std::string& branch) override;
  Expected<std::vector<std::string>> log_oneline(const std::string& base) override;

 private:
  Status run_hook(const std::string& name, const std::vector<std::string>& pathspec);
  std::string dir_;
  std::set<std::string> dirty_;
  std::set<std::string> staged_;
  std::map<std::string, std::string> remote_;
};

// True when `path` is matched by a pathspec entry: equal, under a directory
// entry ("src/" or "src"), or an fnmatch-style glob ("src/*.py", "src/**");
// a ":(literal)" entry matches only that path or what lies under it.
bool pathspec_matches(const std::string& spec, const std::string& path);

}  // namespace devgraph::git
