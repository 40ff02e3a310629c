#include <gtest/gtest.h>

#include "support/test_util.h"
#include "validate/contract_check.h"

namespace devgraph {
namespace {

ContractChecker checker(const std::string& name) {
  auto c = ContractChecker::load(test::source_dir() + "/skill/contracts/" + name);
  EXPECT_TRUE(c.ok()) << (c.ok() ? "" : c.error().message);
  return std::move(c).value();
}

Json example_state() {
  auto s = load_json_file(test::source_dir() + "/skill/contracts/run-state.example.json");
  EXPECT_TRUE(s.ok());
  return std::move(s).value();
}

TEST(ContractCheck, ExampleStateConforms) {
  EXPECT_TRUE(checker("run-state.schema.json").check(example_state()).empty());
}

TEST(ContractCheck, StateViolationsUseTheReferenceWordingSortedByPath) {
  Json s = example_state();
  s["status"] = "exploded";
  s["tasks_runtime"] = {{"B1/T1", {{"bundle", "B1"}, {"node", "verify"}, {"status", "odd"}}}};
  s.erase("round");
  s["bundles"] = Json::array({1});
  s["handoffs"] = -1;
  s["handoff"] = 3;
  auto lines = checker("run-state.schema.json").check(s);
  std::vector<std::string> want = {
      "[]: 'round' is a required property",
      "['bundles', 0]: 1 is not of type 'object'",
      "['handoff']: 3 is not of type 'object', 'null'",
      "['handoffs']: -1 is less than the minimum of 0",
      "['status']: 'exploded' is not one of ['running', 'handoff', 'complete', 'human_required']",
      "['tasks_runtime', 'B1/T1', 'status']: 'odd' is not one of ['active', 'complete', "
      "'waiting_human']",
  };
  EXPECT_EQ(lines, want);
}

TEST(ContractCheck, KeysWithBracketsKeepTheirPath) {
  Json s = example_state();
  s["tasks_runtime"] = {{"B[1]/T1", {{"bundle", "B1"}, {"node", "verify"}, {"status", "odd"}}}};
  auto lines = checker("run-state.schema.json").check(s);
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(lines[0].substr(0, lines[0].find(':')), "['tasks_runtime', 'B[1]/T1', 'status']");
}

TEST(ContractCheck, ResultContract) {
  ContractChecker c = checker("agent-result.schema.json");
  EXPECT_TRUE(c.check(Json::parse(R"({"status":"DONE","summary":"ok","evidence":[]})")).empty());
  auto lines =
      c.check(Json::parse(R"({"status":"OK","summary":3})"), ContractChecker::Order::by_schema);
  std::vector<std::string> want = {
      "[]: 'evidence' is a required property",
      "['status']: 'OK' is not one of ['DONE', 'DONE_WITH_CONCERNS', 'NEEDS_CONTEXT', 'BLOCKED', "
      "'HANDOFF']",
      "['summary']: 3 is not of type 'string'",
  };
  EXPECT_EQ(lines, want);
  EXPECT_EQ(c.check(Json(5)), std::vector<std::string>{"[]: 5 is not of type 'object'"});
}

TEST(ContractCheck, BrokenOrMissingSchemaIsAnError) {
  test::Scratch dir;
  auto missing = ContractChecker::load(dir / "nope.json");
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.error().message.find("nope.json"), std::string::npos);
  test::write_text(dir / "bad.json", "{\"type\": 12}");
  auto bad = ContractChecker::load(dir / "bad.json");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().message.find("bad.json"), std::string::npos);
}

TEST(ResultLine, TakesTheLastNonEmptyLine) {
  auto r = result_json_line("thinking...\nRESULT_JSON: {\"status\": \"DONE\"}\n\n  \n");
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ((*r)["status"], "DONE");
  auto crlf = result_json_line("x\r\nRESULT_JSON: {\"a\": 1}\r\n");
  ASSERT_TRUE(crlf.ok()) << crlf.error().message;
}

TEST(ResultLine, ReferenceErrors) {
  EXPECT_EQ(result_json_line("").error().message, "empty result file");
  EXPECT_EQ(result_json_line("\n \n\t\n").error().message, "empty result file");
  EXPECT_EQ(result_json_line("RESULT_JSON: {}\nsaid more\n").error().message,
            "result must start with RESULT_JSON:");
  EXPECT_EQ(result_json_line("  RESULT_JSON: {}").error().message,
            "result must start with RESULT_JSON:");
  auto broken = result_json_line("RESULT_JSON: {bad");
  ASSERT_FALSE(broken.ok());
  EXPECT_NE(broken.error().message.find("not valid JSON"), std::string::npos);
  EXPECT_EQ(broken.error().message.find('\n'), std::string::npos);
  EXPECT_FALSE(result_json_line("RESULT_JSON:").ok());
  EXPECT_FALSE(result_json_line("RESULT_JSON: {} trailing").ok());
}

}  // namespace
}  // namespace devgraph
