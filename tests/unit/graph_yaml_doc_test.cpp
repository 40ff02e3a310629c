#include "graph/yaml_doc.h"

#include <gtest/gtest.h>

namespace devgraph {
namespace {

Json parse(const std::string& text) {
  auto doc = parse_yaml_document(text, "t.yaml");
  EXPECT_TRUE(doc.ok()) << (doc.ok() ? "" : doc.error().message);
  return doc.ok() ? *doc : Json("<error>");
}

std::string error_of(const std::string& text) {
  auto doc = parse_yaml_document(text, "t.yaml");
  EXPECT_FALSE(doc.ok()) << text;
  return doc.ok() ? "" : doc.error().message;
}

TEST(YamlDoc, PlainScalarsAreResolvedAndOthersStayStrings) {
  Json doc = parse(
      "a: 1\nb: \"2\"\nc: true\nd: True\ne: TRUE\nf: ~\ng:\nh: null\ni: NULL\nk: -5\nl: +7\n"
      "m: 1.5\nn: 0x10\no: [1, x, yes]\np: |\n  block\nq: '3'\nr: ! 4\ns: 99999999999999999999\n");
  EXPECT_EQ(doc, Json::parse(R"({"a": 1, "b": "2", "c": true, "d": true, "e": "TRUE",
      "f": null, "g": null, "h": null, "i": null, "k": -5, "l": 7, "m": "1.5", "n": "0x10",
      "o": [1, "x", "yes"], "p": "block\n", "q": "3", "r": "4", "s": "99999999999999999999"})"));
  // Keys are text, and key order is the file's.
  Json keys = parse("true: a\n1: b\nz: c\n");
  EXPECT_EQ(keys.dump(), R"({"true":"a","1":"b","z":"c"})");
}

TEST(YamlDoc, RepeatedKeysAnchorsAndDocuments) {
  EXPECT_EQ(parse("x: 1\ny: 2\nx: 3\n").dump(), R"({"x":3,"y":2})");
  EXPECT_EQ(parse("a: &n {k: v}\nb: *n\n"), Json::parse(R"({"a": {"k": "v"}, "b": {"k": "v"}})"));
  EXPECT_EQ(parse("- a\n---\n- b\n"), Json::parse(R"(["a"])"));  // the first document
  EXPECT_TRUE(parse("").is_null());
  EXPECT_EQ(parse("- caf\xc3\xa9\n"), Json::array({"caf\xc3\xa9"}));
}

TEST(YamlDoc, BrokenDocumentsAreErrorsNamingTheFileAndLine) {
  EXPECT_NE(error_of("key: [unclosed\n").find("t.yaml: not valid YAML: "), std::string::npos);
  EXPECT_NE(error_of("a: 1\nb: [\n").find("line 3"), std::string::npos);
  EXPECT_NE(error_of("? [a, b]\n: c\n").find("a mapping key must be a scalar"), std::string::npos);
  EXPECT_NE(error_of("a: *nope\n").find("alias *nope"), std::string::npos);
  // An alias inside the node it names would never end: refused.
  EXPECT_NE(error_of("a: &x [1, *x]\n").find("alias *x"), std::string::npos);
  EXPECT_NE(error_of("a: \"\xff\"\n").find("not valid YAML"), std::string::npos);
}

}  // namespace
}  // namespace devgraph
