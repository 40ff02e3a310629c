// Persona dispatch against the scripted launcher: result files and the
// ledger, visit-keyed reuse, urgency order, and completions kept for their
// owners.
#include "bundle/dispatch.h"

#include <gtest/gtest.h>

#include "bundle/slot_gate.h"
#include "contracts/schema.h"
#include "skill/skill.h"
#include "support/fake_launcher.h"
#include "support/fake_slot_gate.h"
#include "support/shipped.h"
#include "support/test_util.h"

namespace devgraph::bundle {
namespace {

class Dispatch : public test::RunFixture {
 protected:
  std::optional<Journal> journal;
  int calls = 0;
  test::FakeLauncher launcher{[this](const agents::LaunchRequest& r, int) {
    ++calls;
    return Json{
        {"status", "DONE"}, {"summary", r.persona + " answers"}, {"evidence", Json::array()}};
  }};
  // Urgency by task: T2 first, bundle-level first of all.
  std::function<int(const std::optional<std::string>&)> urgency =
      [](const std::optional<std::string>& t) {
        return !t ? 100 : *t == "T2" ? 2 : 1;
      };

  void SetUp() override {
    RunFixture::SetUp();
    journal.emplace(store, layout, crash, JournalHooks{}, initial);
  }
};

TEST_F(Dispatch, ACompletionIsSavedForItsVisitAndReusedForThatVisitOnly) {
  PersonaDispatch d(launcher, *journal, layout, crash, {}, urgency);
  auto id = d.launch({"tester", "T1", "verify", 4}, "check T1");
  ASSERT_TRUE(id.ok());
  auto r = d.wait_for(*id);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->status, "DONE");
  EXPECT_EQ(r->node, "verify");
  EXPECT_FALSE(r->reused);
  Json saved = std::move(load_json_file(layout.result("tester", "T1"))).value();
  EXPECT_EQ(saved["node"], "verify");
  EXPECT_EQ(saved["cursor_moves"], 4);
  auto again = d.recorded({"tester", "T1", "verify", 4});
  ASSERT_TRUE(again.has_value());
  EXPECT_TRUE(again->reused);
  EXPECT_EQ(again->summary, "tester answers");
  EXPECT_FALSE(d.recorded({"tester", "T1", "verify", 5}).has_value());
  EXPECT_FALSE(d.recorded({"tester", "T1", "implement", 4}).has_value());
  EXPECT_EQ(d.ledger_sum(), std::make_pair(0.01, 1));
  EXPECT_EQ(crash.names.back(), "saved:b1/T1/tester");
}

TEST_F(Dispatch, CompletionsAreServedByUrgencyAndNoneIsDropped) {
  PersonaDispatch d(launcher, *journal, layout, crash, {}, urgency);
  ASSERT_TRUE(d.launch({"developer", "T1", "implement", 1}, "x").ok());
  ASSERT_TRUE(d.launch({"developer", "T2", "implement", 1}, "x").ok());
  auto bundle = d.launch({"code-reviewer", std::nullopt, "final_review", 1}, "x");
  ASSERT_TRUE(bundle.ok());
  std::vector<std::string> order;
  // Waiting for the bundle-level launch leaves the task completions queued.
  auto review = d.wait_for(*bundle);
  ASSERT_TRUE(review.ok());
  EXPECT_EQ(d.unhandled(), 2u);
  while (true) {
    auto c = d.next();
    ASSERT_TRUE(c.ok());
    if (!*c) break;
    order.push_back(*(*c)->task);
  }
  EXPECT_EQ(order, (std::vector<std::string>{"T2", "T1"}));
  EXPECT_EQ(d.unhandled(), 0u);
  // Every launch was recorded as dispatched.
  size_t dispatched = 0;
  for (const auto& e : test::read_jsonl(s / "run/events.jsonl"))
    dispatched += e["type"] == "PERSONA_DISPATCHED";
  EXPECT_EQ(dispatched, 3u);
}

TEST_F(Dispatch, AWithdrawnLaunchRecordsNothingAndTokensReachTheLedger) {
  // A gate of no slot that closes: the launch never starts.
  auto gate = std::make_unique<test::FakeSlotGate>(0);
  gate->push({GateNews::Kind::closed, {}, "budget spent"});
  struct Borrowed final : Launcher {
    explicit Borrowed(Launcher& l) : inner(l) {}
    Expected<std::uint64_t> launch(const agents::LaunchRequest& r) override {
      return inner.launch(r);
    }
    std::optional<LaunchEvent> next() override { return inner.next(); }
    std::optional<LaunchEvent> poll() override { return inner.poll(); }
    size_t outstanding() const override { return inner.outstanding(); }
    int persona_runs() const override { return inner.persona_runs(); }
    Launcher& inner;
  };
  auto gated = gated_launcher(std::make_unique<Borrowed>(launcher), std::move(gate));
  PersonaDispatch d(*gated, *journal, layout, crash, {}, urgency);
  auto id = d.launch({"tester", "T1", "verify", 4}, "check T1");
  ASSERT_TRUE(id.ok());
  auto r = d.wait_for(*id);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->outcome, kOutcomeWithdrawn);
  EXPECT_EQ(d.halted(), "budget spent");
  EXPECT_FALSE(path_exists(layout.result("tester", "T1")));
  EXPECT_FALSE(path_exists(layout.ledger()));
  EXPECT_EQ(calls, 0);

  // Lines with tokens add them up; lines without count no tokens.
  ASSERT_TRUE(make_directories(layout.dir()).ok());
  test::write_text(layout.ledger(),
                   "{\"handle\": \"a\", \"persona\": \"p\", \"cost_usd\": 0.5, \"tokens\": 40}\n"
                   "{\"handle\": \"b\", \"persona\": \"p\", \"cost_usd\": 0.25}\n"
                   "{\"handle\": \"c\", \"persona\": \"p\", \"cost_usd\": 1, \"tokens\": 2}\n"
                   "{\"handle\": \"d\", \"pers");
  LedgerTotals t = ledger_usage(layout.ledger());
  EXPECT_DOUBLE_EQ(t.cost_usd, 1.75);
  EXPECT_EQ(t.persona_runs, 3) << "a torn last line is skipped";
  EXPECT_EQ(t.tokens, 42);
  test::write_text(layout.ledger(),
                   "{\"handle\": \"b\", \"persona\": \"p\", \"cost_usd\": 0.25}\n");
  EXPECT_EQ(ledger_usage(layout.ledger()).tokens, std::nullopt);
}

TEST_F(Dispatch, TokensReachTheEventDetailAndTheResultFileAndComeBackOnReuse) {
  test::FakeLauncher counted{[](const agents::LaunchRequest&, int) {
    return Json{{"status", "DONE"},
                {"summary", "s"},
                {"evidence", Json::array()},
                {"usage", {{"input", 5}, {"cache_read", 900}, {"output", 40}, {"reasoning", 10}}}};
  }};
  PersonaDispatch d(counted, *journal, layout, crash, {}, urgency);
  auto id = d.launch({"developer", "T1", "implement", 2}, "x");
  ASSERT_TRUE(id.ok());
  auto r = d.wait_for(*id);
  ASSERT_TRUE(r.ok());
  const TokenUsage want{5, 900, std::nullopt, 40, 10};
  EXPECT_EQ(r->tokens, 945);
  EXPECT_EQ(r->usage, want);
  Json detail = r->detail();
  EXPECT_EQ(detail["tokens"], 945);
  EXPECT_EQ(detail["usage"].dump(),
            R"({"input":5,"cache_read":900,"cache_write":null,"output":40,"reasoning":10})");
  Json saved = std::move(load_json_file(layout.result("developer", "T1"))).value();
  EXPECT_EQ(saved["tokens"], 945);
  EXPECT_EQ(TokenUsage::from_json(saved["usage"]), want);
  EXPECT_EQ(ledger_usage(layout.ledger()).tokens, 945);
  auto again = d.recorded({"developer", "T1", "implement", 2});
  ASSERT_TRUE(again.has_value());
  EXPECT_EQ(again->tokens, 945);
  EXPECT_EQ(again->usage, want);
}

TEST_F(Dispatch, AResultWithoutTokensHasNoneInItsDetailOrFile) {
  PersonaDispatch d(launcher, *journal, layout, crash, {}, urgency);
  auto id = d.launch({"tester", "T1", "verify", 1}, "x");
  ASSERT_TRUE(id.ok());
  auto r = d.wait_for(*id);
  ASSERT_TRUE(r.ok());
  Json detail = r->detail();
  EXPECT_FALSE(detail.contains("tokens"));
  EXPECT_FALSE(detail.contains("usage"));
  Json saved = std::move(load_json_file(layout.result("tester", "T1"))).value();
  EXPECT_FALSE(saved.contains("tokens"));
  EXPECT_FALSE(saved.contains("usage"));
  // A file an older driver saved, or one edited by hand, reads as none.
  saved["tokens"] = "many";
  saved["usage"] = "lots";
  test::write_text(layout.result("tester", "T1"), dump_py(saved, 2) + "\n");
  auto again = d.recorded({"tester", "T1", "verify", 1});
  ASSERT_TRUE(again.has_value());
  EXPECT_EQ(again->tokens, std::nullopt);
  EXPECT_TRUE(again->usage.empty());
}

TEST(PersonaResult, ReadsTheResultOnce) {
  auto r = PersonaResult::from_json(Json{{"status", "DONE_WITH_CONCERNS"},
                                         {"summary", "s"},
                                         {"concerns", {"a", 3, "b"}},
                                         {"blockers", {"capacity"}},
                                         {"findings", {{{"file", "x.py:3"}}, {{"path", "y"}}, 7}}});
  EXPECT_EQ(r.concerns, (std::vector<std::string>{"a", "b"}));
  EXPECT_TRUE(r.has_blocker("capacity"));
  EXPECT_FALSE(r.stopped());
  EXPECT_TRUE(r.has_findings());
  EXPECT_EQ(r.finding_files(), (std::vector<std::string>{"x.py:3", "y", ""}));
  EXPECT_TRUE(PersonaResult::from_json(Json{{"status", "NEEDS_CONTEXT"}}).stopped());
  EXPECT_EQ(PersonaResult::from_json(Json("not an object")).status, "");
}

}  // namespace
}  // namespace devgraph::bundle
