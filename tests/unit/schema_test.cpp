#include "contracts/schema.h"

#include <gtest/gtest.h>

#include "support/test_util.h"
#include "util/fs.h"

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

// A skill's own copy of a contract is read as it stands.
TEST(Schema, AnEditedSchemaFileTakesEffect) {
  test::Scratch dir;
  std::string text = test::slurp(test::source_dir() + "/skill/contracts/run-state.schema.json");
  const std::string from = R"("round": {"type": "integer", "minimum": 1})";
  ASSERT_NE(text.find(from), std::string::npos);
  text.replace(text.find(from), from.size(), R"("round": {"type": "integer", "minimum": 5})");
  ASSERT_TRUE(write_file_atomic(dir / "s.json", text).ok());
  auto edited = Schema::load(dir / "s.json");
  ASSERT_TRUE(edited.ok());
  auto state = load_json_file(test::source_dir() + "/skill/contracts/run-state.example.json");
  ASSERT_TRUE(state.ok());
  (*state)["round"] = 2;
  const auto errors = edited->validate(*state);
  ASSERT_FALSE(errors.empty());
  EXPECT_EQ(errors.front().rfind("[round]: ", 0), 0u) << errors.front();
  EXPECT_TRUE(load("run-state.schema.json").validate(*state).empty());
}

// The fingerprint follows the bytes, not the meaning: the store trusts a
// state file only under the schema text that checked it.
TEST(Schema, TheFingerprintNamesTheText) {
  test::Scratch dir;
  const std::string text =
      test::slurp(test::source_dir() + "/skill/contracts/run-state.schema.json");
  ASSERT_TRUE(write_file_atomic(dir / "same.json", text).ok());
  ASSERT_TRUE(write_file_atomic(dir / "spaced.json", text + " ").ok());
  const std::string shipped = load("run-state.schema.json").fingerprint();
  auto same = Schema::load(dir / "same.json");
  auto spaced = Schema::load(dir / "spaced.json");
  ASSERT_TRUE(same.ok());
  ASSERT_TRUE(spaced.ok());
  EXPECT_EQ(same->fingerprint(), shipped);
  EXPECT_NE(spaced->fingerprint(), shipped);
  EXPECT_EQ(shipped.rfind(std::to_string(text.size()) + "-", 0), 0u) << shipped;
  EXPECT_NE(load("agent-result.schema.json").fingerprint(), shipped);
  auto parsed = Schema::parse(Json::parse(text), "doc");
  auto reparsed = Schema::parse(Json::parse(text + " "), "doc");
  ASSERT_TRUE(parsed.ok());
  ASSERT_TRUE(reparsed.ok());
  EXPECT_EQ(parsed->fingerprint(), reparsed->fingerprint());
}

}  // namespace
}  // namespace devgraph
