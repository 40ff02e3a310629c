// The journal: moves and events through the store, refusals as values that
// change nothing, crash points around each move.
#include "bundle/journal.h"

#include <gtest/gtest.h>

#include "contracts/schema.h"
#include "skill/skill.h"
#include "support/shipped.h"
#include "support/test_util.h"

namespace devgraph::bundle {
namespace {

class JournalTest : public test::RunFixture {
 protected:
  std::vector<Json> states;
  std::optional<Journal> j;

  void SetUp() override {
    RunFixture::SetUp();
    j.emplace(store, layout, crash,
              JournalHooks{{}, [this](const Json& st) { states.push_back(st); }}, initial);
  }
};

TEST_F(JournalTest, AMoveIsRecordedWithCrashPointsAroundIt) {
  ASSERT_TRUE(j->move(std::nullopt, "plan_bundle", "BUNDLE_STARTED").ok());
  ASSERT_TRUE(j->move(std::string("T1"), "write_tdd", "TASK_STARTED").ok());
  EXPECT_EQ(j->node(std::nullopt), "plan_bundle");
  EXPECT_EQ(j->node(std::string("T1")), "write_tdd");
  EXPECT_EQ(j->moves(std::string("T1")), 1);
  EXPECT_EQ(crash.names,
            (std::vector<std::string>{"move:b1/BUNDLE_STARTED", "moved:b1/BUNDLE_STARTED",
                                      "move:b1/T1/TASK_STARTED", "moved:b1/T1/TASK_STARTED"}));
  EXPECT_EQ(states.size(), 2u);
}

TEST_F(JournalTest, ARefusedChangeIsAnErrorAndChangesNothing) {
  ASSERT_TRUE(j->move(std::nullopt, "plan_bundle", "BUNDLE_STARTED").ok());
  std::string before = test::slurp(s / "run/state.json");
  std::string log_before = test::slurp(s / "run/events.jsonl");
  // Out of the bundle's lane, and an event outside the vocabulary.
  EXPECT_FALSE(j->move(std::nullopt, "write_tdd", "TDD_DONE").ok());
  EXPECT_FALSE(j->event("NOT_AN_EVENT", Json::object()).ok());
  EXPECT_EQ(test::slurp(s / "run/state.json"), before);
  EXPECT_EQ(test::slurp(s / "run/events.jsonl"), log_before);
  EXPECT_EQ(j->node(std::nullopt), "plan_bundle");
  // The moved: point was never reached for the refused move.
  EXPECT_EQ(crash.names.back(), "move:b1/TDD_DONE");
}

TEST_F(JournalTest, LogLinesCarryTheBundleAndTheFields) {
  ASSERT_TRUE(make_directories(layout.dir()).ok());
  j->log("start", Json{{"node", "plan_bundle"}});
  auto lines = test::read_jsonl(layout.log());
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(lines[0]["bundle"], "b1");
  EXPECT_EQ(lines[0]["event"], "start");
  EXPECT_EQ(lines[0]["node"], "plan_bundle");
}

}  // namespace
}  // namespace devgraph::bundle
