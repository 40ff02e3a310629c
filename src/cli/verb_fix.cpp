// `devgraph fix`: the bounded fix and re-review loop on one branch
// (fix/loop.h). Without --review the code-reviewer reviews the branch
// first; then the fixer closes the gaps, one commit per gap, a separate
// re-reviewer judges again, and a loop that cannot finish is diagnosed.
// The loop's files go to <develop_home>/fix/<branch slug>/<utc>/ (or
// --out), "<utc>-N" when that one exists; the escalations a branch has used
// are counted there across runs, and the next run starts at the step they
// reached.
//
// Exit codes: 0 SHIP, 2 stopped for a person, blocked or sent back to
// planning (the record says which), 1 a failure, 3 a usage or placement
// error (nothing run), 128+N stopped by signal N.
#include <filesystem>

#include "agents/backend.h"
#include "bundle/placement.h"
#include "cli/verbs.h"
#include "fix/loop.h"
#include "fix/personas.h"
#include "git/git.h"
#include "graph/graph.h"
#include "guard/guard.h"
#include "skill/skill.h"
#include "util/args.h"
#include "util/clock.h"
#include "util/console.h"
#include "util/fs.h"
#include "util/text.h"

namespace devgraph {
namespace {

constexpr int kExitUsage = 3;

int usage_exit(Error e) {
  if (e.exit_code == 2 || e.exit_code == 1) e.exit_code = kExitUsage;
  return report_error("fix", e);
}

int refuse(const std::string& why) {
  return usage_exit(fail(ErrorKind::usage, why, kExitUsage));
}

std::string git_line(CommandRunner& runner, const std::string& dir,
                     const std::vector<std::string>& args, bool& ok) {
  auto r = git::run_git(runner, dir, args, std::chrono::seconds(30), false);
  ok = r && r->ok();
  std::string out = r ? r->out : "";
  while (!out.empty() && (out.back() == '\n' || out.back() == '\r')) out.pop_back();
  return out;
}

// A person's decision to raise past the cap: {from, to, reason, approver, at}.
Expected<fix::RaiseDecision> read_decision(const std::string& path) {
  auto doc = load_json_file(path);
  if (!doc) return fail(ErrorKind::usage, "--raise-decision " + path + ": " + doc.error().message);
  const Json& j = *doc;
  fix::RaiseDecision d;
  for (auto [key, field] : {std::pair<const char*, std::string*>{"from", &d.from},
                            {"to", &d.to},
                            {"reason", &d.reason},
                            {"approver", &d.approver},
                            {"at", &d.at}}) {
    if (!j.is_object() || !j.contains(key) || !j.at(key).is_string())
      return fail(ErrorKind::usage, "--raise-decision " + path + ": no string `" + key + "`");
    *field = j.at(key).get<std::string>();
  }
  if (d.to.empty() || d.reason.empty() || d.approver.empty() || d.at.empty())
    return fail(ErrorKind::usage,
                "--raise-decision " + path + ": to, reason, approver and at must be given");
  return d;
}

}  // namespace

ArgParser verb_fix_parser() {
  ArgParser p("devgraph fix");
  p.description(
       "The bounded fix and re-review loop on one branch: the fixer closes a review's gaps "
       "(one commit per gap), a separate reviewer judges again, at most GRAPH.yaml "
       "fix.max_loops times; a loop that cannot finish is diagnosed and routed.")
      .option("worktree", "a linked worktree of the branch to fix")
      .hint(ValueHint::directory)
      .option("branch", "the branch to fix (its canonical worktree is used, or made)")
      .option("repo", "the repository, with --branch")
      .default_value("the current directory")
      .hint(ValueHint::directory)
      .option("review", "a review to start from (JSON or Markdown gap lines)")
      .default_value("none: the code-reviewer reviews the branch first")
      .hint(ValueHint::file)
      .option("criteria", "the acceptance criteria file the fixer and reviewer are given")
      .hint(ValueHint::file)
      .repeated("validate", "a command devgraph runs after each fix (repeatable)")
      .option("max-loops", "fix loops before the diagnosis")
      .default_value("GRAPH.yaml fix.max_loops")
      .option("base", "what the branch is reviewed against")
      .default_value("origin/HEAD, else main, else master")
      .option("out", "where the loop's files go")
      .default_value("<develop_home>/fix/<branch slug>/<utc>")
      .hint(ValueHint::directory)
      .option("raise-decision",
              "a person's recorded decision (JSON: from, to, reason, approver, at) to raise past "
              "the cap")
      .hint(ValueHint::file)
      .flag("final-gate",
            "a second review on GRAPH.yaml fix.final_gate_backend before SHIP (also "
            "fix.final_gate); a disagreement is an appeal for a person")
      .option("skill", "asset directory (GRAPH.yaml, agents/, templates/)")
      .default_value(kSkillDefault)
      .hint(ValueHint::directory)
      .option("agent", "agent backend: " + agents::backend_choices())
      .default_value("claude")
      .option("claude-bin", "the claude CLI binary (tests pass a fake)")
      .default_value(kAgentBinDefault)
      .hint(ValueHint::file)
      .option("model", "the fixer's model to start from")
      .default_value("the fixer's own")
      .option("sim-scenario", "scenario file for --agent sim")
      .hint(ValueHint::file)
      .option("agent-command", "argv template for --agent command")
      .option("persona-timeout-seconds", "wall-clock limit of one persona run")
      .default_value("GRAPH.yaml headless.persona_timeout_minutes");
  return p;
}

int verb_fix(const VerbArgs& args) {
  ArgParser p = verb_parser("fix");
  auto a = p.parse(args);
  if (!a) return usage_exit(a.error());
  if (a->get("worktree").has_value() == a->get("branch").has_value())
    return refuse("give one of --worktree DIR and --branch B");
  auto skill = locate_skill(a->get("skill"));
  if (!skill) return usage_exit(skill.error());
  auto graph = Graph::load(*skill);
  if (!graph) return usage_exit(graph.error());
  if (graph->fix.fixer.empty() || graph->fix.reviewer.empty() ||
      graph->fix.diagnosis_persona.empty())
    return refuse("GRAPH.yaml has no fix section naming the fixer, reviewer and diagnosis persona");
  std::string agent = a->get_or("agent", "claude");
  if (!agents::parse_backend(agent))
    return refuse("argument --agent: invalid choice: '" + agent + "' (choose from " +
                  agents::backend_choices() + ")");
  if (agent == "sim" && !a->get("sim-scenario")) return refuse("--agent sim needs --sim-scenario");
  auto tmpl = agent_command_template(a->get("agent-command"), agent);
  if (!tmpl) return usage_exit(p.usage_error(tmpl.error().message));

  fix::FixRequest req;
  req.rules = graph->fix;
  req.escalation = graph->escalation;
  req.skill_dir = *skill;
  req.backend = agent;
  req.model = a->get("model");
  req.validate = a->all("validate");
  if (a->flag("final-gate")) req.rules.final_gate = true;
  if (auto m = a->get("max-loops")) {
    auto n = parse_int(*m);
    if (!n || *n < 1 || *n > 20)
      return refuse("argument --max-loops: invalid int value: '" + *m + "'");
    req.rules.max_loops = static_cast<int>(*n);
  }
  fix::RuntimeFlags flags;
  flags.agent_bin = a->get_or("claude-bin", "");
  if (auto sc = a->get("sim-scenario")) flags.sim_scenario = absolute_path(*sc);
  flags.agent_command = *tmpl;
  if (auto t = a->get("persona-timeout-seconds")) {
    auto s = parse_seconds(*t);
    if (!s || *s <= 0)
      return refuse("argument --persona-timeout-seconds: invalid positive float value: '" + *t +
                    "'");
    flags.persona_timeout = std::chrono::milliseconds(static_cast<long long>(*s * 1000));
  }
  if (auto c = a->get("criteria")) {
    if (!is_readable_file(*c)) return refuse("--criteria " + *c + ": no such readable file");
    req.criteria = absolute_path(*c);
  }
  if (auto r = a->get("review")) {
    auto text = read_file(*r);
    if (!text) return refuse("--review " + *r + ": " + text.error().message);
    auto review = fix::parse_review_file(*text);
    if (!review) return refuse("--review " + *r + ": " + review.error().message);
    req.review = *review;
  }
  if (auto d = a->get("raise-decision")) {
    auto dec = read_decision(*d);
    if (!dec) return usage_exit(dec.error());
    req.decision = *dec;
  }

  // Placement: a linked worktree only, never the primary clone.
  RealCommandRunner runner;
  const guard::Roots roots = guard::Roots::from_env();
  std::string worktree;
  std::string branch;
  std::string develop_home;
  if (auto w = a->get("worktree")) {
    if (!is_directory(*w)) return refuse("--worktree " + *w + ": no such directory");
    worktree = absolute_path(*w);
    if (auto deny = bundle::check_bundle_worktree(worktree, roots))
      return refuse("placement guard: " + *deny);
    bool ok = false;
    branch = git_line(runner, worktree, {"symbolic-ref", "--short", "-q", "HEAD"}, ok);
    if (!ok) return refuse("--worktree " + worktree + " is not on a branch");
    auto placement = guard::resolve_placement(worktree, std::nullopt, roots);
    if (!placement) return refuse(placement.error().message);
    develop_home = placement->develop_home;
  } else {
    branch = *a->get("branch");
    std::string repo = absolute_path(a->get_or("repo", "."));
    auto placement = guard::resolve_placement(repo, branch, roots);
    if (!placement) return refuse(placement.error().message);
    if (!placement->worktree_path) return refuse("--branch " + branch + " has no worktree place");
    worktree = *placement->worktree_path;
    develop_home = placement->develop_home;
    bool ok = false;
    git_line(runner, repo, {"rev-parse", "-q", "--verify", "refs/heads/" + branch}, ok);
    if (!ok) return refuse("--branch " + branch + ": no such branch");
    if (!is_directory(worktree)) {
      auto top = placement->primary_top.value_or(repo);
      auto g = git::make_git(runner, top, {});
      if (auto s = g->worktree_add(worktree, branch, branch); !s)
        return refuse("could not make the worktree " + worktree + ": " + s.error().message);
    }
    if (auto deny = bundle::check_bundle_worktree(worktree, roots))
      return refuse("placement guard: " + *deny);
  }
  bool ok = false;
  if (auto b = a->get("base")) {
    req.base = *b;
    git_line(runner, worktree, {"rev-parse", "-q", "--verify", req.base}, ok);
    if (!ok) return refuse("--base " + req.base + ": no such ref");
  } else {
    for (const char* candidate : {"origin/HEAD", "main", "master"}) {
      git_line(runner, worktree, {"rev-parse", "-q", "--verify", candidate}, ok);
      if (ok) {
        req.base = candidate;
        break;
      }
    }
    if (req.base.empty()) return refuse("no base to review against: give --base");
  }
  req.worktree = worktree;
  req.subject = "branch " + branch;
  std::string slug = guard::branch_slug(branch);
  std::string home = join_path(join_path(develop_home, "fix"), slug);
  if (auto o = a->get("out")) {
    req.dir = absolute_path(*o);
  } else {
    // A record directory of its own: a second run in the same second gets
    // "<utc>-2", never the first's files.
    const std::string stamp = join_path(home, utc_stamp(system_clock().wall()));
    std::error_code ec;
    std::filesystem::create_directories(home, ec);
    for (int i = 1; i < 1000; ++i) {
      std::string candidate = i == 1 ? stamp : stamp + "-" + std::to_string(i);
      if (std::filesystem::create_directory(candidate, ec)) {
        req.dir = candidate;
        break;
      }
      if (ec) break;
    }
    if (req.dir.empty()) return refuse("cannot make a record directory under " + home);
  }
  // The raises this branch has used in earlier runs, and the step they
  // reached: the run starts there unless --model says otherwise.
  const std::string escalations = join_path(home, "escalations.json");
  if (auto e = load_json_file(escalations); e && e->is_object()) {
    req.raises_used = static_cast<int>(e->value("raises_used", 0LL));
    if (!req.model && e->contains("model") && (*e)["model"].is_string())
      req.model = (*e)["model"].get<std::string>();
    if (!req.effort && e->contains("effort") && (*e)["effort"].is_string())
      req.effort = (*e)["effort"].get<std::string>();
  }

  req.on_log = [](const Json& rec) { err() << "devgraph fix: " << dump_py(rec) << "\n"; };
  fix::RuntimePersonas personas(*graph, *skill, worktree, flags);
  auto git = git::make_git(runner, worktree, {}, {graph->headless.run_git_hooks});
  auto outcome = fix::run_fix(req, personas, *git, runner);
  if (!outcome) {
    err() << "devgraph fix: " << outcome.error().message << "\n";
    out() << "RESULT_JSON: "
          << dump_py(Json{{"status", "ERROR"}, {"summary", outcome.error().message}}) << std::endl;
    return outcome.error().exit_code > 1 ? outcome.error().exit_code : 1;
  }
  if (outcome->raises_used != req.raises_used) {
    std::ignore = make_directories(home);
    std::ignore = write_file_atomic(
        escalations, dump_py(Json{{"raises_used", outcome->raises_used},
                                  {"model", outcome->model ? Json(*outcome->model) : Json()},
                                  {"effort", outcome->effort ? Json(*outcome->effort) : Json()}},
                             2) +
                         "\n");
  }
  // What the tools showed, gap by gap.
  for (const auto& g : outcome->gaps)
    err() << "devgraph fix: " << g.status << ": " << fix::render_gap(g.gap) << "\n";
  if (!outcome->unclaimed.empty())
    err() << "devgraph fix: changed but claimed by no gap (left uncommitted): "
          << join(outcome->unclaimed, ", ") << "\n";
  if (!outcome->record.empty()) err() << "devgraph fix: record at " << outcome->record << "\n";
  Json result = fix::to_json(*outcome);
  result["status"] = outcome->end == "ship" ? "DONE" : "BLOCKED";
  result["summary"] = outcome->end == "ship"
                          ? "SHIP after " + std::to_string(outcome->loops) + " loop(s)"
                          : outcome->route;
  result["dir"] = req.dir;
  out() << "RESULT_JSON: " << dump_py(result) << std::endl;
  return outcome->end == "ship" ? 0 : 2;
}

}  // namespace devgraph
