#include "util/stem.h"

#include <gtest/gtest.h>

namespace devgraph {
namespace {

TEST(WordStem, PluralsAndVerbFormsMeet) {
  EXPECT_EQ(word_stem("Dates"), word_stem("date"));
  EXPECT_EQ(word_stem("dated"), word_stem("date"));
  EXPECT_EQ(word_stem("dating"), word_stem("date"));
  EXPECT_EQ(word_stem("reports"), word_stem("report"));
  EXPECT_EQ(word_stem("entries"), word_stem("entry"));
  EXPECT_EQ(word_stem("boxes"), word_stem("box"));
  EXPECT_EQ(word_stem("tests"), "test");
  EXPECT_EQ(word_stem("testing"), "test");
  EXPECT_EQ(word_stem("tested"), "test");
  EXPECT_EQ(word_stem("handle"), "handl");
  EXPECT_EQ(word_stem("handled"), "handl");
  EXPECT_EQ(word_stem("handling"), "handl");
}

TEST(WordStem, ADoubledConsonantGoesWithItsSuffix) {
  EXPECT_EQ(word_stem("stopped"), word_stem("stop"));
  EXPECT_EQ(word_stem("running"), word_stem("run"));
  // l, s and z stay doubled: "called" is "call", not "cal".
  EXPECT_EQ(word_stem("called"), "call");
}

TEST(WordStem, ShortWordsAndWordsEndingInSsKeepTheirS) {
  EXPECT_EQ(word_stem("is"), "is");
  EXPECT_EQ(word_stem("bus"), "bus");
  EXPECT_EQ(word_stem("class"), "class");
  EXPECT_NE(word_stem("class"), word_stem("clas"));
  EXPECT_EQ(word_stem("analysis"), "analysis");
}

TEST(WordStem, LowerCasesAsciiAndPassesOtherBytesThrough) {
  EXPECT_EQ(word_stem("REPORTS"), "report");
  EXPECT_EQ(word_stem("caf\xc3\xa9s"), "caf\xc3\xa9");
  EXPECT_EQ(word_stem(""), "");
}

}  // namespace
}  // namespace devgraph
