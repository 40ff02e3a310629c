#include "git/repo.h"

#include <memory>

#include "util/text.h"

namespace devgraph::git {
namespace {

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start < text.size()) {
    size_t nl = text.find('\n', start);
    if (nl == std::string::npos) nl = text.size();
    if (nl > start) out.push_back(text.substr(start, nl - start));
    start = nl + 1;
  }
  return out;
}

class RealRepo final : public RepoQueries {
 public:
  RealRepo(CommandRunner& runner, std::string top, std::map<std::string, std::string> env)
      : runner_(runner), top_(std::move(top)), env_(std::move(env)) {}

  Status fetch_prune() override {
    DG_TRY(auto r, raw({"fetch", "--prune", "--quiet", "origin"}, std::chrono::minutes(5)));
    if (r.ok()) return {};
    return fail(ErrorKind::transient, "git fetch --prune origin failed: " + last_line(r.err));
  }

  Expected<std::string> default_branch(bool remote) override {
    if (remote) {
      DG_TRY(auto r, raw({"symbolic-ref", "--quiet", "--short", "refs/remotes/origin/HEAD"}));
      std::string ref = trimmed(r.out);
      if (r.ok() && ref.rfind("origin/", 0) == 0) return ref.substr(7);
      for (const char* name : {"main", "master"}) {
        DG_TRY(auto v, raw({"rev-parse", "--verify", "--quiet",
                            std::string("refs/remotes/origin/") + name}));
        if (v.ok()) return std::string(name);
      }
      return fail(ErrorKind::refused,
                  "cannot tell origin's default branch (no origin/HEAD, origin/main or "
                  "origin/master; run git fetch)");
    }
    DG_TRY(auto r, raw({"symbolic-ref", "--quiet", "--short", "HEAD"}));
    std::string name = trimmed(r.out);
    if (!r.ok() || name.empty())
      return fail(ErrorKind::refused,
                  "the primary clone has no branch checked out (detached HEAD); check out the "
                  "default branch");
    return name;
  }

  Expected<bool> is_ancestor(const std::string& ancestor, const std::string& descendant) override {
    DG_TRY(auto r, raw({"merge-base", "--is-ancestor", ancestor, descendant}));
    if (r.exit_code == 0) return true;
    if (r.exit_code == 1) return false;
    return fail("git merge-base --is-ancestor failed: " + last_line(r.err));
  }

  Expected<std::vector<std::string>> branches(const std::string& prefix) override {
    DG_TRY(auto r, raw({"for-each-ref", "--format=%(refname:short)", "refs/heads/" + prefix}));
    if (!r.ok()) return fail("git for-each-ref failed: " + last_line(r.err));
    return lines_of(r.out);
  }

  Expected<std::vector<WorktreeEntry>> worktrees() override {
    DG_TRY(auto r, raw({"worktree", "list", "--porcelain"}));
    if (!r.ok()) return fail("git worktree list failed: " + last_line(r.err));
    std::vector<WorktreeEntry> out;
    bool first = true;
    WorktreeEntry cur;
    auto flush = [&] {
      if (!cur.path.empty() && !first) out.push_back(cur);
      if (!cur.path.empty()) first = false;
      cur = {};
    };
    for (const auto& line : lines_of(r.out)) {
      if (line.rfind("worktree ", 0) == 0) {
        flush();
        cur.path = line.substr(9);
      } else if (line.rfind("branch refs/heads/", 0) == 0) {
        cur.branch = line.substr(18);
      } else if (line == "prunable" || line.rfind("prunable ", 0) == 0) {
        cur.prunable = true;
      }
    }
    flush();
    return out;
  }

 private:
  static std::string trimmed(std::string s) {
    while (!s.empty() && (s.back() == '\n' || s.back() == '\r' || s.back() == ' ')) s.pop_back();
    return s;
  }

  Expected<CommandResult> raw(std::vector<std::string> args,
                              std::chrono::milliseconds timeout = std::chrono::minutes(1)) {
    CommandSpec spec;
    spec.argv = {"git"};
    spec.argv.insert(spec.argv.end(), args.begin(), args.end());
    spec.cwd = top_;
    spec.env = env_;
    spec.env["GIT_TERMINAL_PROMPT"] = "0";
    spec.env["GIT_OPTIONAL_LOCKS"] = "0";
    spec.timeout = timeout;
    return runner_.run(spec);
  }

  CommandRunner& runner_;
  std::string top_;
  std::map<std::string, std::string> env_;
};

}  // namespace

std::unique_ptr<RepoQueries> make_repo_queries(CommandRunner& runner, std::string top,
                                               std::map<std::string, std::string> env) {
  return std::make_unique<RealRepo>(runner, std::move(top), std::move(env));
}

}  // namespace devgraph::git
