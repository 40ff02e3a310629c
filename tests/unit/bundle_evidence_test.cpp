// The evidence gates' pure parts: which command a test writer named may be
// run by devgraph itself, and what its outcome proves.
#include "bundle/evidence.h"

#include <gtest/gtest.h>

namespace devgraph::bundle {
namespace {

struct Check {
  schedule::Footprint footprint{std::vector<std::string>{"src/greet.py", "tests/**"}};
  CheckInputs in(std::vector<std::string> commands,
                 std::vector<std::string> recorded = {"python3 -m pytest -q", "make build"},
                 std::vector<std::string> artifacts = {}) {
    CheckInputs i;
    i.commands = std::move(commands);
    i.recorded = std::move(recorded);
    i.footprint = &footprint;
    i.artifacts = std::move(artifacts);
    return i;
  }
};

std::vector<std::string> argv_of(const Expected<std::vector<CheckCommand>>& c) {
  if (!c) return {"refused: " + c.error().message};
  if (c->size() != 1) return {"commands: " + std::to_string(c->size())};
  return c->front().argv;
}

TEST(Evidence, TheRecordedTestCommandWithATestSelectedIsAllowed) {
  Check c;
  EXPECT_EQ(
      argv_of(check_commands(c.in({"python3 -m pytest tests/test_greet.py -k hello"}))),
      (std::vector<std::string>{"python3", "-m", "pytest", "tests/test_greet.py", "-k", "hello"}));
  EXPECT_EQ(argv_of(check_commands(c.in({"ctest --test-dir build -R Greet"}, {"ctest"}))),
            (std::vector<std::string>{"ctest", "--test-dir", "build", "-R", "Greet"}));
  EXPECT_EQ(argv_of(check_commands(c.in({"npm test -- --grep 'says hello'"}, {"npm test"}))),
            (std::vector<std::string>{"npm", "test", "--", "--grep", "says hello"}));
  EXPECT_EQ(argv_of(check_commands(c.in({"go test ./greet -run Hello"}, {"go test ./..."}))),
            (std::vector<std::string>{"go", "test", "./greet", "-run", "Hello"}));
}

TEST(Evidence, ARecordedProgramWithAnotherSubcommandIsNot) {
  Check c;
  auto r = check_commands(c.in({"npm exec some-package"}, {"npm test"}));
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message.find("neither the project's test command"), std::string::npos);
  EXPECT_FALSE(check_commands(c.in({"python3 -m http.server"})));
}

TEST(Evidence, TheTasksOwnTestFileMayBeRunDirectlyOrByAnInterpreter) {
  Check c;
  EXPECT_TRUE(check_commands(c.in({"tests/greet.sh"})));
  EXPECT_TRUE(check_commands(c.in({"./tests/greet.sh"})));
  EXPECT_TRUE(check_commands(c.in({"sh tests/greet.sh"})));
  EXPECT_TRUE(check_commands(c.in({"bash -eu tests/greet.sh"})));
  EXPECT_TRUE(check_commands(c.in({"node --test tests/greet.test.js"})));
  // An artifact the writer reported counts as the task's own.
  EXPECT_TRUE(check_commands(c.in({"sh checks/greet.sh"}, {}, {"checks/greet.sh"})));
  // Another task's file does not.
  EXPECT_FALSE(check_commands(c.in({"sh other/check.sh"})));
  EXPECT_FALSE(check_commands(c.in({"other/check.sh"})));
}

TEST(Evidence, InlineCodeIsNeverRun) {
  Check c;
  for (const char* cmd :
       {"sh -c 'git push --force'", "bash -ec 'rm -rf src' tests/greet.sh", "sh -s tests/x.sh",
        "python3 -c 'import os' tests/test_greet.py", "node -e 'process.exit(1)' tests/a.js",
        "node --eval=1 tests/a.js", "perl -e 1 tests/a.pl", "python3 -m pytest -c x tests/"}) {
    auto r = check_commands(c.in({cmd}));
    EXPECT_FALSE(r) << cmd;
    if (!r) {
      EXPECT_NE(r.error().message.find("inline code"), std::string::npos) << cmd;
    }
  }
}

TEST(Evidence, NothingOutsideTheWorktreeAndNoForbiddenProgram) {
  Check c;
  for (const char* cmd : {"sh /tmp/x.sh", "sh tests/../../x.sh", "tests/../../../bin/x",
                          "python3 -m pytest --rootdir=/etc tests/", "sh ~/x.sh"})
    EXPECT_FALSE(check_commands(c.in({cmd}))) << cmd;
  for (const char* cmd :
       {"git stash", "gh pr merge 1", "devgraph answer b1 --text x", "rm -rf tests",
        "curl http://x", "env sh tests/greet.sh", "/usr/bin/git status"}) {
    auto r = check_commands(c.in({cmd}, {"git status", "rm -rf build"}));
    ASSERT_FALSE(r) << cmd;
    EXPECT_NE(r.error().message.find("may never run"), std::string::npos) << r.error().message;
  }
}

TEST(Evidence, ShellSyntaxIsRefusedNotInterpreted) {
  Check c;
  for (const char* cmd : {"sh tests/greet.sh; git push", "sh tests/greet.sh && rm -rf .",
                          "sh tests/greet.sh | tee out", "sh tests/$(whoami).sh",
                          "sh tests/greet.sh > /dev/null", "sh 'tests/greet.sh"})
    EXPECT_FALSE(check_commands(c.in({cmd}))) << cmd;
}

TEST(Evidence, EveryCommandListedIsPartOfTheCheckAndMustBeAllowed) {
  Check c;
  // A compiled test: the recorded build, then the test.
  auto r = check_commands(c.in({"make build", "", "sh tests/greet.sh"}));
  ASSERT_TRUE(r) << r.error().message;
  ASSERT_EQ(r->size(), 2u);
  EXPECT_EQ((*r)[0].text, "make build");
  EXPECT_EQ((*r)[1].text, "sh tests/greet.sh");
  auto refused = check_commands(c.in({"sh tests/greet.sh", "git status"}));
  ASSERT_FALSE(refused);
  EXPECT_NE(refused.error().message.find("`git status`"), std::string::npos)
      << refused.error().message;
  auto none = check_commands(c.in({}));
  ASSERT_FALSE(none);
  EXPECT_NE(none.error().message.find("names no command"), std::string::npos);
  EXPECT_FALSE(check_commands(c.in({" ", ""})));
}

CommandResult exited(int code) {
  CommandResult r;
  r.exit_code = code;
  return r;
}

TEST(Evidence, WhatARunProves) {
  EXPECT_EQ(verdict_of(exited(1)), CheckVerdict::red);
  EXPECT_EQ(verdict_of(exited(2)), CheckVerdict::red);
  EXPECT_EQ(verdict_of(exited(0)), CheckVerdict::green);
  EXPECT_EQ(verdict_of(exited(127)), CheckVerdict::not_run) << "not found is no red proof";
  EXPECT_EQ(verdict_of(exited(126)), CheckVerdict::not_run);
  CommandResult crashed;
  crashed.exit_code = -1;
  crashed.term_signal = 6;
  EXPECT_EQ(verdict_of(crashed), CheckVerdict::red) << "an abort is a failing test";
  CommandResult slow = exited(1);
  slow.timed_out = true;
  EXPECT_EQ(verdict_of(slow), CheckVerdict::not_run);
  CommandResult stopped = exited(0);
  stopped.interrupted_by = 15;
  EXPECT_EQ(verdict_of(stopped), CheckVerdict::not_run);
  EXPECT_EQ(verdict_of(Expected<CommandResult>(fail("no such file"))), CheckVerdict::not_run);
  CheckCommand cmd{{"sh", "t.sh"}, "sh t.sh"};
  EXPECT_EQ(describe_check(cmd, exited(3)), "`sh t.sh` exited 3");
  EXPECT_EQ(describe_check(cmd, slow), "`sh t.sh` timed out");
}

}  // namespace
}  // namespace devgraph::bundle
