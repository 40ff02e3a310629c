#include "store/state_cache.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include "support/test_util.h"
#include "util/fs.h"
#include "util/json.h"

namespace devgraph {
namespace {

Json sample_state(int bundles) {
  Json s = Json::object();
  s["run_id"] = "r1";
  s["node"] = "bundle_scheduler";
  s["bundles"] = Json::array();
  s["bundles_runtime"] = Json::object();
  s["tasks_runtime"] = Json::object();
  for (int i = 1; i <= bundles; ++i) {
    std::string id = "b" + std::to_string(i);
    s["bundles"].push_back({{"id", id}, {"issues", {i}}, {"status", "pending"}});
    s["bundles_runtime"][id] = {{"bundle", id},
                                {"node", "plan_bundle"},
                                {"title", "quote \" backslash \\ brace } bracket ] caf\u00e9"}};
    s["tasks_runtime"][id + "/T1"] = {{"node", "implement"}, {"files", {"a", "[b]"}}};
  }
  s["completed_nodes"] = Json::array({"scan", "bundle"});
  s["event_seq"] = 7;
  s["metrics"] = {{"transitions", 3}};
  s["updated_at"] = "2026-12-07T10:00:00+00:00";
  return s;
}

std::string canonical(const Json& s) {
  return dump_py(s, 2) + "\n";
}

// reparse_state(old, new) against parse_json(new), with values moved and
// copied.
void expect_reparse(const Json& before, const Json& after, size_t* parsed = nullptr) {
  const std::string old_text = canonical(before), new_text = canonical(after);
  for (bool move : {false, true}) {
    Json old_state = before;
    auto got = reparse_state(old_text, old_state, move, new_text, "state.json", parsed);
    ASSERT_TRUE(got) << got.error().message;
    EXPECT_EQ(canonical(*got), new_text);
    EXPECT_EQ(*got, after);
    if (!move) {
      EXPECT_EQ(old_state, before);
    }
  }
}

TEST(StateCache, ReparseParsesOnlyWhatChanged) {
  Json before = sample_state(50);
  Json after = before;
  after["bundles_runtime"]["b7"]["node"] = "implement";
  after["bundles"][3]["status"] = "delivered";
  after["event_seq"] = 8;
  after["updated_at"] = "2026-12-07T10:00:01+00:00";
  size_t parsed = 0;
  expect_reparse(before, after, &parsed);
  // The changed record, the changed entry and two scalars: a few hundred
  // bytes of a file of many kilobytes.
  EXPECT_LT(parsed, 400u);
  EXPECT_GT(canonical(after).size(), 8000u);
}

TEST(StateCache, ReparseFollowsAddedRemovedAndReorderedValues) {
  Json before = sample_state(5);
  Json after = sample_state(7);  // two more records in each map, entries in the list
  after["new_key"] = {{"x", 1}};
  after.erase("completed_nodes");
  after["bundles_runtime"].erase("b2");
  expect_reparse(before, after);
  // A list that shrinks, a map that became a list, a scalar that became a map.
  Json shrunk = sample_state(3);
  shrunk["metrics"] = Json::array({1, 2});
  shrunk["node"] = {{"a", "b"}};
  expect_reparse(before, shrunk);
  expect_reparse(shrunk, before);
}

TEST(StateCache, ReparseOfAnyOtherLayoutIsTheParsersAnswer) {
  Json before = sample_state(3);
  Json old_state = before;
  const std::string old_text = canonical(before);
  // Compact text, a repeated key (Python's rule: first position, last value),
  // text after the object, a broken file.
  for (std::string text :
       {before.dump(), std::string(R"({"a": 1, "b": {"x": 1, "x": 2}, "a": 3})"),
        std::string(R"({"a": 1} x)"), std::string(R"({"a": [1, 2})"),
        std::string(R"({"bundles": [1,, 2]})"), std::string("[1, 2]")}) {
    auto want = parse_json(text, "state.json");
    Json st = before;
    auto got = reparse_state(old_text, st, true, text, "state.json");
    ASSERT_EQ(bool(want), bool(got)) << text;
    if (want)
      EXPECT_EQ(*got, *want) << text;
    else
      EXPECT_EQ(got.error().message, want.error().message) << text;
  }
}

TEST(StateCache, ReadsTheFileOnlyWhenItChanged) {
  test::Scratch dir;
  const std::string path = dir / "state.json";
  Json s = sample_state(4);
  ASSERT_TRUE(write_file_atomic(path, canonical(s)));
  StateCache cache(path);
  auto first = cache.get();
  ASSERT_TRUE(first) << first.error().message;
  EXPECT_EQ(**first, s);
  s["bundles_runtime"]["b2"]["node"] = "verify";
  ASSERT_TRUE(write_file_atomic(path, canonical(s)));
  auto second = cache.get();
  ASSERT_TRUE(second);
  EXPECT_EQ(**second, s);
  // The first snapshot is left as it was.
  EXPECT_EQ((**first)["bundles_runtime"]["b2"]["node"], "plan_bundle");
  EXPECT_LT(cache.parsed_bytes(), canonical(s).size() + 200);
  // Unchanged bytes, even in a new file, give the same snapshot.
  ASSERT_TRUE(write_file_atomic(path, canonical(s)));
  auto third = cache.get();
  ASSERT_TRUE(third);
  EXPECT_EQ(third->get(), second->get());
  // A missing file is the reader's error.
  ASSERT_EQ(::unlink(path.c_str()), 0);
  auto gone = cache.get();
  ASSERT_FALSE(gone);
  EXPECT_EQ(gone.error().message, path + ": no such run state");
}

TEST(StateCache, ABrokenFileIsAnErrorAndTheNextReadStartsAfresh) {
  test::Scratch dir;
  const std::string path = dir / "state.json";
  Json s = sample_state(3);
  ASSERT_TRUE(write_file_atomic(path, canonical(s)));
  StateCache cache(path);
  ASSERT_TRUE(cache.get());
  std::string broken = canonical(s);
  broken.insert(broken.find("\"plan_bundle\""), "!");
  ASSERT_TRUE(write_file_atomic(path, broken));
  auto bad = cache.get();
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().message, parse_json(broken, path).error().message);
  s["node"] = "scan";
  ASSERT_TRUE(write_file_atomic(path, canonical(s)));
  auto good = cache.get();
  ASSERT_TRUE(good);
  EXPECT_EQ(**good, s);
}

}  // namespace
}  // namespace devgraph
