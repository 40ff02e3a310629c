#include <gtest/gtest.h>

#include "util/words.h"

namespace devgraph {
namespace {

using V = std::vector<std::string>;

TEST(SplitCommand, PlainWords) {
  EXPECT_EQ(*split_command("python3 -m unittest  discover -s tests"),
            (V{"python3", "-m", "unittest", "discover", "-s", "tests"}));
}

TEST(SplitCommand, Quotes) {
  EXPECT_EQ(*split_command(R"(pytest -k 'a and b' "x \"y\" $z" c\ d)"),
            (V{"pytest", "-k", "a and b", "x \"y\" $z", "c d"}));
  EXPECT_EQ(*split_command("echo 'a|b' \"c;d\""), (V{"echo", "a|b", "c;d"}));
  EXPECT_EQ(*split_command("x ''"), (V{"x", ""}));
}

TEST(SplitCommand, RefusesWhatOnlyAShellCouldRun) {
  for (const char* bad : {"make && make test", "npm test | tee log", "a; b", "a > out", "a < in",
                          "echo $(id)", "echo `id`", "(cd x)", "a &", "echo \"$(id)\""}) {
    auto r = split_command(bad);
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_NE(r.error().message.find("single program invocation"), std::string::npos) << bad;
  }
}

TEST(SplitCommand, RefusesBrokenQuotingAndEmpty) {
  EXPECT_FALSE(split_command("echo 'open").ok());
  EXPECT_FALSE(split_command("echo \"open").ok());
  EXPECT_FALSE(split_command("echo \\").ok());
  EXPECT_FALSE(split_command("   ").ok());
}

}  // namespace
}  // namespace devgraph
