#include "util/text.h"

#include <gtest/gtest.h>

namespace devgraph {
namespace {

TEST(Text, APathEndsWithATailOnlyAtADirectoryBoundary) {
  EXPECT_TRUE(path_ends_with("tests/a.sh", "tests/a.sh"));
  EXPECT_TRUE(path_ends_with("/wt/tests/a.sh", "tests/a.sh"));
  EXPECT_FALSE(path_ends_with("x_tests/a.sh", "tests/a.sh"));
  EXPECT_FALSE(path_ends_with("a.sh", "tests/a.sh"));
  EXPECT_FALSE(path_ends_with("tests/a.sh", ""));
}

TEST(Text, JoinAndClip) {
  EXPECT_EQ(join({"a", "b"}, ", "), "a, b");
  EXPECT_EQ(clip("abcdef", 3), "abc");
  EXPECT_EQ(clip_tail("abcdef", 2), "ef");
}

}  // namespace
}  // namespace devgraph

namespace devgraph {
namespace {

TEST(LastLine, IsTheLastNonBlankLineWithoutItsTrailingBlanks) {
  EXPECT_EQ(last_line("fatal: one\nfatal: two \r\n\n"), "fatal: two");
  EXPECT_EQ(last_line("only"), "only");
  EXPECT_EQ(last_line(" \n\n"), "");
  EXPECT_EQ(last_line(""), "");
}

}  // namespace
}  // namespace devgraph
