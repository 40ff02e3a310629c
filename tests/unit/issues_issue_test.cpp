#include "issues/issue.h"

#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <vector>

namespace devgraph::issues {
namespace {

TEST(IssueParent, IsTheFirstPartOfLineAtTheStartOfALine) {
  EXPECT_EQ(parent_from_body("Part of #12\n"), 12);
  EXPECT_EQ(parent_from_body("Intro.\n\n  part OF  #7, the epic\nPart of #9\n"), 7);
  EXPECT_EQ(parent_from_body("\tPart of #3"), 3);
  EXPECT_EQ(parent_from_body("Part of #4\r\nmore"), 4);
  EXPECT_EQ(parent_from_body("Part of #5."), 5);
}

TEST(IssueParent, IsNoneWithoutAWellFormedLine) {
  EXPECT_EQ(parent_from_body(""), std::nullopt);
  EXPECT_EQ(parent_from_body("This is Part of #3"), std::nullopt);
  EXPECT_EQ(parent_from_body("> Part of #3"), std::nullopt);
  EXPECT_EQ(parent_from_body("Part of 3"), std::nullopt);
  EXPECT_EQ(parent_from_body("Part of #"), std::nullopt);
  EXPECT_EQ(parent_from_body("Part of #3a"), std::nullopt);
  EXPECT_EQ(parent_from_body("Partof #3"), std::nullopt);
  EXPECT_EQ(parent_from_body("Part of#3"), std::nullopt);
  EXPECT_EQ(parent_from_body("Part of #0"), std::nullopt);
  EXPECT_EQ(parent_from_body("Part of #99999999999999999999999"), std::nullopt);
}

TEST(IssueParent, SkipsMalformedLinesForALaterGoodOne) {
  EXPECT_EQ(parent_from_body("Part of #0\nPart of #x\nPart of #8\n"), 8);
}

TEST(IssuePriority, ReadsTheNamedFormsIgnoringCase) {
  EXPECT_EQ(priority_from_labels({"P1"}), "P1");
  EXPECT_EQ(priority_from_labels({"p2"}), "P2");
  EXPECT_EQ(priority_from_labels({"priority: P0"}), "P0");
  EXPECT_EQ(priority_from_labels({"Priority/p1"}), "P1");
  EXPECT_EQ(priority_from_labels({"priority:P2"}), "P2");
}

TEST(IssuePriority, TheHighestWins) {
  EXPECT_EQ(priority_from_labels({"P2", "bug", "priority/P0", "P1"}), "P0");
  EXPECT_EQ(priority_from_labels({"p2", "priority: p1"}), "P1");
}

TEST(IssuePriority, IsEmptyWhenNoLabelNamesOne) {
  EXPECT_EQ(priority_from_labels({}), "");
  EXPECT_EQ(priority_from_labels({"bug", "P3", "P10", "priority", "priority-P1", "xP1"}), "");
}

}  // namespace
}  // namespace devgraph::issues
