// normalize_usage() over each CLI's usage record: the real CLIs' captured
// output (tests/fixtures/cli-failures/) through the backend's own parser,
// the same shapes with every part set, and records that are not what a
// usage record should be.
#include "agents/usage.h"

#include <gtest/gtest.h>

#include "support/test_util.h"

namespace devgraph::agents {
namespace {

const std::chrono::system_clock::time_point kNow{std::chrono::seconds(1'750'000'000)};

// What the backend's parser keeps of a captured run's output.
Json captured_usage(BackendKind kind, const std::string& name) {
  Json f = Json::parse(test::slurp(test::test_dir() + "/fixtures/cli-failures/" + name + ".json"));
  BackendOptions o;
  o.kind = kind;
  o.binary = "/bin/cli";
  auto backend = make_backend(o);
  EXPECT_TRUE(backend.ok());
  if (!backend) return Json();
  int code = f["exit_code"].is_number_integer() ? f["exit_code"].get<int>() : 1;
  return (*backend)
      ->parse(code, 0, f["stdout"].get<std::string>(), f["stderr"].get<std::string>(), kNow)
      .usage;
}

TokenUsage parts(long long input, long long cache_read, long long cache_write, long long output,
                 long long reasoning) {
  return {input, cache_read, cache_write, output, reasoning};
}

TEST(Usage, ClaudeCountsAreDisjointAndThinkingIsPartOfOutput) {
  Json raw = captured_usage(BackendKind::claude, "claude-recovers-after-429");
  EXPECT_EQ(normalize_usage(BackendKind::claude, raw), parts(10, 0, 0, 5, 0)) << raw.dump();
  EXPECT_EQ(normalize_usage(BackendKind::claude, raw).total(), 15);

  Json busy = {{"input_tokens", 12},
               {"cache_creation_input_tokens", 3000},
               {"cache_read_input_tokens", 90000},
               {"output_tokens", 800},
               {"output_tokens_details", {{"thinking_tokens", 300}}}};
  TokenUsage u = normalize_usage(BackendKind::claude, busy);
  EXPECT_EQ(u, parts(12, 90000, 3000, 800, 300));
  EXPECT_EQ(u.total(), 12 + 90000 + 3000 + 800) << "cache reads and writes are input too";
}

TEST(Usage, ClaudeOutOfTurnsStillReportsItsUsage) {
  Json raw = captured_usage(BackendKind::claude, "claude-max-turns");
  EXPECT_EQ(normalize_usage(BackendKind::claude, raw).total(), 15);
}

TEST(Usage, ClaudeWithoutCacheCountsReportsNoCacheParts) {
  TokenUsage u =
      normalize_usage(BackendKind::claude, Json{{"input_tokens", 3}, {"output_tokens", 4}});
  EXPECT_EQ(u.input, 3);
  EXPECT_EQ(u.output, 4);
  EXPECT_EQ(u.cache_read, std::nullopt);
  EXPECT_EQ(u.cache_write, std::nullopt);
  EXPECT_EQ(u.reasoning, std::nullopt);
  EXPECT_EQ(u.total(), 7);
}

TEST(Usage, CodexCachedInputIsPartOfInputAndCountedOnce) {
  Json raw = captured_usage(BackendKind::codex, "codex-recovers-after-429");
  EXPECT_EQ(normalize_usage(BackendKind::codex, raw), parts(10, 0, 0, 5, 0)) << raw.dump();

  Json busy = {{"input_tokens", 50000},
               {"cached_input_tokens", 42000},
               {"cache_write_input_tokens", 1000},
               {"output_tokens", 900},
               {"reasoning_output_tokens", 600}};
  TokenUsage u = normalize_usage(BackendKind::codex, busy);
  EXPECT_EQ(u, parts(7000, 42000, 1000, 900, 600));
  EXPECT_EQ(u.total(), 50000 + 900) << "codex's own total: input_tokens + output_tokens";
}

TEST(Usage, CodexPartsBeyondTheirWholeAreCut) {
  TokenUsage u = normalize_usage(BackendKind::codex, Json{{"input_tokens", 10},
                                                          {"cached_input_tokens", 25},
                                                          {"cache_write_input_tokens", 5},
                                                          {"output_tokens", 4},
                                                          {"reasoning_output_tokens", 9}});
  EXPECT_EQ(u, parts(0, 10, 0, 4, 4));
  EXPECT_EQ(u.total(), 14);
}

TEST(Usage, GeminiSumsItsModelsButNotTheirRoles) {
  Json raw = captured_usage(BackendKind::gemini, "gemini-recovers-after-429");
  // Two models: the scripted one (a router request and the main one, 20
  // in and 10 out in all) and the one whose request failed (zeros).
  TokenUsage u = normalize_usage(BackendKind::gemini, raw);
  EXPECT_EQ(u, (TokenUsage{20, 0, std::nullopt, 10, 0})) << raw.dump();
  EXPECT_EQ(u.total(), 30) << "gemini's own stats total";
}

TEST(Usage, GeminiCachedIsPartOfPromptAndThoughtsAndToolPromptsAreApart) {
  Json stats = {
      {"models",
       {{"gemini-pro",
         {{"tokens",
           {{"input", 700},
            {"prompt", 1000},
            {"candidates", 50},
            {"total", 1290},
            {"cached", 300},
            {"thoughts", 200},
            {"tool", 40}}},
          {"roles", {{"main", {{"tokens", {{"prompt", 1000}, {"candidates", 50}}}}}}}}},
        {"gemini-flash",
         {{"tokens",
           {{"prompt", 10}, {"candidates", 5}, {"total", 15}, {"cached", 0}, {"thoughts", 0}}}}}}}};
  TokenUsage u = normalize_usage(BackendKind::gemini, stats);
  EXPECT_EQ(u, (TokenUsage{700 + 40 + 10, 300, std::nullopt, 250 + 5, 200}));
  EXPECT_EQ(u.total(), 1290 + 15) << "the models' totals";
}

TEST(Usage, GeminiWithoutPromptTakesItsUncachedInput) {
  Json stats = {
      {"models", {{"m", {{"tokens", {{"input", 70}, {"cached", 30}, {"candidates", 5}}}}}}}};
  EXPECT_EQ(normalize_usage(BackendKind::gemini, stats),
            (TokenUsage{70, 30, std::nullopt, 5, std::nullopt}));
}

TEST(Usage, GeminiFailureReportsNone) {
  Json raw = captured_usage(BackendKind::gemini, "gemini-max-turns");
  EXPECT_TRUE(normalize_usage(BackendKind::gemini, raw).empty()) << raw.dump();
}

TEST(Usage, TheSimReportsOutputOnly) {
  TokenUsage u =
      normalize_usage(BackendKind::sim, Json{{"input_tokens", 0}, {"output_tokens", 1200}});
  EXPECT_EQ(u.total(), 1200);
  EXPECT_EQ(u.output, 1200);
}

TEST(Usage, CommandReportsNone) {
  EXPECT_TRUE(normalize_usage(BackendKind::command, Json{{"input_tokens", 3}, {"output_tokens", 4}})
                  .empty());
}

TEST(Usage, MalformedCountsAreNotReportedNeverAnError) {
  for (BackendKind kind : {BackendKind::claude, BackendKind::codex, BackendKind::gemini,
                           BackendKind::sim, BackendKind::command}) {
    SCOPED_TRACE(std::string(backend_name(kind)));
    for (const Json& raw : {Json(), Json("12"), Json(12), Json::array({1, 2}), Json::object(),
                            Json{{"models", "many"}}, Json{{"models", {{"m", 3}}}},
                            Json{{"models", {{"m", {{"tokens", {1}}}}}}}}) {
      EXPECT_EQ(normalize_usage(kind, raw).total(), std::nullopt) << raw.dump();
    }
  }
  Json claude = {{"input_tokens", "many"},
                 {"cache_read_input_tokens", -5},
                 {"cache_creation_input_tokens", 1.5},
                 {"output_tokens", nullptr},
                 {"output_tokens_details", "none"}};
  EXPECT_TRUE(normalize_usage(BackendKind::claude, claude).empty());
  Json codex = {{"input_tokens", -1}, {"cached_input_tokens", "3"}, {"output_tokens", 4}};
  EXPECT_EQ(normalize_usage(BackendKind::codex, codex),
            (TokenUsage{std::nullopt, std::nullopt, std::nullopt, 4, std::nullopt}));
  Json gemini = {
      {"models", {{"m", {{"tokens", {{"prompt", "x"}, {"candidates", -2}, {"thoughts", 3}}}}}}}};
  EXPECT_EQ(normalize_usage(BackendKind::gemini, gemini),
            (TokenUsage{std::nullopt, std::nullopt, std::nullopt, 3, 3}));
}

TEST(Usage, OnlyCodexReportsTheSessionSoFarOnAResume) {
  EXPECT_TRUE(usage_covers_session(BackendKind::codex));
  for (BackendKind kind :
       {BackendKind::claude, BackendKind::gemini, BackendKind::sim, BackendKind::command})
    EXPECT_FALSE(usage_covers_session(kind)) << backend_name(kind);
}

}  // namespace
}  // namespace devgraph::agents
