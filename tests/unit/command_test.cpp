#include "proc/command.h"

#include <gtest/gtest.h>

namespace devgraph {
namespace {

TEST(Command, CapturesOutputAndExitCode) {
  auto r = run_command({.argv = {"sh", "-c", "echo out; echo err >&2; exit 3"}});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->exit_code, 3);
  EXPECT_EQ(r->out, "out\n");
  EXPECT_EQ(r->err, "err\n");
}

TEST(Command, ArgvIsNeverAShell) {
  auto r = run_command({.argv = {"echo", "$HOME; rm -rf /", "a b"}});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->out, "$HOME; rm -rf / a b\n");
}

TEST(Command, MissingProgramIsAnError) {
  auto r = run_command({.argv = {"devgraph-no-such-program-xyz"}});
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("devgraph-no-such-program-xyz"), std::string::npos);
}

TEST(Command, InputCwdAndEnvironment) {
  auto r = run_command({.argv = {"sh", "-c", "cat; pwd; echo ${DG_X:-unset}"},
                        .cwd = "/",
                        .env = {{"DG_X", "set"}},
                        .input = "hello\n"});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->out, "hello\n/\nset\n");
}

TEST(Command, TimeoutKillsTheWholeGroup) {
  // The grandchild keeps the pipe open; only a group kill ends it.
  auto r = run_command({.argv = {"sh", "-c", "sleep 30 & sleep 30; wait"},
                        .timeout = std::chrono::milliseconds(100),
                        .kill_grace = std::chrono::milliseconds(100)});
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(r->timed_out);
  EXPECT_FALSE(r->ok());
}

TEST(Command, OutputIsBoundedKeepingTheTail) {
  auto r = run_command(
      {.argv = {"sh", "-c", "yes x | head -c 1000000; echo END"}, .max_output_bytes = 1024});
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(r->output_truncated);
  EXPECT_EQ(r->out.size(), 1024u);
  EXPECT_EQ(r->out.substr(r->out.size() - 4), "END\n");
}

}  // namespace
}  // namespace devgraph
