#include "orchestrator/orchestrator.h"

#include <algorithm>
#include <deque>

#include "bundle/dispatch.h"
#include "bundle/layout.h"
#include "bundle/start.h"
#include "lane/routes.h"
#include "orchestrator/after_delivery.h"
#include "orchestrator/limits.h"
#include "orchestrator/ownership.h"
#include "orchestrator/run_state.h"
#include "util/fs.h"
#include "util/text.h"

namespace devgraph::orchestrator {
namespace {

constexpr const char* kLane = "orchestrator";
// Set once monitor_prs ran in this run (orchestrator/after_delivery.h).
constexpr const char* kLookedAfter = "after_delivery_looked";

bool finished(const std::string& status) {
  return status == "delivered" || status == "parked" || status == "stopped" || status == "rejected";
}

// The RESULT_JSON line a driver printed last, or nullopt.
std::optional<Json> driver_result(const std::string& out) {
  const std::string tag = "RESULT_JSON: ";
  size_t at = out.rfind(tag);
  while (at != std::string::npos) {
    if (at == 0 || out[at - 1] == '\n') {
      size_t end = out.find('\n', at);
      auto j =
          parse_json(out.substr(at + tag.size(), end == std::string::npos ? std::string::npos
                                                                          : end - at - tag.size()),
                     "RESULT_JSON");
      if (j && j->is_object()) return *j;
      return std::nullopt;
    }
    if (at == 0) break;
    at = out.rfind(tag, at - 1);
  }
  return std::nullopt;
}

// N of a branch develop/bN-..., else 0.
int bundle_number(const std::string& branch) {
  const std::string prefix = "develop/b";
  if (branch.rfind(prefix, 0) != 0) return 0;
  size_t i = prefix.size();
  int n = 0;
  while (i < branch.size() && branch[i] >= '0' && branch[i] <= '9' && n < 1000000)
    n = n * 10 + (branch[i++] - '0');
  return i < branch.size() && branch[i] != '-' ? 0 : n;
}

}  // namespace

std::string bundle_status(const Json& state, const Json& entry) {
  std::string s = json_str(entry, "status");
  if (finished(s)) return s;
  return cursor_of(state, json_str(entry, "id")) ? "running" : "pending";
}

Json run_result(const Json& state, const std::string& run_dir, const std::string& status) {
  Json bundles = Json::array();
  Json waiting = Json::array();
  double cost = 0;
  int runs = 0;
  for (const auto& b : bundles_of(state)) {
    std::string id = json_str(b, "id");
    bundle::BundleLayout layout{run_dir, id, json_str(b, "worktree")};
    auto [c, r] = bundle::ledger_totals(layout.ledger());
    cost += c;
    runs += r;
    const Json* cur = cursor_of(state, id);
    Json item = {{"id", id},
                 {"title", json_str(b, "title")},
                 {"issues", bundle_issue_numbers(b)},
                 {"status", bundle_status(state, b)},
                 {"node", cur ? json_str(*cur, "node") : std::string()},
                 {"branch", json_str(b, "branch")},
                 {"head", json_str(b, "head")},
                 {"pr", b.value("pr", Json())},
                 {"cost_usd", c},
                 {"persona_runs", r}};
    if (item["status"] == "parked")
      waiting.push_back({{"bundle", id},
                         {"reason", json_str(b, "parked_reason", "parked")},
                         {"evidence", layout.log()}});
    bundles.push_back(std::move(item));
  }
  Json out{{"status", status},
           {"run_id", json_str(state, "run_id")},
           {"run_dir", run_dir},
           {"bundles", bundles},
           {"human_required", waiting},
           {"cost_usd", static_cast<double>(std::llround(cost * 10000.0)) / 10000.0},
           {"persona_runs", runs}};
  if (Json l = limits_result(state, cost, std::chrono::system_clock::now()); !l.is_null())
    out["limits"] = l;
  Json after = after_delivery_result(state);
  for (auto& [k, v] : after.items()) out[k] = v;
  if (state.contains("audit") && state["audit"].is_object() &&
      state["audit"].contains("marker_error") && status == "HUMAN_REQUIRED")
    out["human_required"].push_back(
        {{"audit", "marker"}, {"reason", json_str(state["audit"], "marker_error")}});
  return out;
}

bool end_recorded(const Json& state, const std::string& run_dir) {
  std::string ev(json_str(state, "status") == "complete" ? lane::event::kRunComplete
                                                         : lane::event::kHumanRequired);
  auto log = read_file(run_dir + "/" + kEventsFile);
  if (!log) return false;
  // The lines state.json counts.
  long long seq = state.value("event_seq", 0LL);
  size_t end = 0;
  for (long long n = 0; n < seq && end != std::string::npos; ++n) {
    end = log->find('\n', end);
    if (end != std::string::npos) ++end;
  }
  if (end != std::string::npos) log->resize(end);
  // Since the run was last reopened: an answer reopens a human_required run.
  size_t since = log->rfind("\"type\": \"RUN_RESUMED\"");
  return log->find("\"type\": \"" + ev + "\"", since == std::string::npos ? 0 : since) !=
         std::string::npos;
}

std::string run_summary(const Json& result) {
  std::string out = "run " + json_str(result, "run_id") + ": " + json_str(result, "status") + "\n";
  const Json& bundles = result["bundles"];
  if (bundles.empty()) out += "  no work: no open issue is eligible\n";
  for (const auto& b : bundles) {
    std::vector<std::string> nums;
    for (const auto& n : b["issues"]) nums.push_back("#" + std::to_string(n.get<long long>()));
    out += "  " + json_str(b, "id") + " [" + join(nums, " ") + "] " + json_str(b, "status");
    std::string node = json_str(b, "node");
    if (!node.empty() && json_str(b, "status") != "delivered") out += " at " + node;
    if (b["pr"].is_object() && b["pr"].contains("url"))
      out += " - " + json_str(b["pr"], "url");
    else if (!json_str(b, "head").empty())
      out += " - branch " + json_str(b, "branch") + " at " + json_str(b, "head").substr(0, 12);
    out += "\n";
  }
  out += after_delivery_summary(result);
  for (const auto& w : result["human_required"])
    out += "  waits for a person: " +
           (w.contains("bundle") ? json_str(w, "bundle") : "the audit " + json_str(w, "audit")) +
           ": " + json_str(w, "reason") +
           (w.contains("evidence") ? " (" + json_str(w, "evidence") + ")" : std::string()) + "\n";
  char cost[64];
  std::snprintf(cost, sizeof cost, "  cost: $%.4f over %d persona runs; %.1f s\n",
                result.value("cost_usd", 0.0), result.value("persona_runs", 0),
                result.value("elapsed_s", 0.0));
  out += cost;
  out += limits_summary(result);
  return out;
}

// -- the walk -----------------------------------------------------------------

struct Orchestrator::Impl {
  OrchestratorConfig cfg;
  OrchestratorParts p;
  lane::Walker walker;
  std::string scan_node, bundle_node, scheduler_node;
  std::string monitor_node, cleanup_node, audit_node, triage_node;

  std::optional<std::vector<issues::Issue>> primed_open;
  std::optional<std::set<long long>> primed_prs;
  std::deque<DriverExit> exits;  // arrived while waiting for something else
  int stop_signal = 0;
  bool stopping = false;

  using View = std::shared_ptr<const Json>;

  Impl(OrchestratorConfig c, OrchestratorParts parts)
      : cfg(std::move(c)), p(parts), walker(parts.graph) {}

  void line(const std::string& text) {
    if (cfg.on_line) cfg.on_line(text);
  }

  // The state now, shared: never changed once returned. With the store's
  // cache_reads() on (run_setup.cpp), a decision costs the same at 4 or
  // 400 bundles: state.json is parsed by what changed in it.
  Expected<View> view() { return p.store.view(); }
  // A copy, for callers that keep or change it.
  Expected<Json> state() {
    DG_TRY(View v, view());
    return *v;
  }

  // The store leaves the cursor maps out of what it returns (see
  // run_setup.cpp): the live view is given the whole state.
  void show(const Committed&) {
    if (!cfg.on_state) return;
    if (auto v = view()) show_state(**v);
  }
  void show_state(const Json& s) {
    if (cfg.on_state) cfg.on_state(s);
  }
  std::optional<std::chrono::steady_clock::time_point> next_intake;

  Status go(const std::string& route, const std::string& event, Json detail,
            std::function<Status(Json&)> mutate = nullptr) {
    DG_TRY(View v, view());
    std::string node = json_str(*v, "node");
    DG_TRY(std::string next, walker.follow(kLane, node, route, json_str(*v, "previous_node")));
    v.reset();
    detail["route"] = route;
    GoRequest g{next, event, Json(), std::move(detail), std::move(mutate)};
    DG_TRY(auto c, p.store.go(g));
    show(c);
    return {};
  }

  Status record(const std::string& event, Json detail,
                std::function<Status(Json&)> mutate = nullptr) {
    EventRequest e{event, std::move(detail), Json(), std::move(mutate)};
    DG_TRY(auto c, p.store.event(e));
    show(c);
    return {};
  }

  // Waits `delay` on the loop; driver exits that arrive meanwhile are kept
  // for later. False when a stop signal came first.
  bool pause(std::chrono::milliseconds delay) {
    p.drivers.wake_at(std::chrono::steady_clock::now() + delay);
    while (true) {
      auto ev = p.drivers.wait();
      if (!ev) return true;
      if (std::holds_alternative<Wakeup>(*ev)) return true;
      if (auto* s = std::get_if<StopRequested>(&*ev)) {
        stop_signal = s->signal;
        return false;
      }
      exits.push_back(std::get<DriverExit>(std::move(*ev)));
    }
  }

  template <class T>
  Expected<T> with_retry(const std::string& what, const std::function<Expected<T>()>& call) {
    auto delay = cfg.source_backoff;
    for (int attempt = 1;; ++attempt) {
      auto r = call();
      if (r) return r;
      ErrorKind k = r.error().kind;
      bool retry = k == ErrorKind::refused || k == ErrorKind::timeout || k == ErrorKind::transient;
      if (!retry || attempt >= cfg.source_attempts)
        return fail(r.error().kind, what + ": " + r.error().message);
      line(what + " failed (" + r.error().message + "); trying again in " +
           std::to_string(delay.count() / 1000.0).substr(0, 4) + " s");
      if (!pause(delay)) return fail(ErrorKind::interrupted, what + ": stopped");
      delay *= 2;
    }
  }

  struct Look {
    std::vector<issues::Issue> open;
    std::set<long long> closed_by_prs;
  };

  Expected<Look> look() {
    Look l;
    if (primed_open) {
      l.open = std::move(*primed_open);
      l.closed_by_prs = primed_prs.value_or(std::set<long long>{});
      primed_open.reset();
      primed_prs.reset();
      return l;
    }
    DG_TRY(l.open, with_retry<std::vector<issues::Issue>>("listing issues",
                                                          [&] { return p.issues.open_issues(); }));
    DG_TRY(l.closed_by_prs, with_retry<std::set<long long>>("listing pull requests", [&] {
             return p.issues.closed_by_open_prs();
           }));
    return l;
  }

  static std::set<long long> taken(const Json& state) {
    std::set<long long> out;
    for (const auto& b : bundles_of(state))
      for (long long n : bundle_issue_numbers(b)) out.insert(n);
    return out;
  }

  // -- scan ---------------------------------------------------------------------

  // Local delivery: an issue whose ready branch a person merged is closed.
  Status close_merged(const Json& s) {
    if (p.issues.kind() != "local") return {};
    DG_TRY(auto delivered, p.issues.delivered_issues());
    for (const auto& i : delivered) {
      if (i.state != "open" || !i.head || i.head->empty()) continue;
      auto merged = p.repo.is_ancestor(*i.head, cfg.default_branch);
      if (!merged || !*merged) continue;
      DG_CHECK(p.issues.close(i.number, "merged into " + cfg.default_branch));
      // What was read before is stale now.
      primed_open.reset();
      primed_prs.reset();
      line("issue #" + std::to_string(i.number) + " closed: its branch " + i.branch.value_or("") +
           " is merged into " + cfg.default_branch);
    }
    (void)s;
    return {};
  }

  // Branches and worktrees of earlier runs: reported, never reused.
  Json foreign_work(const Json& s) {
    std::set<std::string> ours;
    for (const auto& b : bundles_of(s)) ours.insert(json_str(b, "branch"));
    ours.insert(cfg.held_branches.begin(), cfg.held_branches.end());
    Json out = Json::array();
    if (auto branches = p.repo.branches("develop/"))
      for (const auto& b : *branches)
        if (!ours.count(b)) out.push_back(b);
    if (auto trees = p.repo.worktrees())
      for (const auto& w : *trees)
        if (w.branch.rfind("develop/", 0) == 0 && !ours.count(w.branch))
          out.push_back("worktree " + w.path);
    return out;
  }

  Status step_scan() {
    if (cfg.delivery == "github") {
      auto f = with_retry<bool>("git fetch", [&]() -> Expected<bool> {
        DG_CHECK(p.repo.fetch_prune());
        return true;
      });
      if (!f) return f.error();
    }
    DG_TRY(View v, view());
    DG_CHECK(close_merged(*v));
    DG_TRY(Look l, look());
    DG_TRY(v, view());
    const Json& s = *v;
    auto el = eligible(l.open, cfg.policy, l.closed_by_prs, taken(s), cfg.held_issues);
    bool in_flight = false, parked = false;
    for (const auto& b : bundles_of(s)) {
      std::string st = bundle_status(s, b);
      if (st == "pending" || st == "running") in_flight = true;
      if (st == "parked") parked = true;
    }
    Json excluded = Json::array();
    for (const auto& e : el.excluded)
      if (e.why != "already in a bundle of this run")
        excluded.push_back({{"issue", e.number}, {"why", e.why}});
    Json work = Json::array();
    for (const auto& i : el.work) work.push_back(i.number);
    Json foreign = foreign_work(s);
    if (!foreign.empty()) line("left alone (not this run's): " + dump_py(foreign));
    Json detail = {{"open_issues", l.open.size()},
                   {"work", work},
                   {"excluded", excluded},
                   {"foreign_branches", foreign}};
    if (!el.work.empty() || in_flight) {
      cache = std::move(l);
      return go(std::string(lane::route::kActionable), std::string(lane::event::kScanDone), detail);
    }
    // No issue is work, but devgraph branches exist: their pull requests,
    // clean-up and audit get one round (through bundle and the scheduler,
    // which have nothing to start) before the run ends, and one every
    // watch period.
    bool branches = false;
    if (auto b = p.repo.branches("develop/"); b && !b->empty()) branches = true;
    if (after && branches && !s.value(kLookedAfter, false)) {
      detail["after_delivery"] = true;
      return go(std::string(lane::route::kActionable), std::string(lane::event::kScanDone), detail);
    }
    if (parked && !cfg.watch)
      return go(std::string(lane::route::kAmbiguous), std::string(lane::event::kScanDone), detail);
    if (cfg.watch) {
      line("nothing to do; looking again in " + std::to_string(cfg.watch->count() / 1000) + " s");
      if (!pause(*cfg.watch)) return {};
      if (after && branches) {
        detail["after_delivery"] = true;
        return go(std::string(lane::route::kActionable), std::string(lane::event::kScanDone),
                  detail);
      }
      return {};  // still at scan: the loop scans again
    }
    line("nothing to do: no open issue is eligible");
    return go(std::string(lane::route::kEmpty), std::string(lane::event::kScanDone), detail);
  }

  std::optional<Look> cache;

  // `<develop_home>/bundle-index`: the highest bundle number any run of
  // this repository formed, so a number is not used again once its branch
  // is merged and cleaned away.
  std::string bundle_index_path() const { return cfg.develop_home + "/bundle-index"; }

  int recorded_bundle_index() const {
    if (cfg.develop_home.empty()) return 0;
    auto text = read_file(bundle_index_path());
    if (!text) return 0;
    int n = 0;
    for (char c : *text) {
      if (c < '0' || c > '9' || n >= 1000000) break;
      n = n * 10 + (c - '0');
    }
    return n;
  }

  // Written after the bundles are in state: a kill in between leaves them in
  // this run's state, which next_bundle_index counts too.
  Status remember_bundle_index(const Json& s) {
    if (cfg.develop_home.empty()) return {};
    int high = 0;
    for (const auto& b : bundles_of(s))
      high = std::max(high, bundle_number("develop/" + json_str(b, "id")));
    if (high <= recorded_bundle_index()) return {};
    DG_CHECK(make_directories(cfg.develop_home));
    return write_file_atomic(bundle_index_path(), std::to_string(high) + "\n");
  }

  // Ids (and so branches) never repeat one of an earlier run.
  int next_bundle_index(const Json& s) {
    int next_index = static_cast<int>(bundles_of(s).size()) + 1;
    next_index = std::max(next_index, recorded_bundle_index() + 1);
    for (const auto& b : bundles_of(s))
      next_index = std::max(next_index, bundle_number("develop/" + json_str(b, "id")) + 1);
    if (auto branches = p.repo.branches("develop/"))
      for (const auto& b : *branches) next_index = std::max(next_index, bundle_number(b) + 1);
    // A branch cleaned away locally may still be on the remote.
    if (p.runner && cfg.delivery == "github") {
      auto r = git::run_git(
          *p.runner, cfg.repo_top,
          {"for-each-ref", "--format=%(refname:short)", "refs/remotes/origin/develop/"});
      if (r && r->ok()) {
        size_t at = 0;
        while (at < r->out.size()) {
          size_t nl = r->out.find('\n', at);
          if (nl == std::string::npos) nl = r->out.size();
          std::string ref = r->out.substr(at, nl - at);
          if (ref.rfind("origin/", 0) == 0)
            next_index = std::max(next_index, bundle_number(ref.substr(7)) + 1);
          at = nl + 1;
        }
      }
    }
    return next_index;
  }

  // -- bundle -------------------------------------------------------------------

  Status step_bundle() {
    Look l;
    if (cache) {
      l = std::move(*cache);
      cache.reset();
    } else {
      DG_TRY(l, look());
    }
    DG_TRY(View v, view());
    const Json& s = *v;
    auto el = eligible(l.open, cfg.policy, l.closed_by_prs, taken(s), cfg.held_issues);
    int next_index = next_bundle_index(s);
    auto formed = form_bundles(el.work, p.graph.intake, next_index);
    // Specs first: a kill before the record leaves only files that the
    // same formation writes again.
    Json entries = Json::array();
    Json ids = Json::array();
    for (const auto& f : formed) {
      bundle::BundleLayout layout{p.store.run_dir(), f.id, ""};
      DG_CHECK(make_directories(layout.dir()));
      DG_CHECK(
          write_file_atomic(layout.spec(), spec_text(f, el.work, s.value("commands", Json()))));
      Json digests = Json::object();
      for (long long n : f.issues)
        for (const auto& i : el.work)
          if (i.number == n) digests[std::to_string(n)] = issue_digest(i);
      entries.push_back({{"id", f.id},
                         {"title", f.title},
                         {"issues", f.issues},
                         {"branch", f.branch},
                         {"status", "pending"},
                         {"issue_digests", digests}});
      ids.push_back(f.id);
      line("formed " + f.id + " for " + dump_py(Json(f.issues)) + ": " + f.branch);
    }
    DG_CHECK(go(std::string(lane::route::kNext), std::string(lane::event::kBundlesFormed),
                Json{{"bundles", ids}}, [&](Json& st) -> Status {
                  if (!st.contains("bundles") || !st["bundles"].is_array())
                    st["bundles"] = Json::array();
                  std::set<std::string> have;
                  for (const auto& b : st["bundles"]) have.insert(json_str(b, "id"));
                  for (const auto& e : entries)
                    if (!have.count(json_str(e, "id"))) st["bundles"].push_back(e);
                  return {};
                }));
    v.reset();
    DG_TRY(View now, view());
    return remember_bundle_index(*now);
  }

  // -- bundle_scheduler ---------------------------------------------------------

  Status start_or_relaunch(const Json& s, const Json& entry) {
    std::string id = json_str(entry, "id");
    std::string branch = json_str(entry, "branch");
    std::string worktree = json_str(entry, "worktree");
    if (worktree.empty()) worktree = cfg.worktree_for(branch);
    if (worktree.empty())
      return fail(ErrorKind::usage, "the placement guard gives no worktree path for " + branch);
    bundle::BundleLayout layout{p.store.run_dir(), id, worktree};
    auto spec = read_file(layout.spec());
    bundle::StartRequest req{id, worktree, branch, cfg.base, spec ? *spec : std::string()};
    bool fresh = cursor_of(s, id) == nullptr;
    DG_TRY(auto started, bundle::start_bundle(p.store, p.graph, p.repo_git, req));
    (void)started;
    p.crash.reach("worktree", id);
    if (json_str(entry, "worktree").empty()) {
      DG_CHECK(record(std::string(lane::event::kNote), Json{{"bundle", id}, {"worktree", worktree}},
                      [&](Json& st) -> Status {
                        if (Json* e = entry_in(st, id)) (*e)["worktree"] = worktree;
                        return {};
                      }));
    }
    DG_CHECK(p.drivers.start(cfg.driver_for(id)));
    p.crash.reach("driver", id);
    line((fresh ? "started " : "driver relaunched for ") + id + " in " + worktree);
    return {};
  }

  // What a driver's exit means for its bundle, recorded.
  Status on_exit(const DriverExit& e) {
    p.crash.reach("result", e.bundle);
    DG_TRY(View v, view());
    const Json& s = *v;
    const Json* entry = nullptr;
    for (const auto& b : bundles_of(s))
      if (json_str(b, "id") == e.bundle) entry = &b;
    if (!entry) return fail("a driver exited for unknown bundle " + e.bundle);
    std::string status = bundle_status(s, *entry);
    auto result = driver_result(e.out);
    std::string rs = result ? json_str(*result, "status") : "";
    bool delivered = rs == "DONE" || rs == "DONE_WITH_CONCERNS";
    // Stopped or rejected meanwhile; a delivery that made it first is
    // still recorded as one.
    if (status != "running" && !(status == "stopped" && delivered)) return {};
    if (stopping && rs != "DONE" && rs != "DONE_WITH_CONCERNS") {  // a delivery stays one
      return record(std::string(lane::event::kTechLeadHandoff),
                    Json{{"bundle", e.bundle}, {"reason", "the run is stopping"}, {"status", rs}});
    }
    if (rs == "DONE" || rs == "DONE_WITH_CONCERNS") {
      std::string head = json_str(*result, "head");
      if (head.empty()) {
        if (const Json* c = cursor_of(s, e.bundle)) head = json_str(*c, "head");
      }
      Json pr = result->value("pr", Json());
      for (long long n : bundle_issue_numbers(*entry))
        DG_CHECK(p.issues.record_delivery(n, json_str(*entry, "branch"), head));
      line(e.bundle + " delivered: " +
           (pr.is_object() && pr.contains("url") ? json_str(pr, "url")
                                                 : "branch " + json_str(*entry, "branch")));
      return record(std::string(lane::event::kTechLeadDone),
                    Json{{"bundle", e.bundle}, {"status", rs}, {"head", head}, {"pr", pr}},
                    [&](Json& st) -> Status {
                      if (Json* x = entry_in(st, e.bundle)) {
                        (*x)["status"] = "delivered";
                        (*x)["head"] = head;
                        (*x)["pr"] = pr;
                      }
                      return {};
                    });
    }
    if (rs == "BLOCKED" || rs == "NEEDS_CONTEXT" || (result && e.exit_code == 3)) {
      std::string why = json_str(*result, "summary", "blocked");
      line(e.bundle + " waits for a person: " + why);
      return record(std::string(lane::event::kTechLeadBlocked),
                    Json{{"bundle", e.bundle}, {"status", rs}, {"reason", why}},
                    [&](Json& st) -> Status {
                      if (Json* x = entry_in(st, e.bundle)) {
                        (*x)["status"] = "parked";
                        (*x)["parked_reason"] = why;
                      }
                      return {};
                    });
    }
    // A handoff, or no result at all: relaunch within the budget.
    long long restarts = entry->value("driver_restarts", 0LL) + 1;
    int budget = walker.max_retries(scheduler_node);
    std::string what =
        result ? "handed off (" + rs + ")"
               : (e.term_signal ? "was killed by signal " + std::to_string(e.term_signal)
                                : "exited " + std::to_string(e.exit_code) + " without a result");
    std::string tail = last_line(e.err);
    if (restarts > budget) {
      std::string why = "its driver " + what + " " + std::to_string(restarts) + " times" +
                        (tail.empty() ? "" : ": " + clip(tail, 200));
      line(e.bundle + " parked: " + why);
      return record(std::string(lane::event::kTechLeadBlocked),
                    Json{{"bundle", e.bundle}, {"reason", why}}, [&](Json& st) -> Status {
                      if (Json* x = entry_in(st, e.bundle)) {
                        (*x)["status"] = "parked";
                        (*x)["parked_reason"] = why;
                        (*x)["driver_restarts"] = restarts;
                      }
                      return {};
                    });
    }
    line(e.bundle + "'s driver " + what + "; relaunching (" + std::to_string(restarts) + " of " +
         std::to_string(budget) + ")");
    return record(
        result ? std::string(lane::event::kTechLeadHandoff) : std::string(lane::event::kNote),
        Json{{"bundle", e.bundle}, {"driver", what}, {"restart", restarts}},
        [&](Json& st) -> Status {
          if (Json* x = entry_in(st, e.bundle)) (*x)["driver_restarts"] = restarts;
          return {};
        });
  }

  // Intake: stops bundles whose issue is gone, refreshes edited specs,
  // and says whether new work is there.
  Expected<bool> intake() {
    DG_TRY(Look l, look());
    DG_TRY(View v, view());
    const Json& s = *v;
    std::map<long long, const issues::Issue*> open;
    for (const auto& i : l.open) open[i.number] = &i;
    for (const auto& b : bundles_of(s)) {
      std::string st = bundle_status(s, b);
      if (st != "pending" && st != "running") continue;
      std::string id = json_str(b, "id");
      for (long long n : bundle_issue_numbers(b)) {
        auto it = open.find(n);
        bool gone = it == open.end() ||
                    (!cfg.policy.every_open_issue && !has_label(*it->second, cfg.policy.label));
        if (gone) {
          std::string why = "issue #" + std::to_string(n) + " was closed or lost its label";
          line(id + " stopped: " + why);
          if (p.drivers.running(id)) p.drivers.stop(id);
          DG_CHECK(record(std::string(lane::event::kNote), Json{{"bundle", id}, {"stopped", why}},
                          [&](Json& x) -> Status {
                            if (Json* e = entry_in(x, id)) {
                              (*e)["status"] = "stopped";
                              (*e)["stopped_reason"] = why;
                            }
                            return {};
                          }));
          break;
        }
        std::string digest = issue_digest(*it->second);
        std::string was =
            json_str(b.value("issue_digests", Json::object()), std::to_string(n).c_str());
        if (!was.empty() && was != digest) {
          FormedBundle f{id, json_str(b, "title"), json_str(b, "branch"), bundle_issue_numbers(b)};
          std::vector<issues::Issue> texts;
          for (long long m : f.issues)
            if (open.count(m)) texts.push_back(*open[m]);
          bundle::BundleLayout layout{p.store.run_dir(), id, ""};
          DG_CHECK(
              write_file_atomic(layout.spec(), spec_text(f, texts, s.value("commands", Json()))));
          line("issue #" + std::to_string(n) + " was edited; " + id +
               "'s spec now has its new text");
          DG_CHECK(record(std::string(lane::event::kNote),
                          Json{{"bundle", id}, {"issue_edited", n}}, [&](Json& x) -> Status {
                            if (Json* e = entry_in(x, id))
                              (*e)["issue_digests"][std::to_string(n)] = digest;
                            return {};
                          }));
        }
      }
    }
    DG_TRY(View now, view());
    auto el = eligible(l.open, cfg.policy, l.closed_by_prs, taken(*now), cfg.held_issues);
    if (el.work.empty()) return false;
    cache = std::move(l);
    return true;
  }

  Status step_scheduler() {
    while (true) {
      while (!exits.empty()) {
        DriverExit e = std::move(exits.front());
        exits.pop_front();
        DG_CHECK(on_exit(e));
      }
      if (stop_signal && !stopping) {
        stopping = true;
        line("stopping: letting the drivers reach a safe point");
        DG_TRY(View s0, view());
        for (const auto& b : bundles_of(*s0)) p.drivers.stop(json_str(b, "id"));
      }
      if (stopping) {
        if (p.drivers.live() == 0) return {};
      } else {
        DG_TRY(View v, view());
        const Json& s = *v;
        bool pending = false, parked = false;
        std::vector<Json> to_start;
        for (const auto& b : bundles_of(s)) {
          std::string st = bundle_status(s, b);
          if (st == "parked") parked = true;
          if ((st == "running" || st == "pending") && !p.drivers.running(json_str(b, "id")))
            to_start.push_back(b);
        }
        v.reset();  // the starts below change the state
        for (const auto& b : to_start) {
          if (static_cast<int>(p.drivers.live()) >= cfg.max_bundles) {
            pending = true;
            continue;
          }
          DG_TRY(View now, view());
          if (auto started = start_or_relaunch(*now, b); !started) {
            // One bundle that cannot start (its worktree, its driver) waits
            // for a person; the others go on.
            std::string id = json_str(b, "id");
            std::string why = "could not start: " + started.error().message;
            line(id + " parked: " + why);
            DG_CHECK(record(std::string(lane::event::kTechLeadBlocked),
                            Json{{"bundle", id}, {"reason", why}}, [&](Json& st) -> Status {
                              if (Json* x = entry_in(st, id)) {
                                (*x)["status"] = "parked";
                                (*x)["parked_reason"] = why;
                              }
                              return {};
                            }));
          }
        }
        if (p.drivers.live() == 0 && !pending) {
          DG_TRY(bool more, intake());
          if (more)
            return go(std::string(lane::route::kNewWork), std::string(lane::event::kIntakeDone),
                      Json{{"new_work", true}});
          if (parked && cfg.watch) {
            line("only work waiting for a person is left; looking again in " +
                 std::to_string(cfg.watch->count() / 1000) + " s");
            if (!pause(*cfg.watch)) continue;
            continue;
          }
          // Parked bundles wait at scan's ambiguous route: the delivered
          // ones are monitored, cleaned and audited first.
          if (parked && !after)
            return go(std::string(lane::route::kBlocked),
                      std::string(lane::event::kAllBundlesComplete), Json{{"parked", true}});
          return go(std::string(lane::route::kAllBundlesComplete),
                    std::string(lane::event::kAllBundlesComplete), Json::object());
        }
      }
      auto now = std::chrono::steady_clock::now();
      if (!next_intake) next_intake = now + cfg.intake_every;
      if (cfg.on_tick) p.drivers.wake_at(now + cfg.tick_every);
      if (!stopping) p.drivers.wake_at(*next_intake);
      auto ev = p.drivers.wait();
      if (!ev) continue;
      if (auto* s = std::get_if<StopRequested>(&*ev)) {
        stop_signal = s->signal;
        continue;
      }
      if (std::holds_alternative<Wakeup>(*ev)) {
        if (cfg.on_tick) {
          if (auto st = view()) show_state(**st);
          cfg.on_tick();
        }
        if (!stopping && !stop_signal && std::chrono::steady_clock::now() >= *next_intake) {
          next_intake.reset();
          DG_TRY(bool more, intake());
          if (more)
            return go(std::string(lane::route::kNewWork), std::string(lane::event::kIntakeDone),
                      Json{{"new_work", true}});
        }
        continue;
      }
      if (auto* e = std::get_if<DriverExit>(&*ev)) {
        DG_CHECK(on_exit(*e));
        if (!stopping && !stop_signal) {
          auto more = intake();
          // Stopped during the issue source's back-off: stop the drivers above.
          if (!more && more.error().kind == ErrorKind::interrupted) continue;
          if (!more) return more.error();
          if (*more) {
            p.crash.reach("intake", e->bundle);
            return go(std::string(lane::route::kNewWork), std::string(lane::event::kIntakeDone),
                      Json{{"new_work", true}});
          }
        }
      }
    }
  }

  std::optional<AfterDelivery> after;

  void make_after() {
    AfterDeliveryConfig ac;
    ac.delivery = cfg.delivery;
    ac.default_branch = cfg.default_branch;
    ac.merge_policy = cfg.merge_policy;
    ac.develop_home = cfg.develop_home;
    ac.repo_top = cfg.repo_top;
    ac.worktree_for = cfg.worktree_for;
    ac.audit_driver_for = cfg.audit_driver_for;
    ac.max_parallel_audits = cfg.max_bundles;
    ac.command_timeout = cfg.command_timeout;
    ac.held_branches = cfg.held_branches;
    ac.next_bundle_index = [this](const Json& s) { return next_bundle_index(s); };
    ac.remember_bundle_index = [this](const Json& s) { return remember_bundle_index(s); };
    ac.delivered_heads = [this] {
      std::map<std::string, std::string> out;
      if (p.issues.kind() != "local") return out;
      if (auto d = p.issues.delivered_issues())
        for (const auto& i : *d)
          if (i.branch && i.head) out[*i.branch] = *i.head;
      return out;
    };
    AfterDeliveryParts ap{p.store, p.graph,   cfg.delivery == "github" ? p.gh : nullptr,
                          p.repo,  *p.runner, p.drivers,
                          p.crash};
    LaneOps ops;
    ops.state = [this] { return state(); };
    ops.go = [this](const std::string& route, const std::string& event, Json detail,
                    std::function<Status(Json&)> mutate) {
      return go(route, event, std::move(detail), std::move(mutate));
    };
    ops.record = [this](const std::string& event, Json detail,
                        std::function<Status(Json&)> mutate) {
      return record(event, std::move(detail), std::move(mutate));
    };
    ops.line = [this](const std::string& l) { line(l); };
    ops.retry = [this](const std::string& what, const std::function<Status()>& call) -> Status {
      auto r = with_retry<bool>(what, [&]() -> Expected<bool> {
        DG_CHECK(call());
        return true;
      });
      if (!r) return r.error();
      return {};
    };
    ops.stopped = [this](int sig) { stop_signal = sig; };
    after.emplace(ac, ap, ops);
  }

  // A node this build does not drive is passed with a NOTE saying so.
  Status step_not_built(const std::string& node) {
    const GraphNode* n = p.graph.node(node);
    std::string route(n && !n->next.empty() ? lane::route::kNext : lane::route::kNoFindings);
    return go(route, std::string(lane::event::kNote), Json{{"not_built", node}});
  }

  Outcome finish(const std::string& node) {
    auto s = state();
    if (!s) return Outcome{kExitError, Json{{"status", "ERROR"}, {"summary", s.error().message}}};
    bool complete = json_str(*s, "status") == "complete";
    Json result = run_result(*s, p.store.run_dir(), complete ? "COMPLETE" : "HUMAN_REQUIRED");
    std::string ev(complete ? lane::event::kRunComplete : lane::event::kHumanRequired);
    if (!end_recorded(*s, p.store.run_dir())) {
      auto r = record(ev, Json{{"node", node}, {"waiting", result["human_required"]}});
      if (!r) return Outcome{kExitError, Json{{"status", "ERROR"}, {"summary", r.error().message}}};
    }
    return Outcome{complete ? kExitComplete : kExitHumanRequired, result};
  }

  Outcome stopped() {
    auto h = p.store.handoff("stopped by signal " + std::to_string(stop_signal));
    auto s = state();
    Json result = s ? run_result(*s, p.store.run_dir(), "HANDOFF") : Json{{"status", "HANDOFF"}};
    if (!h) result["summary"] = h.error().message;
    return Outcome{kExitSignalBase + stop_signal, result};
  }

  Outcome error(const Error& e) {
    // Drivers are ended by the pool's destructor; their cursors stay.
    auto s = state();
    Json result = s ? run_result(*s, p.store.run_dir(), "ERROR") : Json{{"status", "ERROR"}};
    result["summary"] = e.message;
    return Outcome{e.kind == ErrorKind::interrupted ? kExitSignalBase + stop_signal : kExitError,
                   result};
  }

  Outcome run() {
    scan_node = p.graph.entrypoint;
    auto b = walker.next(scan_node, lane::route::kActionable);
    if (!b) return error(b.error());
    bundle_node = *b;
    auto sch = walker.node_of_type(kLane, "scheduler");
    if (!sch)
      return error(fail(ErrorKind::internal, "GRAPH.yaml's orchestrator lane has no scheduler"));
    scheduler_node = *sch;
    // The nodes after delivery, as the graph's routes lead to them.
    auto after_node = [&](const std::string& from, std::string_view route) {
      auto n = walker.next(from, route);
      return n ? *n : std::string();
    };
    monitor_node = after_node(scheduler_node, lane::route::kAllBundlesComplete);
    cleanup_node = after_node(monitor_node, lane::route::kNext);
    audit_node = after_node(cleanup_node, lane::route::kNext);
    triage_node = after_node(audit_node, lane::route::kFindings);
    if (auto w = p.drivers.watch_stop_signals(); !w) return error(w.error());
    if (p.runner) make_after();
    for (int steps = 0;; ++steps) {
      if (stop_signal) return stopped();
      auto s = view();
      if (!s) return error(s.error());
      std::string node = json_str(**s, "node");
      std::string status = json_str(**s, "status");
      s->reset();
      if (status == "complete" || status == "human_required") return finish(node);
      Status st;
      if (node == scan_node) {
        st = step_scan();
      } else if (node == bundle_node) {
        st = step_bundle();
      } else if (node == scheduler_node) {
        st = step_scheduler();
        if (st && stopping) return stopped();
      } else if (const GraphNode* n = p.graph.node(node); n && n->type == "terminal") {
        return finish(node);
      } else if (after && node == monitor_node) {
        st = after->monitor_prs();
      } else if (after && node == cleanup_node) {
        st = after->cleanup_merged();
      } else if (after && node == audit_node) {
        st = after->audit_merged();
      } else if (after && node == triage_node) {
        st = after->audit_triage();
      } else {
        st = step_not_built(node);
      }
      if (!st) {
        if (st.error().kind == ErrorKind::interrupted) return stopped();
        return error(st.error());
      }
    }
  }
};

Orchestrator::Orchestrator(OrchestratorConfig config, OrchestratorParts parts)
    : impl_(std::make_shared<Impl>(std::move(config), parts)) {}

void Orchestrator::prime(std::vector<issues::Issue> open, std::set<long long> closed_by_prs) {
  impl_->primed_open = std::move(open);
  impl_->primed_prs = std::move(closed_by_prs);
}

Outcome Orchestrator::run() {
  return impl_->run();
}

}  // namespace devgraph::orchestrator
