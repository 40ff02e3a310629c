#include "support/fake_git.h"

#include <fnmatch.h>

#include <algorithm>

#include "util/fs.h"

namespace devgraph::git {

bool pathspec_matches(const std::string& spec, const std::string& path) {
  constexpr std::string_view kLiteral = ":(literal)";
  if (spec.rfind(kLiteral, 0) == 0) {
    std::string lit = spec.substr(kLiteral.size());
    return lit == path || path.rfind(lit + "/", 0) == 0;
  }
  if (spec == path) return true;
  std::string dir = spec;
  if (!dir.empty() && dir.back() == '/') dir.pop_back();
  if (!dir.empty() && path.rfind(dir + "/", 0) == 0) return true;
  return ::fnmatch(spec.c_str(), path.c_str(), 0) == 0;
}

FakeGit::FakeGit(std::string dir) : dir_(std::move(dir)) {
  commits.push_back({"0000000000000000000000000000000000000000", "base", {}});
}

Expected<std::string> FakeGit::rev_parse(const std::string& rev) {
  if (rev == "HEAD") return commits.back().hash;
  for (const auto& c : commits)
    if (c.hash == rev || c.hash.rfind(rev, 0) == 0) return c.hash;
  return fail("git rev-parse failed in " + dir_ + ": unknown revision " + rev);
}

Expected<std::vector<StatusEntry>> FakeGit::status() {
  std::vector<StatusEntry> out;
  // Over a real directory, an untracked path whose file is gone (moved
  // away, say) is no longer listed, as git status would not list it.
  const bool real = is_directory(dir_);
  for (const auto& p : dirty_)
    if (!real || staged_.count(p) || path_exists(dir_ + "/" + p))
      out.push_back({staged_.count(p) ? 'A' : '?', staged_.count(p) ? ' ' : '?', p});
  return out;
}

Status FakeGit::add(const std::vector<std::string>& pathspec) {
  if (pathspec.empty()) return fail("git add: empty pathspec");
  for (const auto& p : dirty_)
    for (const auto& s : pathspec)
      if (pathspec_matches(s, p)) staged_.insert(p);
  return {};
}

Expected<std::vector<std::string>> FakeGit::staged(const std::vector<std::string>& pathspec) {
  std::vector<std::string> out;
  for (const auto& p : staged_)
    if (pathspec.empty() || std::any_of(pathspec.begin(), pathspec.end(),
                                        [&](const auto& s) { return pathspec_matches(s, p); }))
      out.push_back(p);
  return out;
}

Status FakeGit::pre_commit(const std::vector<std::string>& pathspec) {
  return run_hook("pre-commit", pathspec);
}

Status FakeGit::run_hook(const std::string& name, const std::vector<std::string>& pathspec) {
  if (!hooks) return {};
  hooks_run.push_back(name);
  if (on_hook) return on_hook(*this, name, pathspec);
  return {};
}

Expected<std::string> FakeGit::commit(const CommitRequest& request,
                                      const std::vector<std::string>& pathspec,
                                      bool pre_commit_done) {
  ++commit_calls;
  if (hooks) {
    if (!pre_commit_done) DG_CHECK(pre_commit(pathspec));
    DG_CHECK(run_hook("commit-msg", {}));
  }
  DG_TRY(auto paths, staged(pathspec));
  if (paths.empty()) return fail("git commit failed in " + dir_ + ": nothing to commit");
  char buf[41];
  std::snprintf(buf, sizeof buf, "%040zx", commits.size());
  FakeCommit c{buf, format_commit_message(request), paths};
  for (const auto& p : paths) {
    dirty_.erase(p);
    staged_.erase(p);
  }
  commits.push_back(std::move(c));
  return commits.back().hash;
}

Expected<std::vector<TrailerHit>> FakeGit::find_trailer(const std::string& key,
                                                        const std::string& since) {
  std::vector<TrailerHit> hits;
  for (auto it = commits.rbegin(); it != commits.rend(); ++it) {
    if (!since.empty() && it->hash == since) break;
    std::string needle = "\n" + key + ": ";
    auto pos = it->message.find(needle);
    if (pos == std::string::npos) continue;
    auto start = pos + needle.size();
    hits.push_back({it->hash, it->message.substr(start, it->message.find('\n', start) - start)});
  }
  return hits;
}

Status FakeGit::worktree_add(const std::string& path, const std::string& branch,
                             const std::string& base) {
  worktrees_added.push_back(path + " " + branch + " " + base);
  return {};
}

Expected<std::string> FakeGit::diff(const std::string&) {
  return diff_text;
}

Status FakeGit::push(const std::string& remote, const std::string& branch) {
  ++push_calls;
  pushed.push_back(branch);
  remote_[remote + " " + branch] = commits.back().hash;
  return {};
}

Expected<std::optional<std::string>> FakeGit::remote_head(const std::string& remote,
                                                          const std::string& branch) {
  auto it = remote_.find(remote + " " + branch);
  if (it == remote_.end()) return std::optional<std::string>();
  return std::optional<std::string>(it->second);
}

Expected<std::vector<std::string>> FakeGit::log_oneline(const std::string& base) {
  std::vector<std::string> out;
  bool after = false;
  for (const auto& c : commits) {
    if (after) out.push_back(c.hash + " " + c.message.substr(0, c.message.find('\n')));
    if (c.hash == base) after = true;
  }
  return out;
}

}  // namespace devgraph::git
