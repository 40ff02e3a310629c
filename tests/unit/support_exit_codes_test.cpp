// The exit-code check every run_devgraph call makes (support/test_util.h).
#include <gtest/gtest-spi.h>
#include <gtest/gtest.h>

#include "support/test_util.h"

namespace devgraph::test {
namespace {

TEST(DocumentedExit, ReadsTheVerbsRowOfTheTable) {
  EXPECT_EQ(documented_exit_codes("run"),
            (std::vector<std::string>{"0", "1", "2", "3", "128+N"}));
  EXPECT_TRUE(documented_exit_codes("no-such-verb").empty());
}

TEST(DocumentedExit, ACodeTheTableListsPasses) {
  ProcessResult r;
  r.exit_code = 3;
  expect_documented_exit({"inbox", "--json"}, r);
  r.exit_code = 130;
  expect_documented_exit({"run"}, r);
  r.exit_code = -1;  // killed by a signal: not the verb's answer
  expect_documented_exit({"inbox"}, r);
}

TEST(DocumentedExit, ACodeTheTableDoesNotListFailsTheTest) {
  ProcessResult r;
  r.exit_code = 1;
  EXPECT_NONFATAL_FAILURE(expect_documented_exit({"inbox", "--json"}, r),
                          "devgraph inbox exited 1");
  r.exit_code = 130;
  EXPECT_NONFATAL_FAILURE(expect_documented_exit({"issue", "list"}, r), "exited 130");
}

}  // namespace
}  // namespace devgraph::test
