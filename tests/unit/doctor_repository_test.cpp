// doctor's checks of the repository (src/doctor/repository.h), from
// hand-built facts: what `devgraph run` refuses is a problem with its fix,
// no origin is a warning, and the checks are skipped outside a repository
// unless --repo named one.
#include "doctor/repository.h"

#include <gtest/gtest.h>

namespace devgraph::doctor {
namespace {

using Fault = orchestrator::RepositoryCheck::Fault;

RepositoryFacts facts(Fault fault, const std::string& why = "") {
  RepositoryFacts f;
  f.check.fault = fault;
  f.check.why = why;
  f.check.dir = "/src/widgets";
  if (fault == Fault::none || fault == Fault::foreign_origin) {
    f.check.top = "/src/widgets";
    f.check.place.owner = "local";
    f.check.place.repo = "widgets";
    f.check.place.primary_top = "/src/widgets";
    f.check.delivery = "local";
  }
  return f;
}

const Finding* find(const std::vector<Finding>& v, const std::string& id) {
  for (const auto& f : v)
    if (f.id == id) return &f;
  return nullptr;
}

TEST(DoctorRepository, OutsideARepositoryTheChecksAreSkippedUnlessRepoNamedOne) {
  auto f = facts(Fault::not_git, "/tmp/x is not a git repository");
  auto skipped = check_repository(f);
  ASSERT_EQ(skipped.size(), 1u);
  EXPECT_EQ(skipped[0].level, Level::warning);
  EXPECT_EQ(skipped[0].fix, "run doctor in your clone, or pass --repo DIR");
  f.repo_given = true;
  auto named = check_repository(f);
  ASSERT_EQ(named.size(), 1u);
  EXPECT_EQ(named[0].level, Level::problem);
  EXPECT_EQ(named[0].message, "/tmp/x is not a git repository");
}

TEST(DoctorRepository, ALinkedWorktreeIsAProblemPointingAtThePrimaryClone) {
  auto f = facts(Fault::linked_worktree, "/wt/b1 is a linked worktree of /src/widgets");
  f.check.place.primary_top = "/src/widgets";
  auto out = check_repository(f);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].level, Level::problem);
  EXPECT_EQ(out[0].fix, "use the primary clone: devgraph doctor --repo /src/widgets");
  EXPECT_EQ(check_repository(facts(Fault::bare, "bare"))[0].level, Level::problem);
}

TEST(DoctorRepository, AnOriginThatNamesNoGithubRepositoryIsAProblem) {
  auto out = check_repository(facts(Fault::foreign_origin, "origin /srv/x does not name ..."));
  ASSERT_NE(find(out, "repository"), nullptr);
  EXPECT_EQ(find(out, "repository")->level, Level::ok);
  const Finding* origin = find(out, "origin");
  ASSERT_NE(origin, nullptr);
  EXPECT_EQ(origin->level, Level::problem);
  EXPECT_NE(origin->fix.find("git remote remove origin"), std::string::npos);
}

TEST(DoctorRepository, NoOriginIsLocalDeliveryAndAWarning) {
  auto f = facts(Fault::none);
  f.default_branch = Expected<std::string>(std::string("main"));
  f.commands = Expected<project::Commands>(project::Commands{"make test", "", "Makefile targets"});
  auto out = check_repository(f);
  EXPECT_EQ(find(out, "repository")->message, "primary clone /src/widgets (local/widgets)");
  const Finding* origin = find(out, "origin");
  ASSERT_NE(origin, nullptr);
  EXPECT_EQ(origin->level, Level::warning);
  EXPECT_NE(origin->message.find("no origin remote: local delivery"), std::string::npos);
  EXPECT_EQ(origin->fix,
            "for pull requests: git remote add origin https://github.com/OWNER/REPO.git");
  EXPECT_EQ(find(out, "default_branch")->message, "default branch main (checked out)");
  EXPECT_EQ(find(out, "commands")->level, Level::ok);
  EXPECT_EQ(find(out, "commands")->message,
            "test `make test`, no build command (from Makefile targets)");
}

TEST(DoctorRepository, GithubDeliveryWithoutADefaultBranchIsAProblemWithTheFetch) {
  auto f = facts(Fault::none);
  f.check.delivery = "github";
  f.check.origin = "https://github.com/acme/widgets.git";
  f.default_branch = Expected<std::string>(fail("cannot tell origin's default branch"));
  f.commands = Expected<project::Commands>(project::Commands{});
  auto out = check_repository(f);
  EXPECT_EQ(find(out, "origin")->level, Level::ok);
  const Finding* branch = find(out, "default_branch");
  EXPECT_EQ(branch->level, Level::problem);
  EXPECT_EQ(branch->fix, "run: git fetch origin && git remote set-head origin --auto");
  const Finding* commands = find(out, "commands");
  EXPECT_EQ(commands->level, Level::warning);
  EXPECT_NE(commands->fix.find(".devgraph/commands.json"), std::string::npos);
}

TEST(DoctorRepository, ACommandsFileRunCannotReadIsAProblem) {
  auto f = facts(Fault::none);
  f.default_branch = Expected<std::string>(std::string("main"));
  f.commands = Expected<project::Commands>(fail(".devgraph/commands.json: not valid JSON"));
  auto out = check_repository(f);
  const Finding* commands = find(out, "commands");
  ASSERT_NE(commands, nullptr);
  EXPECT_EQ(commands->level, Level::problem);
  EXPECT_EQ(commands->message, ".devgraph/commands.json: not valid JSON");
}

TEST(DoctorRepository, GitThatCannotRunIsAProblem) {
  RepositoryFacts f;
  f.git_error = "cannot run git: No such file or directory";
  auto out = check_repository(f);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].level, Level::problem);
  EXPECT_FALSE(f.has_clone());
}

}  // namespace
}  // namespace devgraph::doctor
