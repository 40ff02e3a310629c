#include "contracts/compiled_schema.h"

#include <gtest/gtest.h>

#include <functional>
#include <random>

#include "contracts/schema.h"
#include "contracts/schema_embedded.h"
#include "support/test_util.h"

namespace devgraph {
namespace {

Json shipped(const std::string& name) {
  auto doc = load_json_file(test::source_dir() + "/skill/contracts/" + name);
  EXPECT_TRUE(doc.ok());
  return doc.ok() ? *doc : Json();
}

Schema with(const Json& doc, Schema::Engine engine) {
  auto s = Schema::parse(doc, "test", engine);
  EXPECT_TRUE(s.ok()) << (s.ok() ? "" : s.error().message);
  return std::move(s).value();
}

TEST(CompiledSchema, TakesTheShippedContracts) {
  for (const char* name : {"run-state.schema.json", "agent-result.schema.json"}) {
    EXPECT_TRUE(CompiledSchema::compile(shipped(name))) << name;
    EXPECT_TRUE(with(shipped(name), Schema::Engine::kFastest).compiled()) << name;
    EXPECT_FALSE(with(shipped(name), Schema::Engine::kValijson).compiled()) << name;
  }
}

TEST(CompiledSchema, LeavesOtherKeywordsAndBrokenSchemasToValijson) {
  for (const char* text : {
           R"({"type": "string", "pattern": "^a"})",                          // a keyword it lacks
           R"({"type": 12})",                                                 // wrong shape
           R"({"type": "text"})",                                             // unknown type name
           R"({"items": [{"type": "string"}]})",                              // tuple items
           R"({"$ref": "#/$defs/x", "type": "object", "$defs": {"x": {}}})",  // $ref + more
           R"({"$ref": "other.json#/x"})",    // outside the document
           R"({"$ref": "#/$defs/missing"})",  // nowhere
           R"({"$ref": "#/$defs/a", "$defs": {"a": {"$ref": "#/$defs/a"}}})",  // a loop
           R"({"enum": [{"a": 1}]})",                                          // a non-scalar enum
           R"({"minimum": "0"})",
       }) {
    EXPECT_FALSE(CompiledSchema::compile(Json::parse(text))) << text;
  }
  // The general validator words the broken one.
  EXPECT_FALSE(Schema::parse(Json::parse(R"({"type": 12})"), "bad.json").ok());
}

TEST(CompiledSchema, ReportsEachViolationWithItsPath) {
  auto compiled = CompiledSchema::compile(shipped("run-state.schema.json"));
  ASSERT_TRUE(compiled);
  auto state = load_json_file(test::source_dir() + "/skill/contracts/run-state.example.json");
  ASSERT_TRUE(state.ok());
  EXPECT_TRUE(compiled->validate(*state).empty());
  (*state)["status"] = "exploded";
  (*state)["round"] = 0;
  (*state)["tasks_runtime"]["B1/T1"] = {{"bundle", "B1"}, {"node", 3}, {"status", "active"}};
  (*state).erase("prs");
  auto errors = compiled->validate(*state);
  std::string all;
  for (const auto& e : errors) all += e + "\n";
  EXPECT_EQ(errors.size(), 4u) << all;
  EXPECT_NE(all.find("[status]: is \"exploded\", expected one of \"running\""), std::string::npos)
      << all;
  EXPECT_NE(all.find("[round]: is 0, below the minimum 1\n"), std::string::npos) << all;
  EXPECT_NE(all.find("[tasks_runtime][B1/T1][node]: is an integer, expected null or string"),
            std::string::npos)
      << all;
  EXPECT_NE(all.find("<root>: misses the required property \"prs\""), std::string::npos) << all;
}

TEST(CompiledSchema, BooleanSchemasAndClosedObjects) {
  auto compiled = CompiledSchema::compile(Json::parse(
      R"({"properties": {"a": true, "b": false, "c": {"type": "array", "items": false}},
          "additionalProperties": false})"));
  ASSERT_TRUE(compiled);
  EXPECT_TRUE(compiled->validate(Json::parse(R"({"a": [1], "c": []})")).empty());
  EXPECT_EQ(compiled->validate(Json::parse(R"({"b": 1})")).size(), 1u);
  EXPECT_EQ(compiled->validate(Json::parse(R"({"c": [1, 2]})")).size(), 2u);
  auto extra = compiled->validate(Json::parse(R"({"z": 1})"));
  ASSERT_EQ(extra.size(), 1u);
  EXPECT_EQ(extra[0], "[z]: no value is allowed here");
  // Keywords for objects and arrays pass other types by.
  EXPECT_TRUE(compiled->validate(Json(5)).empty());
}

// The build's compiled copies are what compiling the shipped files gives.
TEST(CompiledSchema, EmbeddedContractsEqualTheShippedFilesCompiled) {
  for (const char* name : {"run-state.schema.json", "agent-result.schema.json"}) {
    std::string text = test::slurp(test::source_dir() + "/skill/contracts/" + name);
    auto embedded = embedded_schema(text);
    ASSERT_TRUE(embedded) << name;
    auto compiled = CompiledSchema::compile(Json::parse(text));
    ASSERT_TRUE(compiled) << name;
    EXPECT_TRUE(*embedded == *compiled) << name;
    // One byte more and the file is not the shipped one.
    EXPECT_FALSE(embedded_schema(text + " ")) << name;
  }
}

// The generated C++ keeps any key byte for byte: printable ASCII as
// itself, quotes, backslashes and '?' escaped (no trigraphs), everything
// else in octal, with the length given so a NUL survives. (The build
// compiles this output for the shipped contracts; a tricky schema's
// output was compiled and compared with -Werror once by hand.)
TEST(CompiledSchema, GeneratedCodeEscapesEveryAwkwardByte) {
  auto compiled = CompiledSchema::compile(Json::parse(
      R"({"required": ["a??=b", "q\"uote", "back\\slash", "caf\u00e9", "nul\u0000x"]})"));
  ASSERT_TRUE(compiled);
  const std::string code = compiled->to_cpp("tricky");
  for (const char* expected : {R"(std::string("a\?\?=b", 5))", R"(std::string("q\"uote", 6))",
                               R"(std::string("back\\slash", 10))",
                               R"(std::string("caf\303\251", 5))", R"(std::string("nul\000x", 5))"})
    EXPECT_NE(code.find(expected), std::string::npos) << expected << "\n" << code;
  size_t raw = 0;
  for (char c : code) raw += (c == '\n' || (c >= 0x20 && c < 0x7f)) ? 0 : 1;
  EXPECT_EQ(raw, 0u) << code;
}

// An edited contract is read and compiled, not taken from the build.
TEST(CompiledSchema, AnEditedSchemaFileIsCompiledAsWritten) {
  test::Scratch dir;
  std::string text = test::slurp(test::source_dir() + "/skill/contracts/run-state.schema.json");
  const std::string from = R"("round": {"type": "integer", "minimum": 1})";
  ASSERT_NE(text.find(from), std::string::npos);
  text.replace(text.find(from), from.size(), R"("round": {"type": "integer", "minimum": 5})");
  ASSERT_TRUE(write_file_atomic(dir / "s.json", text).ok());
  auto edited = Schema::load(dir / "s.json");
  ASSERT_TRUE(edited.ok());
  EXPECT_TRUE(edited->compiled());
  auto state = load_json_file(test::source_dir() + "/skill/contracts/run-state.example.json");
  ASSERT_TRUE(state.ok());
  (*state)["round"] = 2;
  EXPECT_EQ(edited->validate(*state).size(), 1u);
  auto shipped = Schema::load(test::source_dir() + "/skill/contracts/run-state.schema.json");
  ASSERT_TRUE(shipped.ok());
  EXPECT_TRUE(shipped->validate(*state).empty());
}

// The verdicts of both validators agree on many random changes of a state.
TEST(CompiledSchema, AgreesWithValijson) {
  for (const char* name : {"run-state.schema.json", "agent-result.schema.json"}) {
    Json doc = shipped(name);
    Schema fast = with(doc, Schema::Engine::kFastest);
    Schema general = with(doc, Schema::Engine::kValijson);
    ASSERT_TRUE(fast.compiled());
    std::mt19937 rng(3);
    const std::vector<Json> values = {nullptr,
                                      true,
                                      0,
                                      -1,
                                      1,
                                      2.5,
                                      -0.5,
                                      "",
                                      "running",
                                      "DONE",
                                      "red",
                                      "active",
                                      Json::array(),
                                      Json::array({"x"}),
                                      Json::array({1}),
                                      Json::object(),
                                      Json({{"bundle", "B"}, {"node", "n"}, {"status", "active"}})};
    Json base =
        std::string(name) == "run-state.schema.json"
            ? *load_json_file(test::source_dir() + "/skill/contracts/run-state.example.json")
            : Json::parse(R"({"status": "DONE", "summary": "s", "evidence": []})");
    // Every path of the document and of the schema's properties is a place
    // to change.
    std::vector<Json::json_pointer> places;
    std::function<void(const Json&, Json::json_pointer)> walk = [&](const Json& v,
                                                                    Json::json_pointer at) {
      places.push_back(at);
      if (v.is_object())
        for (auto it = v.begin(); it != v.end(); ++it) walk(it.value(), at / it.key());
      if (v.is_array())
        for (size_t i = 0; i < v.size(); ++i) walk(v[i], at / i);
    };
    walk(base, Json::json_pointer());
    for (auto it = doc["properties"].begin(); it != doc["properties"].end(); ++it)
      places.push_back(Json::json_pointer() / it.key());
    size_t rejected = 0;
    for (int round = 0; round < 3000; ++round) {
      Json v = base;
      for (int k = 1 + static_cast<int>(rng() % 3); k > 0; --k) {
        const auto& at = places[rng() % places.size()];
        // Objects only: a change inside an array or a scalar is skipped.
        if (at.empty() || !v.contains(at.parent_pointer())) continue;
        Json& parent = v[at.parent_pointer()];
        if (!parent.is_object()) continue;
        if (rng() % 5 == 0) {
          parent.erase(at.back());
        } else {
          parent[at.back()] = values[rng() % values.size()];
        }
      }
      bool fast_ok = fast.validate(v).empty();
      bool general_ok = general.validate(v).empty();
      EXPECT_EQ(fast_ok, general_ok) << name << ": " << dump_py(v);
      rejected += fast_ok ? 0 : 1;
    }
    // The changes reach both outcomes often.
    EXPECT_GT(rejected, 500u) << name;
    EXPECT_LT(rejected, 2900u) << name;
  }
}

}  // namespace
}  // namespace devgraph
