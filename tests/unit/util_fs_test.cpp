// Atomic replacement from one buffer or from many pieces (writev), and
// clear errors with nothing left behind.
#include "util/fs.h"

#include <gtest/gtest.h>

#include "support/test_util.h"

namespace devgraph {
namespace {

TEST(WriteFileAtomic, ManyPiecesMakeTheirConcatenation) {
  test::Scratch s;
  std::string path = s / "state.json";
  // More pieces than one writev takes (IOV_MAX is 1024 on Linux), empty
  // ones among them, and one large piece.
  std::vector<std::string> owned;
  for (int i = 0; i < 3000; ++i) owned.push_back(i % 7 == 0 ? "" : std::to_string(i) + ",");
  owned.push_back(std::string(1 << 20, 'x'));
  std::vector<std::string_view> pieces(owned.begin(), owned.end());
  std::string expected;
  for (const auto& o : owned) expected += o;
  ASSERT_TRUE(write_file_atomic(path, pieces).ok());
  EXPECT_EQ(test::slurp(path), expected);
  ASSERT_TRUE(write_file_atomic(path, std::vector<std::string_view>{}).ok());
  EXPECT_EQ(test::slurp(path), "");
  EXPECT_EQ(test::entries(s.path()), "state.json\n");
}

TEST(WriteFileAtomic, AFailureNamesThePathAndLeavesTheOldFile) {
  test::Scratch s;
  std::string path = s / "state.json";
  ASSERT_TRUE(write_file_atomic(path, "old\n").ok());
  auto bad = write_file_atomic(s / "missing-dir/state.json", std::vector<std::string_view>{"x"});
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().message.find("missing-dir"), std::string::npos) << bad.error().message;
  EXPECT_EQ(test::slurp(path), "old\n");
}

}  // namespace
}  // namespace devgraph
