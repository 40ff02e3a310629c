// The gated launcher over a launcher the test drives by hand and the
// in-process gate: slots in ask order, slots given back, limits reported
// and pauses passed on, a closed gate withdrawing what waits, a stop.
#include "bundle/slot_gate.h"

#include <gtest/gtest.h>

#include <deque>

#include "support/fake_slot_gate.h"

namespace devgraph::bundle {
namespace {

using namespace std::chrono_literals;

// A launcher whose events the test appends; it never blocks.
class HandLauncher final : public Launcher {
 public:
  Expected<std::uint64_t> launch(const agents::LaunchRequest& request) override {
    if (request.persona == "refused") return fail("launch: refused is not a persona");
    started.push_back(request.persona);
    ++outstanding_;
    return next_id_++;
  }
  std::optional<LaunchEvent> next() override {
    if (events.empty()) return std::nullopt;
    LaunchEvent ev = std::move(events.front());
    events.pop_front();
    if (ev.kind == LaunchEvent::Kind::completed) --outstanding_;
    return ev;
  }
  std::optional<LaunchEvent> poll() override { return next(); }
  size_t outstanding() const override { return outstanding_; }
  int persona_runs() const override { return static_cast<int>(started.size()); }
  void stop_all() override { stopped = true; }
  void pause(std::chrono::system_clock::time_point until, const std::string& reason) override {
    pauses.emplace_back(until, reason);
  }

  void complete(std::uint64_t id, double cost) {
    LaunchEvent ev;
    ev.kind = LaunchEvent::Kind::completed;
    ev.id = id;
    ev.outcome = "result";
    ev.cost_usd = cost;
    ev.tokens = 10;
    ev.result = Json{{"status", "DONE"}, {"summary", "ok"}, {"evidence", Json::array()}};
    events.push_back(ev);
  }

  std::vector<std::string> started;
  std::deque<LaunchEvent> events;
  std::vector<std::pair<std::chrono::system_clock::time_point, std::string>> pauses;
  bool stopped = false;

 private:
  size_t outstanding_ = 0;
  std::uint64_t next_id_ = 100;
};

agents::LaunchRequest req(const std::string& persona) {
  agents::LaunchRequest r;
  r.persona = persona;
  r.task = "T1";
  return r;
}

struct Gated {
  explicit Gated(int ceiling) {
    auto h = std::make_unique<HandLauncher>();
    auto g = std::make_unique<test::FakeSlotGate>(ceiling);
    hand = h.get();
    gate = g.get();
    launcher = gated_launcher(std::move(h), std::move(g));
  }
  HandLauncher* hand = nullptr;
  test::FakeSlotGate* gate = nullptr;
  std::unique_ptr<Launcher> launcher;
};

TEST(GatedLauncher, LaunchesStartInAskOrderAsSlotsComeBack) {
  Gated g(1);
  auto a = g.launcher->launch(req("tester"));
  auto b = g.launcher->launch(req("developer"));
  auto c = g.launcher->launch(req("code-reviewer"));
  ASSERT_TRUE(a && b && c);
  EXPECT_EQ(g.launcher->outstanding(), 3u);
  EXPECT_TRUE(g.hand->started.empty()) << "nothing starts before the gate is asked";
  EXPECT_FALSE(g.launcher->poll().has_value());  // the first grant starts the first launch
  EXPECT_EQ(g.hand->started, std::vector<std::string>{"tester"});
  g.hand->complete(100, 0.5);
  auto done = g.launcher->next();
  ASSERT_TRUE(done.has_value());
  EXPECT_EQ(done->kind, LaunchEvent::Kind::completed);
  EXPECT_EQ(done->id, *a) << "the gated launcher's own id";
  EXPECT_EQ(g.gate->finishes, 1);
  EXPECT_DOUBLE_EQ(g.gate->cost, 0.5);
  EXPECT_FALSE(g.launcher->poll().has_value());
  EXPECT_EQ(g.hand->started, (std::vector<std::string>{"tester", "developer"}));
  g.hand->complete(101, 0.25);
  ASSERT_EQ(g.launcher->next()->id, *b);
  EXPECT_FALSE(g.launcher->poll().has_value());
  EXPECT_EQ(g.hand->started, (std::vector<std::string>{"tester", "developer", "code-reviewer"}));
  EXPECT_EQ(g.gate->peak_in_use, 1);
  EXPECT_EQ(g.gate->waited, 2);
}

TEST(GatedLauncher, AGrantNobodyWaitsForIsGivenBack) {
  Gated g(2);
  ASSERT_TRUE(g.launcher->launch(req("tester")));
  g.launcher->stop_all();  // the launch ends before its grant is taken
  EXPECT_TRUE(g.hand->stopped);
  auto ev = g.launcher->next();
  ASSERT_TRUE(ev.has_value());
  EXPECT_EQ(ev->outcome, "interrupted");
  EXPECT_EQ(ev->result["status"], "BLOCKED");
  EXPECT_FALSE(g.launcher->next().has_value());
  EXPECT_EQ(g.gate->releases, 1);
  EXPECT_EQ(g.gate->in_use, 0);
  EXPECT_TRUE(g.hand->started.empty());
}

TEST(GatedLauncher, AClosedGateWithdrawsWhatWaitsAndRefusesNewLaunches) {
  Gated g(1);
  auto a = g.launcher->launch(req("tester"));
  auto b = g.launcher->launch(req("developer"));
  ASSERT_TRUE(a && b);
  EXPECT_FALSE(g.launcher->poll().has_value());
  ASSERT_EQ(g.hand->started.size(), 1u);
  g.gate->push({GateNews::Kind::closed, {}, "budget spent: $5.00 of $5.00"});
  auto withdrawn = g.launcher->poll();
  ASSERT_TRUE(withdrawn.has_value());
  EXPECT_EQ(withdrawn->id, *b);
  EXPECT_EQ(withdrawn->outcome, kOutcomeWithdrawn);
  EXPECT_NE(json_str(withdrawn->result, "summary").find("budget spent"), std::string::npos);
  EXPECT_EQ(g.launcher->refusing(), "budget spent: $5.00 of $5.00");
  auto refused = g.launcher->launch(req("tester"));
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().kind, ErrorKind::refused);
  // The persona in flight goes on and gives its slot back with its cost.
  g.hand->complete(100, 1.0);
  auto done = g.launcher->next();
  ASSERT_TRUE(done.has_value());
  EXPECT_EQ(done->id, *a);
  EXPECT_EQ(done->outcome, "result");
  EXPECT_EQ(g.gate->finishes, 1);
  EXPECT_EQ(g.gate->in_use, 0);
  EXPECT_FALSE(g.launcher->next().has_value());
  EXPECT_EQ(g.hand->started.size(), 1u);
}

TEST(GatedLauncher, LimitsGoToTheGateAndItsPausesToTheLauncher) {
  Gated g(1);
  const auto reset = std::chrono::system_clock::time_point(std::chrono::seconds(2'000'000'000));
  LaunchEvent paused;
  paused.kind = LaunchEvent::Kind::paused;
  paused.until = reset;
  paused.detail = "usage limit reached";
  ASSERT_TRUE(g.launcher->launch(req("tester")));
  EXPECT_FALSE(g.launcher->poll().has_value());
  g.hand->events.push_back(paused);
  g.hand->complete(100, 0);
  auto ev = g.launcher->next();
  ASSERT_TRUE(ev.has_value());
  EXPECT_EQ(ev->kind, LaunchEvent::Kind::completed) << "the pause is not handed on";
  ASSERT_EQ(g.gate->limits.size(), 1u);
  EXPECT_EQ(g.gate->limits[0].first, reset);
  EXPECT_EQ(g.gate->limits[0].second, "usage limit reached");

  g.gate->push({GateNews::Kind::paused, reset, "b2 met a usage limit"});
  EXPECT_FALSE(g.launcher->poll().has_value());
  ASSERT_EQ(g.hand->pauses.size(), 1u);
  EXPECT_EQ(g.hand->pauses[0].first, reset);
  EXPECT_EQ(g.hand->pauses[0].second, "b2 met a usage limit");
}

TEST(GatedLauncher, ALaunchTheInnerLauncherRefusesCompletesAndGivesItsSlotBack) {
  Gated g(1);
  ASSERT_TRUE(g.launcher->launch(req("refused")));
  auto ev = g.launcher->next();
  ASSERT_TRUE(ev.has_value());
  EXPECT_EQ(ev->outcome, "launch_failed");
  EXPECT_NE(ev->detail.find("not a persona"), std::string::npos);
  EXPECT_EQ(g.gate->releases, 1);
  EXPECT_EQ(g.gate->in_use, 0);
}

TEST(GatedLauncher, AWaitNoSlotCanEndIsTakenAsAClosedGate) {
  Gated g(0);
  ASSERT_TRUE(g.launcher->launch(req("tester")));
  auto ev = g.launcher->next();
  ASSERT_TRUE(ev.has_value());
  EXPECT_EQ(ev->outcome, kOutcomeWithdrawn);
  ASSERT_TRUE(g.launcher->refusing().has_value());
  EXPECT_NE(g.launcher->refusing()->find("no persona slot"), std::string::npos);
}

}  // namespace
}  // namespace devgraph::bundle
