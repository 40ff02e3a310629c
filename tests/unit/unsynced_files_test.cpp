// The bundle's bookkeeping writes: whole replacement by rename, appends,
// clear errors, and no temporary files left behind.
#include "util/unsynced_files.h"

#include <gtest/gtest.h>

#include "support/test_util.h"

namespace devgraph {
namespace {

TEST(RunFiles, ReplaceWritesTheWholeFileAndLeavesNoTemporary) {
  test::Scratch s;
  std::string p = s / "a.result.json";
  ASSERT_TRUE(replace_file(p, "first\n").ok());
  ASSERT_TRUE(replace_file(p, "second\n").ok());
  EXPECT_EQ(test::slurp(p), "second\n");
  EXPECT_EQ(test::entries(s.path()), "a.result.json\n");
}

TEST(RunFiles, AppendAddsToTheEnd) {
  test::Scratch s;
  std::string p = s / "ledger.jsonl";
  ASSERT_TRUE(append_file(p, "{\"a\": 1}\n").ok());
  ASSERT_TRUE(append_file(p, "{\"b\": 2}\n").ok());
  EXPECT_EQ(test::slurp(p), "{\"a\": 1}\n{\"b\": 2}\n");
}

TEST(RunFiles, FailuresNameThePath) {
  test::Scratch s;
  auto r = replace_file(s / "missing/dir/x", "x");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find(s / "missing/dir/x"), std::string::npos) << r.error().message;
  auto a = append_file(s / "missing/ledger.jsonl", "x");
  ASSERT_FALSE(a.ok());
  EXPECT_NE(a.error().message.find("ledger.jsonl"), std::string::npos);
}

}  // namespace
}  // namespace devgraph
