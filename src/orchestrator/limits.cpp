#include "orchestrator/limits.h"

#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "bundle/budget.h"
#include "bundle/layout.h"
#include "lane/routes.h"
#include "util/text.h"

namespace devgraph::orchestrator {
namespace {

constexpr const char* kLimitsKey = "limits";

long long epoch_ms(SysTime t) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(t.time_since_epoch()).count();
}

SysTime from_ms(long long ms) {
  return SysTime(std::chrono::milliseconds(ms));
}

const Json& limits_of(const Json& state) {
  static const Json none = Json::object();
  auto it = state.find(kLimitsKey);
  return it != state.end() && it->is_object() ? *it : none;
}

std::optional<double> recorded_budget(const Json& state) {
  const Json& l = limits_of(state);
  auto it = l.find("budget_usd");
  if (it == l.end() || !it->is_number() || !(it->get<double>() > 0)) return std::nullopt;
  return it->get<double>();
}

Json& limits_in(Json& state) {
  if (!state.contains(kLimitsKey) || !state[kLimitsKey].is_object())
    state[kLimitsKey] = Json::object();
  return state[kLimitsKey];
}

Json closed(const std::string& reason) {
  return Json{{"op", "closed"}, {"reason", reason}};
}

}  // namespace

// -- the book -----------------------------------------------------------------

LimitsBook::LimitsBook(LimitsSettings settings) : settings_(std::move(settings)) {
  if (settings_.max_live < 1) settings_.max_live = 1;
}

void LimitsBook::spent_before(const std::string& bundle, const bundle::LedgerTotals& usage) {
  usage_[bundle] = usage;
  if (settings_.budget_usd && spent_usd() + 1e-9 >= *settings_.budget_usd) budget_spent_ = true;
}

void LimitsBook::paused(SysTime until, std::string reason) {
  if (paused_until_ && until <= *paused_until_) return;
  paused_until_ = until;
  pause_reason_ = std::move(reason);
}

double LimitsBook::spent_usd() const {
  double total = 0;
  for (const auto& [b, u] : usage_) total += u.cost_usd;
  return total;
}

bundle::LedgerTotals LimitsBook::usage(const std::string& bundle) const {
  auto it = usage_.find(bundle);
  return it == usage_.end() ? bundle::LedgerTotals{} : it->second;
}

int LimitsBook::held_by(LimitsClientId client) const {
  auto it = clients_.find(client);
  return it == clients_.end() ? 0 : it->second.held;
}

Json LimitsBook::run_budget_closed() const {
  return closed(std::string(bundle::kRunBudgetSpent) + "the run has spent " +
                bundle::dollars(spent_usd()) + " of its " +
                bundle::dollars(settings_.budget_usd.value_or(0)) +
                " budget (devgraph run --budget-usd); what was running finished, and "
                "devgraph run with a higher --budget-usd goes on");
}

LimitsMessages LimitsBook::hello(LimitsClientId client, const std::string& bundle, int rounds,
                                 SysTime now) {
  LimitsMessages out;
  Client& c = clients_[client];
  c.bundle = bundle;
  c.rounds = rounds < 1 ? 1 : rounds;
  if (paused_until_ && *paused_until_ > now)
    out.push_back(
        {client,
         Json{{"op", "pause"}, {"until_ms", epoch_ms(*paused_until_)}, {"reason", pause_reason_}}});
  if (budget_spent_) {
    c.closed = true;
    out.push_back({client, run_budget_closed()});
    return out;
  }
  if (auto why = bundle::bundle_budget_spent(settings_.per_bundle, usage(bundle), c.rounds)) {
    c.closed = true;
    out.push_back({client, closed(*why)});
  }
  return out;
}

LimitsMessages LimitsBook::ask(LimitsClientId client) {
  LimitsMessages out;
  auto it = clients_.find(client);
  if (it == clients_.end() || it->second.closed || budget_spent_) return out;
  asks_.push_back(client);
  grant(out);
  return out;
}

void LimitsBook::grant(LimitsMessages& out) {
  while (live_ < settings_.max_live && !asks_.empty() && !budget_spent_) {
    LimitsClientId id = asks_.front();
    asks_.pop_front();
    auto it = clients_.find(id);
    if (it == clients_.end() || it->second.closed) continue;
    ++it->second.held;
    ++live_;
    out.push_back({id, Json{{"op", "grant"}}});
  }
}

LimitsMessages LimitsBook::release(LimitsClientId client) {
  LimitsMessages out;
  auto it = clients_.find(client);
  if (it != clients_.end() && it->second.held > 0) {
    --it->second.held;
    --live_;
  }
  grant(out);
  return out;
}

LimitsMessages LimitsBook::finished(LimitsClientId client, double cost_usd,
                                    std::optional<long long> tokens) {
  LimitsMessages out;
  auto it = clients_.find(client);
  if (it == clients_.end()) return out;
  if (it->second.held > 0) {
    --it->second.held;
    --live_;
  }
  bundle::LedgerTotals& u = usage_[it->second.bundle];
  u.cost_usd += cost_usd > 0 ? cost_usd : 0;
  u.persona_runs += 1;
  if (tokens) u.tokens = u.tokens.value_or(0) + *tokens;
  // The budgets first: the slot that came back goes to nobody once one
  // is spent.
  check_budgets(it->second.bundle, out);
  grant(out);
  return out;
}

void LimitsBook::check_budgets(const std::string& bundle, LimitsMessages& out) {
  if (!budget_spent_ && settings_.budget_usd && spent_usd() + 1e-9 >= *settings_.budget_usd) {
    budget_spent_ = true;
    asks_.clear();
    Json why = run_budget_closed();
    for (auto& [id, c] : clients_) {
      if (c.closed) continue;
      c.closed = true;
      out.push_back({id, why});
    }
    return;
  }
  for (auto& [id, c] : clients_) {
    if (c.closed || c.bundle != bundle) continue;
    if (auto why = bundle::bundle_budget_spent(settings_.per_bundle, usage(bundle), c.rounds)) {
      c.closed = true;
      LimitsClientId gone_id = id;
      asks_.erase(std::remove(asks_.begin(), asks_.end(), gone_id), asks_.end());
      out.push_back({id, closed(*why)});
    }
  }
}

LimitsMessages LimitsBook::limit(LimitsClientId client, SysTime until, const std::string& reason,
                                 SysTime now) {
  LimitsMessages out;
  auto it = clients_.find(client);
  if (it == clients_.end() || until <= now) return out;
  if (paused_until_ && until <= *paused_until_) return out;
  paused_until_ = until;
  pause_reason_ = it->second.bundle + " met a provider limit: " + clip(reason, 200);
  Json pause = {{"op", "pause"}, {"until_ms", epoch_ms(until)}, {"reason", pause_reason_}};
  for (const auto& [id, c] : clients_)
    if (id != client) out.push_back({id, pause});
  return out;
}

LimitsMessages LimitsBook::gone(LimitsClientId client) {
  LimitsMessages out;
  auto it = clients_.find(client);
  if (it == clients_.end()) return out;
  live_ -= it->second.held;
  clients_.erase(it);
  asks_.erase(std::remove(asks_.begin(), asks_.end(), client), asks_.end());
  grant(out);
  return out;
}

// -- the broker ---------------------------------------------------------------

LimitsBroker::LimitsBroker(const LimitsSetup& setup, LimitsSettings settings)
    : store_(setup.store),
      pool_(setup.pool),
      on_line_(setup.on_line),
      clock_(setup.clock),
      book_(std::move(settings)) {}

Expected<std::unique_ptr<LimitsBroker>> LimitsBroker::open(const LimitsSetup& setup) {
  DG_TRY(Json state, setup.store.read());
  LimitsSettings settings;
  settings.max_live = setup.graph.concurrency.max_live_personas;
  settings.budget_usd = setup.budget_usd ? setup.budget_usd : recorded_budget(state);
  settings.per_bundle = setup.graph.budgets.per_bundle;
  std::unique_ptr<LimitsBroker> b(new LimitsBroker(setup, settings));
  const std::string& run_dir = setup.store.run_dir();
  std::vector<std::string> bundles;
  if (auto it = state.find("bundles"); it != state.end() && it->is_array())
    for (const auto& e : *it) {
      std::string id = json_str(e, "id");
      if (!is_valid_id(id)) continue;
      bundles.push_back(id);
      b->book_.spent_before(id,
                            bundle::ledger_usage(bundle::BundleLayout{run_dir, id, ""}.ledger()));
    }
  const Json& rec = limits_of(state);
  if (auto p = rec.find("paused_until_ms"); p != rec.end() && p->is_number_integer()) {
    SysTime until = from_ms(p->get<long long>());
    if (until > setup.clock.wall()) {
      b->book_.paused(until, json_str(rec, "pause_reason"));
      b->recorded_pause_ = until;
    }
  }
  b->recorded_spent_ = rec.contains("budget_spent_at") && b->book_.budget_spent();

  // The budget in force, and the bundles it lets go on.
  bool new_budget = setup.budget_usd && recorded_budget(state) != setup.budget_usd;
  std::vector<std::string> unparked;
  if (!b->book_.budget_spent())
    for (const auto& e : state.value("bundles", Json::array()))
      if (json_str(e, "status") == "parked" &&
          json_str(e, "parked_reason").rfind(bundle::kRunBudgetSpent, 0) == 0)
        unparked.push_back(json_str(e, "id"));
  if (new_budget || !unparked.empty()) {
    Json detail = {{"topic", "limits"},
                   {"budget_usd", settings.budget_usd ? Json(*settings.budget_usd) : Json()},
                   {"spent_usd", b->book_.spent_usd()}};
    if (!unparked.empty()) detail["unparked"] = unparked;
    EventRequest e{
        std::string(lane::event::kNote), detail, Json(), [&](Json& st) -> Status {
          Json& l = limits_in(st);
          l["budget_usd"] = settings.budget_usd ? Json(*settings.budget_usd) : Json();
          l.erase("budget_spent_at");
          if (auto it = st.find("bundles"); it != st.end() && it->is_array())
            for (auto& x : *it)
              if (std::find(unparked.begin(), unparked.end(), json_str(x, "id")) != unparked.end())
                x["status"] = "running";
          return {};
        }};
    DG_TRY(auto c, setup.store.event(e));
    (void)c;
    b->recorded_spent_ = false;
    if (!unparked.empty())
      b->line("the run's budget (" + bundle::dollars(settings.budget_usd.value_or(0)) +
              ") is not spent: " + join(unparked, ", ") + " go on");
  }

  b->address_ = bundle::limits_address(run_dir);
  DG_TRY(b->listen_fd_, bundle::limits_listen(b->address_));
  LimitsBroker* self = b.get();
  auto w = setup.pool.serve_fd(b->listen_fd_, [self] { self->accept_all(); });
  if (!w) return w.error();
  b->listen_watch_ = *w;
  b->listening_ = true;
  b->record_changes();  // a budget already spent by what the ledgers hold
  return b;
}

LimitsBroker::~LimitsBroker() {
  for (auto& [id, c] : conns_) {
    pool_.unserve_fd(c.watch);
    ::close(c.fd);
  }
  if (listen_fd_ >= 0) {
    if (listening_) pool_.unserve_fd(listen_watch_);
    ::close(listen_fd_);
    bundle::limits_unlink(address_);
  }
}

void LimitsBroker::line(const std::string& text) const {
  if (on_line_) on_line_(text);
}

void LimitsBroker::serve() {
  accept_all();
  std::vector<LimitsClientId> ids;
  for (const auto& [id, c] : conns_) ids.push_back(id);
  for (LimitsClientId id : ids) serve_client(id);
}

void LimitsBroker::accept_all() {
  while (true) {
    int fd = ::accept4(listen_fd_, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0) {
      if (errno == EINTR) continue;
      if (errno != EAGAIN && errno != EWOULDBLOCK && errno != ECONNABORTED)
        line("limits socket: accept: " + std::string(std::strerror(errno)));
      return;
    }
    LimitsClientId id = next_id_++;
    auto w = pool_.serve_fd(fd, [this, id] { serve_client(id); });
    if (!w) {
      line("limits socket: cannot watch a driver's connection: " + w.error().message);
      ::close(fd);
      continue;
    }
    Conn c;
    c.fd = fd;
    c.watch = *w;
    conns_.emplace(id, std::move(c));
    serve_client(id);  // its hello may be there already
  }
}

void LimitsBroker::serve_client(LimitsClientId id) {
  auto it = conns_.find(id);
  if (it == conns_.end()) return;
  std::string why;
  bool open = it->second.in.fill(it->second.fd, why);
  while (true) {
    it = conns_.find(id);
    if (it == conns_.end()) return;
    auto next = it->second.in.next();
    if (!next) return drop(id, next.error().message);
    if (!*next) break;
    if (auto bad = handle(id, **next)) return drop(id, *bad);
  }
  // A driver that ends closes its connection: every slot it held comes
  // back. That is no error.
  if (!open) drop(id, "");
}

std::optional<std::string> LimitsBroker::handle(LimitsClientId id, const std::string& text) {
  Conn& c = conns_.at(id);
  auto j = parse_json(text, "limits line");
  if (!j || !j->is_object()) return "a line that is not a JSON object";
  std::string op = json_str(*j, "op");
  if (!c.hello) {
    if (op != "hello") return "the first line is not a hello";
    std::string bundle = json_str(*j, "bundle");
    if (!is_valid_id(bundle)) return "a hello without a bundle id";
    c.hello = true;
    c.bundle = bundle;
    int rounds = 1;
    if (auto v = store_.view(); v) {
      const Json* st = v->get();
      if (auto it = st->find("bundles"); it != st->end() && it->is_array())
        for (const auto& e : *it)
          if (json_str(e, "id") == bundle) rounds = bundle::budget_rounds(e);
    } else {
      line("limits: cannot read the run for " + bundle + "'s budget: " + v.error().message);
    }
    send(book_.hello(id, bundle, rounds, clock_.wall()));
    return std::nullopt;
  }
  if (op == "ask") {
    send(book_.ask(id));
  } else if (op == "release") {
    send(book_.release(id));
  } else if (op == "finished") {
    double cost = 0;
    if (auto it = j->find("cost_usd"); it != j->end() && it->is_number()) cost = it->get<double>();
    std::optional<long long> tokens;
    if (auto it = j->find("tokens"); it != j->end() && it->is_number_integer())
      tokens = it->get<long long>();
    send(book_.finished(id, cost, tokens));
  } else if (op == "limit") {
    auto it = j->find("until_ms");
    if (it == j->end() || !it->is_number_integer()) return "a limit without until_ms";
    send(book_.limit(id, from_ms(it->get<long long>()), json_str(*j, "reason"), clock_.wall()));
  } else {
    return "an unknown message '" + clip(op, 40) + "'";
  }
  return std::nullopt;
}

void LimitsBroker::send(LimitsMessages messages) {
  std::deque<LimitsMessage> todo(messages.begin(), messages.end());
  while (!todo.empty()) {
    LimitsMessage m = std::move(todo.front());
    todo.pop_front();
    auto it = conns_.find(m.to);
    if (it == conns_.end()) {
      // Gone already: a grant for it comes back at once.
      if (json_str(m.message, "op") == "grant")
        for (auto& more : book_.release(m.to)) todo.push_back(std::move(more));
      continue;
    }
    if (auto s = bundle::limits_send(it->second.fd, bundle::limits_line(m.message)); !s) {
      std::string who = it->second.bundle.empty() ? "a driver" : it->second.bundle + "'s driver";
      line("limits: " + who + " is not reading (" + s.error().message + "); its connection ends");
      pool_.unserve_fd(it->second.watch);
      ::close(it->second.fd);
      conns_.erase(it);
      for (auto& more : book_.gone(m.to)) todo.push_back(std::move(more));
    }
  }
  record_changes();
}

void LimitsBroker::drop(LimitsClientId id, const std::string& why) {
  auto it = conns_.find(id);
  if (it == conns_.end()) return;
  if (!why.empty()) {
    std::string who = it->second.bundle.empty() ? "a driver" : it->second.bundle + "'s driver";
    line("limits: " + who + " broke the protocol (" + why + "); its connection ends");
  }
  pool_.unserve_fd(it->second.watch);
  ::close(it->second.fd);
  conns_.erase(it);
  send(book_.gone(id));
}

// Records in the run what changed: a longer pause, a budget spent.
void LimitsBroker::record_changes() {
  auto pause = book_.paused_until();
  bool new_pause = pause && (!recorded_pause_ || *pause > *recorded_pause_);
  bool new_spent = book_.budget_spent() && !recorded_spent_;
  if (!new_pause && !new_spent) return;
  Json detail = {{"topic", "limits"}};
  std::string now = iso_utc(clock_.wall());
  if (new_pause) {
    detail["paused_until"] = iso_utc(*pause);
    detail["reason"] = book_.pause_reason();
  }
  if (new_spent) {
    detail["budget_spent"] = true;
    detail["budget_usd"] = book_.settings().budget_usd.value_or(0);
    detail["spent_usd"] = book_.spent_usd();
  }
  EventRequest e{std::string(lane::event::kNote), detail, Json(), [&](Json& st) -> Status {
                   Json& l = limits_in(st);
                   if (new_pause) {
                     l["paused_until_ms"] = epoch_ms(*pause);
                     l["paused_until"] = iso_utc(*pause);
                     l["pause_reason"] = book_.pause_reason();
                   }
                   if (new_spent) {
                     l["budget_usd"] = book_.settings().budget_usd.value_or(0);
                     l["budget_spent_at"] = now;
                   }
                   return {};
                 }};
  auto r = store_.event(e);
  if (!r) {
    line("limits: cannot record " + std::string(new_spent ? "the spent budget" : "the pause") +
         " in the run: " + r.error().message);
    return;
  }
  if (new_pause) {
    recorded_pause_ = pause;
    line("provider limit: no new persona anywhere in the run until " + iso_utc(*pause) + " (" +
         book_.pause_reason() + ")");
  }
  if (new_spent) {
    recorded_spent_ = true;
    line("the run's budget of " + bundle::dollars(book_.settings().budget_usd.value_or(0)) +
         " is spent (" + bundle::dollars(book_.spent_usd()) +
         "): no new persona is launched; what runs finishes");
  }
}

// -- the result -----------------------------------------------------------------

Json limits_result(const Json& state, double cost_usd, SysTime now) {
  const Json& l = limits_of(state);
  std::optional<double> budget = recorded_budget(state);
  std::optional<SysTime> pause;
  if (auto p = l.find("paused_until_ms"); p != l.end() && p->is_number_integer())
    if (SysTime t = from_ms(p->get<long long>()); t > now) pause = t;
  if (!budget && !pause) return Json();
  Json out = {{"budget_usd", budget ? Json(*budget) : Json()},
              {"budget_spent", budget && cost_usd + 1e-9 >= *budget},
              {"paused_until", pause ? Json(iso_utc(*pause)) : Json()}};
  if (pause) out["pause_reason"] = json_str(l, "pause_reason");
  return out;
}

std::string limits_summary(const Json& result) {
  auto it = result.find(kLimitsKey);
  if (it == result.end() || !it->is_object()) return "";
  const Json& l = *it;
  std::string out;
  if (l.value("budget_usd", Json()).is_number()) {
    out += "  budget: " + bundle::dollars(result.value("cost_usd", 0.0)) + " of " +
           bundle::dollars(l["budget_usd"].get<double>()) + " (--budget-usd)";
    if (l.value("budget_spent", false))
      out += " is spent: no new persona was launched once it was reached";
    out += "\n";
  }
  if (l.value("paused_until", Json()).is_string())
    out += "  provider limit: new personas wait until " + json_str(l, "paused_until") + " (" +
           json_str(l, "pause_reason") + ")\n";
  return out;
}

}  // namespace devgraph::orchestrator
