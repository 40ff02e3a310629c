#include "demo/demo.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <map>
#include <memory>
#include <sstream>

#include "bundle/placement.h"
#include "util/words.h"
#include "demo/sample.h"
#include "git/git.h"
#include "graph/graph.h"
#include "guard/guard.h"
#include "issues/local_store.h"
#include "orchestrator/bundling.h"
#include "orchestrator/run_setup.h"
#include "orchestrator/run_view.h"
#include "proc/command.h"
#include "skill/skill.h"
#include "store/run_store.h"
#include "util/clock.h"
#include "util/fs.h"
#include "util/text.h"

namespace devgraph::demo {
namespace {

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

Expected<bool> tests_pass(const std::string& dir) {
  DG_TRY(auto argv, split_command(kSampleTestCommand));
  DG_TRY(auto r, run_in(dir, std::move(argv)));
  return r.ok();
}

// A word as a POSIX shell reads it back: as it is when that is safe, else
// in single quotes.
std::string sh(const std::string& word) {
  bool plain = !word.empty() && word.find_first_not_of(
                                    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnop"
                                    "qrstuvwxyz0123456789_@%+=:,./-") == std::string::npos;
  if (plain) return word;
  std::string out = "'";
  for (char c : word) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

std::string numbers(const std::vector<long long>& issues) {
  std::vector<std::string> out;
  for (long long n : issues) out.push_back("#" + std::to_string(n));
  return join(out, " ");
}

// The sample repository at `repo`, its base files committed on main.
Status build_sample(const std::string& repo) {
  DG_CHECK(make_directories(repo));
  DG_CHECK(must(repo, {"git", "init", "-q", "-b", "main"}));
  DG_CHECK(must(repo, {"git", "config", "user.name", "devgraph demo"}));
  DG_CHECK(must(repo, {"git", "config", "user.email", "demo@devgraph.invalid"}));
  std::vector<std::string> add = {"git", "add", "--"};
  for (const auto& f : sample_base_files()) {
    DG_CHECK(make_directories(dirname_of(repo + "/" + f.path)));
    DG_CHECK(write_file_atomic(repo + "/" + f.path, f.content));
    add.push_back(f.path);
  }
  DG_CHECK(must(repo, add));
  return must(repo, {"git", "commit", "-q", "-m", "tally: split text into words"});
}

// Files the sample's issues, a parent before its children; prints each.
Status file_issues(issues::LocalIssues& store, const std::string& epic_label, std::ostream& out) {
  std::map<std::string, long long> number_of;
  for (const auto& s : sample_issues()) {
    issues::NewIssue n;
    n.title = s.title;
    n.body = s.body;
    n.labels = s.labels;
    if (s.epic) n.labels.insert(n.labels.begin(), epic_label);
    if (!s.parent.empty()) {
      n.parent = number_of.at(s.parent);
      n.body += "\nPart of #" + std::to_string(*n.parent) + "\n";
    }
    DG_TRY(auto issue, store.create(n));
    number_of[s.key] = issue.number;
    out << "  #" << issue.number << " " << issue.title << "  [" << join(issue.labels, ", ") << "]"
        << (issue.parent ? " part of #" + std::to_string(*issue.parent) : std::string()) << "\n";
  }
  return {};
}

// The bundles the orchestrator will form from the filed issues (the same
// pure functions it calls, over the same rules), each with the sample's
// plan for its issues.
Expected<std::vector<SampleBundle>> planned_bundles(const issues::LocalIssues& store,
                                                    const Graph& graph) {
  DG_TRY(auto open, store.list());
  orchestrator::IntakePolicy policy;
  policy.every_open_issue = true;  // local issues: every open issue is work
  policy.epic_label = graph.intake.epic_label;
  auto el = orchestrator::eligible(open, policy, {}, {});
  std::map<long long, std::string> title_of;
  for (const auto& i : open) title_of[i.number] = i.title;
  std::vector<SampleBundle> out;
  for (const auto& f : orchestrator::form_bundles(el.work, graph.intake, 1)) {
    std::vector<std::string> titles;
    for (long long n : f.issues) titles.push_back(title_of[n]);
    auto tasks = sample_plan(titles);
    if (!tasks)
      return fail(ErrorKind::usage, "the skill's bundling rules put " + numbers(f.issues) +
                                        " in bundle " + f.id +
                                        ", which the sample cannot plan: " + tasks.error().message);
    out.push_back({f.id, std::move(*tasks)});
  }
  return out;
}

// How many of the new test files (the sample's, found in the bundles'
// worktrees) fail against main, and how many there are: a scratch worktree
// of main gets each file in turn and runs it alone.
Expected<std::pair<int, int>> red_on_base(const std::string& repo,
                                          const std::vector<DemoBundle>& bundles,
                                          const std::string& scratch) {
  DG_CHECK(must(repo, {"git", "worktree", "add", "-q", "--detach", scratch, "main"}));
  int red = 0, seen = 0;
  for (const auto& b : bundles) {
    for (const auto& issue : sample_issues()) {
      for (const auto& t : issue.tasks) {
        auto content = read_file(b.worktree + "/" + t.test.path);
        if (!content || path_exists(scratch + "/" + t.test.path)) continue;
        ++seen;
        DG_CHECK(write_file_atomic(scratch + "/" + t.test.path, *content));
        std::string module = t.test.path.substr(0, t.test.path.size() - 3);
        for (auto& c : module)
          if (c == '/') c = '.';
        DG_TRY(auto r, run_in(scratch, {"python3", "-m", "unittest", module}));
        if (!r.ok()) ++red;
      }
    }
  }
  // The scratch worktree is only a means; a failure to remove it leaves a
  // directory under the run and changes nothing else.
  (void)must(repo, {"git", "worktree", "remove", "--force", scratch});
  return std::make_pair(red, seen);
}

// Bundles started and not yet finished at once, at most, in log order.
int peak_in_flight(const std::string& run_dir) {
  auto text = read_file(run_dir + "/" + kEventsFile);
  if (!text) return 0;
  int live = 0, peak = 0;
  size_t at = 0;
  while (at < text->size()) {
    size_t end = text->find('\n', at);
    if (end == std::string::npos) end = text->size();
    auto e = parse_json(text->substr(at, end - at), kEventsFile);
    at = end + 1;
    if (!e || !e->is_object()) continue;
    std::string type = json_str(*e, "type");
    if (type == "BUNDLE_STARTED") peak = std::max(peak, ++live);
    if (type == "TECH_LEAD_DONE" || type == "TECH_LEAD_BLOCKED") --live;
  }
  return peak;
}

std::vector<std::string> driver_flags(const DemoOptions& o, const std::string& scenario) {
  std::vector<std::string> f = {
      "--agent", o.agent, "--max-parallel", std::to_string(o.max_parallel), "--api-backoff-seconds",
      "5"};
  auto add = [&f](const char* name, const std::string& value) {
    f.push_back(name);
    f.push_back(value);
  };
  if (!o.agent_bin.empty())
    add("--claude-bin",
        o.agent_bin.find('/') == std::string::npos ? o.agent_bin : absolute_path(o.agent_bin));
  if (o.model) add("--model", *o.model);
  if (o.agent_command) add("--agent-command", *o.agent_command);
  if (!scenario.empty()) add("--sim-scenario", scenario);
  if (o.skill) add("--skill", absolute_path(*o.skill));
  return f;
}

// The discuss rounds of each bundle, from the run's DISCUSS_ROUND_DONE
// events: "plan-1 consensus_reached (4.00)".
std::map<std::string, std::vector<std::string>> rounds_of(const std::string& run_dir) {
  std::map<std::string, std::vector<std::string>> out;
  auto text = read_file(join_path(run_dir, "events.jsonl"));
  if (!text) return out;
  std::istringstream lines(*text);
  std::string line;
  while (std::getline(lines, line)) {
    auto e = parse_json(line, "event");
    if (!e || !e->is_object() || json_str(*e, "type") != "DISCUSS_ROUND_DONE") continue;
    const Json d = e->value("detail", Json::object());
    if (!d.is_object() || !d.contains("verdict")) continue;  // a repair after an answer
    std::string said = json_str(d, "round") + " " + json_str(d, "verdict");
    if (auto a = d.find("average"); a != d.end() && a->is_number()) {
      char avg[16];
      std::snprintf(avg, sizeof avg, "%.2f", a->get<double>());
      said += std::string(" (") + avg + ")";
    }
    out[json_str(d, "bundle")].push_back(said);
  }
  return out;
}

// Each bundle: branch, title, worktree, commits, critique rounds, tests.
void print_bundles(const DemoReport& rep, std::ostream& out) {
  RealCommandRunner runner;
  auto rounds = rounds_of(rep.run_dir);
  for (const auto& b : rep.bundles) {
    out << "\n"
        << b.id << " " << b.branch << ": " << b.status << "\n"
        << "  " << b.title << " (" << numbers(b.issues) << ")\n"
        << "  worktree: " << b.worktree << "\n";
    auto git = git::make_git(runner, b.worktree, identity());
    auto log = git->log_oneline("main");
    out << "  commits on top of main: " << (log ? log->size() : 0) << "\n";
    if (log)
      for (const auto& l : *log) out << "    " << l.substr(0, 10) << " " << l.substr(41) << "\n";
    if (auto r = rounds.find(b.id); r != rounds.end())
      out << "  critique: " << join(r->second, ", ") << " (records in "
          << join_path(rep.run_dir, "bundles/" + b.id + "/discussions") << ")\n";
    out << "  tests: " << (b.tests_pass ? "pass" : "FAIL") << " (" << kSampleTestCommand << ")\n";
  }
}

// The issues as `devgraph issue list` shows them, with their branches.
void print_issues(const DemoReport& rep, const std::vector<issues::Issue>& issues,
                  std::ostream& out) {
  out << "\nissues (devgraph issue list, in " << rep.repo << "):\n";
  for (const auto& i : issues) {
    out << "  #" << i.number << "  " << i.state << "  " << i.title;
    if (!i.labels.empty()) out << "  [" << join(i.labels, ", ") << "]";
    if (i.branch) out << "  -> " << *i.branch << " at " << i.head.value_or("").substr(0, 10);
    out << "\n";
  }
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
  // Placement before the first write: the demo creates a repository,
  // issues, worktrees and a run under the root, none of which may land in a
  // primary clone (an AI_ROOT inside a checkout would put them there).
  auto roots = guard::Roots::from_env();
  if (auto deny = bundle::check_write_root("demo root", root, roots))
    return fail("placement guard: " + *deny);
  DG_CHECK(make_directories(root));
  ::setenv("AI_ROOT", root.c_str(), 1);
  rep.ai_root = root;
  out << "devgraph demo: everything goes under " << root << "\n";

  DG_TRY(auto skill, locate_skill(o.skill));
  DG_TRY(auto graph, Graph::load(skill));

  // 2. The sample repository, committed on main.
  rep.repo = root + "/repos/tally-" + utc_stamp(system_clock().wall());
  if (path_exists(rep.repo))
    return fail(rep.repo + " already exists; run the demo again in a second");
  if (auto deny = bundle::check_write_root("sample repository", rep.repo, roots))
    return fail("placement guard: " + *deny);
  DG_CHECK(build_sample(rep.repo));
  out << "sample repository: " << rep.repo << " (test command: " << kSampleTestCommand << ")\n";

  // 3. Its issues, in its develop home.
  roots = guard::Roots::from_env();  // AI_ROOT is set now
  DG_TRY(auto place, guard::resolve_placement(rep.repo, std::nullopt, roots));
  rep.develop_home = place.develop_home;
  if (auto deny = bundle::check_write_root("develop home", rep.develop_home, roots))
    return fail("placement guard: " + *deny);
  issues::LocalIssues store(rep.develop_home + "/issues");
  out << "local issues, filed in " << store.dir() << ":\n";
  DG_CHECK(file_issues(store, graph.intake.epic_label, out));

  // 4. One scenario for the whole run: the bundles the run will form.
  if (o.agent == "sim") {
    DG_TRY(auto bundles, planned_bundles(store, graph));
    rep.scenario = rep.develop_home + "/demo-scenario.json";
    DG_CHECK(write_file_atomic(rep.scenario, dump_py(sample_scenario(bundles, o.latency_ms), 2)));
    out << "simulated agent's script: " << rep.scenario << "\n";
  }

  // 5. The run: `devgraph run` in process, its drivers as child processes.
  orchestrator::RunSetupRequest req;
  req.repo = rep.repo;
  req.issues = "local";
  req.max_bundles = o.max_bundles;
  req.fresh = true;
  req.skill = o.skill;
  req.driver_flags = driver_flags(o, rep.scenario);
  // The demo shows the discuss rounds: the plan and the finished branch of
  // every bundle are critiqued (bundle/critique_gate.h).
  req.discuss_rounds = true;
  out << "devgraph run: up to " << o.max_bundles << " bundles at once, the " << o.agent
      << " agent playing every persona..." << std::endl;
  std::unique_ptr<orchestrator::RunLiveView> view;
  if (o.live) {
    view = std::make_unique<orchestrator::RunLiveView>(out, system_clock(), *o.live);
    if (o.live_measure) view->measure_with(o.live_measure);
    req.on_line = [&view](const std::string& l) { view->on_line(l); };
    req.on_state = [&view](const Json& s) { view->on_state(s); };
    req.on_tick = [&view] { view->tick(); };
  } else {
    req.on_line = [&out](const std::string& l) { out << "  " << l << std::endl; };
  }
  auto ran = orchestrator::run_repository(req, out);
  if (view) view->finish();
  if (!ran) return ran.error();
  auto& run = *ran;
  rep.exit_code = run.exit_code;
  rep.run_dir = run.run_dir;
  out << "\n" << run.summary;

  // 6. What there is to look at.
  Json state = Json::object();
  if (auto text = read_file(rep.run_dir + "/" + kStateFile))
    if (auto s = parse_json(*text, kStateFile)) state = std::move(*s);
  std::map<std::string, std::string> worktree_of;
  for (const auto& b : state.value("bundles", Json::array()))
    worktree_of[json_str(b, "id")] = json_str(b, "worktree");
  for (const auto& b : run.result.value("bundles", Json::array())) {
    DemoBundle d;
    d.id = json_str(b, "id");
    d.status = json_str(b, "status");
    d.title = json_str(b, "title");
    d.branch = json_str(b, "branch");
    d.head = json_str(b, "head");
    d.worktree = worktree_of[d.id];
    if (b.contains("issues") && b["issues"].is_array())
      for (const auto& n : b["issues"])
        if (n.is_number_integer()) d.issues.push_back(n.get<long long>());
    if (!d.worktree.empty() && is_directory(d.worktree)) {
      DG_TRY(d.tests_pass, tests_pass(d.worktree));
    }
    rep.bundles.push_back(std::move(d));
  }
  rep.peak_in_flight = peak_in_flight(rep.run_dir);
  print_bundles(rep, out);

  std::vector<DemoBundle> ready;
  for (const auto& b : rep.bundles)
    if (b.status == "delivered" && !b.worktree.empty()) ready.push_back(b);
  if (!ready.empty()) {
    auto red = red_on_base(rep.repo, ready, rep.run_dir + "/red-check");
    bool all_pass =
        std::all_of(ready.begin(), ready.end(), [](const DemoBundle& b) { return b.tests_pass; });
    if (red)
      out << "\ntests written first: " << red->first << " of " << red->second
          << " new test files fail on main"
          << (all_pass ? ", and every branch's tests pass" : std::string()) << "\n";
  }
  DG_TRY(auto filed, store.list());
  print_issues(rep, filed, out);
  out << "\nrun directory: " << rep.run_dir << "\n";
  rep.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  char took[32];
  std::snprintf(took, sizeof took, "%.1f", rep.seconds);
  out << ready.size() << " of " << rep.bundles.size() << " bundles ready in " << took
      << " s, up to " << rep.peak_in_flight << " in flight at once\n";

  // The commands below work from any shell: the develop home is found
  // through AI_ROOT, which only this process has set.
  std::string env = "AI_ROOT=" + sh(root) + " ";
  out << "\nhow to look at it:\n"
      << "  git -C " << sh(rep.repo) << " log --oneline --graph --branches\n";
  for (const auto& b : ready) out << "  git -C " << sh(b.worktree) << " log --stat main..HEAD\n";
  out << "  cd " << sh(rep.repo) << " && " << env << "devgraph issue list --state all\n"
      << "  cat " << sh(rep.run_dir) << "/events.jsonl\n"
      << "  devgraph validate run " << sh(rep.run_dir) << "\n"
      << (rep.exit_code == 2 ? "  cd " + sh(rep.repo) + " && " + env +
                                   "devgraph inbox    (what waits for a person)\n"
                             : std::string())
      << "\nhow to run again (it resumes an unfinished run, or finds nothing to do):\n"
      << "  cd " << sh(rep.repo) << " && " << env << "devgraph run";
  for (const auto& f : req.driver_flags) out << " " << sh(f);
  out << "\n";
  if (!ready.empty())
    out << "  (merge a branch into main first, e.g. git -C " << sh(rep.repo) << " merge "
        << sh(ready.back().branch) << ", and the next run closes its issues)\n";
  return rep;
}

}  // namespace devgraph::demo
