#include "doctor/repository.h"

#include "git/repo.h"

namespace devgraph::doctor {
namespace {

using Fault = orchestrator::RepositoryCheck::Fault;

constexpr const char* kArea = "repository";

}  // namespace

RepositoryFacts gather_repository(CommandRunner& runner, const std::string& repo, bool repo_given,
                                  const guard::Roots& roots) {
  RepositoryFacts f;
  f.repo_given = repo_given;
  auto checked = orchestrator::check_repository(runner, repo, roots);
  if (!checked) {
    f.git_error = checked.error().message;
    return f;
  }
  f.check = std::move(*checked);
  if (f.check.fault != Fault::none) return f;
  auto queries = git::make_repo_queries(runner, f.check.top);
  f.default_branch = queries->default_branch(f.check.delivery == "github");
  f.commands = project::detect_commands(f.check.top);
  return f;
}

std::vector<Finding> check_repository(const RepositoryFacts& f) {
  std::vector<Finding> out;
  if (f.git_error) {
    out.push_back(problem("repository", kArea, "cannot run git: " + *f.git_error,
                          "install git and put it on PATH"));
    return out;
  }
  const auto& c = f.check;
  switch (c.fault) {
    case Fault::no_directory:
      out.push_back(problem("repository", kArea, c.why, "pass --repo your clone's directory"));
      return out;
    case Fault::not_git:
      if (!f.repo_given) {
        out.push_back(warning("repository", kArea,
                              c.dir + " is not inside a git repository, so the repository's "
                                      "checks were skipped",
                              "run doctor in your clone, or pass --repo DIR"));
      } else {
        out.push_back(problem("repository", kArea, c.why, "pass --repo your clone's directory"));
      }
      return out;
    case Fault::bare:
      out.push_back(problem(
          "repository", kArea, c.why,
          "clone it with a working tree (git clone " + c.dir + " DIR) and run devgraph there"));
      return out;
    case Fault::linked_worktree:
      out.push_back(problem("repository", kArea, c.why,
                            c.place.primary_top ? "use the primary clone: devgraph doctor --repo " +
                                                      *c.place.primary_top
                                                : std::string("use the primary clone")));
      return out;
    case Fault::foreign_origin:
    case Fault::none:
      break;
  }
  out.push_back(ok("repository", kArea,
                   "primary clone " + c.top + " (" + c.place.owner + "/" + c.place.repo + ")"));
  if (c.fault == Fault::foreign_origin) {
    out.push_back(problem("origin", kArea, c.why,
                          "point origin at GitHub (git remote set-url origin "
                          "https://github.com/OWNER/REPO.git), or remove it for local delivery "
                          "(git remote remove origin)"));
    return out;
  }
  if (c.delivery == "github") {
    out.push_back(ok("origin", kArea,
                     "origin " + c.origin + ": github delivery to " + c.place.owner + "/" +
                         c.place.repo + " (pull requests through gh)"));
  } else {
    out.push_back(warning("origin", kArea,
                          "no origin remote: local delivery (ready branches and local issues, no "
                          "pull requests)",
                          "for pull requests: git remote add origin "
                          "https://github.com/OWNER/REPO.git"));
  }
  if (f.default_branch) {
    if (*f.default_branch) {
      out.push_back(ok("default_branch", kArea,
                       "default branch " + **f.default_branch +
                           (c.delivery == "github" ? " (origin's)" : " (checked out)")));
    } else {
      out.push_back(problem("default_branch", kArea, f.default_branch->error().message,
                            c.delivery == "github"
                                ? "run: git fetch origin && git remote set-head origin --auto"
                                : "check out the default branch (git switch main)"));
    }
  }
  if (f.commands) {
    if (!*f.commands) {
      out.push_back(problem("commands", kArea, f.commands->error().message,
                            "fix that file, or say the commands in .devgraph/commands.json"));
    } else {
      const project::Commands& cmd = **f.commands;
      if (cmd.test.empty() && cmd.build.empty()) {
        out.push_back(warning("commands", kArea,
                              "no test or build command found: bundle_verify has nothing to "
                              "run and passes every bundle",
                              "say them in .devgraph/commands.json: {\"test\": \"...\", "
                              "\"build\": \"...\"}"));
      } else {
        std::string what = cmd.test.empty() ? "no test command" : "test `" + cmd.test + "`";
        what += cmd.build.empty() ? ", no build command" : ", build `" + cmd.build + "`";
        out.push_back(ok("commands", kArea, what + " (from " + cmd.source + ")"));
      }
    }
  }
  return out;
}

}  // namespace devgraph::doctor
