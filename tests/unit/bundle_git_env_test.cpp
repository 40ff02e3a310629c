// The driver's git environment turns off auto maintenance without
// disturbing config entries already passed through the environment.
#include "bundle/git_env.h"

#include <gtest/gtest.h>

#include <cstdlib>

#include "support/test_util.h"

namespace devgraph::bundle {
namespace {

TEST(DriverGitEnv, AppendsAfterEntriesAlreadyInTheEnvironment) {
  ::unsetenv("GIT_CONFIG_COUNT");
  auto env = driver_git_env();
  EXPECT_EQ(env["GIT_CONFIG_COUNT"], "1");
  EXPECT_EQ(env["GIT_CONFIG_KEY_0"], "maintenance.auto");
  EXPECT_EQ(env["GIT_CONFIG_VALUE_0"], "false");
  ::setenv("GIT_CONFIG_COUNT", "2", 1);
  env = driver_git_env();
  EXPECT_EQ(env["GIT_CONFIG_COUNT"], "3");
  EXPECT_EQ(env["GIT_CONFIG_KEY_2"], "maintenance.auto");
  EXPECT_EQ(env.count("GIT_CONFIG_KEY_0"), 0u);
  ::setenv("GIT_CONFIG_COUNT", "x", 1);
  EXPECT_TRUE(driver_git_env().empty());
  ::unsetenv("GIT_CONFIG_COUNT");
}

TEST(DriverGitEnv, GitSeesTheSetting) {
  test::Scratch s;
  ASSERT_EQ(test::run_process({"git", "init", "-q", s.path()}).exit_code, 0);
  ::unsetenv("GIT_CONFIG_COUNT");
  auto r =
      test::run_process({"git", "-C", s.path(), "config", "maintenance.auto"}, driver_git_env());
  EXPECT_EQ(r.out, "false\n");
}

}  // namespace
}  // namespace devgraph::bundle
