#include "contracts/schema.h"

#include <gtest/gtest.h>

#include "support/test_util.h"

namespace devgraph {
namespace {

Schema load(const std::string& name) {
  auto s = Schema::load(test::source_dir() + "/skill/contracts/" + name);
  EXPECT_TRUE(s.ok()) << (s.ok() ? "" : s.error().message);
  return std::move(s).value();
}

TEST(Schema, ExampleStateConforms) {
  Schema s = load("run-state.schema.json");
  auto example = load_json_file(test::source_dir() + "/skill/contracts/run-state.example.json");
  ASSERT_TRUE(example.ok());
  EXPECT_TRUE(s.validate(*example).empty());
}

TEST(Schema, StateViolationsAreReportedWithTheirPath) {
  Schema s = load("run-state.schema.json");
  auto state = load_json_file(test::source_dir() + "/skill/contracts/run-state.example.json");
  ASSERT_TRUE(state.ok());
  (*state)["status"] = "exploded";
  (*state)["tasks_runtime"]["B1/T1"] = {{"bundle", "B1"}, {"node", "verify"}, {"status", "odd"}};
  (*state).erase("round");
  auto errors = s.validate(*state);
  ASSERT_FALSE(errors.empty());
  std::string all;
  for (const auto& e : errors) all += e + "\n";
  EXPECT_NE(all.find("status"), std::string::npos) << all;
  EXPECT_NE(all.find("[tasks_runtime]"), std::string::npos) << all;
  EXPECT_NE(all.find("round"), std::string::npos) << all;
}

TEST(Schema, ResultContract) {
  Schema s = load("agent-result.schema.json");
  EXPECT_TRUE(s.validate(Json::parse(R"({"status":"DONE","summary":"ok","evidence":[]})")).empty());
  EXPECT_FALSE(
      s.validate(Json::parse(R"({"status":"FINE","summary":"ok","evidence":[]})")).empty());
  EXPECT_FALSE(
      s.validate(Json::parse(R"({"status":"DONE","summary":"ok","evidence":[1]})")).empty());
  EXPECT_FALSE(
      s.validate(Json::parse(R"({"status":"DONE","summary":"ok","evidence":[],"findings":["x"]})"))
          .empty());
  EXPECT_FALSE(s.validate(Json::parse(R"({"status":"DONE","summary":"ok"})")).empty());
}

TEST(Schema, BrokenSchemaIsAnError) {
  auto s = Schema::parse(Json::parse(R"({"type": 12})"), "bad.json");
  EXPECT_FALSE(s.ok());
}

}  // namespace
}  // namespace devgraph
