// The run-wide limits of `devgraph run`, kept in one place, the
// orchestrator: how many personas live at once across every bundle
// (GRAPH.yaml concurrency.max_live_personas), a provider limit one bundle
// met pausing new launches in all of them, the run's budget
// (--budget-usd), and each bundle's lifetime budget (GRAPH.yaml
// budgets.per_bundle, bundle/budget.h). Drivers talk to it over a socket
// in the run directory (bundle/limits_protocol.h, bundle/limits_client.h).
//
// Contract of LimitsBook, the accounting (pure: no I/O, no clock of its
// own; every call returns the messages to send):
// - Slots: at most max_live slots are held at once, over every driver of
//   the run. Asks are granted in the order they arrived, whichever driver
//   made them, as slots come back (finished, release) or a driver goes
//   (gone: every slot it held comes back, its waiting asks are dropped).
// - Money: spent_before() seeds each bundle's usage from its ledger; each
//   finished() adds its cost, its tokens and one persona run to the
//   bundle's usage and the run's. Once the run's cost reaches budget_usd,
//   every driver is sent "closed" with a reason starting kRunBudgetSpent,
//   waiting asks are dropped and nothing is granted again; a driver that
//   says hello afterwards is told at once. Reaching a bundle's budget
//   (with the rounds its hello brought) closes that bundle's drivers only.
// - Pauses: a provider limit a driver reports is sent as "pause" to every
//   other driver when it ends later than the pause in force (and after
//   `now`); a driver that says hello while a pause lasts is told.
// - A driver that has not said hello is given nothing.
//
// Contract of LimitsBroker, the socket and the record:
// - open() listens at bundle::limits_address(run dir) (a stale socket
//   file is replaced; the path, or an abstract name when the path is too
//   long for sun_path, is address()) and serves on the driver pool's loop
//   (DriverPool::serve_fd): no thread, no polling. It seeds the book from
//   every bundle's ledger (bundle::ledger_usage), so a resumed run knows
//   what was spent, and from state.limits (the budget when none is given,
//   a provider pause still in force).
// - The run state's `limits` object (one NOTE event with topic "limits"
//   per change, through the RunStore) holds budget_usd (set by
//   --budget-usd, kept by a resume without it), paused_until_ms /
//   paused_until / pause_reason, and budget_spent_at. When the budget now
//   in force is not reached, bundles parked for the run's budget are set
//   running again (recorded in the same way).
// - A connection that breaks the protocol, or whose driver stops reading
//   so that a message cannot be sent, is closed: its slots come back, and
//   its driver reads EOF (it parks, launching nothing more). A driver that
//   dies closes its connection in the kernel: the same.
// - A record the store refuses is reported on on_line, never silently
//   dropped; the limits in memory still hold.
// - The destructor closes every socket and removes the socket file.
#pragma once

#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "bundle/dispatch.h"
#include "bundle/limits_protocol.h"
#include "graph/graph.h"
#include "orchestrator/drivers.h"
#include "store/run_store.h"
#include "util/clock.h"
#include "util/expected.h"
#include "util/json.h"

namespace devgraph::orchestrator {

using LimitsClientId = std::uint64_t;
using SysTime = std::chrono::system_clock::time_point;

struct LimitsSettings {
  int max_live = 39;
  std::optional<double> budget_usd;
  BundleBudget per_bundle;
};

struct LimitsMessage {
  LimitsClientId to = 0;
  Json message;
};
using LimitsMessages = std::vector<LimitsMessage>;

class LimitsBook {
 public:
  explicit LimitsBook(LimitsSettings settings);

  void spent_before(const std::string& bundle, const bundle::LedgerTotals& usage);
  // A pause recorded in the run, still to be honoured.
  void paused(SysTime until, std::string reason);

  LimitsMessages hello(LimitsClientId client, const std::string& bundle, int rounds, SysTime now);
  LimitsMessages ask(LimitsClientId client);
  LimitsMessages finished(LimitsClientId client, double cost_usd, std::optional<long long> tokens);
  LimitsMessages release(LimitsClientId client);
  LimitsMessages limit(LimitsClientId client, SysTime until, const std::string& reason,
                       SysTime now);
  LimitsMessages gone(LimitsClientId client);

  int live() const { return live_; }
  size_t waiting() const { return asks_.size(); }
  int held_by(LimitsClientId client) const;
  double spent_usd() const;
  bundle::LedgerTotals usage(const std::string& bundle) const;
  bool budget_spent() const { return budget_spent_; }
  std::optional<SysTime> paused_until() const { return paused_until_; }
  const std::string& pause_reason() const { return pause_reason_; }
  const LimitsSettings& settings() const { return settings_; }

 private:
  struct Client {
    std::string bundle;
    int held = 0;
    int rounds = 1;
    bool closed = false;
  };
  void grant(LimitsMessages& out);
  void check_budgets(const std::string& bundle, LimitsMessages& out);
  Json run_budget_closed() const;

  LimitsSettings settings_;
  std::map<LimitsClientId, Client> clients_;
  std::deque<LimitsClientId> asks_;
  std::map<std::string, bundle::LedgerTotals> usage_;
  int live_ = 0;
  bool budget_spent_ = false;
  std::optional<SysTime> paused_until_;
  std::string pause_reason_;
};

struct LimitsSetup {
  RunStore& store;
  const Graph& graph;
  DriverPool& pool;
  // --budget-usd; nullopt: the budget the run recorded, if any.
  std::optional<double> budget_usd;
  std::function<void(const std::string&)> on_line;
  const Clock& clock = system_clock();
};

class LimitsBroker {
 public:
  static Expected<std::unique_ptr<LimitsBroker>> open(const LimitsSetup& setup);
  ~LimitsBroker();
  LimitsBroker(const LimitsBroker&) = delete;
  LimitsBroker& operator=(const LimitsBroker&) = delete;

  // What drivers are given in DEVGRAPH_LIMITS_SOCKET.
  const std::string& address() const { return address_; }
  // Accepts and serves whatever is ready now, without waiting: what the
  // loop does when a socket is readable (tests call it directly).
  void serve();
  const LimitsBook& book() const { return book_; }

 private:
  struct Conn {
    int fd = -1;
    WatchId watch = 0;
    bundle::LineBuffer in;
    bool hello = false;
    std::string bundle;
  };
  LimitsBroker(const LimitsSetup& setup, LimitsSettings settings);
  void accept_all();
  void serve_client(LimitsClientId id);
  std::optional<std::string> handle(LimitsClientId id, const std::string& text);
  void send(LimitsMessages messages);
  void drop(LimitsClientId id, const std::string& why);
  void record_changes();
  void line(const std::string& text) const;

  RunStore& store_;
  DriverPool& pool_;
  std::function<void(const std::string&)> on_line_;
  const Clock& clock_;
  LimitsBook book_;
  std::string address_;
  int listen_fd_ = -1;
  WatchId listen_watch_ = 0;
  bool listening_ = false;
  std::map<LimitsClientId, Conn> conns_;
  LimitsClientId next_id_ = 1;
  // What the run state says, so a change is recorded once.
  bool recorded_spent_ = false;
  std::optional<SysTime> recorded_pause_;
};

// The RESULT_JSON "limits" of a run: the budget, whether it is spent, and
// a provider pause still in force; null when the run recorded no limits.
Json limits_result(const Json& state, double cost_usd, SysTime now);
// The summary's lines for them ("" for none).
std::string limits_summary(const Json& result);

}  // namespace devgraph::orchestrator
