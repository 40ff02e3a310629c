#include "store/json_scan.h"

#include <gtest/gtest.h>

#include <functional>
#include <random>
#include <string>
#include <vector>

#include "util/json.h"

namespace devgraph {
namespace {

constexpr size_t kBad = std::string_view::npos;

// The containers directly inside the one at `i`, by the fast version; the
// scalar version must list the same, and both must end where
// skip_json_container() does.
std::vector<JsonSpan> children_of(std::string_view text, size_t i = 0) {
  std::vector<JsonSpan> fast, scalar;
  const size_t end = scan_json_children(text, i, fast);
  EXPECT_EQ(end, scan_json_children_scalar(text, i, scalar)) << text;
  EXPECT_EQ(end, skip_json_container(text, i)) << text;
  EXPECT_EQ(fast, scalar) << text;
  return fast;
}

// Both versions, which must agree on every input (and so must the scans
// that list children).
size_t both(std::string_view text, size_t i = 0) {
  size_t fast = skip_json_container(text, i);
  size_t scalar = skip_json_container_scalar(text, i);
  EXPECT_EQ(fast, scalar) << text;
  children_of(text, i);
  return fast;
}

std::vector<std::string_view> texts(std::string_view text, const std::vector<JsonSpan>& spans) {
  std::vector<std::string_view> out;
  for (const JsonSpan& s : spans) out.push_back(text.substr(s.begin, s.end - s.begin));
  return out;
}

TEST(JsonScan, ListsTheContainersDirectlyInside) {
  const std::string_view map = R"({"a": {"x": [1]}, "b": 2, "c": "{[", "d": [], "e": {}} tail)";
  EXPECT_EQ(texts(map, children_of(map)),
            (std::vector<std::string_view>{R"({"x": [1]})", "[]", "{}"}));
  EXPECT_TRUE(children_of("[1, \"]\", 2]").empty());
  const std::string_view nested = R"(x[[[]], {"k": "\"}"}])";
  EXPECT_EQ(texts(nested, children_of(nested, 1)),
            (std::vector<std::string_view>{"[[]]", R"({"k": "\"}"})"}));
}

TEST(JsonScan, FindsTheClosingBracket) {
  EXPECT_EQ(both("{}"), 2u);
  EXPECT_EQ(both("[]  tail"), 2u);
  EXPECT_EQ(both(R"({"a": [1, {"b": "}"}], "c": "]"} rest)"), 32u);
  EXPECT_EQ(both(R"(x{"a": 1}y)", 1), 9u);
}

TEST(JsonScan, BracketsInsideStringsAndEscapesDoNotCount) {
  EXPECT_EQ(both(R"({"a\"}": "\\", "b": "\\\"]"})"), 28u);
  // A string ending in an escaped backslash, then a real close.
  EXPECT_EQ(both(R"(["\\"])"), 6u);
}

TEST(JsonScan, UnclosedOrMismatchedIsBad) {
  EXPECT_EQ(both("{"), kBad);
  EXPECT_EQ(both("{]"), kBad);
  EXPECT_EQ(both(R"({"a": [}])"), kBad);
  EXPECT_EQ(both(R"({"unterminated: 1})"), kBad);
  EXPECT_EQ(both("x{}"), kBad);  // not at a bracket
  EXPECT_EQ(both("", 0), kBad);
}

// The bracket stack holds 64 levels in one word and spills deeper ones:
// nesting of every depth around those boundaries closes where it should,
// and a wrong closer at any depth is caught.
TEST(JsonScan, DeepNestingAcrossTheStacksWords) {
  for (size_t depth : {1u, 2u, 63u, 64u, 65u, 127u, 128u, 129u, 200u}) {
    std::string open, close;
    for (size_t d = 0; d < depth; ++d) {
      open += d % 3 == 0 ? "[" : "{\"k\": ";
      close.insert(0, d % 3 == 0 ? "]" : "}");
    }
    const std::string doc = open + "1" + close;
    EXPECT_EQ(both(doc + " tail"), doc.size()) << depth;
    EXPECT_EQ(both(open + "1"), kBad) << depth;
    // Swap one closer for the other kind, at every depth.
    for (size_t at = 0; at < close.size(); ++at) {
      std::string wrong = close;
      wrong[at] = wrong[at] == ']' ? '}' : ']';
      EXPECT_EQ(both(open + "1" + wrong), kBad) << depth << " " << at;
    }
  }
}

// Escapes and quotes at every offset around the 64-byte blocks the fast
// version reads at once.
TEST(JsonScan, EscapesAcrossBlockBoundaries) {
  for (size_t pad = 0; pad < 140; ++pad) {
    std::string text = "{\"k\": \"" + std::string(pad, 'x') + "\\\\\\\"]}\", \"m\": [1]}";
    size_t end = both(text);
    EXPECT_EQ(end, text.size()) << pad;
    std::string unclosed = "[\"" + std::string(pad, 'y') + "\\\"]";
    EXPECT_EQ(both(unclosed), kBad) << pad;
  }
}

// Valid documents of every size: the scan ends exactly where the JSON does.
TEST(JsonScan, RandomDocumentsEndWhereTheyEnd) {
  std::mt19937 rng(7);
  const std::string alphabet = "ab{}[]\"\\:, \n/\u00e9";
  auto random_string = [&] {
    std::string s;
    size_t n = rng() % 40;
    for (size_t i = 0; i < n; ++i) s += alphabet[rng() % alphabet.size()];
    return s;
  };
  std::function<Json(int)> value = [&](int depth) -> Json {
    switch (depth > 3 ? rng() % 3 : rng() % 5) {
      case 0:
        return random_string();
      case 1:
        return static_cast<int>(rng() % 1000);
      case 2:
        return nullptr;
      case 3: {
        Json a = Json::array();
        for (size_t i = rng() % 5; i > 0; --i) a.push_back(value(depth + 1));
        return a;
      }
      default: {
        Json o = Json::object();
        for (size_t i = rng() % 5; i > 0; --i) o[random_string()] = value(depth + 1);
        return o;
      }
    }
  };
  for (int round = 0; round < 2000; ++round) {
    Json doc = rng() % 2 ? Json::object() : Json::array();
    for (size_t i = rng() % 6; i > 0; --i) {
      if (doc.is_object()) {
        doc[random_string()] = value(1);
      } else {
        doc.push_back(value(1));
      }
    }
    std::string text = dump_py(doc, round % 2 ? 2 : -1);
    EXPECT_EQ(both(text + ", \"after\": [}"), text.size()) << text;
    // Each container inside is listed, in order, by its exact text.
    std::vector<Json> containers;
    for (const Json& v : doc) {
      if (v.is_object() || v.is_array()) containers.push_back(v);
    }
    const std::vector<JsonSpan> spans = children_of(text);
    ASSERT_EQ(spans.size(), containers.size()) << text;
    for (size_t k = 0; k < spans.size(); ++k) {
      std::string expected;
      append_py(expected, containers[k], round % 2 ? 2 : -1, 1);
      EXPECT_EQ(text.substr(spans[k].begin, spans[k].end - spans[k].begin), expected) << text;
    }
  }
}

// Arbitrary bytes: the two versions still agree.
TEST(JsonScan, RandomBytesAgree) {
  std::mt19937 rng(11);
  const std::string alphabet = "{}[]\"\\ab";
  for (int round = 0; round < 20000; ++round) {
    std::string text = rng() % 2 ? "{" : "[";
    for (size_t n = rng() % 200; n > 0; --n) text += alphabet[rng() % alphabet.size()];
    both(text);
  }
}

}  // namespace
}  // namespace devgraph
