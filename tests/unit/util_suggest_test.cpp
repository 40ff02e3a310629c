#include "util/suggest.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace devgraph {
namespace {

TEST(EditDistance, CountsInsertionsDeletionsSubstitutionsAndSwaps) {
  EXPECT_EQ(edit_distance("", ""), 0u);
  EXPECT_EQ(edit_distance("board", "board"), 0u);
  EXPECT_EQ(edit_distance("", "run"), 3u);
  EXPECT_EQ(edit_distance("run", ""), 3u);
  EXPECT_EQ(edit_distance("bord", "board"), 1u);    // an insertion
  EXPECT_EQ(edit_distance("boaard", "board"), 1u);  // a deletion
  EXPECT_EQ(edit_distance("boerd", "board"), 1u);   // a substitution
  EXPECT_EQ(edit_distance("rnu", "run"), 1u);       // two neighbours swapped
  EXPECT_EQ(edit_distance("jsno", "json"), 1u);
  EXPECT_EQ(edit_distance("kitten", "sitting"), 3u);
  // Optimal string alignment: a swapped pair is not edited again.
  EXPECT_EQ(edit_distance("ca", "abc"), 3u);
}

TEST(Closest, SuggestsTheNearestWithinTwoEdits) {
  const std::vector<std::string> flags = {"repo", "board", "bind", "open", "dry-run", "new"};
  EXPECT_EQ(closest("bord", flags), "board");
  EXPECT_EQ(closest("dryrun", flags), "dry-run");
  EXPECT_EQ(closest("rpeo", flags), "repo");
  EXPECT_EQ(closest("bnid", flags), "bind");
  // The nearer of two wins; a tie goes to the earlier.
  EXPECT_EQ(closest("boad", flags), "board");
  EXPECT_EQ(closest("abc", {"abd", "abe"}), "abd");
}

TEST(Closest, SuggestsTheOneCandidateThatContainsTheWordOrThatItContains) {
  const std::vector<std::string> flags = {"persona-timeout-seconds", "api-backoff-seconds", "repo",
                                          "json"};
  EXPECT_EQ(closest("timeout", flags), "persona-timeout-seconds");
  EXPECT_EQ(closest("repository", flags), "repo");
  // Two candidates contain it: no clear suggestion.
  EXPECT_EQ(closest("seconds", flags), std::nullopt);
}

TEST(Closest, SaysNothingWhenNothingIsClose) {
  const std::vector<std::string> verbs = {"run", "issue", "inbox", "answer", "clean"};
  EXPECT_EQ(closest("frobnicate", verbs), std::nullopt);
  EXPECT_EQ(closest("", verbs), std::nullopt);
  EXPECT_EQ(closest("run", verbs), std::nullopt);  // a candidate itself
  EXPECT_EQ(closest("x", verbs), std::nullopt);    // one letter is close to everything short
  EXPECT_EQ(closest("zz", {"ab"}), std::nullopt);
  EXPECT_EQ(closest("bord", {}), std::nullopt);
}

}  // namespace
}  // namespace devgraph
