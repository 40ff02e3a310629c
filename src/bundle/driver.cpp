#include "bundle/driver.h"

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <limits>
#include <map>
#include <regex>
#include <set>
#include <sstream>

#include "bundle/git_env.h"
#include "bundle/placement.h"
#include "bundle/words.h"
#include "git/git.h"
#include "proc/leftovers.h"
#include "schedule/schedule.h"
#include "templates/render.h"
#include "util/fs.h"
#include "util/unsynced_files.h"

namespace devgraph::bundle {
namespace {

constexpr int kMaxTaskRepairs = 3;
constexpr int kMaxBundleRepairs = 3;
constexpr int kMaxTransientRetries = 2;
constexpr const char* kTaskTrailer = "Devgraph-Task";
constexpr const char* kBundleTrailer = "Devgraph-Bundle-Step";

const char* const kInfraMarkers[] = {
    ".tf",  ".tfvars", "Dockerfile", "docker-compose", ".github/workflows",
    "k8s/", "helm/",   "bicep",      "pulumi"};

std::string str(const Json& j, const char* key, const std::string& fallback = "") {
  if (j.is_object() && j.contains(key) && j[key].is_string()) return j[key].get<std::string>();
  return fallback;
}

std::vector<std::string> str_list(const Json& j, const char* key) {
  std::vector<std::string> out;
  if (j.is_object() && j.contains(key) && j[key].is_array())
    for (const auto& v : j[key])
      if (v.is_string()) out.push_back(v.get<std::string>());
  return out;
}

std::string join(const std::vector<std::string>& v, const std::string& sep) {
  std::string s;
  for (size_t i = 0; i < v.size(); ++i) s += (i ? sep : "") + v[i];
  return s;
}

std::string clip(const std::string& s, size_t n) {
  return s.size() <= n ? s : s.substr(0, n);
}
std::string tail(const std::string& s, size_t n) {
  return s.size() <= n ? s : s.substr(s.size() - n);
}

bool is_infrastructure(const schedule::Task& t) {
  std::string kind = t.kind;
  std::transform(kind.begin(), kind.end(), kind.begin(), ::tolower);
  if (kind == "infra" || kind == "infrastructure" || kind == "iac") return true;
  for (const auto& g : t.files)
    for (const char* m : kInfraMarkers)
      if (g.find(m) != std::string::npos) return true;
  return false;
}

// The markdown section of the plan whose heading names the task, up to the
// next heading of the same or a higher level.
std::string plan_section(const std::string& plan, const std::string& id) {
  std::istringstream in(plan);
  std::string line;
  std::vector<std::string> lines;
  while (std::getline(in, line)) lines.push_back(line);
  auto heading_level = [](const std::string& l) -> size_t {
    size_t n = 0;
    while (n < l.size() && l[n] == '#') ++n;
    return (n > 0 && n < l.size() && l[n] == ' ') ? n : 0;
  };
  for (size_t i = 0; i < lines.size(); ++i) {
    size_t level = heading_level(lines[i]);
    if (!level) continue;
    std::string title = lines[i].substr(level);
    while (!title.empty() && title[0] == ' ') title.erase(0, 1);
    std::string lower = title;
    std::transform(lower.begin(), lower.end(), lower.begin(), ::tolower);
    if (lower.rfind("task ", 0) == 0) title = title.substr(5);
    if (title.rfind(id, 0) != 0) continue;
    if (title.size() > id.size() &&
        (std::isalnum(static_cast<unsigned char>(title[id.size()])) || title[id.size()] == '_'))
      continue;
    std::string out = lines[i];
    for (size_t j = i + 1; j < lines.size(); ++j) {
      size_t l = heading_level(lines[j]);
      if (l && l <= level) break;
      out += "\n" + lines[j];
    }
    return out;
  }
  return "";
}

// Crash injection for the resume tests: DEVGRAPH_BUNDLE_CRASH_AT=LABEL:N
// makes the driver SIGKILL itself the Nth time it reaches LABEL. The labels
// mark the windows a resume must survive:
//   launch     before a persona is launched
//   saved      a persona's result file is written, nothing has used it yet
//   move       before a cursor move; moved: right after it
//   commit     commit intent recorded and paths staged, before `git commit`
//   committed  after `git commit`, before the move that records it
//   push       push intent recorded, before `git push`
//   pushed     after the push, before the pull request is looked up
//   pr         pull request intent recorded, before `gh pr create`
//   pr_created after `gh pr create`, before it is read back
//   merged     after `gh pr merge --auto`, before PR_CREATED is recorded
//   delivered  after the final move, before the result is written
// Unset in production; it costs one getenv per process.
void crash_point(const char* label) {
  static const std::string spec = [] {
    const char* v = std::getenv("DEVGRAPH_BUNDLE_CRASH_AT");
    return std::string(v ? v : "");
  }();
  if (spec.empty()) return;
  static std::map<std::string, int> hits;
  auto colon = spec.find(':');
  if (spec.substr(0, colon) != label) return;
  int want = colon == std::string::npos ? 1 : std::atoi(spec.c_str() + colon + 1);
  if (++hits[label] == want) ::kill(::getpid(), SIGKILL);
}

}  // namespace

// ---------------------------------------------------------------------------

struct Driver::Impl {
  std::optional<FileLock> bundle_lock;  // held for the driver's lifetime
  int leftovers_ended = 0;              // children of a killed predecessor
  enum class Stage { none, tdd, implement, verify, repair, commit, done, blocked };

  struct TaskRun {
    std::string id;
    Stage stage = Stage::none;
    std::string base_commit;
    int repairs = 0;
    int retries = 0;
    std::map<std::string, Json> verify;  // persona -> result
    std::vector<std::string> findings;
    std::string blocker;
    // Paths this task wrote outside its footprint that another task claims
    // (a FOOTPRINT_VIOLATION): they wait for a human, and no other task's
    // commit may take them meanwhile. Kept on the task cursor
    // ("footprint_outside") so a resumed driver knows them too.
    std::vector<std::string> held;
    // Artifacts its writers reported in this run of the driver (see reported_by()).
    std::set<std::string> reported;
    // This process created the task's cursor, so no earlier driver can
    // have committed it: the commit needs no trailer lookup in git.
    bool started_here = false;
  };

  struct LiveLaunch {
    std::string persona;
    std::optional<std::string> task;
    std::string node;
    long long moves = 0;
    std::string dispatch;
  };

  DriverOptions opt;
  RunStore& store;
  const Graph& graph;
  CommandRunner& runner;
  BundleContext ctx;
  std::unique_ptr<git::Git> git;
  Json state;
  Launcher* launcher = nullptr;

  std::string plan_md, tasks_json, spec_path;
  schedule::Plan plan;
  std::map<std::string, TaskRun> tasks;
  std::map<std::uint64_t, LiveLaunch> live;
  std::vector<std::pair<LaunchEvent, LiveLaunch>> arrived;  // see pump()
  std::vector<int> tails;                                   // schedule::tail_lengths of the plan
  bool last_bundle_result_reused = false;                   // see bundle_persona()
  std::map<std::uint64_t, LaunchEvent> done_bundle;         // completions of bundle-level personas
  std::vector<std::string> concerns;
  int max_parallel = 6;
  size_t max_live = 12;
  std::string bundle_base;  // the commit the branch started from, for trailer lookups

  Impl(DriverOptions o, RunStore& s, const Graph& g, CommandRunner& r)
      : opt(std::move(o)), store(s), graph(g), runner(r) {}

  // -- logging and the store ------------------------------------------------

  void log(const std::string& event, Json fields = Json::object()) {
    Json rec = Json::object();
    rec["ts"] = iso_utc(system_clock().wall());
    rec["bundle"] = opt.bundle;
    rec["event"] = event;
    for (auto& [k, v] : fields.items()) rec[k] = v;
    std::ofstream f(ctx.bundle_dir + "/run_bundle.log", std::ios::app);
    f << dump_py(rec) << "\n";
    if (opt.on_log) opt.on_log(rec);
  }

  Json cursor() const { return state["bundles_runtime"][opt.bundle]; }
  long long bundle_moves() const { return cursor().value("moves", 0LL); }
  Json task_cursor(const std::string& t) const {
    auto key = opt.bundle + "/" + t;
    const Json& tr = state["tasks_runtime"];
    return tr.contains(key) ? tr[key] : Json::object();
  }
  long long task_moves(const std::string& t) const { return task_cursor(t).value("moves", 0LL); }

  Status adopt(Expected<Committed> c) {
    if (!c) return c.error();
    state = c->state;
    if (opt.on_state) opt.on_state(state);
    return {};
  }

  Status move(std::optional<std::string> task, const std::string& node, const std::string& event,
              Json merge = Json(), Json detail = Json(),
              std::optional<std::string> plan_path = {}) {
    MoveRequest req;
    req.bundle = opt.bundle;
    req.task = std::move(task);
    req.node = node;
    req.event = event;
    req.merge = merge.is_null() ? Json::object() : std::move(merge);
    req.detail = detail.is_null() ? Json::object() : std::move(detail);
    req.plan_path = std::move(plan_path);
    crash_point("move");
    auto st = adopt(store.move(req));
    crash_point("moved");
    return st;
  }

  Status event(const std::string& type, Json detail) {
    EventRequest req;
    req.event = type;
    req.detail = std::move(detail);
    req.merge = Json::object();
    return adopt(store.event(req));
  }

  // -- cost ledger: one line per completed persona, so the sum survives a kill
  void ledger_add(const LaunchEvent& ev) {
    Json rec = {{"handle", ev.handle}, {"persona", ev.persona}, {"cost_usd", ev.cost_usd}};
    (void)append_file(ctx.bundle_dir + "/ledger.jsonl",
                      dump_py(rec) + "\n");  // util/unsynced_files.h
  }
  // Rounded to 1/10000 of a dollar, as the reference records it.
  std::pair<double, int> ledger_sum() const {
    auto [c, n] = ledger_raw();
    return {static_cast<double>(std::llround(c * 10000.0)) / 10000.0, n};
  }
  std::pair<double, int> ledger_raw() const {
    auto text = read_file(ctx.bundle_dir + "/ledger.jsonl");
    double cost = 0;
    int runs = 0;
    if (!text) return {0, 0};
    std::istringstream in(*text);
    std::string line;
    while (std::getline(in, line)) {
      auto j = parse_json(line, "ledger");
      if (!j) continue;
      cost += j->value("cost_usd", 0.0);
      ++runs;
    }
    return {cost, runs};
  }

  // -- files ----------------------------------------------------------------

  std::string task_dir(const std::string& t) const { return ctx.bundle_dir + "/tasks/" + t; }
  std::string result_path(const std::string& persona, const std::optional<std::string>& t) const {
    return (t ? task_dir(*t) : ctx.bundle_dir) + "/" + persona + ".result.json";
  }

  void save_result(const LaunchEvent& ev, const LiveLaunch& l) {
    Json rec = Json::object();
    rec["result"] = ev.result;
    rec["handle"] = ev.handle;
    rec["session_id"] = ev.session_id.empty() ? Json() : Json(ev.session_id);
    rec["cost_usd"] = ev.cost_usd;
    rec["duration_ms"] = ev.duration_ms;
    rec["recorded_at"] = iso_utc(system_clock().wall());
    rec["outcome"] = ev.outcome;
    rec["node"] = l.node;
    rec["cursor_moves"] = l.moves;
    auto dir = l.task ? task_dir(*l.task) : ctx.bundle_dir;
    (void)make_directories(dir);
    (void)replace_file(result_path(ev.persona, l.task),
                       dump_py(rec, 2) + "\n");  // util/unsynced_files.h
  }

  // A result saved for this very visit of `node` (same cursor move count).
  std::optional<LaunchEvent> recorded(const std::string& persona,
                                      const std::optional<std::string>& t, const std::string& node,
                                      long long moves) const {
    auto j = load_json_file(result_path(persona, t));
    if (!j || !j->is_object()) return std::nullopt;
    if (str(*j, "node") != node || j->value("cursor_moves", -1LL) != moves) return std::nullopt;
    LaunchEvent ev;
    ev.kind = LaunchEvent::Kind::completed;
    ev.persona = persona;
    ev.task = t;
    ev.handle = str(*j, "handle");
    ev.result = (*j)["result"];
    ev.outcome = str(*j, "outcome", "result");
    ev.session_id = str(*j, "session_id");
    ev.cost_usd = j->value("cost_usd", 0.0);
    ev.duration_ms = j->value("duration_ms", 0LL);
    return ev;
  }

  Json result_detail(const LaunchEvent& ev) const {
    return Json{{"agent_handle", ev.handle},
                {"persona", ev.persona},
                {"status", str(ev.result, "status")},
                {"cost_usd", ev.cost_usd},
                {"duration_ms", ev.duration_ms},
                {"session_id", ev.session_id.empty() ? Json() : Json(ev.session_id)},
                {"summary", clip(str(ev.result, "summary"), 300)}};
  }

  std::string command(const char* key) const { return str(ctx.commands, key); }

  std::vector<std::string> in_flight(const std::string& except = "") const {
    std::vector<std::string> out;
    for (const auto& [id, t] : tasks)
      if (t.stage != Stage::none && t.stage != Stage::done && t.stage != Stage::blocked &&
          id != except)
        out.push_back(id);
    return out;
  }

  const schedule::Task& spec(const std::string& id) const { return plan.tasks[plan.index.at(id)]; }

  std::string concurrent_block(const std::string& id) const {
    std::vector<std::string> lines;
    for (const auto& o : in_flight(id)) lines.push_back(o + ": " + join(spec(o).files, ", "));
    return lines.empty() ? "none" : join(lines, "\n");
  }

  Expected<std::string> render(std::string_view name, const templates::Values& v) {
    return templates::render_skill_template(opt.skill_dir, name, v);
  }

  Expected<std::string> write_brief(const std::string& id) {
    const auto& t = spec(id);
    std::string scratch = task_dir(id) + "/scratch";
    DG_CHECK(make_directories(scratch));
    auto plan_text = read_file(plan_md);
    std::string section = plan_text ? plan_section(*plan_text, id) : "";
    if (section.empty())
      section = "(the plan has no section for this task; use the title and files)";
    templates::Values v{{"task_id", id},
                        {"task_title", t.title},
                        {"bundle_id", opt.bundle},
                        {"worktree", ctx.worktree},
                        {"base_commit", tasks[id].base_commit},
                        {"scratch_dir", scratch},
                        {"test_command", command("test")},
                        {"build_command", command("build")},
                        {"footprint", templates::bullet_list(t.files)},
                        {"depends_on", t.depends_on.empty() ? "none" : join(t.depends_on, ", ")},
                        {"concurrent_tasks", concurrent_block(id)},
                        {"plan_section", section},
                        {"spec_path", spec_path},
                        {"plan_path", plan_md}};
    DG_TRY(auto text, render("task-brief", v));
    std::string path = task_dir(id) + "/brief.md";
    DG_CHECK(replace_file(path, text));  // util/unsynced_files.h
    return path;
  }

  Expected<std::string> writer_dispatch(const std::string& id, const std::string& extra) {
    templates::Values v{{"task_id", id},
                        {"bundle_id", opt.bundle},
                        {"brief_path", task_dir(id) + "/brief.md"},
                        {"worktree", ctx.worktree},
                        {"scratch_dir", task_dir(id) + "/scratch"},
                        {"test_command", command("test")},
                        {"concurrent_tasks", concurrent_block(id)},
                        {"extra", extra}};
    return render("writer-dispatch", v);
  }

  Expected<std::string> verifier_dispatch(const std::string& id) {
    templates::Values v{{"task_id", id},
                        {"bundle_id", opt.bundle},
                        {"brief_path", task_dir(id) + "/brief.md"},
                        {"worktree", ctx.worktree},
                        {"base_commit", tasks[id].base_commit},
                        {"scratch_dir", task_dir(id) + "/scratch"},
                        {"test_command", command("test")}};
    return render("verifier-dispatch", v);
  }

  // -- launching ------------------------------------------------------------

  // Launches `persona`; a request the runtime refuses becomes a BLOCKED
  // completion handed straight to `on_fail`.
  Expected<std::uint64_t> launch(const std::string& persona, std::optional<std::string> task,
                                 const std::string& dispatch, const std::string& node,
                                 long long moves) {
    agents::LaunchRequest req;
    req.persona = persona;
    req.task = task;
    req.dispatch = dispatch;
    req.worktree = ctx.worktree;
    req.run_dir = opt.run_dir;
    req.skill_dir = opt.skill_dir;
    crash_point("launch");
    DG_TRY(auto id, launcher->launch(req));
    live[id] = LiveLaunch{persona, std::move(task), node, moves, dispatch};
    return id;
  }

  using Completed = std::pair<LaunchEvent, LiveLaunch>;

  // The next completion to handle. Everything that has already happened is
  // taken from the runtime first (results saved, events recorded); among
  // the completions waiting, the one whose task has the longest chain of
  // tasks ahead goes first (bundle-level personas before any task), since
  // a commit or launch delayed there delays the whole bundle. Ties go to
  // the earliest arrival.
  std::optional<Completed> pump() {
    while (arrived.empty()) {
      auto ev = launcher->next();
      if (!ev) return std::nullopt;
      if (auto c = take(std::move(*ev))) arrived.push_back(std::move(*c));
    }
    while (auto ev = launcher->poll())
      if (auto c = take(std::move(*ev))) arrived.push_back(std::move(*c));
    size_t best = 0;
    for (size_t i = 1; i < arrived.size(); ++i)
      if (urgency(arrived[i].first) > urgency(arrived[best].first)) best = i;
    Completed c = std::move(arrived[best]);
    arrived.erase(arrived.begin() + static_cast<std::ptrdiff_t>(best));
    return c;
  }

  int urgency(const LaunchEvent& ev) const {
    if (!ev.task) return std::numeric_limits<int>::max();
    auto it = plan.index.find(*ev.task);
    return it == plan.index.end() || it->second >= tails.size() ? 0 : tails[it->second];
  }

  // Launches not yet handled: still with the runtime, or completed and
  // waiting in `arrived`.
  size_t unhandled() const { return launcher->outstanding() + arrived.size(); }

  // Records a launched, back-off or resuming event; a completion has its
  // result saved and is returned.
  std::optional<Completed> take(LaunchEvent ev) {
    Json task = ev.task ? Json(*ev.task) : Json();
    if (ev.kind == LaunchEvent::Kind::launched) {
      Json d = {{"persona", ev.persona},
                {"bundle", opt.bundle},
                {"agent_handle", ev.handle},
                {"headless", true}};
      if (ev.task) d["task"] = *ev.task;
      (void)event("PERSONA_DISPATCHED", d);
      return std::nullopt;
    }
    // A clean exit without a result is recorded at the resume, before it,
    // as the reference records it, whether or not the resume then answers;
    // without a resume, at the completion.
    auto record_malformed = [&] {
      (void)event("MALFORMED_RESULT", Json{{"persona", ev.persona},
                                           {"bundle", opt.bundle},
                                           {"task", task},
                                           {"agent_handle", ev.handle},
                                           {"reason", clip(ev.detail, 300)}});
    };
    if (ev.kind == LaunchEvent::Kind::resuming) {
      record_malformed();
      return std::nullopt;
    }
    if (ev.kind == LaunchEvent::Kind::backoff) {
      Json d = {{"topic", "cli_error_backoff"},
                {"persona", ev.persona},
                {"bundle", opt.bundle},
                {"task", task},
                {"agent_handle", ev.handle},
                {"attempt", ev.attempt},
                {"delay_s", static_cast<double>(ev.delay_ms) / 1000.0},
                {"error", clip(ev.detail, 300)}};
      (void)event("NOTE", d);
      return std::nullopt;
    }
    auto it = live.find(ev.id);
    LiveLaunch l = it == live.end() ? LiveLaunch{ev.persona, ev.task, "", 0, ""} : it->second;
    if (it != live.end()) live.erase(it);
    if (ev.outcome == "malformed_result" && !ev.resumed) record_malformed();
    ledger_add(ev);
    save_result(ev, l);
    crash_point("saved");
    return std::make_pair(std::move(ev), std::move(l));
  }

  // A bundle-level persona at `node`: reuse its result for this visit, or
  // launch it and wait.
  Expected<LaunchEvent> bundle_persona(const std::string& persona, const std::string& node,
                                       const std::string& dispatch) {
    last_bundle_result_reused = false;
    if (auto r = recorded(persona, std::nullopt, node, bundle_moves())) {
      log("reused_result", Json{{"persona", persona}, {"node", node}});
      last_bundle_result_reused = true;
      return *r;
    }
    auto id = launch(persona, std::nullopt, dispatch, node, bundle_moves());
    if (!id) return id.error();
    while (true) {
      auto c = pump();
      if (!c) return fail(persona + " never completed");
      if (c->first.id == *id) return c->first;
      done_bundle[c->first.id] = c->first;
    }
  }

  // -- git effects ----------------------------------------------------------

  // The commit that already carries trailer `key: value` on this branch.
  std::optional<std::string> committed_with(const std::string& key, const std::string& value) {
    auto hits = git->find_trailer(key, bundle_base);
    if (!hits) return std::nullopt;
    for (const auto& h : *hits)
      if (h.value == value) return h.commit;
    return std::nullopt;
  }

  Expected<std::string> commit_paths(const std::vector<std::string>& pathspec,
                                     const std::string& subject, const std::string& body,
                                     const std::string& trailer_key,
                                     const std::string& trailer_value) {
    // Nothing of ours changed: no `git add` at all (an empty pathspec is an
    // error to git) and, above all, no pathless commit of the whole index.
    if (pathspec.empty()) return std::string();
    DG_CHECK(git->add(pathspec));
    // Only our own paths go into the commit (`git commit -- <pathspec>`): a
    // persona may have staged another task's files, which must stay out.
    git::CommitRequest req{clip(subject, 72), body, {{trailer_key, trailer_value}}};
    crash_point("commit");
    auto c = git->commit(req, pathspec);
    crash_point("committed");
    if (c) return c;
    // The paths were listed as changed, so a refused commit is rare: asked
    // only then, a pathspec with nothing staged (a change undone before the
    // add) is nothing to commit rather than an error.
    DG_TRY(auto staged, git->staged(pathspec));
    if (staged.empty()) return std::string();
    return c;
  }

  // Commits the dirty files a persona reports under `artifacts`. Called
  // right after bundle_persona(): only a result an earlier driver saved can
  // have been committed already, so only then is git asked for the trailer.
  Expected<std::string> commit_reported(const Json& result, const std::string& subject,
                                        const std::string& step) {
    if (last_bundle_result_reused)
      if (auto c = committed_with(kBundleTrailer, opt.bundle + "/" + step)) return *c;
    DG_TRY(auto st, git->status());
    auto reported = str_list(result, "artifacts");
    std::vector<std::string> chosen, dirty;
    for (const auto& e : st) {
      dirty.push_back(e.path);
      for (const auto& r : reported) {
        bool suffix =
            r.size() <= e.path.size() && e.path.compare(e.path.size() - r.size(), r.size(), r) == 0;
        if (e.path == r || suffix || schedule::glob_matches(r, e.path)) {
          chosen.push_back(":(literal)" + e.path);
          break;
        }
      }
    }
    if (chosen.empty()) {
      if (!dirty.empty() && reported.empty())
        concerns.push_back("persona changed files but reported none: " +
                           clip(join(dirty, ", "), 300));
      return std::string();
    }
    (void)event("NOTE", Json{{"topic", "commit_intent"}, {"bundle", opt.bundle}, {"step", step}});
    return commit_paths(chosen, subject, "", kBundleTrailer, opt.bundle + "/" + step);
  }

  // -- plan -------------------------------------------------------------------

  Status run_plan() {
    templates::Values v{{"bundle_id", opt.bundle},
                        {"spec_path", spec_path},
                        {"worktree", ctx.worktree},
                        {"branch", ctx.branch},
                        {"default_branch", ctx.default_branch},
                        {"plan_path", plan_md},
                        {"tasks_json_path", tasks_json}};
    DG_TRY(auto dispatch, render("planner-dispatch", v));
    DG_TRY(auto ev, bundle_persona("planner", "plan_bundle", dispatch));
    std::string status = str(ev.result, "status");
    if (status != "DONE" || !path_exists(tasks_json))
      return fail("planner returned " + status + ": " + str(ev.result, "summary"));
    DG_TRY(auto doc, load_json_file(tasks_json));
    auto problems = schedule::check_plan(doc);
    if (!problems.empty())
      return fail("tasks.json failed the schedule check: " + join(problems, "; "));
    DG_TRY(auto p, schedule::plan_from_json(doc));
    auto cp = schedule::critical_path(p, std::nullopt);
    // The plan is part of the branch: commit it (once) so the tree is clean
    // for the task commits' footprint checks and for bundle_verify.
    if (!last_bundle_result_reused || !committed_with(kBundleTrailer, opt.bundle + "/plan")) {
      std::vector<std::string> paths;
      for (const auto& f : {plan_md, tasks_json})
        if (path_exists(f)) paths.push_back(":(literal)" + f.substr(ctx.worktree.size() + 1));
      auto c = commit_paths(paths, "docs(" + opt.bundle + "): plan", "", kBundleTrailer,
                            opt.bundle + "/plan");
      if (!c) return c.error();
    }
    Json detail = result_detail(ev);
    detail["critical_path"] = cp.path;
    detail["task_count"] = cp.task_count;
    return move(std::nullopt, "task_scheduler", "PLAN_DONE", Json(), detail, tasks_json);
  }

  Status load_plan() {
    DG_TRY(auto p, schedule::load_plan(tasks_json));
    plan = std::move(p);
    tails = schedule::tail_lengths(plan);
    for (const auto& t : plan.tasks) tasks[t.id].id = t.id;
    return {};
  }

  // -- task lane --------------------------------------------------------------

  std::string writer_persona(const std::string& id) const {
    return is_infrastructure(spec(id)) ? "iac-developer" : "developer";
  }

  void block_task(TaskRun& run, const std::string& why, const Json& detail) {
    run.stage = Stage::blocked;
    run.blocker = why;
    Json d = detail.is_object() ? detail : Json::object();
    d["blocker"] = why;
    (void)move(run.id, "awaiting_human", "AWAITING_HUMAN", Json(), d);
  }

  void launch_task_persona(TaskRun& run, const std::string& persona, const std::string& node,
                           const std::string& extra) {
    bool verifier = persona == "tester" || persona == "adversarial-tester";
    auto dispatch = verifier ? verifier_dispatch(run.id) : writer_dispatch(run.id, extra);
    if (!dispatch) return block_task(run, dispatch.error().message, Json());
    auto id = launch(persona, run.id, *dispatch, node, task_moves(run.id));
    if (!id) block_task(run, persona + ": " + id.error().message, Json());
  }

  // Runs the persona(s) of the task's current node: a result saved for this
  // visit is used again; only missing ones are launched.
  void enter_node(TaskRun& run, const std::string& node, const std::string& extra = "") {
    long long moves = task_moves(run.id);
    std::vector<std::string> personas;
    if (node == "write_tdd") personas = {"tdd-writer"};
    if (node == "implement" || node == "repair_task") personas = {writer_persona(run.id)};
    if (node == "verify") personas = {"tester", "adversarial-tester"};
    std::vector<LaunchEvent> reuse;
    for (const auto& p : personas) {
      if (auto r = recorded(p, run.id, node, moves)) {
        reuse.push_back(*r);
      } else {
        launch_task_persona(run, p, node, extra);
      }
    }
    for (auto& r : reuse) {
      log("reused_result", Json{{"persona", r.persona}, {"task", run.id}, {"node", node}});
      on_task_result(r);
    }
  }

  void start_task(TaskRun& run) {
    run.started_here = task_cursor(run.id).empty();
    auto head = git->rev_parse("HEAD");
    run.base_commit = head ? *head : "";
    if (!move(run.id, "write_tdd", "TASK_STARTED", Json{{"base_commit", run.base_commit}}).ok())
      return;
    run.stage = Stage::tdd;
    if (auto b = write_brief(run.id); !b) return block_task(run, b.error().message, Json());
    enter_node(run, "write_tdd");
  }

  void on_task_result(const LaunchEvent& ev) {
    auto& run = tasks[*ev.task];
    if (run.stage == Stage::done || run.stage == Stage::blocked) return;
    Json detail = result_detail(ev);
    std::string status = str(ev.result, "status");
    auto blockers = str_list(ev.result, "blockers");
    if (status == "BLOCKED" || status == "NEEDS_CONTEXT") {
      // A provider limit reaches the driver only when its reset lies beyond
      // the runtime's longest pause (shorter ones are waited out there), so
      // a relaunch would meet the same limit at once: stop and ask a human.
      if (std::count(blockers.begin(), blockers.end(), "provider_limit"))
        return block_task(run, ev.persona + ": " + str(ev.result, "summary", status), detail);
      // A capacity blocker (the persona ran out of context) is re-dispatched
      // without spending the transient-retry budget. A timeout spends it
      // (the reference treats it as free): a persona that hangs on every
      // attempt would otherwise be relaunched forever.
      bool transient = std::count(blockers.begin(), blockers.end(), "capacity") != 0;
      if (transient || run.retries < kMaxTransientRetries) {
        if (!transient) ++run.retries;
        Json d = detail;
        d["task"] = run.id;
        d["bundle"] = opt.bundle;
        d["retry"] = run.retries;
        (void)event(status, d);
        auto missing = str_list(ev.result, "missing_context");
        if (missing.empty()) missing = blockers;
        launch_task_persona(
            run, ev.persona, node_of(run),
            "Missing context named by the previous attempt: " + join(missing, "; "));
        return;
      }
      return block_task(run, ev.persona + ": " + str(ev.result, "summary", status), detail);
    }
    if (ev.persona == "tdd-writer" || ev.persona == "developer" || ev.persona == "iac-developer")
      for (const auto& a : str_list(ev.result, "artifacts")) run.reported.insert(a);
    if (ev.persona == "tdd-writer") {
      run.stage = Stage::implement;
      if (!move(run.id, "implement", "TDD_DONE", Json(), detail).ok()) return;
      return enter_node(run, "implement");
    }
    if (ev.persona == "developer" || ev.persona == "iac-developer") {
      auto cs = str_list(ev.result, "concerns");
      bool has_findings = ev.result.contains("findings") && ev.result["findings"].is_array() &&
                          !ev.result["findings"].empty();
      if (status == "DONE_WITH_CONCERNS" && (!cs.empty() || has_findings) &&
          run.repairs < kMaxTaskRepairs && run.stage != Stage::repair) {
        return start_repair(run, cs, ev, detail,
                            "Repair these concerns from your own implementation: ");
      }
      if (status == "DONE_WITH_CONCERNS")
        for (const auto& c : cs) concerns.push_back(run.id + ": " + c);
      std::string e = run.stage == Stage::repair ? "TASK_REPAIR_DONE" : "IMPLEMENT_DONE";
      run.stage = Stage::verify;
      run.verify.clear();
      if (!move(run.id, "verify", e, Json(), detail).ok()) return;
      return enter_node(run, "verify");
    }
    if (ev.persona == "tester" || ev.persona == "adversarial-tester") {
      run.verify[ev.persona] = ev.result;
      if (run.verify.size() < 2) return;
      std::vector<std::string> cs;
      Json findings = Json::array();
      for (const auto& [p, r] : run.verify) {
        if (str(r, "status") == "DONE_WITH_CONCERNS")
          for (const auto& c : str_list(r, "concerns")) cs.push_back(c);
        if (r.contains("findings") && r["findings"].is_array())
          for (const auto& f : r["findings"]) findings.push_back(f);
      }
      if ((!cs.empty() || !findings.empty()) && run.repairs < kMaxTaskRepairs) {
        LaunchEvent merged = ev;
        merged.result = Json{{"findings", findings}};
        return start_repair(run, cs, merged, detail, "Repair these verification findings: ");
      }
      for (const auto& c : cs) concerns.push_back(run.id + ": " + c);
      Json statuses = Json::object();
      for (const auto& [p, r] : run.verify) statuses[p] = str(r, "status");
      (void)event("VERIFY_DONE", Json{{"bundle", opt.bundle},
                                      {"task", run.id},
                                      {"agent_handle", ev.handle},
                                      {"statuses", statuses}});
      run.stage = Stage::commit;
      return commit_task(run);
    }
  }

  std::string node_of(const TaskRun& run) const {
    switch (run.stage) {
      case Stage::tdd:
        return "write_tdd";
      case Stage::implement:
        return "implement";
      case Stage::verify:
        return "verify";
      case Stage::repair:
        return "repair_task";
      default:
        return "commit_task";
    }
  }

  void start_repair(TaskRun& run, const std::vector<std::string>& cs, const LaunchEvent& ev,
                    Json detail, const std::string& lead) {
    ++run.repairs;
    run.findings = cs;
    if (ev.result.contains("findings") && ev.result["findings"].is_array())
      for (const auto& f : ev.result["findings"]) run.findings.push_back(dump_py(f));
    run.stage = Stage::repair;
    detail["repair"] = run.repairs;
    detail["findings"] = std::vector<std::string>(
        run.findings.begin(), run.findings.begin() + std::min<size_t>(10, run.findings.size()));
    (void)write_file_atomic(task_dir(run.id) + "/findings.md", join(run.findings, "\n") + "\n");
    if (!move(run.id, "repair_task", "CONCERN_TRIAGED", Json{{"repairs", run.repairs}}, detail)
             .ok())
      return;
    enter_node(run, "repair_task",
               lead + templates::fence_data("findings", join(run.findings, "\n")));
  }

  // What the task's writers reported changing (`artifacts` of tdd-writer,
  // developer, iac-developer), this run's and the saved results'.
  std::set<std::string> reported_by(const std::string& id) const {
    std::set<std::string> out = tasks.at(id).reported;
    for (const char* p : {"tdd-writer", "developer", "iac-developer"})
      if (auto j = load_json_file(result_path(p, id)); j && j->is_object() && j->contains("result"))
        for (const auto& a : str_list((*j)["result"], "artifacts")) out.insert(a);
    return out;
  }

  static bool names_path(const std::string& artifact, const std::string& path) {
    return artifact == path ||
           (artifact.size() > path.size() &&
            artifact.compare(artifact.size() - path.size(), path.size(), path) == 0 &&
            artifact[artifact.size() - path.size() - 1] == '/');
  }

  // The footprint check, narrowed to the changes that can be this task's:
  // - paths another task is held on: a task stopped by a FOOTPRINT_VIOLATION
  //   keeps its stray writes in the worktree for a human; they are never
  //   committed by another task, nor its violation;
  // - while other tasks are in flight (or waiting for a human), a path
  //   outside every footprint may be any of theirs: it counts as this task's
  //   (a violation, or a footprint extension) only when this task's writers
  //   reported it among their artifacts. Otherwise it is left for the task
  //   that wrote it; git status order says nothing about who did.
  Expected<schedule::FootprintReport> footprint_check(const std::string& id,
                                                      const std::vector<std::string>& others) {
    DG_TRY(auto r, schedule::footprint_check(plan, id, others, ctx.worktree, runner));
    std::set<std::string> held;
    for (const auto& [oid, o] : tasks)
      if (oid != id) held.insert(o.held.begin(), o.held.end());
    std::set<std::string> reported;
    if (!others.empty()) reported = reported_by(id);
    auto mine = [&](const std::string& path) {
      return std::any_of(reported.begin(), reported.end(),
                         [&](const std::string& a) { return names_path(a, path); });
    };
    std::vector<std::string> skipped;
    auto keep_if = [&](std::vector<std::string>& v, size_t skip, auto pred) {
      std::vector<std::string> kept;
      for (auto& p : v) {
        std::string path = p.substr(std::min(skip, p.size()));
        if (pred(path))
          kept.push_back(std::move(p));
        else if (skip == 0)
          skipped.push_back(path);
      }
      v = std::move(kept);
    };
    auto not_held = [&](const std::string& p) { return !held.count(p); };
    keep_if(r.own, 0, not_held);
    keep_if(r.add_pathspec, std::string_view(":(literal)").size(), not_held);
    keep_if(r.outside, 0,
            [&](const std::string& p) { return not_held(p) && (others.empty() || mine(p)); });
    r.violation = !r.outside.empty();
    if (!skipped.empty()) log("paths_left_to_others", Json{{"task", id}, {"paths", skipped}});
    return r;
  }

  void commit_task(TaskRun& run) {
    std::string key = opt.bundle + "/" + run.id;
    if (auto existing = run.started_here ? std::nullopt : committed_with(kTaskTrailer, key)) {
      log("commit_reconciled", Json{{"task", run.id}, {"commit", *existing}});
      run.stage = Stage::done;
      (void)move(run.id, "commit_task", "TASK_COMMITTED", Json{{"commit", *existing}},
                 Json{{"reconciled", true}});
      return;
    }
    // A task waiting for a human still has its uncommitted files in the
    // worktree and still claims its footprint: it counts as in flight here,
    // or its files would look like this task's writes outside its footprint
    // (and be taken into this commit by a footprint extension).
    auto others = in_flight(run.id);
    for (const auto& [oid, o] : tasks)
      if (o.stage == Stage::blocked && oid != run.id) others.push_back(oid);
    auto check = footprint_check(run.id, others);
    if (!check) return block_task(run, check.error().message, Json());
    if (check->violation) {
      std::vector<std::string> conflicts;
      for (const auto& o : others)
        if (!schedule::footprint_conflicts(check->outside, spec(o).files).empty())
          conflicts.push_back(o);
      if (!conflicts.empty()) {
        std::string why = "footprint violation: " + join(check->outside, ", ") +
                          " also conflicts with " + join(conflicts, ", ");
        run.held = check->outside;
        (void)move(run.id, "blocker_recovery", "FOOTPRINT_VIOLATION",
                   Json{{"footprint_outside", check->outside}},
                   Json{{"outside", check->outside}, {"conflicts", conflicts}});
        return block_task(run, why, Json());
      }
      auto& t = plan.tasks[plan.index.at(run.id)];
      for (const auto& p : check->outside) t.files.push_back(p);
      t.footprint = schedule::Footprint(t.files);
      (void)event(
          "RECOVERED",
          Json{{"bundle", opt.bundle}, {"task", run.id}, {"footprint_extended", check->outside}});
      check = footprint_check(run.id, others);
      if (!check) return block_task(run, check.error().message, Json());
    }
    std::vector<std::string> files = check->own;
    const std::vector<std::string>& pathspec = check->add_pathspec;
    std::string commit;
    if (pathspec.empty()) {
      log("nothing_to_commit", Json{{"task", run.id}});
    } else {
      (void)event("NOTE",
                  Json{{"topic", "commit_intent"}, {"bundle", opt.bundle}, {"task", run.id}});
      const auto& t = spec(run.id);
      bool docs = std::all_of(t.files.begin(), t.files.end(), [](const std::string& g) {
        return g.size() > 3 && g.compare(g.size() - 3, 3, ".md") == 0;
      });
      std::string subject = std::string(docs ? "docs" : "feat") + "(" + opt.bundle +
                            "): " + (t.title.empty() ? run.id : t.title);
      std::string body = "Task " + run.id + " of bundle " + opt.bundle + "; footprint " +
                         join(t.files, ", ") + ".";
      auto c = commit_paths(pathspec, subject, body, kTaskTrailer, key);
      if (!c) return block_task(run, c.error().message, Json());
      commit = *c;
    }
    run.stage = Stage::done;
    if (files.size() > 50) files.resize(50);
    (void)move(run.id, "commit_task", "TASK_COMMITTED", Json{{"commit", commit}},
               Json{{"files", files}});
  }

  // Adopts recorded task cursors (resume). Every earlier worker is gone.
  void adopt_cursors() {
    for (auto& [id, run] : tasks) {
      Json c = task_cursor(id);
      if (c.empty()) continue;
      run.base_commit = str(c, "base_commit");
      run.repairs = static_cast<int>(c.value("repairs", 0LL));
      std::string status = str(c, "status");
      std::string node = str(c, "node");
      if (status == "complete") {
        run.stage = Stage::done;
      } else if (status == "waiting_human" || node == "blocker_recovery") {
        run.stage = Stage::blocked;
        run.blocker = "awaiting human input from a previous session";
        run.held = str_list(c, "footprint_outside");
      } else {
        run.stage = node == "write_tdd"     ? Stage::tdd
                    : node == "implement"   ? Stage::implement
                    : node == "verify"      ? Stage::verify
                    : node == "repair_task" ? Stage::repair
                                            : Stage::commit;
      }
    }
    for (auto& [id, run] : tasks) {
      if (run.stage == Stage::none || run.stage == Stage::done || run.stage == Stage::blocked)
        continue;
      if (committed_with(kTaskTrailer, opt.bundle + "/" + id)) {
        commit_task(run);  // reconciles: records the commit that exists
        continue;
      }
      if (run.stage == Stage::commit) {
        commit_task(run);
        continue;
      }
      (void)write_brief(id);
      std::string extra;
      if (run.stage == Stage::repair) {
        auto f = read_file(task_dir(id) + "/findings.md");
        extra = "Repair the findings recorded for this task: " +
                templates::fence_data("findings", f ? *f : "");
      }
      enter_node(run, node_of(run), extra);
    }
  }

  // The scheduler's view of the task cursors. A task waiting for a human
  // (awaiting_human, or stopped at blocker_recovery) is neither complete nor
  // active in state.json, so the scheduler would offer it as runnable again
  // and give it a slot. It is filtered out here: it counts as in flight, so
  // its footprint stays claimed (its uncommitted files are still in the
  // worktree), and the ceiling grows by the same count, so it costs no slot.
  Expected<schedule::RunnableSet> runnable() const {
    auto cursors = schedule::cursors_from_state(state, opt.bundle);
    int waiting = 0;
    for (const auto& [id, t] : tasks)
      if (t.stage == Stage::blocked && cursors.in_flight.insert(id).second) ++waiting;
    return schedule::compute_runnable(plan, cursors, max_parallel + waiting);
  }

  // Drives every task to its commit; returns a blocker text, or "" when
  // every task is committed.
  std::string run_tasks() {
    adopt_cursors();
    while (true) {
      auto rs = runnable();
      if (!rs) return rs.error().message;
      if (rs->route == schedule::kRouteComplete && unhandled() == 0) return "";
      // Longest chain ahead first (stable: plan order among equals).
      std::stable_sort(rs->runnable.begin(), rs->runnable.end(),
                       [&](const std::string& a, const std::string& b) {
                         return tails[plan.index.at(a)] > tails[plan.index.at(b)];
                       });
      for (const auto& id : rs->runnable) {
        auto& run = tasks[id];
        if (run.stage != Stage::none) continue;
        if (unhandled() + 1 > max_live) break;
        start_task(run);
      }
      if (unhandled() == 0) {
        std::vector<std::string> blocked;
        for (const auto& [id, t] : tasks)
          if (t.stage == Stage::blocked) blocked.push_back(id + ": " + t.blocker);
        if (!blocked.empty()) return join(blocked, "; ");
        auto again = runnable();
        if (again && again->route == schedule::kRouteComplete) return "";
        if (again && again->route == schedule::kRouteDeadlock) return "plan deadlock";
        bool startable = false;
        if (again)
          for (const auto& id : again->runnable) startable |= tasks[id].stage == Stage::none;
        if (startable) continue;
        return "scheduler waits but nothing is in flight (state and worktree disagree)";
      }
      auto c = pump();
      if (!c) continue;
      if (!c->first.task) {
        done_bundle[c->first.id] = c->first;
        continue;
      }
      on_task_result(c->first);
    }
  }

  // -- bundle gates -------------------------------------------------------------

  std::pair<bool, std::string> run_recorded(const char* key) {
    std::string cmd = command(key);
    if (cmd.empty()) return {true, std::string("no ") + key + " command recorded"};
    auto argv = split_command(cmd);
    if (!argv) return {false, std::string(key) + " " + argv.error().message};
    CommandSpec spec;
    spec.argv = *argv;
    spec.cwd = ctx.worktree;
    spec.timeout = std::chrono::minutes(graph.headless.persona_timeout_minutes);
    spec.max_output_bytes = 256 * 1024;
    spec.on_wait = opt.on_wait;
    // A project's test suite can take minutes: the records let the live
    // view (and anyone reading the log) see what runs and how long it took.
    log("command_started", Json{{"command", key}, {"argv", cmd}});
    const auto began = std::chrono::steady_clock::now();
    auto r = runner.run(spec);
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - began).count();
    Json done = {{"command", key},
                 {"exit", r ? Json(r->exit_code) : Json(nullptr)},
                 {"timed_out", r ? r->timed_out : false},
                 {"seconds", std::round(seconds * 10) / 10}};
    if (!r) done["error"] = r.error().message;
    log("command_finished", std::move(done));
    if (!r) return {false, r.error().message};
    return {r->ok(), tail(r->out + r->err, 4000)};
  }

  std::pair<bool, std::string> bundle_verify() {
    auto st = git->status();
    if (!st) return {false, st.error().message};
    if (!st->empty()) {
      std::vector<std::string> paths;
      for (const auto& e : *st) paths.push_back(e.path);
      return {false, "worktree not clean before bundle_verify:\n" + join(paths, "\n")};
    }
    auto [ok, out] = run_recorded("test");
    if (!ok) return {false, "test command failed:\n" + out};
    auto [bok, bout] = run_recorded("build");
    if (!bok) return {false, "build command failed:\n" + bout};
    return {true, "test and build passed"};
  }

  std::string diff_path() {
    std::string p = ctx.bundle_dir + "/whole-branch.diff";
    auto d = git->diff(ctx.base + "...HEAD");
    (void)write_file_atomic(p, d ? *d : "");
    return p;
  }

  static std::set<std::string> fingerprints(const Json& result) {
    std::set<std::string> out;
    if (result.contains("findings") && result["findings"].is_array())
      for (const auto& f : result["findings"]) {
        Json key = Json::object();
        for (const char* k : {"file", "path", "title", "summary", "id"})
          if (f.is_object() && f.contains(k)) key[k] = f[k];
        out.insert(dump_py(key.empty() ? f : key));
      }
    return out;
  }

  Expected<Json> bundle_gates() {
    int repairs = static_cast<int>(cursor().value("repairs", 0LL));
    std::string node = str(cursor(), "node");
    std::string evidence;
    while (true) {
      if (node == "bundle_verify" || node == "task_scheduler") {
        auto [ok, ev] = bundle_verify();
        evidence = ev;
        if (!ok) {
          if (repairs >= kMaxBundleRepairs)
            return fail("bundle_verify still failing after repairs: " + clip(ev, 500));
          ++repairs;
          DG_CHECK(write_file_atomic(ctx.bundle_dir + "/repair-findings.md", ev + "\n"));
          DG_CHECK(move(std::nullopt, "repair_bundle", "BUNDLE_VERIFY_FAILED",
                        Json{{"repairs", repairs}},
                        Json{{"repair", repairs}, {"evidence", clip(ev, 1000)}}));
          node = "repair_bundle";
          continue;
        }
        DG_CHECK(move(std::nullopt, "final_review", "BUNDLE_VERIFY_PASSED", Json(),
                      Json{{"evidence", clip(ev, 300)}}));
        node = "final_review";
      }
      if (node == "final_review") {
        templates::Values v{{"bundle_id", opt.bundle},
                            {"spec_path", spec_path},
                            {"plan_path", plan_md},
                            {"worktree", ctx.worktree},
                            {"diff_path", diff_path()},
                            {"base", ctx.base},
                            {"task_results_dir", ctx.bundle_dir + "/tasks"}};
        DG_TRY(auto dispatch, render("final-review-dispatch", v));
        DG_TRY(auto ev, bundle_persona("code-reviewer", "final_review", dispatch));
        std::string status = str(ev.result, "status");
        bool has_findings = ev.result.contains("findings") && ev.result["findings"].is_array() &&
                            !ev.result["findings"].empty();
        if (status == "BLOCKED" || status == "NEEDS_CONTEXT")
          return fail("code-reviewer " + status + ": " + str(ev.result, "summary"));
        if (status == "DONE" && !has_findings) {
          DG_CHECK(move(std::nullopt, "documentation_review", "REVIEW_APPROVED", Json(),
                        result_detail(ev)));
          node = "documentation_review";
        } else {
          // A finding the previous review also reported survived a repair
          // cycle: another cycle is unlikely to fix it, so escalate now.
          auto now_fp = fingerprints(ev.result);
          auto prev = load_json_file(ctx.bundle_dir + "/review-findings.json");
          std::vector<std::string> survived;
          if (prev && prev->is_array())
            for (const auto& p : *prev)
              if (p.is_string() && now_fp.count(p.get<std::string>()))
                survived.push_back(p.get<std::string>());
          (void)write_file_atomic(
              ctx.bundle_dir + "/review-findings.json",
              dump_py(Json(std::vector<std::string>(now_fp.begin(), now_fp.end()))));
          if (!survived.empty()) {
            (void)move(std::nullopt, "awaiting_human", "AWAITING_HUMAN", Json(),
                       Json{{"blocker", "review findings survived a repair cycle"},
                            {"findings", survived}});
            return fail("review findings survived a repair cycle: " +
                        clip(join(survived, "; "), 300));
          }
          if (repairs >= kMaxBundleRepairs)
            return fail("review findings survive after repairs: " +
                        clip(str(ev.result, "summary"), 300));
          ++repairs;
          Json f = {{"findings", ev.result.value("findings", Json::array())},
                    {"concerns", ev.result.value("concerns", Json::array())}};
          DG_CHECK(write_file_atomic(ctx.bundle_dir + "/repair-findings.md", dump_py(f, 2) + "\n"));
          Json d = result_detail(ev);
          d["repair"] = repairs;
          DG_CHECK(move(std::nullopt, "repair_bundle", "REVIEW_FINDINGS",
                        Json{{"repairs", repairs}}, d));
          node = "repair_bundle";
          continue;
        }
      }
      if (node == "repair_bundle") {
        auto findings = read_file(ctx.bundle_dir + "/repair-findings.md");
        templates::Values v{
            {"bundle_id", opt.bundle},
            {"worktree", ctx.worktree},
            {"spec_path", spec_path},
            {"plan_path", plan_md},
            {"test_command", command("test")},
            {"findings_path", ctx.bundle_dir + "/repair-findings.md"},
            {"findings", templates::fence_data("findings", findings ? *findings : "")}};
        DG_TRY(auto dispatch, render("bundle-repair-dispatch", v));
        DG_TRY(auto ev, bundle_persona("developer", "repair_bundle", dispatch));
        std::string status = str(ev.result, "status");
        if (status == "BLOCKED" || status == "NEEDS_CONTEXT")
          return fail("bundle repair " + status + ": " + str(ev.result, "summary"));
        DG_TRY(auto c,
               commit_reported(ev.result,
                               "fix(" + opt.bundle + "): repair review and verification findings",
                               "repair-" + std::to_string(repairs)));
        Json d = result_detail(ev);
        d["commits"] = c.empty() ? Json::array() : Json::array({c});
        DG_CHECK(move(std::nullopt, "bundle_verify", "BUNDLE_REPAIR_COMMITTED", Json(), d));
        node = "bundle_verify";
        continue;
      }
      if (node == "documentation_review") {
        templates::Values v{{"bundle_id", opt.bundle},  {"spec_path", spec_path},
                            {"plan_path", plan_md},     {"worktree", ctx.worktree},
                            {"diff_path", diff_path()}, {"base", ctx.base}};
        DG_TRY(auto dispatch, render("documentation-reviewer-dispatch", v));
        DG_TRY(auto ev, bundle_persona("documentation-reviewer", "documentation_review", dispatch));
        std::string status = str(ev.result, "status");
        if (status == "BLOCKED" || status == "NEEDS_CONTEXT")
          return fail("documentation-reviewer " + status + ": " + str(ev.result, "summary"));
        if (status == "DONE_WITH_CONCERNS" && repairs < kMaxBundleRepairs) {
          ++repairs;
          Json f = {{"concerns", ev.result.value("concerns", Json::array())},
                    {"findings", ev.result.value("findings", Json::array())}};
          DG_CHECK(write_file_atomic(ctx.bundle_dir + "/repair-findings.md", dump_py(f, 2) + "\n"));
          Json d = result_detail(ev);
          d["repair"] = repairs;
          DG_CHECK(move(std::nullopt, "repair_bundle", "DOC_REVIEW_FINDINGS",
                        Json{{"repairs", repairs}}, d));
          node = "repair_bundle";
          continue;
        }
        DG_TRY(auto c,
               commit_reported(ev.result, "docs: align documentation with the delivered change",
                               "docs"));
        (void)c;
        return Json{{"status", "DONE"}, {"evidence", evidence}};
      }
      if (node != "bundle_verify" && node != "final_review" && node != "repair_bundle" &&
          node != "documentation_review")
        return fail("bundle cursor at " + node + " is not a bundle gate");
    }
  }

  // -- delivery -------------------------------------------------------------------

  Expected<CommandResult> gh(std::vector<std::string> args) {
    CommandSpec spec;
    spec.argv = {"gh"};
    spec.argv.insert(spec.argv.end(), args.begin(), args.end());
    spec.cwd = ctx.worktree;
    spec.timeout = std::chrono::minutes(5);
    return runner.run(spec);
  }

  Expected<std::optional<Json>> existing_pr() {
    DG_TRY(auto r, gh({"pr", "view", ctx.branch, "--json", "number,url,autoMergeRequest"}));
    if (!r.ok()) return std::optional<Json>();
    auto j = parse_json(r.out, "gh pr view");
    if (!j || !j->is_object() || !j->contains("number")) return std::optional<Json>();
    return std::optional<Json>(*j);
  }

  std::vector<std::string> bundle_issues() const {
    std::vector<std::string> out;
    for (const auto& b : state.value("bundles", Json::array()))
      if (b.is_object() && str(b, "id") == opt.bundle && b.contains("issues"))
        for (const auto& i : b["issues"]) {
          std::string s = i.is_string() ? i.get<std::string>() : i.is_number() ? dump_py(i) : "";
          if (!s.empty() && s[0] == '#') s.erase(0, 1);
          if (!s.empty() && std::all_of(s.begin(), s.end(), ::isdigit)) out.push_back(s);
        }
    return out;
  }

  std::string bundle_title() const {
    for (const auto& b : state.value("bundles", Json::array()))
      if (b.is_object() && str(b, "id") == opt.bundle) return str(b, "title", opt.bundle);
    return opt.bundle;
  }

  Expected<Json> deliver() {
    DG_TRY(auto head, git->rev_parse("HEAD"));
    auto [cost, runs] = ledger_sum();
    Json pr;
    if (ctx.delivery == "github") {
      DG_TRY(auto remote, git->remote_head("origin", ctx.branch));
      if (!remote || *remote != head) {
        DG_CHECK(
            event("NOTE", Json{{"topic", "push_intent"}, {"bundle", opt.bundle}, {"head", head}}));
        crash_point("push");
        DG_CHECK(git->push("origin", ctx.branch));
        crash_point("pushed");
      }
      DG_TRY(auto found, existing_pr());
      if (!found) {
        std::vector<std::string> lines = {"## Bundle " + opt.bundle, "", bundle_title(), "",
                                          "### Delivered"};
        for (const auto& t : plan.tasks)
          lines.push_back("- " + (t.title.empty() ? t.id : t.title) + " (" + t.id + ")");
        lines.insert(lines.end(), {"", "### Verification", "- test: `" + command("test") + "`",
                                   "- build: `" + command("build") + "`",
                                   "- per-task failing test first, tester and adversarial tester; "
                                   "whole-branch code review; documentation review",
                                   ""});
        for (const auto& i : bundle_issues()) lines.push_back("Closes #" + i);
        lines.push_back("");
        std::string body_path = ctx.bundle_dir + "/pr-body.md";
        DG_CHECK(write_file_atomic(body_path, join(lines, "\n")));
        DG_CHECK(
            event("NOTE", Json{{"topic", "pr_intent"}, {"bundle", opt.bundle}, {"head", head}}));
        crash_point("pr");
        DG_TRY(auto r, gh({"pr", "create", "--base", ctx.default_branch, "--head", ctx.branch,
                           "--title", clip("feat(" + opt.bundle + "): " + bundle_title(), 72),
                           "--body-file", body_path}));
        if (!r.ok()) return fail("gh pr create failed: " + clip(r.err, 300));
        crash_point("pr_created");
        DG_TRY(auto again, existing_pr());
        if (!again) return fail("gh pr view cannot find the pull request just created");
        found = again;
      }
      long long number = (*found)["number"].is_number() ? (*found)["number"].get<long long>() : 0;
      std::string auto_merge = "off";
      // A run killed after enabling auto-merge finds it enabled on the pull
      // request and does not ask again.
      bool already =
          found->contains("autoMergeRequest") && (*found)["autoMergeRequest"].is_object();
      if (ctx.merge_policy == "auto_when_checks_pass" && already) {
        auto_merge = "enabled";
      } else if (ctx.merge_policy == "auto_when_checks_pass") {
        DG_TRY(auto m, gh({"pr", "merge", std::to_string(number), "--auto", "--merge"}));
        auto_merge = m.ok() ? "enabled" : "unavailable";
        crash_point("merged");
        (void)event(m.ok() ? "AUTO_MERGE_ENABLED" : "AUTO_MERGE_UNAVAILABLE",
                    Json{{"bundle", opt.bundle}, {"pr", number}, {"detail", clip(m.err, 200)}});
      }
      pr = Json{{"number", number}, {"url", str(*found, "url")}, {"auto_merge", auto_merge}};
      DG_CHECK(move(std::nullopt, "create_pr", "PR_CREATED",
                    Json{{"pr", pr}, {"head", head}, {"cost_usd", cost}, {"persona_runs", runs}}));
    } else {
      DG_CHECK(move(
          std::nullopt, "create_pr", "BRANCH_READY",
          Json{
              {"branch", ctx.branch}, {"head", head}, {"cost_usd", cost}, {"persona_runs", runs}}));
    }
    crash_point("delivered");
    return final_result(head, pr);
  }

  std::vector<std::string> commits_on_branch() {
    auto log_lines = git->log_oneline(ctx.base);
    std::vector<std::string> out;
    if (log_lines)
      for (const auto& l : *log_lines) out.push_back(l.substr(0, 10));
    return out;
  }

  Json base_result(const std::string& status, const std::string& summary, const std::string& head) {
    int done = 0;
    for (const auto& [id, t] : tasks) done += t.stage == Stage::done;
    auto [cost, runs] = ledger_sum();
    return Json{
        {"status", status},
        {"summary", summary},
        {"evidence", Json::array({"commits: " + join(commits_on_branch(), ", "), "head: " + head})},
        {"artifacts", Json::array({ctx.bundle_dir})},
        {"concerns", concerns},
        {"missing_context", Json::array()},
        {"blockers", Json::array()},
        {"findings", Json::array()},
        {"commands", Json::array({command("test"), command("build")})},
        {"bundle", opt.bundle},
        {"tasks_completed", done},
        {"tasks_total", static_cast<int>(tasks.size())},
        {"branch", ctx.branch},
        {"head", head},
        {"pr", Json()},
        {"human_required", false},
        {"cost_usd", cost},
        {"capacity", Json{{"tier", "n/a"}, {"headless", true}}},
        {"persona_runs", runs}};
  }

  Json final_result(const std::string& head, const Json& pr) {
    int done = 0;
    for (const auto& [id, t] : tasks) done += t.stage == Stage::done;
    auto commits = commits_on_branch();
    auto [cost, runs] = ledger_sum();
    char money[32];
    std::snprintf(money, sizeof money, "%.2f", cost);
    Json r = base_result(concerns.empty() ? "DONE" : "DONE_WITH_CONCERNS",
                         "bundle " + opt.bundle + ": " + std::to_string(done) + "/" +
                             std::to_string(tasks.size()) + " tasks committed, " +
                             std::to_string(commits.size()) + " commits, " + std::to_string(runs) +
                             " persona runs, $" + money,
                         head);
    r["pr"] = pr;
    return r;
  }

  Json blocked_result(const std::string& why) {
    auto head = git->rev_parse("HEAD");
    Json r = base_result("BLOCKED", clip(why, 500), head ? *head : "");
    r["blockers"] = Json::array({clip(why, 300)});
    r["human_required"] = true;
    r["commands"] = Json::array();
    return r;
  }

  // -- the whole bundle ---------------------------------------------------------------

  DriverOutcome run() {
    if (leftovers_ended > 0) log("leftovers_ended", Json{{"process_groups", leftovers_ended}});
    Json c = cursor();
    std::string node = str(c, "node", "plan_bundle");
    log("start", Json{{"node", node},
                      {"worktree", ctx.worktree},
                      {"branch", ctx.branch},
                      {"base", ctx.base},
                      {"delivery", ctx.delivery},
                      {"max_parallel", max_parallel}});
    auto blocked = [&](const std::string& why) {
      return DriverOutcome{kExitBlocked, blocked_result(why)};
    };
    if (auto b = git->rev_parse(ctx.base)) bundle_base = *b;
    if (node == "create_pr" && str(c, "status") == "complete") {
      if (auto s = load_plan(); !s) return blocked(s.error().message);
      for (auto& [id, t] : tasks) t.stage = Stage::done;
      auto head = git->rev_parse("HEAD");
      return DriverOutcome{kExitOk, final_result(head ? *head : "", c.value("pr", Json()))};
    }
    if (node == "awaiting_human") return blocked("bundle is waiting for a human");
    if (node == "plan_bundle" || !path_exists(tasks_json)) {
      if (auto s = run_plan(); !s) return blocked(s.error().message);
    }
    if (auto s = load_plan(); !s) return blocked(s.error().message);
    node = str(cursor(), "node");
    if (node == "plan_bundle" || node == "task_scheduler") {
      std::string why = run_tasks();
      if (!why.empty()) return blocked(why);
      if (auto s = move(std::nullopt, "bundle_verify", "BUNDLE_TASKS_COMPLETE", Json(),
                        Json{{"tasks", tasks.size()}});
          !s)
        return blocked(s.error().message);
    } else {
      for (auto& [id, t] : tasks) t.stage = Stage::done;
    }
    auto gates = bundle_gates();
    if (!gates) return blocked(gates.error().message);
    auto delivered = deliver();
    if (!delivered) return blocked(delivered.error().message);
    return DriverOutcome{kExitOk, *delivered};
  }
};

// ---------------------------------------------------------------------------

Driver::Driver(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Driver::~Driver() {
  if (impl_ && !impl_->ctx.bundle_dir.empty())
    ::unlink((impl_->ctx.bundle_dir + "/driver.pid").c_str());
}

const BundleContext& Driver::context() const {
  return impl_->ctx;
}

Expected<std::unique_ptr<Driver>> Driver::open(DriverOptions options, RunStore& store,
                                               const Graph& graph, CommandRunner& runner) {
  auto usage = [](const std::string& m) { return fail(m, kExitUsage); };
  options.run_dir = absolute_path(options.run_dir);
  auto impl = std::make_unique<Impl>(options, store, graph, runner);
  auto& o = impl->opt;
  if (!is_valid_id(o.bundle)) return usage("--bundle " + o.bundle + " is not a valid id");
  auto st = store.read();
  if (!st) return usage(st.error().message);
  impl->state = *st;
  const Json& s = impl->state;
  if (!s.contains("bundles_runtime") || !s["bundles_runtime"].contains(o.bundle))
    return usage("bundle '" + o.bundle + "' has no cursor in " + o.run_dir +
                 "; the orchestrator moves it to plan_bundle first");
  Json c = s["bundles_runtime"][o.bundle];
  auto& ctx = impl->ctx;
  ctx.worktree = str(c, "worktree");
  if (!ctx.worktree.empty() && ctx.worktree[0] == '~') {
    const char* home = std::getenv("HOME");
    ctx.worktree = std::string(home ? home : "") + ctx.worktree.substr(1);
  }
  if (ctx.worktree.empty() || !is_directory(ctx.worktree) || !path_exists(ctx.worktree + "/.git"))
    return usage("bundle '" + o.bundle + "' worktree " + ctx.worktree + " is not a git worktree");
  ctx.worktree = absolute_path(ctx.worktree);
  ctx.branch = str(c, "branch", "develop/" + o.bundle);
  ctx.delivery = str(s, "delivery", "github");
  ctx.default_branch = str(s, "default_branch", "main");
  ctx.base =
      o.base ? *o.base
             : str(c, "base",
                   ctx.delivery == "github" ? "origin/" + ctx.default_branch : ctx.default_branch);
  ctx.merge_policy = str(s, "merge_policy", "never");
  ctx.commands =
      s.contains("commands") && s["commands"].is_object() ? s["commands"] : Json::object();
  ctx.bundle_dir = o.run_dir + "/bundles/" + o.bundle;
  // Placement before the first write (the bundle directory, driver.pid).
  auto roots = guard::Roots::from_env();
  if (auto deny = check_bundle_worktree(ctx.worktree, roots))
    return usage("placement guard: " + *deny);
  if (auto deny = check_write_root("run directory", o.run_dir, roots))
    return usage("placement guard: " + *deny);
  if (auto m = make_directories(ctx.bundle_dir); !m) return usage(m.error().message);
  // One driver per bundle. flock ends with its holder, so a killed driver
  // never leaves the bundle locked; once the lock is held, whatever the
  // previous driver launched is an orphan and is ended before anything new
  // starts (proc/leftovers.h): two writers must never share a worktree.
  auto lock = FileLock::try_acquire(ctx.bundle_dir + "/driver.lock");
  if (!lock) return usage(lock.error().message);
  if (!*lock) {
    auto pid = read_file(ctx.bundle_dir + "/driver.pid");
    std::string who;
    if (pid && !pid->empty()) who = " (pid " + pid->substr(0, pid->find('\n')) + ")";
    return usage("bundle " + o.bundle + " is being driven by another process" + who);
  }
  impl->bundle_lock = std::move(**lock);
  auto ended = end_leftover_children(ctx.bundle_dir + "/" + kChildrenRecord);
  if (!ended) return usage(ended.error().message);
  impl->leftovers_ended = *ended;
  impl->max_parallel = o.max_parallel.value_or(graph.concurrency.max_parallel_tasks_per_bundle);
  if (impl->max_parallel < 1) return usage("--max-parallel must be at least 1");
  impl->max_live =
      static_cast<size_t>(std::max(2, graph.concurrency.max_live_personas_per_tech_lead));
  impl->plan_md = ctx.worktree + "/docs/develop/plans/" + o.bundle + ".md";
  impl->tasks_json = ctx.worktree + "/docs/develop/plans/" + o.bundle + ".tasks.json";
  impl->spec_path = ctx.bundle_dir + "/spec.md";
  impl->git = git::make_git(runner, ctx.worktree, driver_git_env());
  (void)write_file_atomic(ctx.bundle_dir + "/driver.pid", std::to_string(::getpid()) + "\n");
  return std::unique_ptr<Driver>(new Driver(std::move(impl)));
}

DriverOutcome Driver::run(Launcher& launcher) {
  impl_->launcher = &launcher;
  DriverOutcome out = impl_->run();
  (void)write_file_atomic(impl_->ctx.bundle_dir + "/tech-lead.result.json",
                          dump_py(out.result, 2) + "\n");
  auto [cost, runs] = impl_->ledger_sum();
  impl_->log(
      "result",
      Json{{"status", str(out.result, "status")}, {"cost_usd", cost}, {"persona_runs", runs}});
  return out;
}

}  // namespace devgraph::bundle
