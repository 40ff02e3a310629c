#include "agents/result.h"

#include <gtest/gtest.h>

#include "support/test_util.h"

namespace devgraph::agents {
namespace {

const Schema& schema() {
  static Schema s = [] {
    auto r = Schema::load(result_schema_path(test::source_dir() + "/skill"));
    if (!r) throw std::runtime_error(r.error().message);
    return std::move(r).value();
  }();
  return s;
}

TEST(Result, LastLineWins) {
  auto r = extract_result(
      "RESULT_JSON: {\"status\": \"BLOCKED\", \"summary\": \"old\", \"evidence\": []}\n"
      "more prose\n"
      "RESULT_JSON: {\"status\": \"DONE\", \"summary\": \"new\", \"evidence\": [\"a\"]}\n",
      schema());
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ((*r)["summary"], "new");
}

TEST(Result, CodeFencesAndIndentationAreTolerated) {
  auto r = extract_result(
      "Done.\n```\n  RESULT_JSON: {\"status\": \"DONE\", \"summary\": \"s\", \"evidence\": "
      "[]}\n```\n",
      schema());
  ASSERT_TRUE(r.ok()) << r.error().message;
  r = extract_result("`RESULT_JSON: {\"status\": \"DONE\", \"summary\": \"s\", \"evidence\": []}`",
                     schema());
  ASSERT_TRUE(r.ok()) << r.error().message;
}

TEST(Result, MissingLineAndJunkAreMalformed) {
  auto r = extract_result("I am done, trust me.", schema());
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().message, "no RESULT_JSON line");
  r = extract_result("RESULT_JSON: {status: DONE", schema());
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("not valid JSON"), std::string::npos);
  r = extract_result("RESULT_JSON: [1, 2]", schema());
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("not a JSON object"), std::string::npos);
}

TEST(Result, SchemaViolationsAreMalformed) {
  const char* bad[] = {
      R"({"status": "FINISHED", "summary": "s", "evidence": []})",
      R"({"status": "DONE", "summary": "s"})",
      R"({"status": "DONE", "summary": "s", "evidence": [1]})",
      R"({"status": "DONE", "summary": "s", "evidence": [], "findings": ["not an object"]})",
      R"({"status": "DONE", "summary": "s", "evidence": [], "blockers": "one"})",
  };
  for (const char* b : bad) {
    auto r = extract_result(std::string("RESULT_JSON: ") + b, schema());
    ASSERT_FALSE(r.ok()) << b;
    EXPECT_NE(r.error().message.find("result contract"), std::string::npos) << r.error().message;
    EXPECT_EQ(r.error().message.find('\n'), std::string::npos) << "one line";
  }
  auto ok = extract_result(
      R"(RESULT_JSON: {"status": "DONE_WITH_CONCERNS", "summary": "s", "evidence": [], "findings": [{"file": "a"}], "extra": 1})",
      schema());
  EXPECT_TRUE(ok.ok()) << ok.error().message;
}

}  // namespace
}  // namespace devgraph::agents
