#include "demo/demo.h"

#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <memory>

#include "bundle/placement.h"
#include "bundle/run.h"
#include "bundle/start.h"
#include "bundle/words.h"
#include "contracts/schema.h"
#include "demo/sample.h"
#include "git/git.h"
#include "graph/graph.h"
#include "guard/guard.h"
#include "proc/command.h"
#include "skill/skill.h"
#include "store/run_store.h"
#include "util/clock.h"
#include "util/fs.h"

namespace devgraph::demo {
namespace {

constexpr const char* kBundle = "b1";
constexpr const char* kBranch = "develop/b1";

// Built on first use: a namespace-scope map would be built before main in
// every devgraph command.
const std::map<std::string, std::string>& identity() {
  static const std::map<std::string, std::string> env = {
      {"GIT_AUTHOR_NAME", "devgraph demo"},
      {"GIT_AUTHOR_EMAIL", "demo@devgraph.invalid"},
      {"GIT_COMMITTER_NAME", "devgraph demo"},
      {"GIT_COMMITTER_EMAIL", "demo@devgraph.invalid"}};
  return env;
}

std::string stamp() {
  auto t = std::chrono::system_clock::to_time_t(system_clock().wall());
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y%m%dT%H%M%SZ", &tm);
  return buf;
}

Expected<CommandResult> run_in(const std::string& dir, std::vector<std::string> argv) {
  CommandSpec spec;
  spec.argv = std::move(argv);
  spec.cwd = dir;
  spec.env = identity();
  spec.timeout = std::chrono::minutes(2);
  return run_command(spec);
}

Status must(const std::string& dir, std::vector<std::string> argv) {
  auto what = describe_argv(argv);
  DG_TRY(auto r, run_in(dir, std::move(argv)));
  if (!r.ok()) return fail(what + " failed: " + r.err);
  return {};
}

// Runs the branch's test files against the base code: they must fail there
// (the modules they test do not exist yet). Returns the number of test
// files that failed on the base, or an error.
Expected<int> red_on_base(const std::string& repo, const std::string& worktree,
                          const std::string& scratch) {
  DG_CHECK(must(repo, {"git", "worktree", "add", "-q", "--detach", scratch, "main"}));
  int red = 0;
  auto split = bundle::split_command(kSampleTestCommand);
  for (const auto& t : sample_tasks()) {
    auto content = read_file(worktree + "/" + t.test.path);
    if (!content) continue;
    DG_CHECK(write_file_atomic(scratch + "/" + t.test.path, *content));
    std::string module = t.test.path.substr(0, t.test.path.size() - 3);
    for (auto& c : module)
      if (c == '/') c = '.';
    DG_TRY(auto r, run_in(scratch, {"python3", "-m", "unittest", module}));
    if (!r.ok()) ++red;
  }
  (void)split;
  (void)must(repo, {"git", "worktree", "remove", "--force", scratch});
  return red;
}

}  // namespace

Expected<DemoReport> run_demo(const DemoOptions& o, std::ostream& out) {
  auto t0 = std::chrono::steady_clock::now();
  DemoReport rep;
  // 1. Where everything goes.
  std::string root = o.ai_root.value_or("");
  if (root.empty()) {
    const char* env = std::getenv("AI_ROOT");
    if (env && *env) root = env;
  }
  if (root.empty()) {
    DG_TRY(auto tmp, TempDir::create("devgraph-demo"));
    tmp.keep();
    root = tmp.path();
  }
  root = absolute_path(root);
  // Placement before the first write: the demo creates a repository, a
  // worktree and a run under the root, none of which may land in a primary
  // clone (an AI_ROOT inside a checkout would put them there).
  auto roots = guard::Roots::from_env();
  if (auto deny = bundle::check_write_root("demo root", root, roots))
    return fail("placement guard: " + *deny);
  DG_CHECK(make_directories(root));
  ::setenv("AI_ROOT", root.c_str(), 1);
  rep.ai_root = root;
  out << "devgraph demo: everything goes under " << root << "\n";

  DG_TRY(auto skill, locate_skill(o.skill));
  DG_TRY(auto graph, Graph::load(skill));
  DG_TRY(auto schema, Schema::load(state_schema_path(skill)));

  // 2. The sample repository, committed on main.
  std::string id = stamp();
  rep.repo = root + "/repos/tally-" + id;
  if (path_exists(rep.repo))
    return fail(rep.repo + " already exists; run the demo again in a second");
  if (auto deny = bundle::check_write_root("sample repository", rep.repo, roots))
    return fail("placement guard: " + *deny);
  DG_CHECK(make_directories(rep.repo));
  DG_CHECK(must(rep.repo, {"git", "init", "-q", "-b", "main"}));
  DG_CHECK(must(rep.repo, {"git", "config", "user.name", "devgraph demo"}));
  DG_CHECK(must(rep.repo, {"git", "config", "user.email", "demo@devgraph.invalid"}));
  std::vector<std::string> add = {"git", "add", "--"};
  for (const auto& f : sample_base_files()) {
    DG_CHECK(make_directories(dirname_of(rep.repo + "/" + f.path)));
    DG_CHECK(write_file_atomic(rep.repo + "/" + f.path, f.content));
    add.push_back(f.path);
  }
  DG_CHECK(must(rep.repo, add));
  DG_CHECK(must(rep.repo, {"git", "commit", "-q", "-m", "tally: split text into words"}));
  out << "sample repository: " << rep.repo << " (test command: " << kSampleTestCommand << ")\n";

  // 3. Placement: the run directory and the canonical worktree.
  roots = guard::Roots::from_env();  // AI_ROOT is set now
  DG_TRY(auto place, guard::resolve_placement(rep.repo, std::string(kBranch), roots));
  if (!place.worktree_path)
    return fail("the placement guard gave no worktree path for " + std::string(kBranch));
  rep.worktree = *place.worktree_path;
  if (auto deny = guard::check_worktree(rep.worktree, rep.repo, roots))
    return fail("placement guard refused the worktree: " + *deny);
  rep.run_dir = place.develop_home + "/runs/" + id;
  if (auto deny = bundle::check_write_root("run directory", rep.run_dir, roots))
    return fail("placement guard: " + *deny);
  rep.branch = kBranch;
  RealCommandRunner runner;
  auto repo_git = git::make_git(runner, rep.repo, identity());

  // 4. The run, and the bundle started in it: worktree, cursor, spec.
  RunStore store(rep.run_dir, graph, schema);
  InitRequest init;
  init.repo = place.owner + "/" + place.repo;
  init.default_branch = "main";
  init.merge = Json{
      {"delivery", "local"},
      {"merge_policy", "never"},
      {"commands", {{"test", kSampleTestCommand}, {"build", kSampleBuildCommand}}},
      {"bundles",
       Json::array(
           {{{"id", kBundle}, {"title", "a text report for tally"}, {"issues", Json::array()}}})}};
  {
    auto r = store.init(init);
    if (!r) return r.error();
  }
  bundle::StartRequest start{kBundle, rep.worktree, kBranch, "main", sample_spec(kBundle)};
  DG_TRY(auto layout, bundle::start_bundle(store, graph, *repo_git, start));
  out << "bundle worktree: " << rep.worktree << " (branch " << kBranch << ")\n";
  out << "run directory: " << rep.run_dir << "\n";

  // 5. Drive the bundle.
  bundle::RunBundleRequest req;
  req.run_dir = rep.run_dir;
  req.bundle = kBundle;
  req.skill = skill;
  req.agent = o.agent;
  req.agent_bin = o.agent_bin;
  req.agent_command = o.agent_command;
  req.model = o.model;
  req.max_parallel = o.max_parallel;
  req.api_backoff_seconds = 5;
  if (o.agent == "sim") {
    req.sim_scenario = rep.run_dir + "/demo-scenario.json";
    DG_CHECK(
        write_file_atomic(req.sim_scenario, dump_py(sample_scenario(kBundle, o.latency_ms), 2)));
  }
  std::unique_ptr<bundle::LiveView> view;
  if (o.live) {
    view = std::make_unique<bundle::LiveView>(out, kBundle, system_clock(), *o.live);
    if (o.live_measure) view->measure_with(o.live_measure);
    req.on_log = [&view](const Json& rec) { view->on_log(rec); };
    req.on_state = [&view](const Json& state) { view->on_state(state); };
    req.on_tick = [&view] { view->tick(); };
    req.on_node_order = [&view](const std::vector<std::string>& order) {
      view->set_node_order(order);
    };
  } else {
    req.on_log = [&out](const Json& rec) {
      std::string ev = rec.value("event", "");
      if (ev == "start" || ev == "result" || ev == "commit_reconciled")
        out << "  [" << ev << "] " << dump_py(rec) << "\n";
    };
  }
  out << "driving bundle " << kBundle << " with the " << o.agent << " agent...\n";
  auto report = bundle::run_bundle(req);
  if (view) view->finish();
  rep.exit_code = report.exit_code;
  double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();

  // 6. What there is to look at.
  std::string status = report.result.value("status", "");
  out << "\nresult: " << status << " - " << report.result.value("summary", "") << "\n";
  if (report.exit_code != 0 && status == "HANDOFF") {
    out << "resume with: devgraph run-bundle " << rep.run_dir << " --bundle " << kBundle
        << " --agent " << o.agent
        << (req.sim_scenario.empty() ? "" : " --sim-scenario " + req.sim_scenario) << "\n";
    return rep;
  }
  if (report.exit_code != 0) {
    out << "blocked: " << dump_py(report.result.value("blockers", Json::array())) << "\n";
    out << "look at: " << layout.log() << "\n";
    return rep;
  }
  auto wt_git = git::make_git(runner, rep.worktree, identity());
  auto log = wt_git->log_oneline("main");
  out << "branch " << kBranch << " is ready (" << (log ? log->size() : 0) << " commits on main):\n";
  if (log)
    for (const auto& l : *log) out << "  " << l.substr(0, 10) << " " << l.substr(41) << "\n";
  auto red = red_on_base(rep.repo, rep.worktree, rep.run_dir + "/red-check");
  if (red)
    out << "tests written first: " << *red << " of " << sample_tasks().size()
        << " new test files fail on main and all pass on " << kBranch << "\n";
  char took[32];
  std::snprintf(took, sizeof took, "%.1f", secs);
  out << "took " << took << " s\n\nhow to look at it:\n"
      << "  git -C " << rep.worktree << " log --stat main..HEAD\n"
      << "  cd " << rep.worktree << " && " << kSampleTestCommand << "\n"
      << "  cat " << layout.log() << "\n"
      << "  cat " << rep.run_dir << "/events.jsonl\n"
      << "  ls " << layout.tasks_dir() << "/*\n";
  return rep;
}

}  // namespace devgraph::demo
