#include "util/token_usage.h"

#include <gtest/gtest.h>

#include <climits>

namespace devgraph {
namespace {

TEST(TokenUsage, TotalIsInputCacheAndOutputButNotReasoningAgain) {
  TokenUsage u{10, 200, 30, 40, 25};
  EXPECT_EQ(u.total(), 280);
  EXPECT_EQ((TokenUsage{std::nullopt, std::nullopt, std::nullopt, std::nullopt, 9}).total(),
            std::nullopt)
      << "reasoning alone is part of an output nobody reported";
  EXPECT_EQ(TokenUsage{}.total(), std::nullopt);
  EXPECT_TRUE(TokenUsage{}.empty());
  EXPECT_FALSE((TokenUsage{0, {}, {}, {}, {}}).empty()) << "zero is reported";
}

TEST(TokenUsage, SumsKeepUnreportedPartsUnreported) {
  TokenUsage a{1, std::nullopt, std::nullopt, 2, std::nullopt};
  a += TokenUsage{3, 4, std::nullopt, std::nullopt, std::nullopt};
  EXPECT_EQ(a, (TokenUsage{4, 4, std::nullopt, 2, std::nullopt}));
  a += TokenUsage{};
  EXPECT_EQ(a.total(), 10);
}

TEST(TokenUsage, SumsStopAtTheLargestCount) {
  TokenUsage a{LLONG_MAX - 1, std::nullopt, std::nullopt, 5, std::nullopt};
  a += TokenUsage{7, std::nullopt, std::nullopt, std::nullopt, std::nullopt};
  EXPECT_EQ(a.input, LLONG_MAX);
  EXPECT_EQ(a.total(), LLONG_MAX);
}

TEST(TokenUsage, SinceIsEachPartsGrowthNeverBelowZero) {
  TokenUsage now{30, 5, std::nullopt, 15, 2};
  TokenUsage before{20, 8, 1, 10, std::nullopt};
  EXPECT_EQ(now.since(before), (TokenUsage{10, 0, std::nullopt, 5, 2}));
  EXPECT_EQ(now.since(TokenUsage{}), now);
}

TEST(TokenUsage, JsonRoundTripsWithNullForUnreported) {
  TokenUsage u{1, std::nullopt, 3, 4, std::nullopt};
  Json j = u.to_json();
  EXPECT_EQ(j.dump(),
            R"({"input":1,"cache_read":null,"cache_write":3,"output":4,"reasoning":null})");
  EXPECT_EQ(TokenUsage::from_json(j), u);
}

TEST(TokenUsage, AnythingElseReadsAsNotReported) {
  for (const Json& v : {Json(), Json(5), Json("input"), Json::array({1}), Json::object()})
    EXPECT_TRUE(TokenUsage::from_json(v).empty()) << v.dump();
  Json odd = {{"input", "7"},
              {"cache_read", -1},
              {"cache_write", 2.5},
              {"output", 18446744073709551615ULL},
              {"reasoning", true}};
  EXPECT_TRUE(TokenUsage::from_json(odd).empty()) << odd.dump();
  EXPECT_EQ(token_count(Json{{"n", 9007199254740993LL}}, "n"), 9007199254740993LL);
  EXPECT_EQ(token_count(Json{{"n", 5U}}, "n"), 5);
}

}  // namespace
}  // namespace devgraph
