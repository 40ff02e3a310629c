#include "util/json.h"

#include <gtest/gtest.h>

#include <string>

namespace devgraph {
namespace {

TEST(ParseJson, SameValuesAsNlohmannWithPythonsDuplicateKeyRule) {
  for (
      const char* text :
      {R"({"b": 1, "a": [1, 2.5, "x", null, true, {"z": {}, "y": []}], "c": "\u00e9\ud83d\ude00"})",
       R"([])", R"("just a string")", R"({"k": 1, "j": 2, "k": 3})",
       R"({"a1": 1, "a2": 2, "a3": 3, "a4": 4, "a5": 5, "a6": 6, "a7": 7, "a8": 8, "a9": 9,
            "a2": 20, "a10": 10})",
       R"({"big": 18446744073709551615, "neg": -9223372036854775808, "e": 1e300, "f": -1e-400})"}) {
    auto ours = parse_json(text, "t");
    ASSERT_TRUE(ours.ok()) << text;
    EXPECT_EQ(dump_py(*ours), dump_py(Json::parse(text))) << text;
  }
  // Python keeps a duplicate key's first position and last value.
  EXPECT_EQ(dump_py(*parse_json(R"({"k": 1, "j": 2, "k": 3})", "t")), R"({"k": 3, "j": 2})");
  for (const char* bad : {"", "{", R"({"a": })", "[1,]", "{} extra", "NaN", R"({"a": Infinity})"}) {
    auto r = parse_json(bad, "state.json");
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_EQ(r.error().message.rfind("state.json is not valid JSON: ", 0), 0) << r.error().message;
    EXPECT_EQ(r.error().message.find('\n'), std::string::npos);
  }
  // Numbers a double cannot hold, or could hold only by rounding, are refused.
  auto huge = parse_json(R"({"a": 1e400})", "--merge");
  ASSERT_FALSE(huge.ok());
  EXPECT_EQ(huge.error().message, "--merge is not valid JSON: number overflow parsing '1e400'");
  auto wide = parse_json(R"({"a": [100000000000000000000]})", "--detail");
  ASSERT_FALSE(wide.ok());
  EXPECT_EQ(
      wide.error().message,
      "--detail is not valid JSON: integer 100000000000000000000 is outside the 64-bit range");
  EXPECT_FALSE(parse_json("-18446744073709551617", "t").ok());
}

TEST(PyRepr, MatchesPython) {
  EXPECT_EQ(py_repr(Json::parse(R"([null, true, false, 1, -2, "a", "it's", "say \"x\""])")),
            R"([None, True, False, 1, -2, 'a', "it's", 'say "x"'])");
  EXPECT_EQ(py_repr(Json::parse(R"({"k": {"n": [1]}, "t": "a\nb\\"})")),
            R"({'k': {'n': [1]}, 't': 'a\nb\\'})");
  EXPECT_EQ(py_repr(Json::parse(R"("both ' and \"")")), R"('both \' and "')");
  EXPECT_EQ(py_repr("tab\tbell\x07"
                    "del\x7f"),
            R"('tab\tbell\x07del\x7f')");
  EXPECT_EQ(py_repr(Json(2.5)), "2.5");
}

TEST(PyStr, PrintsWhatAnFStringPrints) {
  EXPECT_EQ(py_str(Json("B1/T1")), "B1/T1");
  EXPECT_EQ(py_str(Json(true)), "True");
  EXPECT_EQ(py_str(Json(nullptr)), "None");
  EXPECT_EQ(py_str(Json::parse(R"({"a": [1, "x"]})")), "{'a': [1, 'x']}");
}

}  // namespace
}  // namespace devgraph
