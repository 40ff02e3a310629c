#include "orchestrator/run_setup.h"

#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <memory>

#include "board/snapshot.h"
#include "bundle/crash_points.h"
#include "bundle/limits_protocol.h"
#include "contracts/schema.h"
#include "gh/gh.h"
#include "git/git.h"
#include "git/repo.h"
#include "graph/graph.h"
#include "guard/guard.h"
#include "issues/local_store.h"
#include "metrics/metrics.h"
#include "orchestrator/after_delivery.h"
#include "orchestrator/limits.h"
#include "orchestrator/orchestrator.h"
#include "orchestrator/ownership.h"
#include "orchestrator/run_board.h"
#include "proc/command.h"
#include "proc/leftovers.h"
#include "project/commands.h"
#include "skill/skill.h"
#include "store/run_store.h"
#include "util/args.h"
#include "util/clock.h"
#include "util/fs.h"

extern char** environ;

namespace devgraph::orchestrator {
namespace {

constexpr int kUsage = 3;

Error setup_error(const std::string& why) {
  return fail(ErrorKind::usage, why, kUsage);
}

Expected<std::string> git_out(CommandRunner& runner, const std::string& dir,
                              std::vector<std::string> args, bool& ok) {
  CommandSpec spec;
  spec.argv = {"git"};
  spec.argv.insert(spec.argv.end(), args.begin(), args.end());
  spec.cwd = dir;
  spec.timeout = std::chrono::seconds(30);
  DG_TRY(auto r, runner.run(spec));
  ok = r.ok();
  std::string o = r.out;
  while (!o.empty() && (o.back() == '\n' || o.back() == '\r')) o.pop_back();
  return o;
}

std::vector<std::string> driver_environment() {
  std::vector<std::string> env;
  for (char** e = environ; e && *e; ++e) {
    std::string kv = *e;
    if (kv.rfind("DEVGRAPH_RUN_CRASH_AT=", 0) == 0) continue;
    if (kv.rfind(std::string(bundle::kLimitsSocketEnv) + "=", 0) == 0) continue;
    env.push_back(kv);
  }
  return env;
}

Json dry_run_result(const std::vector<FormedBundle>& formed, const Eligibility& el, int ceiling) {
  Json bundles = Json::array();
  int i = 0;
  for (const auto& f : formed)
    bundles.push_back({{"id", f.id},
                       {"title", f.title},
                       {"issues", f.issues},
                       {"branch", f.branch},
                       {"starts", i++ < ceiling ? "now" : "when a slot frees"}});
  Json excluded = Json::array();
  for (const auto& e : el.excluded) excluded.push_back({{"issue", e.number}, {"why", e.why}});
  return Json{{"status", "DRY_RUN"}, {"bundles", bundles}, {"excluded", excluded}};
}

// The runs of the repository, newest first, as ownership.h decides over
// them; a state that cannot be read is left out.
std::vector<RunView> run_views(const std::string& develop_home) {
  std::vector<RunView> out;
  for (const auto& dir : runs_newest_first(develop_home)) {
    auto text = read_file(dir + "/" + kStateFile);
    if (!text) continue;
    auto st = parse_json(*text, dir);
    if (!st || !st->is_object()) continue;
    std::string status = json_str(*st, "status");
    bool unrecorded = (status == "complete" || status == "human_required") &&
                      path_exists(join_path(dir, kEventsFile)) && !end_recorded(*st, dir);
    out.push_back(RunView{dir, std::move(*st), unrecorded});
  }
  return out;
}

std::map<long long, std::string> held_reasons(const std::vector<Waiting>& held) {
  std::map<long long, std::string> out;
  for (const auto& w : held)
    for (long long n : w.issues)
      out.emplace(n, "waiting for a person in run " + w.run_id + " (" + w.key + ")");
  return out;
}

}  // namespace

Expected<RepositoryCheck> check_repository(CommandRunner& runner, const std::string& repo_flag,
                                           const guard::Roots& roots) {
  using Fault = RepositoryCheck::Fault;
  RepositoryCheck c;
  c.dir = absolute_path(repo_flag);
  auto faulty = [&](Fault fault, std::string why) {
    c.fault = fault;
    c.why = std::move(why);
    return c;
  };
  if (!is_directory(c.dir))
    return faulty(Fault::no_directory, "--repo " + repo_flag + ": no such directory");
  bool ok = false;
  DG_TRY(std::string bare, git_out(runner, c.dir, {"rev-parse", "--is-bare-repository"}, ok));
  if (!ok) return faulty(Fault::not_git, c.dir + " is not a git repository");
  if (bare == "true")
    return faulty(Fault::bare, c.dir +
                                   " is a bare repository; run devgraph run in a clone with a "
                                   "working tree");
  auto place = guard::resolve_placement(c.dir, std::nullopt, roots);
  if (!place) return faulty(Fault::not_git, place.error().message);
  c.place = *place;
  if (place->checkout_kind.value_or("") != "primary" || !place->primary_top)
    return faulty(Fault::linked_worktree,
                  c.dir + " is a linked worktree" +
                      (place->primary_top ? " of " + *place->primary_top : std::string()) +
                      "; run devgraph run in the primary clone");
  c.top = *place->primary_top;
  DG_TRY(std::string origin, git_out(runner, c.top, {"remote", "get-url", "origin"}, ok));
  if (ok) c.origin = origin;
  if (!c.origin.empty() && place->delivery != "github")
    return faulty(Fault::foreign_origin,
                  "origin " + c.origin +
                      " does not name an <owner>/<repo> devgraph can read; fix the remote or "
                      "remove it for local delivery");
  c.delivery = place->delivery;
  return c;
}

Expected<RunReport> run_repository(const RunSetupRequest& req, std::ostream& out) {
  auto started = std::chrono::steady_clock::now();
  auto line = [&](const std::string& l) {
    if (req.on_line) req.on_line(l);
  };
  auto roots = guard::Roots::from_env();
  // The issue source's first back-off (OrchestratorConfig::source_backoff),
  // for tests of a failing gh.
  std::optional<std::chrono::milliseconds> source_backoff;
  if (const char* v = std::getenv("DEVGRAPH_SOURCE_BACKOFF_MS")) {
    auto ms = parse_int(v);
    if (!ms || *ms < 0)
      return setup_error(std::string("DEVGRAPH_SOURCE_BACKOFF_MS=") + v +
                         ": not a whole number of milliseconds");
    source_backoff = std::chrono::milliseconds(*ms);
  }
  RealCommandRunner runner;
  DG_TRY(RepositoryCheck checked, check_repository(runner, req.repo, roots));
  if (checked.fault != RepositoryCheck::Fault::none) return setup_error(checked.why);
  const guard::Placement& place = checked.place;
  const std::string top = checked.top;
  const bool has_origin = !checked.origin.empty();
  const std::string delivery = checked.delivery;
  bool ok = false;
  std::string kind = req.issues.value_or(delivery == "github" ? "github" : "local");
  if (kind == "github" && !has_origin)
    return setup_error("--issues github needs an origin remote on GitHub");
  std::string identity = place.owner + "/" + place.repo;

  DG_TRY(auto skill, locate_skill(req.skill));
  DG_TRY(auto graph, Graph::load(skill));
  DG_TRY(auto schema, Schema::load(state_schema_path(skill)));
  auto repo_queries = git::make_repo_queries(runner, top);
  auto repo_default = repo_queries->default_branch(delivery == "github");
  if (!repo_default) return setup_error(repo_default.error().message);
  std::string default_branch = *repo_default;
  std::string base = delivery == "github" ? "origin/" + default_branch : default_branch;

  // The issue source, and a first look at it: output that is not what was
  // asked is refused before anything is written.
  issues::LocalIssues local(place.develop_home + "/issues");
  auto gh = gh::make_gh(runner, top);
  IntakePolicy policy;
  policy.epic_label = graph.intake.epic_label;
  policy.label = req.label.value_or(graph.intake.label);
  policy.every_open_issue = kind == "local" || req.all_issues;
  std::unique_ptr<IssueSource> source =
      kind == "local"
          ? local_source(local)
          : github_source(*gh, policy.every_open_issue ? std::nullopt
                                                       : std::optional<std::string>(policy.label));
  std::optional<std::vector<issues::Issue>> first_open;
  std::optional<std::set<long long>> first_prs;
  {
    auto o = source->open_issues();
    if (!o && (o.error().kind == ErrorKind::internal || o.error().kind == ErrorKind::not_found ||
               o.error().kind == ErrorKind::usage))
      return fail(o.error().kind, "reading " + kind + " issues: " + o.error().message,
                  o.error().kind == ErrorKind::internal && kind == "local" ? kUsage : 1);
    auto pr =
        o ? source->closed_by_open_prs() : Expected<std::set<long long>>(std::set<long long>{});
    if (o && !pr &&
        (pr.error().kind == ErrorKind::internal || pr.error().kind == ErrorKind::not_found))
      return fail(pr.error().kind, "reading open pull requests: " + pr.error().message, 1);
    if (o && pr) {
      first_open = std::move(*o);
      first_prs = std::move(*pr);
    } else {
      line("GitHub did not answer yet (" + (o ? pr.error().message : o.error().message) +
           "); the run will keep asking");
    }
  }
  int ceiling = req.max_bundles.value_or(graph.concurrency.max_parallel_bundles);

  if (req.dry_run) {
    if (!first_open) return fail("cannot read the issues for a dry run");
    std::set<long long> taken;
    auto views = run_views(place.develop_home);
    auto owned = decide_ownership(views, identity, true);
    auto el = eligible(*first_open, policy, *first_prs, taken,
                       owned ? held_reasons(owned->held) : std::map<long long, std::string>{});
    auto formed = form_bundles(el.work, graph.intake, 1);
    RunReport rep;
    rep.result = dry_run_result(formed, el, ceiling);
    for (const auto& b : rep.result["bundles"])
      rep.summary += "would form " + json_str(b, "id") + " " + dump_py(b["issues"]) + " on " +
                     json_str(b, "branch") + " (starts " + json_str(b, "starts") + ")\n";
    for (const auto& e : el.excluded)
      rep.summary += "not work: #" + std::to_string(e.number) + ": " + e.why + "\n";
    if (formed.empty()) rep.summary += "nothing to do: no open issue is eligible\n";
    return rep;
  }

  // One orchestrator per repository.
  DG_CHECK(make_directories(place.develop_home));
  std::string lock_path = place.develop_home + "/orchestrator.lock";
  DG_TRY(auto lock, FileLock::try_acquire(lock_path));
  if (!lock) {
    std::string holder;
    if (auto note = read_file(lock_path)) holder = *note;
    while (!holder.empty() && holder.back() == '\n') holder.pop_back();
    return setup_error("another devgraph run holds " + identity +
                       (holder.empty() ? std::string() : " (" + holder + ")"));
  }
  std::ignore = lock->write_note("pid " + std::to_string(::getpid()));

  // The run: the newest unfinished one, or a fresh one. A run at its end
  // whose log does not record it (its orchestrator was killed on the way)
  // is unfinished: its end is recorded, and nothing else is done. What
  // waits for a person in the other runs stays theirs (ownership.h).
  auto decided = decide_ownership(run_views(place.develop_home), identity, req.fresh);
  if (!decided) return setup_error(decided.error().message);  // another repository's run
  Ownership owned = std::move(*decided);
  std::string run_dir = owned.resume;
  bool finishing = owned.finishing;
  // A new run is named by the UTC second it starts in.
  std::string fresh;
  if (run_dir.empty()) {
    DG_TRY(fresh, new_run_dir(place.develop_home, system_clock().wall()));
  }
  RunStore store(run_dir.empty() ? fresh : run_dir, graph, schema);
  // The orchestrator reads the run at every decision and its drivers write
  // it meanwhile: reads follow state.json by what changed, and its own
  // changes leave the cursor records unparsed (what it keeps of the run is
  // what it reads).
  store.cache_reads(true);
  store.defer_cursor_maps(true);
  if (run_dir.empty()) {
    DG_TRY(auto commands, project::detect_commands(top));
    InitRequest init;
    init.repo = identity;
    init.default_branch = default_branch;
    init.merge = Json{
        {"delivery", delivery},
        {"merge_policy", req.merge_policy.value_or(graph.delivery.merge)},
        {"commands",
         {{"test", commands.test}, {"build", commands.build}, {"source", commands.source}}},
        {"intake",
         {{"issues", kind}, {"label", policy.every_open_issue ? Json() : Json(policy.label)}}}};
    DG_TRY(auto c, store.init(init));
    (void)c;
    line("new run " + store.run_dir());
    DG_TRY(std::string tip, git_out(runner, top, {"rev-parse", "-q", "--verify", base}, ok));
    if (ok) DG_CHECK(init_marker(place.develop_home, tip));
  } else if (finishing) {
    line("recording the end of run " + run_dir);
  } else {
    DG_TRY(auto r, store.resume());
    (void)r;
    line("resuming run " + run_dir);
  }
  if (req.merge_policy) {
    DG_TRY(Json now, store.read());
    if (json_str(now, "merge_policy") != *req.merge_policy) {
      EventRequest e{"NOTE", Json{{"merge_policy", *req.merge_policy}},
                     Json{{"merge_policy", *req.merge_policy}}, nullptr};
      DG_TRY(auto c, store.event(e));
      (void)c;
    }
  }
  if (req.discuss_rounds && !req.dry_run) {
    DG_TRY(Json now, store.read());
    auto on = now.find("discuss_rounds");
    if (on == now.end() || *on != Json(true)) {
      EventRequest e{"NOTE", Json{{"discuss_rounds", true}}, Json{{"discuss_rounds", true}},
                     nullptr};
      DG_TRY(auto c, store.event(e));
      (void)c;
    }
  }
  std::string record = store.run_dir() + "/live-drivers";
  // Stopped first, as a supervisor stops a driver: it ends its personas
  // and finishes the git command it waits for, whose index lock would
  // otherwise fail its successor's (KILLed only after the grace).
  DG_TRY(int ended,
         end_leftover_children(record, std::chrono::seconds(10), std::chrono::seconds(10)));
  if (ended > 0) line("ended " + std::to_string(ended) + " driver(s) a killed run left behind");

  DG_TRY(auto pool, make_driver_pool(record));
  // The run-wide limits, served on the pool's loop; destroyed before it.
  DG_TRY(auto limits,
         LimitsBroker::open(LimitsSetup{store, graph, *pool, req.budget_usd, req.on_line}));
  // The run's board, a view on the same loop; destroyed before the pool.
  std::unique_ptr<RunBoard> board;
  if (req.board && req.board->is_open()) {
    auto notice = [&](const std::string& l) { req.on_notice ? req.on_notice(l) : line(l); };
    if (auto b = RunBoard::open(*pool, store.run_dir(), std::move(*req.board)); b) {
      board = std::move(*b);
      notice("board at " + board->url());
      if (req.open_board) {
        if (auto opened = board->open_browser(); !opened)
          notice(opened.error().message + "; the board is still served");
      }
    } else {
      notice("the board is not served: " + b.error().message);
    }
  }
  auto repo_git = git::make_git(runner, top, {});
  std::string crash_spec;
  if (const char* v = std::getenv("DEVGRAPH_RUN_CRASH_AT")) crash_spec = v;
  bundle::EnvCrashPoints crash(crash_spec);

  OrchestratorConfig cfg;
  cfg.delivery = delivery;
  cfg.default_branch = default_branch;
  cfg.base = base;
  cfg.policy = policy;
  cfg.max_bundles = ceiling;
  cfg.watch = req.watch;
  if (source_backoff) cfg.source_backoff = *source_backoff;
  cfg.on_line = req.on_line;
  cfg.on_state = req.on_state;
  cfg.on_tick = req.on_tick;
  cfg.worktree_for = [&](const std::string& branch) {
    auto p = guard::resolve_placement(top, branch, roots);
    return p && p->worktree_path ? *p->worktree_path : std::string();
  };
  std::vector<std::string> env = driver_environment();
  env.push_back(std::string(bundle::kLimitsSocketEnv) + "=" + limits->address());
  std::string self = self_executable();
  std::string rd = store.run_dir();
  cfg.driver_for = [&](const std::string& bundle) {
    DriverSpec d;
    d.bundle = bundle;
    d.argv = {self, "run-bundle", rd, "--bundle", bundle, "--base", base, "--no-live"};
    d.argv.insert(d.argv.end(), req.driver_flags.begin(), req.driver_flags.end());
    d.cwd = rd;
    d.env = env;
    return d;
  };
  cfg.develop_home = place.develop_home;
  cfg.repo_top = top;
  cfg.held_issues = held_reasons(owned.held);
  cfg.held_branches = owned.branches;
  if (!owned.held.empty()) line(held_line(owned.held));
  cfg.command_timeout = std::chrono::minutes(graph.headless.persona_timeout_minutes);
  {
    DG_TRY(Json now, store.read());
    cfg.merge_policy = json_str(now, "merge_policy", "never");
  }
  // The auditors take the drivers' backend flags, not their task ceiling.
  std::vector<std::string> audit_flags;
  for (size_t i = 0; i < req.driver_flags.size(); ++i) {
    if (req.driver_flags[i] == "--max-parallel" && i + 1 < req.driver_flags.size()) {
      ++i;
      continue;
    }
    audit_flags.push_back(req.driver_flags[i]);
  }
  cfg.audit_driver_for = [&](const std::string& key) {
    DriverSpec d;
    d.bundle = "audit-" + key;
    d.argv = {self, "audit-merge", rd, "--key", key};
    d.argv.insert(d.argv.end(), audit_flags.begin(), audit_flags.end());
    d.cwd = rd;
    d.env = env;
    return d;
  };
  OrchestratorParts parts{store, graph, *repo_git, *repo_queries, *source, *pool, crash};
  parts.gh = gh.get();
  parts.runner = &runner;
  Orchestrator orch(cfg, parts);
  if (first_open) orch.prime(std::move(*first_open), std::move(*first_prs));
  Outcome o = orch.run();
  // The session record, as checkpoint.py writes it when a run stops: at
  // its end, waiting for a person, or handed off. A failure only warns.
  RunReport rep;
  if (auto st = store.read()) {
    std::string status = json_str(*st, "status");
    if (status == "complete" || status == "human_required" || status == "handoff") {
      auto rec = metrics::record(store.run_dir(), std::nullopt, std::nullopt);
      if (!rec) line("session metrics not recorded: " + rec.error().message);
      // The board as it stands at the stop, a file that opens with no server.
      if (std::string to = graph.observability.snapshot_path(store.run_dir()); !to.empty()) {
        if (auto w = board::write_run_snapshot(store.run_dir(), to))
          rep.board_snapshot = to;
        else
          line("board snapshot not written: " + w.error().message);
      }
    }
  }
  rep.exit_code = o.exit_code;
  rep.run_dir = store.run_dir();
  rep.result = o.result;
  // The orchestrator's own CPU (its drivers and personas not included).
  struct rusage usage {};
  if (::getrusage(RUSAGE_SELF, &usage) == 0)
    rep.result["orchestrator_cpu_ms"] = (usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) * 1000LL +
                                        (usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1000;
  rep.result["elapsed_s"] =
      std::round(std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count() *
                 10.0) /
      10.0;
  // What waits for a person in other runs: the run does not end without
  // it, so `devgraph run` says so and exits as one that waits.
  bool held =
      !owned.held.empty() && (o.exit_code == kExitComplete || o.exit_code == kExitHumanRequired);
  if (held) {
    rep.result["status"] = "HUMAN_REQUIRED";
    rep.exit_code = kExitHumanRequired;
  }
  rep.summary = run_summary(rep.result);
  if (held) {
    rep.summary += "  " + held_line(owned.held) + "\n";
    Json items = Json::array();
    for (const auto& w : owned.held) {
      Json item = {{"run_id", w.run_id}, {"run_dir", w.run_dir}, {"bundle", w.bundle},
                   {"key", w.key},       {"reason", w.reason},   {"issues", w.issues}};
      items.push_back(item);
      rep.result["human_required"].push_back(item);
    }
    rep.result["waiting_elsewhere"] = items;
  }
  (void)out;
  return rep;
}

}  // namespace devgraph::orchestrator
