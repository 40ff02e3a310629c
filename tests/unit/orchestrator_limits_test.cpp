// The run's limits: the book's accounting on its own (slots in ask order
// up to the ceiling, slots back from a driver that goes, a pause for every
// other driver, the run's budget, a bundle's budget), then the broker over
// its real socket with drivers' gates (bundle/limits_client.h), what it
// records in the run and what a resumed run takes from there.
#include "orchestrator/limits.h"

#include <sys/socket.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include "bundle/budget.h"
#include "bundle/layout.h"
#include "bundle/limits_client.h"
#include "bundle/limits_protocol.h"
#include "support/shipped.h"
#include "support/test_util.h"

namespace devgraph::orchestrator {
namespace {

using namespace std::chrono_literals;

const SysTime kNow{std::chrono::seconds(1'800'000'000)};

// The ops sent, as "client:op".
std::vector<std::string> ops(const LimitsMessages& m) {
  std::vector<std::string> out;
  for (const auto& x : m) out.push_back(std::to_string(x.to) + ":" + json_str(x.message, "op"));
  return out;
}

LimitsSettings settings(int max_live, std::optional<double> budget = std::nullopt) {
  LimitsSettings s;
  s.max_live = max_live;
  s.budget_usd = budget;
  s.per_bundle = BundleBudget{std::nullopt, std::nullopt, std::nullopt};
  return s;
}

TEST(LimitsBook, SlotsAreGrantedInAskOrderUpToTheCeiling) {
  LimitsBook book(settings(2));
  for (LimitsClientId c : {1, 2, 3})
    EXPECT_TRUE(book.hello(c, "b" + std::to_string(c), 1, kNow).empty());
  EXPECT_EQ(ops(book.ask(1)), std::vector<std::string>{"1:grant"});
  EXPECT_EQ(ops(book.ask(2)), std::vector<std::string>{"2:grant"});
  EXPECT_TRUE(book.ask(3).empty()) << "the ceiling is reached";
  EXPECT_TRUE(book.ask(1).empty());
  EXPECT_TRUE(book.ask(2).empty());
  EXPECT_EQ(book.live(), 2);
  EXPECT_EQ(book.waiting(), 3u);
  // Whoever asked first gets the slot that comes back, whichever bundle
  // gave it back.
  EXPECT_EQ(ops(book.finished(2, 0.5, std::nullopt)), std::vector<std::string>{"3:grant"});
  EXPECT_EQ(ops(book.release(1)), std::vector<std::string>{"1:grant"});
  EXPECT_EQ(ops(book.finished(3, 0.5, std::nullopt)), std::vector<std::string>{"2:grant"});
  EXPECT_EQ(book.live(), 2);
  EXPECT_EQ(book.waiting(), 0u);
  EXPECT_TRUE(book.ask(7).empty()) << "nothing for a driver that never said hello";
}

TEST(LimitsBook, ADriverThatGoesGivesBackEverySlotItHeld) {
  LimitsBook book(settings(2));
  book.hello(1, "b1", 1, kNow);
  book.hello(2, "b2", 1, kNow);
  book.ask(1);
  book.ask(1);
  EXPECT_TRUE(book.ask(2).empty());
  EXPECT_TRUE(book.ask(1).empty());
  EXPECT_EQ(book.held_by(1), 2);
  // b1's driver dies: its two slots come back, its waiting ask is dropped.
  EXPECT_EQ(ops(book.gone(1)), std::vector<std::string>{"2:grant"});
  EXPECT_EQ(book.live(), 1);
  EXPECT_EQ(book.waiting(), 0u);
  EXPECT_EQ(book.held_by(1), 0);
  EXPECT_TRUE(book.gone(1).empty()) << "going twice changes nothing";
}

TEST(LimitsBook, AProviderLimitPausesEveryOtherDriverAndLaterOnesAreToldAtHello) {
  LimitsBook book(settings(4));
  for (LimitsClientId c : {1, 2, 3}) book.hello(c, "b" + std::to_string(c), 1, kNow);
  auto out = book.limit(2, kNow + 1h, "usage limit reached", kNow);
  EXPECT_EQ(ops(out), (std::vector<std::string>{"1:pause", "3:pause"}));
  EXPECT_EQ(out[0].message["until_ms"], 1'800'003'600'000LL);
  EXPECT_EQ(json_str(out[0].message, "reason"), "b2 met a provider limit: usage limit reached");
  EXPECT_TRUE(book.limit(3, kNow + 30min, "earlier", kNow).empty()) << "the later pause holds";
  EXPECT_TRUE(book.limit(3, kNow - 1s, "over", kNow).empty());
  EXPECT_EQ(ops(book.limit(3, kNow + 2h, "later", kNow)),
            (std::vector<std::string>{"1:pause", "2:pause"}));
  EXPECT_EQ(book.paused_until(), kNow + 2h);
  EXPECT_EQ(ops(book.hello(4, "b4", 1, kNow + 1h)), std::vector<std::string>{"4:pause"});
  EXPECT_TRUE(book.hello(5, "b5", 1, kNow + 3h).empty()) << "the pause is over";
}

TEST(LimitsBook, TheRunsBudgetClosesEveryDriverOnceTheRecordedCostReachesIt) {
  LimitsBook book(settings(1, 5.0));
  book.spent_before("b1", bundle::LedgerTotals{3.0, 4, std::nullopt});
  book.hello(1, "b1", 1, kNow);
  book.hello(2, "b2", 1, kNow);
  EXPECT_EQ(ops(book.ask(1)), std::vector<std::string>{"1:grant"});
  EXPECT_TRUE(book.ask(2).empty());
  EXPECT_TRUE(book.ask(1).empty());
  EXPECT_FALSE(book.budget_spent());
  auto out = book.finished(1, 1.5, std::nullopt);
  EXPECT_EQ(ops(out), std::vector<std::string>{"2:grant"}) << "$4.50 of $5.00";
  out = book.finished(2, 0.5, std::nullopt);
  EXPECT_EQ(ops(out), (std::vector<std::string>{"1:closed", "2:closed"}))
      << "$5.00: the slot that came back goes to nobody";
  EXPECT_TRUE(book.budget_spent());
  EXPECT_DOUBLE_EQ(book.spent_usd(), 5.0);
  EXPECT_EQ(json_str(out[0].message, "reason").rfind(bundle::kRunBudgetSpent, 0), 0u);
  EXPECT_NE(json_str(out[0].message, "reason").find("$5.00 of its $5.00"), std::string::npos);
  EXPECT_EQ(book.live(), 0);
  EXPECT_EQ(book.waiting(), 0u);
  EXPECT_TRUE(book.ask(1).empty());
  EXPECT_EQ(ops(book.hello(3, "b3", 1, kNow)), std::vector<std::string>{"3:closed"});

  // What the ledgers hold can spend the budget before anyone connects.
  LimitsBook spent(settings(1, 2.0));
  spent.spent_before("b1", bundle::LedgerTotals{2.0, 3, std::nullopt});
  EXPECT_TRUE(spent.budget_spent());
}

TEST(LimitsBook, ABundlesBudgetClosesThatBundleOnlyAndAnotherRoundLetsItGoOn) {
  LimitsSettings s = settings(4);
  s.per_bundle = BundleBudget{3, 10.0, 1000};
  LimitsBook book(s);
  book.spent_before("b1", bundle::LedgerTotals{1.0, 2, std::nullopt});
  book.hello(1, "b1", 1, kNow);
  book.hello(2, "b2", 1, kNow);
  book.ask(1);
  book.ask(2);
  EXPECT_TRUE(book.ask(1).size() == 1u);
  auto out = book.finished(1, 0.1, std::nullopt);
  ASSERT_EQ(ops(out), std::vector<std::string>{"1:closed"}) << "b1's third persona run";
  std::string why = json_str(out[0].message, "reason");
  EXPECT_EQ(why.rfind(bundle::kBundleBudgetSpent, 0), 0u) << why;
  EXPECT_NE(why.find("3 persona runs of the 3"), std::string::npos) << why;
  EXPECT_TRUE(book.ask(1).empty());
  EXPECT_EQ(ops(book.ask(2)), std::vector<std::string>{"2:grant"}) << "b2 goes on";
  // b1's other slot comes back as usual; its driver is told again at hello.
  EXPECT_TRUE(book.finished(1, 0.1, std::nullopt).size() <= 1u);
  EXPECT_EQ(ops(book.hello(3, "b1", 1, kNow)), std::vector<std::string>{"3:closed"});
  // An answer gave b1 a second budget's worth: 6 runs in all.
  EXPECT_TRUE(book.hello(4, "b1", 2, kNow).empty());
  // Tokens count where they are reported.
  book.hello(5, "b5", 1, kNow);
  book.ask(5);
  EXPECT_TRUE(book.finished(5, 0, std::nullopt).empty());
  book.ask(5);
  auto t = book.finished(5, 0, 1000);
  ASSERT_EQ(ops(t), std::vector<std::string>{"5:closed"});
  EXPECT_NE(json_str(t[0].message, "reason").find("1000 tokens"), std::string::npos);
}

// -- the broker over its socket --------------------------------------------------

class LimitsSocket : public test::RunFixture {
 protected:
  void SetUp() override {
    RunFixture::SetUp();
    auto p = make_driver_pool(s / "run/live-drivers");
    ASSERT_TRUE(p.ok()) << p.error().message;
    pool = std::move(*p);
    graph.concurrency.max_live_personas = 1;
    graph.budgets.per_bundle = BundleBudget{std::nullopt, std::nullopt, std::nullopt};
  }

  void add_bundles(const std::vector<std::string>& ids, Json extra = Json::object()) {
    EventRequest e{"NOTE", Json{{"topic", "test"}}, Json(), [&](Json& st) -> Status {
                     st["bundles"] = Json::array();
                     for (const auto& id : ids) {
                       Json entry = {{"id", id}, {"status", "pending"}};
                       if (extra.contains(id))
                         for (auto& [k, v] : extra[id].items()) entry[k] = v;
                       st["bundles"].push_back(entry);
                     }
                     return {};
                   }};
    ASSERT_TRUE(store.event(e).ok());
  }

  std::unique_ptr<LimitsBroker> open(std::optional<double> budget = std::nullopt) {
    auto b = LimitsBroker::open(LimitsSetup{store, graph, *pool, budget,
                                            [this](const std::string& l) { lines.push_back(l); }});
    EXPECT_TRUE(b.ok()) << (b.ok() ? "" : b.error().message);
    return b.ok() ? std::move(*b) : nullptr;
  }

  std::unique_ptr<bundle::SlotGate> gate(const LimitsBroker& b, const std::string& bundle) {
    auto g = bundle::connect_limits(b.address(), bundle);
    EXPECT_TRUE(g.ok()) << (g.ok() ? "" : g.error().message);
    return g.ok() ? std::move(*g) : nullptr;
  }

  static std::vector<std::string> kinds(const std::vector<bundle::GateNews>& news) {
    std::vector<std::string> out;
    for (const auto& n : news)
      out.push_back(n.kind == bundle::GateNews::Kind::granted  ? "granted"
                    : n.kind == bundle::GateNews::Kind::paused ? "paused"
                                                               : "closed");
    return out;
  }

  Json limits() { return std::move(store.read()).value().value("limits", Json()); }

  std::unique_ptr<DriverPool> pool;
  std::vector<std::string> lines;
};

TEST_F(LimitsSocket, DriversShareTheCeilingAndADriverThatGoesGivesItsSlotBack) {
  add_bundles({"b1", "b2"});
  auto broker = open();
  ASSERT_TRUE(broker);
  EXPECT_EQ(broker->address(), s / "run/limits.sock");
  auto g1 = gate(*broker, "b1");
  auto g2 = gate(*broker, "b2");
  g1->ask();
  g2->ask();
  broker->serve();
  EXPECT_EQ(kinds(g1->take()), std::vector<std::string>{"granted"});
  EXPECT_TRUE(g2->take().empty()) << "one live persona for the whole run";
  EXPECT_EQ(broker->book().live(), 1);
  // b1's driver dies holding its slot: the kernel closes its socket.
  g1.reset();
  broker->serve();
  EXPECT_EQ(kinds(g2->take()), std::vector<std::string>{"granted"});
  g2->finished(0.25, 100);
  broker->serve();
  EXPECT_EQ(broker->book().live(), 0);
  EXPECT_DOUBLE_EQ(broker->book().usage("b2").cost_usd, 0.25);
  EXPECT_EQ(broker->book().usage("b2").tokens, 100);
}

TEST_F(LimitsSocket, AProviderLimitReachesTheOtherDriversAndIsRecordedForAResumedRun) {
  add_bundles({"b1", "b2"});
  auto broker = open();
  auto g1 = gate(*broker, "b1");
  auto g2 = gate(*broker, "b2");
  broker->serve();
  auto until = std::chrono::time_point_cast<std::chrono::milliseconds>(
      std::chrono::system_clock::now() + 1h);
  g1->report_limit(until, "usage limit reached");
  broker->serve();
  auto news = g2->take();
  ASSERT_EQ(kinds(news), std::vector<std::string>{"paused"});
  EXPECT_EQ(news[0].until, until);
  EXPECT_NE(news[0].reason.find("b1 met a provider limit"), std::string::npos);
  EXPECT_TRUE(g1->take().empty());
  Json l = limits();
  EXPECT_EQ(
      l["paused_until_ms"],
      std::chrono::duration_cast<std::chrono::milliseconds>(until.time_since_epoch()).count());
  // The orchestrator is killed and the run resumed: a new broker still
  // honours the pause.
  g1.reset();
  g2.reset();
  broker.reset();
  EXPECT_FALSE(path_exists(s / "run/limits.sock")) << "the socket file goes with the broker";
  auto again = open();
  auto g3 = gate(*again, "b2");
  again->serve();
  auto told = g3->take();
  ASSERT_EQ(kinds(told), std::vector<std::string>{"paused"});
  EXPECT_EQ(told[0].until, until);
  Json result = limits_result(std::move(store.read()).value(), 0, std::chrono::system_clock::now());
  EXPECT_EQ(json_str(result, "paused_until").empty(), false);
}

TEST_F(LimitsSocket, TheBudgetCountsTheLedgersOfEarlierDriversAndClosesEveryGate) {
  add_bundles({"b1", "b2"});
  // An earlier driver of b1 spent $3.
  ASSERT_TRUE(make_directories(s / "run/bundles/b1").ok());
  test::write_text(bundle::BundleLayout{s / "run", "b1", ""}.ledger(),
                   "{\"handle\": \"h\", \"persona\": \"planner\", \"cost_usd\": 3.0}\n");
  auto broker = open(4.0);
  EXPECT_DOUBLE_EQ(broker->book().spent_usd(), 3.0);
  EXPECT_EQ(limits()["budget_usd"], 4.0) << "the budget is recorded for a resume";
  auto g1 = gate(*broker, "b1");
  auto g2 = gate(*broker, "b2");
  g1->ask();
  broker->serve();
  ASSERT_EQ(kinds(g1->take()), std::vector<std::string>{"granted"});
  g2->ask();
  g1->finished(1.0, std::nullopt);
  broker->serve();
  auto n1 = g1->take();
  auto n2 = g2->take();
  ASSERT_EQ(kinds(n1), std::vector<std::string>{"closed"});
  ASSERT_EQ(kinds(n2), std::vector<std::string>{"closed"}) << "b2's ask is never granted";
  EXPECT_EQ(n2[0].reason.rfind(bundle::kRunBudgetSpent, 0), 0u) << n2[0].reason;
  EXPECT_TRUE(limits().contains("budget_spent_at"));
  Json result =
      limits_result(std::move(store.read()).value(), 4.0, std::chrono::system_clock::now());
  EXPECT_EQ(result["budget_spent"], true);
  Json run = {{"cost_usd", 4.0}, {"limits", result}};
  EXPECT_NE(limits_summary(run).find("$4.00 of $4.00 (--budget-usd) is spent"), std::string::npos)
      << limits_summary(run);
}

TEST_F(LimitsSocket, AHigherBudgetOnResumeSetsTheBundlesParkedForTheOldOneGoing) {
  std::string why = std::string(bundle::kRunBudgetSpent) + "the run has spent $1.00";
  add_bundles({"b1", "b2", "b3"},
              Json{{"b1", {{"status", "parked"}, {"parked_reason", why}}},
                   {"b2", {{"status", "parked"}, {"parked_reason", "tests fail"}}}});
  ASSERT_TRUE(make_directories(s / "run/bundles/b1").ok());
  test::write_text(bundle::BundleLayout{s / "run", "b1", ""}.ledger(),
                   "{\"handle\": \"h\", \"persona\": \"planner\", \"cost_usd\": 1.0}\n");
  {
    auto same = open(1.0);  // still spent: nothing moves
    ASSERT_TRUE(same);
    EXPECT_EQ(std::move(store.read()).value()["bundles"][0]["status"], "parked");
  }
  auto broker = open(2.0);
  ASSERT_TRUE(broker);
  Json st = std::move(store.read()).value();
  EXPECT_EQ(st["bundles"][0]["status"], "running");
  EXPECT_EQ(st["bundles"][1]["status"], "parked") << "parked for another reason";
  EXPECT_EQ(st["limits"]["budget_usd"], 2.0);
  EXPECT_FALSE(st["limits"].contains("budget_spent_at"));
}

TEST_F(LimitsSocket, ABundleAPersonAllowedMoreIsGivenItsRoundsAtHello) {
  graph.budgets.per_bundle = BundleBudget{1, std::nullopt, std::nullopt};
  add_bundles({"b1"}, Json{{"b1", {{bundle::kBudgetRoundsKey, 2}}}});
  ASSERT_TRUE(make_directories(s / "run/bundles/b1").ok());
  test::write_text(bundle::BundleLayout{s / "run", "b1", ""}.ledger(),
                   "{\"handle\": \"h\", \"persona\": \"planner\", \"cost_usd\": 0}\n");
  auto broker = open();
  auto g = gate(*broker, "b1");
  g->ask();
  broker->serve();
  ASSERT_EQ(kinds(g->take()), std::vector<std::string>{"granted"}) << "1 run of the 2 allowed";
  g->finished(0, std::nullopt);
  broker->serve();
  auto n = g->take();
  ASSERT_EQ(kinds(n), std::vector<std::string>{"closed"});
  EXPECT_NE(n[0].reason.find("2 budgets allowed"), std::string::npos) << n[0].reason;
}

TEST_F(LimitsSocket, ALineOutsideTheProtocolEndsThatConnectionOnly) {
  add_bundles({"b1", "b2"});
  auto broker = open();
  auto fd = bundle::limits_connect(broker->address());
  ASSERT_TRUE(fd.ok());
  ASSERT_TRUE(bundle::limits_send(*fd, "{\"op\": \"ask\"}\n").ok()) << "no hello first";
  auto g2 = gate(*broker, "b2");
  g2->ask();
  broker->serve();
  EXPECT_EQ(kinds(g2->take()), std::vector<std::string>{"granted"});
  char c;
  EXPECT_EQ(::recv(*fd, &c, 1, 0), 0) << "the broker closed it";
  ::close(*fd);
  ASSERT_FALSE(lines.empty());
  EXPECT_NE(lines.back().find("broke the protocol"), std::string::npos) << lines.back();
}

TEST_F(LimitsSocket, AGateWhoseBrokerIsGoneIsClosedOnce) {
  add_bundles({"b1"});
  auto broker = open();
  auto g = gate(*broker, "b1");
  broker->serve();
  broker.reset();
  auto news = g->take();
  ASSERT_EQ(kinds(news), std::vector<std::string>{"closed"});
  EXPECT_NE(news[0].reason.find("went away"), std::string::npos) << news[0].reason;
  g->ask();  // sends nothing, fails nothing
  EXPECT_TRUE(g->take().empty());
  auto none = bundle::connect_limits(s / "run/limits.sock", "b1");
  ASSERT_FALSE(none.ok());
  EXPECT_EQ(none.error().kind, ErrorKind::not_found);
}

}  // namespace
}  // namespace devgraph::orchestrator
