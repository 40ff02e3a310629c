#include "clean/plan.h"

#include "graph/yaml_doc.h"
#include "guard/guard.h"

namespace devgraph::clean {

bool is_strategy(std::string_view name) {
  for (auto s : kStrategies)
    if (s == name) return true;
  return false;
}

namespace {

Error not_a_strategy(const std::string& name, const std::string& where) {
  return fail(ErrorKind::usage,
              where + ": '" + name + "' is not a clean strategy (rebase, merge, squash or none)");
}

}  // namespace

Expected<Strategy> resolve_strategy(const std::optional<std::string>& cli,
                                    const std::optional<std::string>& repository_config,
                                    const std::string& skill_default) {
  if (cli) {
    if (!is_strategy(*cli)) return not_a_strategy(*cli, "--strategy");
    return Strategy{*cli, "cli"};
  }
  if (repository_config) {
    if (!is_strategy(*repository_config))
      return not_a_strategy(*repository_config, "project.yaml develop.clean.strategy");
    return Strategy{*repository_config, "repository_config"};
  }
  if (!skill_default.empty()) {
    if (!is_strategy(skill_default))
      return not_a_strategy(skill_default, "GRAPH.yaml cleanup.default_strategy");
    return Strategy{skill_default, "skill_config"};
  }
  return Strategy{"rebase", "default"};
}

Expected<std::optional<std::string>> project_strategy(std::string_view project_yaml) {
  auto doc = parse_yaml_document(project_yaml, "project.yaml");
  if (!doc) return fail(ErrorKind::usage, doc.error().message);
  const Json* at = &*doc;
  for (const char* key : {"develop", "clean", "strategy"}) {
    if (!at->is_object() || !at->contains(key)) return std::optional<std::string>();
    at = &(*at)[key];
  }
  if (at->is_null()) return std::optional<std::string>();
  if (!at->is_string())
    return fail(ErrorKind::usage,
                "project.yaml develop.clean.strategy: " + at->dump() + " is not a strategy name");
  std::string name = at->get<std::string>();
  if (!is_strategy(name)) return not_a_strategy(name, "project.yaml develop.clean.strategy");
  return std::optional<std::string>(name);
}

bool safe_branch_name(std::string_view name) {
  if (name.empty() || name.size() > 200) return false;
  size_t start = 0;
  while (start <= name.size()) {
    size_t end = name.find('/', start);
    if (end == std::string_view::npos) end = name.size();
    std::string_view part = name.substr(start, end - start);
    if (part.empty() || part[0] == '.' || part[0] == '-' || part.find("..") != part.npos)
      return false;
    for (char c : part) {
      bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                c == '.' || c == '_' || c == '-';
      if (!ok) return false;
    }
    start = end + 1;
  }
  return true;
}

bool default_branch_name(std::string_view name) {
  return name == "main" || name == "master" || name == "trunk";
}

std::string_view bucket_name(Bucket b) {
  switch (b) {
    case Bucket::merged:
      return "MERGED";
    case Bucket::protected_:
      return "PROTECTED";
    case Bucket::eligible:
      return "ELIGIBLE";
    case Bucket::human_review:
      return "HUMAN_REVIEW";
  }
  return "HUMAN_REVIEW";
}

std::optional<Bucket> bucket_from(std::string_view name) {
  for (Bucket b : {Bucket::merged, Bucket::protected_, Bucket::eligible, Bucket::human_review})
    if (bucket_name(b) == name) return b;
  return std::nullopt;
}

Classified classify(const BranchFacts& f, const std::string& strategy) {
  if (f.pr) return {Bucket::protected_, "open pull request #" + std::to_string(*f.pr)};
  if (default_branch_name(f.branch)) return {Bucket::protected_, "named like a default branch"};
  if (!f.unfinished_run.empty())
    return {Bucket::protected_, "a bundle of unfinished run " + f.unfinished_run};
  if (!safe_branch_name(f.branch))
    return {Bucket::human_review,
            "branch name " + f.branch + " has characters devgraph keeps out of paths"};
  if (!f.worktree.empty() && f.worktree != f.canonical)
    return {Bucket::human_review,
            "checked out at " + f.worktree + ", not at the canonical worktree " + f.canonical};
  if (f.conflicts) return {Bucket::human_review, "conflicts in its worktree"};
  if (f.dirty) return {Bucket::human_review, "uncommitted changes in its worktree"};
  if (f.untracked) return {Bucket::human_review, "untracked files in its worktree"};
  if (f.merged) return {Bucket::merged, ""};
  if (strategy == "none") return {Bucket::human_review, "not integrated: strategy none"};
  return {Bucket::eligible, ""};
}

std::string throwaway_slug(const std::string& branch) {
  return "clean-integrated-" + guard::branch_slug(branch);
}

std::string throwaway_branch(const std::string& branch) {
  return "develop/" + throwaway_slug(branch);
}

namespace {

std::string short_sha(const std::string& sha) {
  return sha.substr(0, 12);
}

}  // namespace

std::string render_report(const Json& clean, bool dry_run) {
  std::string out;
  out += "Integration strategy: " + json_str(clean, "strategy") + " (from " +
         json_str(clean, "strategy_source") + ")\n";
  const Json branches = clean.value("branches", Json::array());
  std::string integration, cleanup, left;
  for (const auto& b : branches) {
    const std::string name = json_str(b, "branch");
    const std::string outcome = json_str(b, "outcome");
    const std::string strategy = json_str(b, "strategy");
    if (!strategy.empty() && outcome != "planned") {
      integration += "  " + name + ": " + strategy;
      if (outcome == "conflict") {
        integration += ", " + json_str(b, "reason") + "; the branch is as it was\n";
      } else {
        integration += " " + short_sha(json_str(b, "before")) + " -> " +
                       short_sha(json_str(b, "after")) + ", " +
                       std::to_string(b.value("commits", 0)) + " commit(s), " +
                       (outcome == "verified" ? std::string("verified on the default branch")
                                              : "unverified: " + json_str(b, "reason")) +
                       "\n";
        if (strategy == "squash") {
          integration += "    Commit-history preservation: no (squashed " +
                         std::to_string(b.value("commits", 0)) + " commit(s) of " +
                         short_sha(json_str(b, "before")) + ":";
          for (const auto& s : b.value("subjects", Json::array()))
            integration += " \"" + s.get<std::string>() + "\"";
          integration += ")\n";
        }
      }
    } else if (outcome == "planned") {
      integration += "  " + name + ": would integrate by " + strategy + " (" +
                     std::to_string(b.value("commits", 0)) + " commit(s))\n";
    }
    if (b.value("worktree_removed", false))
      cleanup += "  removed worktree " + json_str(b, "worktree") + "\n";
    if (b.value("deleted", false))
      cleanup += "  deleted branch " + name + " (was " + short_sha(json_str(b, "before")) + ", " +
                 (outcome == "cleaned" ? "merged already" : "integration verified") + ")\n";
    if (b.value("throwaway_removed", false))
      cleanup += "  removed " + throwaway_branch(name) + " and its worktree (not landed)\n";
    else if (b.value("throwaway_worktree_removed", false))
      cleanup += "  removed the worktree of " + throwaway_branch(name) +
                 " (the branch stays for the fast-forward)\n";
    if (dry_run && json_str(b, "bucket") == "MERGED")
      cleanup += "  would delete branch " + name + " (merged already)\n";
    if (outcome == "kept" || outcome == "conflict" || outcome == "unverified")
      left += "  " + name + " [" + json_str(b, "bucket") + "]: " + json_str(b, "reason") + "\n";
  }
  out += "Integration:\n" + (integration.empty() ? "  nothing integrated\n" : integration);
  out += "Clean-up:\n" + (cleanup.empty() ? "  nothing removed\n" : cleanup);
  out += "Left for a person:\n" + (left.empty() ? "  nothing\n" : left);
  return out;
}

}  // namespace devgraph::clean
