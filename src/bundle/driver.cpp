#include "bundle/driver.h"

#include <unistd.h>

#include <cstdlib>

#include "bundle/delivery.h"
#include "bundle/gates.h"
#include "bundle/git_env.h"
#include "bundle/placement.h"
#include "bundle/quarantine.h"
#include "bundle/recovery.h"
#include "bundle/task_lane.h"
#include "lane/lane.h"
#include "lane/routes.h"
#include "proc/leftovers.h"
#include "proc/stop_signals.h"
#include "schedule/schedule.h"
#include "util/fs.h"

namespace devgraph::bundle {

struct Driver::Impl {
  DriverOptions opt;
  RunStore& store;
  const Graph& graph;
  CommandRunner& runner;
  EnvCrashPoints env_crash;
  CrashPoints* crash = nullptr;
  lane::Walker walker;
  BundleContext ctx;
  BundleLayout layout;
  std::unique_ptr<git::Git> own_git;
  git::Git* git = nullptr;
  std::unique_ptr<gh::Gh> own_gh;
  gh::Gh* gh = nullptr;
  std::unique_ptr<Journal> journal;
  std::optional<FileLock> bundle_lock;  // held for the driver's lifetime
  int leftovers_ended = 0;              // children of a killed predecessor
  int max_parallel = 6;
  size_t max_live = 12;
  schedule::Plan plan;
  std::vector<int> tails;  // schedule::tail_lengths of the plan

  Impl(DriverOptions o, const DriverParts& p)
      : opt(std::move(o)),
        store(p.store),
        graph(p.graph),
        runner(p.runner),
        crash(p.crash ? p.crash : &env_crash),
        walker(p.graph) {}

  int urgency(const std::optional<std::string>& task) const {
    if (!task) return std::numeric_limits<int>::max();  // bundle-level personas first
    auto it = plan.index.find(*task);
    return it == plan.index.end() || it->second >= tails.size() ? 0 : tails[it->second];
  }

  Status load_plan() {
    DG_TRY(auto p, schedule::load_plan(layout.tasks_json()));
    plan = std::move(p);
    tails = schedule::tail_lengths(plan);
    return {};
  }

  std::vector<std::string> commits_on_branch() {
    auto lines = git->log_oneline(ctx.base);
    std::vector<std::string> out;
    if (lines)
      for (const auto& l : *lines) out.push_back(l.substr(0, 10));
    return out;
  }

  Json base_result(BundleRun& run, const std::string& status, const std::string& summary,
                   const std::string& head, int done) {
    auto [cost, runs] = run.dispatch.ledger_sum();
    return Json{
        {"status", status},
        {"summary", summary},
        {"evidence", Json::array({"commits: " + join(commits_on_branch(), ", "), "head: " + head})},
        {"artifacts", Json::array({layout.dir()})},
        {"concerns", run.concerns},
        {"missing_context", Json::array()},
        {"blockers", Json::array()},
        {"findings", Json::array()},
        {"commands", Json::array({run.command("test"), run.command("build")})},
        {"bundle", opt.bundle},
        {"tasks_completed", done},
        {"tasks_total", static_cast<int>(plan.tasks.size())},
        {"branch", ctx.branch},
        {"head", head},
        {"pr", Json()},
        {"human_required", false},
        {"cost_usd", cost},
        {"capacity", Json{{"tier", "n/a"}, {"headless", true}}},
        {"persona_runs", runs}};
  }

  Json final_result(BundleRun& run, const std::string& head, const Json& pr, int done) {
    auto [cost, runs] = run.dispatch.ledger_sum();
    char money[32];
    std::snprintf(money, sizeof money, "%.2f", cost);
    Json r = base_result(run, run.concerns.empty() ? "DONE" : "DONE_WITH_CONCERNS",
                         "bundle " + opt.bundle + ": " + std::to_string(done) + "/" +
                             std::to_string(plan.tasks.size()) + " tasks committed, " +
                             std::to_string(commits_on_branch().size()) + " commits, " +
                             std::to_string(runs) + " persona runs, $" + money,
                         head, done);
    r["pr"] = pr;
    return r;
  }

  Json blocked_result(BundleRun& run, const std::string& why, int done) {
    auto head = git->rev_parse("HEAD");
    Json r = base_result(run, "BLOCKED", clip(why, 500), head ? *head : "", done);
    r["blockers"] = Json::array({clip(why, 300)});
    r["human_required"] = true;
    r["commands"] = Json::array();
    return r;
  }

  // Plan, tasks, gates, delivery: the bundle lane from wherever its cursor
  // stands. Returns the outcome; a blocker is a value, not an error.
  // Stopped by a signal: every persona has ended and every cursor stands
  // where the work stopped, so the next run resumes there. The exit code is
  // the shell's for a death by that signal (128 + N).
  DriverOutcome stopped_outcome(BundleRun& run, int done) {
    int sig = run.dispatch.stop_signal();
    Json cursors = Json::object();
    cursors["bundle"] = journal->node(std::nullopt);
    for (const auto& t : plan.tasks)
      if (auto n = journal->node(t.id); !n.empty()) cursors[t.id] = n;
    journal->log("stopped", Json{{"signal", sig}, {"cursors", cursors}});
    auto head = git->rev_parse("HEAD");
    Json r = base_result(run, "HANDOFF",
                         "stopped by " + stop_signal_name(sig) +
                             "; run-bundle again to resume from the recorded cursors",
                         head ? *head : "", done);
    r["stopped_by"] = stop_signal_name(sig);
    r["cursors"] = cursors;
    return DriverOutcome{kExitSignalBase + sig, r};
  }

  DriverOutcome drive(BundleRun& run) {
    std::optional<TaskLane> lane;
    auto blocked = [&](const std::string& why) {
      int done = lane ? lane->committed() : 0;
      if (run.dispatch.stop_signal()) return stopped_outcome(run, done);
      return DriverOutcome{kExitBlocked, blocked_result(run, why, done)};
    };
    auto node = [&] { return journal->node(std::nullopt); };
    if (node().empty()) return blocked("bundle cursor has no node");
    const GraphLane* bundle_lane = graph.lane("bundle");
    if (!bundle_lane) return blocked("GRAPH.yaml has no bundle lane");
    if (node() == bundle_lane->complete_at && json_str(journal->cursor(), "status") == "complete") {
      if (auto s = load_plan(); !s) return blocked(s.error().message);
      auto head = git->rev_parse("HEAD");
      return DriverOutcome{
          kExitOk, final_result(run, head ? *head : "", journal->cursor().value("pr", Json()),
                                static_cast<int>(plan.tasks.size()))};
    }
    if (const GraphNode* n = graph.node(node()); n && n->type == "recovery") {
      auto where = resume(run, "bundle", std::nullopt);
      if (!where) return blocked(where.error().message);
      if (!where->retry) return blocked(where->why);
    }
    if (node() == walker.shared_node_of_type("cursor_interrupt"))
      return blocked("bundle is waiting for a human");
    GateInputs in;
    in.spec_path = layout.spec();
    in.on_wait = opt.on_wait;
    in.command_timeout = std::chrono::minutes(graph.headless.persona_timeout_minutes);
    in.critique = opt.critique;
    const Json& state = journal->state();
    auto recorded = state.find("discuss_rounds");
    in.critique.enabled = opt.critique.enabled || graph.discuss.rounds_enabled ||
                          (recorded != state.end() && *recorded == Json(true));
    // Plan, tasks, gates; again from the plan when a fix loop's
    // overdesigned-plan diagnosis sent the bundle back (fix.max_replans
    // bounds how often).
    std::string evidence;
    do {
      auto planned = run_plan(run, in);
      if (!planned) return blocked(planned.error().message);
      if (!planned->empty()) return blocked(*planned);
      if (auto s = load_plan(); !s) return blocked(s.error().message);
      lane.emplace(run, plan, tails, in, max_parallel, max_live);
      auto scheduler = walker.node_of_type("bundle", "scheduler");
      if (scheduler && node() == *scheduler) {
        auto why = lane->run();
        if (!why) return blocked(why.error().message);
        if (!why->empty()) return blocked(*why);
        auto next = walker.follow("bundle", *scheduler, lane::route::kTasksComplete, "");
        if (!next) return blocked(next.error().message);
        auto s = journal->move(std::nullopt, *next, lane::event::kTasksComplete, Json(),
                               Json{{"tasks", plan.tasks.size()}});
        if (!s) return blocked(s.error().message);
      } else {
        lane->mark_all_committed();
      }
      evidence.clear();
      auto gated = run_gates(run, in, evidence);
      if (!gated) return blocked(gated.error().message);
      if (!gated->empty()) return blocked(*gated);
    } while (node() == bundle_lane->nodes.front());
    auto head = git->rev_parse("HEAD");
    if (!head) return blocked(head.error().message);
    PrText text;
    text.bundle = opt.bundle;
    text.title = bundle_title(journal->state(), opt.bundle);
    for (const auto& t : plan.tasks) text.tasks.emplace_back(t.id, t.title);
    text.test_command = run.command("test");
    text.build_command = run.command("build");
    text.issues = bundle_issues(journal->state(), opt.bundle);
    auto kept = quarantined(layout);
    if (!kept) return blocked(kept.error().message);
    for (const auto& k : *kept) text.quarantined.push_back(json_str(k, "path"));
    auto [cost, runs] = run.dispatch.ledger_sum();
    auto pr = deliver(run, text, *head, cost, runs);
    if (!pr) return blocked(pr.error().message);
    // Every task committed on the branch, under this plan or an earlier one.
    int committed = 0;
    for (const auto& t : journal->task_ids())
      committed += json_str(journal->task_cursor(t), "status") == "complete";
    return DriverOutcome{kExitOk,
                         final_result(run, *head, *pr, std::max(committed, lane->committed()))};
  }

  DriverOutcome run(Launcher& launcher) {
    agents::LaunchRequest base;
    base.worktree = ctx.worktree;
    base.run_dir = opt.run_dir;
    base.skill_dir = opt.skill_dir;
    PersonaDispatch dispatch(launcher, *journal, layout, *crash, base,
                             [this](const std::optional<std::string>& t) { return urgency(t); });
    BundleRun run{ctx, layout, walker, *journal,      dispatch, *git,
                  *gh, runner, *crash, opt.skill_dir, "",       {}};
    if (auto b = git->rev_parse(ctx.base)) run.bundle_base = *b;
    if (leftovers_ended > 0)
      journal->log("leftovers_ended", Json{{"process_groups", leftovers_ended}});
    journal->log("start", Json{{"node", journal->node(std::nullopt)},
                               {"worktree", ctx.worktree},
                               {"branch", ctx.branch},
                               {"base", ctx.base},
                               {"delivery", ctx.delivery},
                               {"max_parallel", max_parallel}});
    DriverOutcome out = drive(run);
    // The caller prints the RESULT_JSON line; this copy is for whoever
    // reads the run later.
    std::ignore = write_file_atomic(layout.tech_lead_result(), dump_py(out.result, 2) + "\n");
    auto [cost, runs] = dispatch.ledger_sum();
    journal->log("result", Json{{"status", json_str(out.result, "status")},
                                {"cost_usd", cost},
                                {"persona_runs", runs}});
    return out;
  }

  Status read_context(const Json& s);
};

// What state.json says about the bundle, read before anything is written.
Status Driver::Impl::read_context(const Json& s) {
  const Json& c = s["bundles_runtime"][opt.bundle];
  ctx.worktree = json_str(c, "worktree");
  if (!ctx.worktree.empty() && ctx.worktree[0] == '~') {
    const char* home = std::getenv("HOME");
    ctx.worktree = std::string(home ? home : "") + ctx.worktree.substr(1);
  }
  if (ctx.worktree.empty() || !is_directory(ctx.worktree) || !path_exists(ctx.worktree + "/.git"))
    return fail("bundle '" + opt.bundle + "' worktree " + ctx.worktree + " is not a git worktree");
  ctx.worktree = absolute_path(ctx.worktree);
  ctx.branch = json_str(c, "branch", "develop/" + opt.bundle);
  ctx.delivery = json_str(s, "delivery", "github");
  ctx.default_branch = json_str(s, "default_branch", "main");
  ctx.base = opt.base ? *opt.base
                      : json_str(c, "base",
                                 ctx.delivery == "github" ? "origin/" + ctx.default_branch
                                                          : ctx.default_branch);
  ctx.merge_policy = json_str(s, "merge_policy", "never");
  ctx.commands =
      s.contains("commands") && s["commands"].is_object() ? s["commands"] : Json::object();
  layout = BundleLayout{opt.run_dir, opt.bundle, ctx.worktree};
  ctx.bundle_dir = layout.dir();
  return {};
}

Driver::Driver(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Driver::~Driver() {
  if (impl_ && !impl_->ctx.bundle_dir.empty()) ::unlink(impl_->layout.driver_pid().c_str());
}

const BundleContext& Driver::context() const {
  return impl_->ctx;
}
const BundleLayout& Driver::layout() const {
  return impl_->layout;
}

Expected<std::unique_ptr<Driver>> Driver::open(DriverOptions options, DriverParts parts) {
  auto usage = [](const std::string& m) { return fail(ErrorKind::usage, m, kExitUsage); };
  options.run_dir = absolute_path(options.run_dir);
  auto impl = std::make_unique<Impl>(options, parts);
  auto& o = impl->opt;
  if (!is_valid_id(o.bundle)) return usage("--bundle " + o.bundle + " is not a valid id");
  auto st = parts.store.read();
  if (!st) return usage(st.error().message);
  const Json& s = *st;
  if (!s.contains("bundles_runtime") || !s["bundles_runtime"].contains(o.bundle))
    return usage("bundle '" + o.bundle + "' has no cursor in " + o.run_dir +
                 "; the orchestrator moves it to plan_bundle first");
  if (auto r = impl->read_context(s); !r) return usage(r.error().message);
  const auto& ctx = impl->ctx;
  const auto& layout = impl->layout;
  // Placement before the first write (the bundle directory, driver.pid).
  auto roots = guard::Roots::from_env();
  if (auto deny = check_bundle_worktree(ctx.worktree, roots))
    return usage("placement guard: " + *deny);
  if (auto deny = check_write_root("run directory", o.run_dir, roots))
    return usage("placement guard: " + *deny);
  if (auto m = make_directories(layout.dir()); !m) return usage(m.error().message);
  // One driver per bundle. flock ends with its holder, so a killed driver
  // never leaves the bundle locked; once the lock is held, whatever the
  // previous driver launched is an orphan and is ended before anything new
  // starts (proc/leftovers.h): two writers must never share a worktree.
  auto lock = FileLock::try_acquire(layout.driver_lock());
  if (!lock) return usage(lock.error().message);
  if (!*lock) {
    auto pid = read_file(layout.driver_pid());
    std::string who;
    if (pid && !pid->empty()) who = " (pid " + pid->substr(0, pid->find('\n')) + ")";
    return usage("bundle " + o.bundle + " is being driven by another process" + who);
  }
  impl->bundle_lock = std::move(**lock);
  auto ended = end_leftover_children(layout.live_children());
  if (!ended) return usage(ended.error().message);
  impl->leftovers_ended = *ended;
  impl->max_parallel =
      o.max_parallel.value_or(parts.graph.concurrency.max_parallel_tasks_per_bundle);
  if (impl->max_parallel < 1) return usage("--max-parallel must be at least 1");
  impl->max_live =
      static_cast<size_t>(std::max(2, parts.graph.concurrency.max_live_personas_per_tech_lead));
  if (parts.git) {
    impl->git = parts.git;
  } else {
    impl->own_git = git::make_git(parts.runner, ctx.worktree, driver_git_env(),
                                  {parts.graph.headless.run_git_hooks});
    impl->git = impl->own_git.get();
  }
  if (parts.gh) {
    impl->gh = parts.gh;
  } else {
    impl->own_gh = gh::make_gh(parts.runner, ctx.worktree);
    impl->gh = impl->own_gh.get();
  }
  JournalHooks hooks{o.on_log, o.on_state};
  impl->journal =
      std::make_unique<Journal>(parts.store, impl->layout, *impl->crash, std::move(hooks), *st);
  if (auto w = write_file_atomic(layout.driver_pid(), std::to_string(::getpid()) + "\n"); !w)
    return usage(w.error().message);
  return std::unique_ptr<Driver>(new Driver(std::move(impl)));
}

DriverOutcome Driver::run(Launcher& launcher) {
  return impl_->run(launcher);
}

}  // namespace devgraph::bundle
