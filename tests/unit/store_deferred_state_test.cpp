#include "store/deferred_state.h"

#include <gtest/gtest.h>

#include "util/json.h"

namespace devgraph {
namespace {

const std::vector<std::string> kMaps = {"tasks_runtime", "bundles_runtime"};

Json sample_state(int tasks) {
  Json s = Json::object();
  s["run_id"] = "r1";
  s["node"] = "task_scheduler";
  s["bundles_runtime"] = Json::object();
  s["bundles_runtime"]["B0"] = {{"bundle", "B0"}, {"node", "plan_bundle"}, {"moves", 1}};
  s["tasks_runtime"] = Json::object();
  for (int i = 0; i < tasks; ++i) {
    Json rec = Json::object();
    rec["bundle"] = "B0";
    rec["task"] = "T" + std::to_string(i);
    rec["node"] = "implement";
    rec["title"] = "quote \" backslash \\ brace } bracket ] caf\u00e9";
    rec["agent_handles"] = {{"developer", "a-" + std::to_string(i)}};
    rec["files"] = Json::array({"src/a.py", "tests/[x].py"});
    rec["empty"] = Json::object();
    s["tasks_runtime"]["B0/T" + std::to_string(i)] = std::move(rec);
  }
  s["event_seq"] = 7;
  s["metrics"] = {{"transitions", 3}};
  return s;
}

std::string canonical(const Json& s) {
  return dump_py(s, 2) + "\n";
}

TEST(DeferredState, UnchangedStateWritesBackTheSameBytes) {
  const std::string text = canonical(sample_state(50));
  auto opened = DeferredState::open(text, kMaps);
  ASSERT_TRUE(opened.has_value());
  EXPECT_TRUE(opened->state["tasks_runtime"].empty()) << "records must stay unparsed";
  EXPECT_EQ(opened->state["event_seq"], 7);
  EXPECT_EQ(opened->index.dump(opened->state), text);
}

TEST(DeferredState, PiecesAreTheSameBytesWithUntouchedRecordsInOneSpan) {
  Json full = sample_state(1000);
  const std::string text = canonical(full);
  auto opened = DeferredState::open(text, kMaps);
  ASSERT_TRUE(opened.has_value());
  auto rec = opened->index.record(opened->state, "tasks_runtime", "B0/T500");
  ASSERT_TRUE(rec);
  (**rec)["node"] = "verify";
  full["tasks_runtime"]["B0/T500"]["node"] = "verify";
  std::string storage;
  auto pieces = opened->index.dump_pieces(opened->state, storage);
  std::string joined;
  for (auto p : pieces) joined.append(p);
  EXPECT_EQ(joined, canonical(full));
  EXPECT_EQ(joined, opened->index.dump(opened->state));
  // The 999 untouched records (and the separators between them) come from
  // the text in two spans, around the changed one: a handful of pieces in
  // all, not one per record, and most bytes never copied.
  EXPECT_LE(pieces.size(), 12u);
  EXPECT_LT(storage.size(), 2048u);
}

TEST(DeferredState, ChangedAndAddedRecordsMatchAFullRewrite) {
  Json full = sample_state(20);
  auto opened = DeferredState::open(canonical(full), kMaps);
  ASSERT_TRUE(opened.has_value());
  auto rec = opened->index.record(opened->state, "tasks_runtime", "B0/T7");
  ASSERT_TRUE(rec);
  ASSERT_NE(*rec, nullptr);
  EXPECT_EQ((**rec)["task"], "T7");
  (**rec)["node"] = "verify";
  (**rec)["+note"] = Json::array({1, 2});
  opened->state["tasks_runtime"]["B0/T99"] = {{"bundle", "B0"}, {"task", "T99"}};
  opened->state["event_seq"] = 8;
  auto missing = opened->index.record(opened->state, "tasks_runtime", "B0/T1000");
  ASSERT_TRUE(missing);
  EXPECT_EQ(*missing, nullptr);

  full["tasks_runtime"]["B0/T7"]["node"] = "verify";
  full["tasks_runtime"]["B0/T7"]["+note"] = Json::array({1, 2});
  full["tasks_runtime"]["B0/T99"] = {{"bundle", "B0"}, {"task", "T99"}};
  full["event_seq"] = 8;
  EXPECT_EQ(opened->index.dump(opened->state), canonical(full));
}

// Many records, several read and changed in no particular order, some
// added; in the canonical layout and with separators it does not use
// (which take the record-by-record path and come out canonical).
TEST(DeferredState, ManyChangedRecordsMatchAFullRewriteInEitherLayout) {
  Json full = sample_state(300);
  const std::string text = canonical(full);
  std::string loose = text;
  for (const char* key : {"\"B0/T5\"", "\"B0/T200\""}) {
    size_t at = loose.find(std::string(",\n    ") + key);
    ASSERT_NE(at, std::string::npos);
    loose.replace(at, 6, ",\n\n    ");  // a blank line before the record
  }
  size_t colon = loose.find("\"B0/T9\": ");
  ASSERT_NE(colon, std::string::npos);
  loose.replace(colon + 7, 2, ":   ");
  for (const std::string& input : {text, loose}) {
    auto opened = DeferredState::open(input, kMaps);
    ASSERT_TRUE(opened.has_value());
    Json expected = full;
    for (int i : {250, 3, 299, 0, 9, 120, 200, 5}) {
      const std::string key = "B0/T" + std::to_string(i);
      auto rec = opened->index.record(opened->state, "tasks_runtime", key);
      ASSERT_TRUE(rec && *rec != nullptr) << key;
      if (i % 2 == 0) {
        (**rec)["node"] = "commit_task";
        expected["tasks_runtime"][key]["node"] = "commit_task";
      }
    }
    for (int i : {400, 301}) {
      const std::string key = "B1/T" + std::to_string(i);
      opened->state["tasks_runtime"][key] = {{"bundle", "B1"}};
      expected["tasks_runtime"][key] = {{"bundle", "B1"}};
    }
    EXPECT_EQ(opened->index.dump(opened->state), canonical(expected));
  }
}

TEST(DeferredState, RepeatedKeysFollowPythonsRule) {
  // First position, last value: at the top level and inside a map.
  const std::string text =
      "{\n  \"tasks_runtime\": {\n    \"a\": 1,\n    \"b\": 2,\n    \"a\": 3\n  },\n"
      "  \"x\": 1,\n  \"x\": 2\n}\n";
  auto opened = DeferredState::open(text, kMaps);
  ASSERT_TRUE(opened.has_value());
  auto expected = parse_json(text, "t");
  ASSERT_TRUE(expected);
  EXPECT_EQ(opened->index.dump(opened->state), canonical(*expected));
  auto a = opened->index.record(opened->state, "tasks_runtime", "a");
  ASSERT_TRUE(a && *a != nullptr);
  EXPECT_EQ(**a, 3);
}

TEST(DeferredState, RecordsAfterARepeatedKeyAreStillFound) {
  // The repeat is dropped from the index and the records behind it move
  // up: each must still be found, with its own value, and written back.
  std::string text = "{\n  \"tasks_runtime\": {\n    \"a\": 1,\n    \"a\": 2";
  for (int i = 0; i < 100; ++i)
    text += ",\n    \"k" + std::to_string(i) + "\": " + std::to_string(i);
  text += ",\n    \"k7\": 700\n  }\n}\n";
  auto opened = DeferredState::open(text, kMaps);
  ASSERT_TRUE(opened.has_value());
  auto expected = parse_json(text, "t");
  ASSERT_TRUE(expected);
  for (int i = 0; i < 100; ++i) {
    auto rec = opened->index.record(opened->state, "tasks_runtime", "k" + std::to_string(i));
    ASSERT_TRUE(rec && *rec != nullptr) << i;
    EXPECT_EQ(**rec, i == 7 ? 700 : i);
  }
  auto a = opened->index.record(opened->state, "tasks_runtime", "a");
  ASSERT_TRUE(a && *a != nullptr);
  EXPECT_EQ(**a, 2);
  EXPECT_EQ(opened->index.dump(opened->state), canonical(*expected));
}

TEST(DeferredState, EscapedAndNonAsciiKeysAreFound) {
  Json s = Json::object();
  s["tasks_runtime"] = Json::object();
  s["tasks_runtime"]["B\u00e9/T\"1"] = {{"node", "implement"}};
  s["tasks_runtime"]["plain"] = {{"node", "verify"}};
  auto opened = DeferredState::open(canonical(s), kMaps);
  ASSERT_TRUE(opened.has_value());
  auto rec = opened->index.record(opened->state, "tasks_runtime", "B\u00e9/T\"1");
  ASSERT_TRUE(rec && *rec != nullptr);
  (**rec)["node"] = "verify";
  s["tasks_runtime"]["B\u00e9/T\"1"]["node"] = "verify";
  EXPECT_EQ(opened->index.dump(opened->state), canonical(s));
}

TEST(DeferredState, MissingEmptyOrNonObjectMapsAreHandled) {
  Json s = Json::object();
  s["tasks_runtime"] = Json::object();
  s["bundles_runtime"] = Json::array({1});
  auto opened = DeferredState::open(canonical(s), kMaps);
  ASSERT_TRUE(opened.has_value());
  EXPECT_TRUE(opened->index.defers("tasks_runtime"));
  EXPECT_FALSE(opened->index.defers("bundles_runtime"));
  opened->state["tasks_runtime"]["B/T"] = {{"node", "write_tdd"}};
  s["tasks_runtime"]["B/T"] = {{"node", "write_tdd"}};
  EXPECT_EQ(opened->index.dump(opened->state), canonical(s));
}

TEST(DeferredState, OtherLayoutsAndBrokenTextAreLeftToTheParser) {
  const Json s = sample_state(3);
  EXPECT_FALSE(DeferredState::open(dump_py(s), kMaps).has_value()) << "compact layout";
  EXPECT_FALSE(DeferredState::open(s.dump(4), kMaps).has_value()) << "indent 4";
  std::string text = canonical(s);
  EXPECT_FALSE(DeferredState::open(text.substr(0, text.size() / 2), kMaps).has_value());
  std::string unbalanced = text;
  unbalanced.replace(unbalanced.find("\"empty\": {}"), 11, "\"empty\": {]");
  EXPECT_FALSE(DeferredState::open(unbalanced, kMaps).has_value());
  EXPECT_FALSE(DeferredState::open(text + "x", kMaps).has_value()) << "trailing text";
  EXPECT_FALSE(DeferredState::open("", kMaps).has_value());
}

TEST(DeferredState, AnUnparsableRecordIsAnErrorWhenRead) {
  const std::string text =
      "{\n  \"tasks_runtime\": {\n    \"a\": {\"x\": tru},\n    \"b\": {}\n  }\n}\n";
  auto opened = DeferredState::open(text, kMaps);
  ASSERT_TRUE(opened.has_value());
  auto b = opened->index.record(opened->state, "tasks_runtime", "b");
  ASSERT_TRUE(b && *b != nullptr);
  auto a = opened->index.record(opened->state, "tasks_runtime", "a");
  EXPECT_FALSE(a);
}

}  // namespace
}  // namespace devgraph
