// gh/closing.h: the issues a pull request body closes, by GitHub's closing
// keywords.
#include "gh/closing.h"

#include <gtest/gtest.h>

namespace devgraph::gh {
namespace {

using Numbers = std::vector<long long>;

TEST(GhClosing, EveryClosingKeywordClosesTheIssueItNames) {
  int n = 0;
  for (std::string keyword :
       {"close", "closes", "closed", "fix", "fixes", "fixed", "resolve", "resolves", "resolved"}) {
    ++n;
    EXPECT_EQ(closing_issues(keyword + " #" + std::to_string(n)), Numbers{n}) << keyword;
  }
}

TEST(GhClosing, KeywordsAreReadInAnyCase) {
  EXPECT_EQ(closing_issues("Closes #1\nFIXES #2\nreSolved #3"), (Numbers{1, 2, 3}));
}

TEST(GhClosing, AColonAfterTheKeywordIsOptional) {
  EXPECT_EQ(closing_issues("Fixes: #4"), Numbers{4});
  EXPECT_EQ(closing_issues("Fixes #4"), Numbers{4});
  EXPECT_EQ(closing_issues("Fixes:\t #4"), Numbers{4});
}

TEST(GhClosing, TheNumberNeedsABlankBeforeItAndNothingButOneColonBetween) {
  EXPECT_EQ(closing_issues("Fixes#4"), Numbers{});
  EXPECT_EQ(closing_issues("Fixes:#4"), Numbers{});
  EXPECT_EQ(closing_issues("Fixes:: #4"), Numbers{});
  EXPECT_EQ(closing_issues("Fixes issue #4"), Numbers{});
  EXPECT_EQ(closing_issues("Fixes\n#4"), Numbers{});
  EXPECT_EQ(closing_issues("Fixes - #4"), Numbers{});
}

TEST(GhClosing, ReferencesToOtherRepositoriesAndUrlsAreNotCounted) {
  EXPECT_EQ(closing_issues("Fixes owner/repo#5"), Numbers{});
  EXPECT_EQ(closing_issues("Closes other-org/other.repo#6 and closes #7"), Numbers{7});
  EXPECT_EQ(closing_issues("Resolves https://github.com/owner/repo/issues/8"), Numbers{});
  EXPECT_EQ(closing_issues("Fixes github.com/o/r/issues/9#10"), Numbers{});
}

TEST(GhClosing, ANumberRunningIntoAWordIsNoReference) {
  EXPECT_EQ(closing_issues("Fixes #12abc"), Numbers{});
  EXPECT_EQ(closing_issues("Fixes #12_3"), Numbers{});
  EXPECT_EQ(closing_issues("Fixes #12."), Numbers{12});
  EXPECT_EQ(closing_issues("(fixes #12)"), Numbers{12});
  EXPECT_EQ(closing_issues("Fixes #12, thanks"), Numbers{12});
  EXPECT_EQ(closing_issues("Fixes #"), Numbers{});
  EXPECT_EQ(closing_issues("Fixes #0"), Numbers{});
  EXPECT_EQ(closing_issues("Fixes #-3"), Numbers{});
}

TEST(GhClosing, AKeywordInsideAnotherWordIsNoKeyword) {
  EXPECT_EQ(closing_issues("prefix #1"), Numbers{});
  EXPECT_EQ(closing_issues("hotfixes #1"), Numbers{});
  EXPECT_EQ(closing_issues("enclosed #1"), Numbers{});
  EXPECT_EQ(closing_issues("fixes2 #1"), Numbers{});
  EXPECT_EQ(closing_issues("fixing #1"), Numbers{});
  EXPECT_EQ(closing_issues("closes_ #1"), Numbers{});
  EXPECT_EQ(closing_issues("pr\xc3\xa9"
                           "fix #1"),
            Numbers{});
  EXPECT_EQ(closing_issues("- [x] fixes #1"), Numbers{1});
  EXPECT_EQ(closing_issues("**Fixes** #2"), Numbers{});
  EXPECT_EQ(closing_issues("*Fixes #2*"), Numbers{2});
}

TEST(GhClosing, OneKeywordClosesOneIssue) {
  EXPECT_EQ(closing_issues("Fixes #1, #2"), Numbers{1});
  EXPECT_EQ(closing_issues("Fixes #1, fixes #2"), (Numbers{1, 2}));
}

TEST(GhClosing, DuplicatesAreCollapsedAndTheOrderOfFirstMentionKept) {
  EXPECT_EQ(closing_issues("Closes #9\nFixes #3\nfixes #9\nResolves #3\ncloses #1\n"),
            (Numbers{9, 3, 1}));
}

TEST(GhClosing, ABodyWithoutKeywordsClosesNothing) {
  EXPECT_EQ(closing_issues(""), Numbers{});
  EXPECT_EQ(closing_issues("Part of #3\nSee #4 and #5."), Numbers{});
  EXPECT_EQ(closing_issues(std::string("fixes \0 #3", 10)), Numbers{});
}

TEST(GhClosing, AnAbsurdlyLongNumberIsNoReference) {
  EXPECT_EQ(closing_issues("Fixes #99999999999999999999999"), Numbers{});
  EXPECT_EQ(closing_issues("Fixes #123456789012345"), Numbers{123456789012345});
}

}  // namespace
}  // namespace devgraph::gh
