#include "doctor/doctor.h"

#include <algorithm>

#include "agents/headless.h"
#include "doctor/leftovers.h"
#include "doctor/repository.h"
#include "doctor/setup.h"
#include "doctor/tools.h"
#include "graph/graph.h"
#include "inbox/inbox.h"
#include "skill/skill.h"

namespace devgraph::doctor {
namespace {

constexpr agents::BackendKind kCliBackends[] = {
    agents::BackendKind::claude, agents::BackendKind::codex, agents::BackendKind::gemini};

constexpr install::Tool kTools[] = {install::Tool::claude, install::Tool::codex,
                                    install::Tool::copilot};

void add(std::vector<Finding>& out, std::vector<Finding> more) {
  for (auto& f : more) out.push_back(std::move(f));
}

// GRAPH.yaml's headless settings shape the agents' argv; without a graph
// the defaults stand in, and the skill's own finding says why.
HeadlessSettings headless_of(const Options& o, std::vector<Finding>& out) {
  auto skill = locate_skill(o.skill);
  if (!skill) {
    out.push_back(problem("skill", "skill", skill.error().message,
                          "pass --skill DIR or set DEVGRAPH_SKILL to devgraph's skill directory"));
    return {};
  }
  auto graph = Graph::load(*skill);
  if (!graph) {
    out.push_back(problem("skill", "skill", graph.error().message,
                          "check it: devgraph validate graph --skill " + *skill));
    return {};
  }
  out.push_back(ok("skill", "skill", "assets at " + *skill));
  return graph->headless;
}

void check_agents(const Options& o, const HeadlessSettings& headless, const std::string& cwd,
                  CommandRunner& runner, std::vector<Finding>& out) {
  for (auto kind : kCliBackends) {
    agents::BackendFlags flags;
    flags.kind = kind;
    if (kind == agents::BackendKind::claude) flags.binary = o.claude_bin;
    auto options = agents::headless_backend(headless, flags);
    // gemini names its policy directory only when it has one to name.
    options.config_dir = "CONFIG_DIR";
    auto cli = agent_cli(options);
    const std::string name(agents::backend_name(kind));
    if (!cli) {
      out.push_back(problem("agent." + name, name, cli.error().message, "report it"));
      continue;
    }
    std::map<std::string, std::string> env;
    if (kind == agents::BackendKind::claude) env["CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC"] = "1";
    Probe version = probe(runner, {cli->program, "--version"}, cwd, env);
    std::optional<Probe> help;
    if (version.started) help = probe(runner, cli->help_argv, cwd, env);
    out.push_back(
        check_agent_cli(*cli, find_on_path(cli->program, o.path), version, help, kind == o.agent));
  }
}

}  // namespace

std::vector<Finding> run_doctor(const Options& o, CommandRunner& runner) {
  std::vector<Finding> out;
  const std::map<std::string, std::string> git_env = {{"GIT_TERMINAL_PROMPT", "0"},
                                                      {"GIT_OPTIONAL_LOCKS", "0"}};
  out.push_back(check_git(probe(runner, {"git", "--version"}, "", git_env)));
  HeadlessSettings headless = headless_of(o, out);

  RepositoryFacts repo = gather_repository(runner, o.repo, o.repo_given, o.roots);
  std::vector<Finding> repo_findings = check_repository(repo);
  const std::string delivery =
      repo.git_error || repo.check.fault != orchestrator::RepositoryCheck::Fault::none
          ? std::string()
          : repo.check.delivery;
  const std::string cwd = repo.has_clone() ? repo.check.top : std::string();
  add(out, std::move(repo_findings));

  const std::map<std::string, std::string> gh_env = {{"GH_PROMPT_DISABLED", "1"},
                                                     {"GH_NO_UPDATE_NOTIFIER", "1"}};
  Probe gh_version = probe(runner, {"gh", "--version"}, cwd, gh_env);
  std::optional<Probe> gh_auth;
  if (gh_version.ok()) gh_auth = probe(runner, {"gh", "auth", "status"}, cwd, gh_env);
  out.push_back(check_gh(gh_version, gh_auth, delivery));

  check_agents(o, headless, cwd, runner, out);

  std::optional<guard::Placement> clone;
  if (repo.has_clone()) clone = repo.check.place;
  add(out, check_guard(gather_guard(clone, o.roots)));

  install::Context ctx = o.install;
  if (repo.has_clone()) ctx.location = repo.check.top;
  for (auto tool : kTools) out.push_back(check_install(gather_install(tool, ctx, o.path)));

  for (const auto& disk : gather_disk(o.roots)) out.push_back(check_disk(disk));

  if (repo.has_clone()) {
    const guard::Placement& place = repo.check.place;
    out.push_back(check_lock(gather_lock(place.develop_home, gather_runs(place.develop_home))));
    add(out, check_worktrees(gather_worktrees(runner, repo.check.top, place.worktrees_dir,
                                              place.develop_home, o.roots.home)));
    add(out, check_waiting(inbox::list_items(place.develop_home)));
  }
  return out;
}

bool any_problem(const std::vector<Finding>& findings) {
  return std::any_of(findings.begin(), findings.end(),
                     [](const Finding& f) { return f.level == Level::problem; });
}

int exit_code(const std::vector<Finding>& findings) {
  return any_problem(findings) ? 1 : 0;
}

namespace {

struct Counts {
  size_t ok = 0, warning = 0, problem = 0;
};

Counts count(const std::vector<Finding>& findings) {
  Counts c;
  for (const auto& f : findings) {
    if (f.level == Level::ok) ++c.ok;
    if (f.level == Level::warning) ++c.warning;
    if (f.level == Level::problem) ++c.problem;
  }
  return c;
}

std::string plural(size_t n, const char* word) {
  return std::to_string(n) + " " + word + (n == 1 ? "" : "s");
}

}  // namespace

std::string render_table(const std::vector<Finding>& findings) {
  size_t area_width = 4;
  for (const auto& f : findings) area_width = std::max(area_width, f.area.size());
  std::string out;
  for (const auto& f : findings) {
    std::string level(level_name(f.level));
    out += level + std::string(9 - std::min<size_t>(level.size(), 8), ' ');
    out += f.area + std::string(area_width + 2 - f.area.size(), ' ');
    out += f.message;
    if (!f.fix.empty()) out += " \xE2\x80\x94 " + f.fix;  // an em dash
    out += "\n";
  }
  Counts c = count(findings);
  out += "\n" + plural(c.ok, "check") + " ok, " + plural(c.warning, "warning") + ", " +
         plural(c.problem, "problem") +
         (c.problem ? ": devgraph is not ready until each problem is fixed\n"
                    : ": devgraph is ready\n");
  return out;
}

Json to_json(const std::vector<Finding>& findings) {
  Counts c = count(findings);
  Json checks = Json::array();
  for (const auto& f : findings)
    checks.push_back({{"id", f.id},
                      {"area", f.area},
                      {"level", std::string(level_name(f.level))},
                      {"message", f.message},
                      {"fix", f.fix}});
  return Json{{"ok", c.problem == 0},
              {"counts", {{"ok", c.ok}, {"warning", c.warning}, {"problem", c.problem}}},
              {"checks", checks}};
}

}  // namespace devgraph::doctor
