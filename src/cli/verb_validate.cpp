// devgraph validate graph|state|result|run: check the skill's GRAPH.yaml, a
// run state file, a persona transcript's RESULT_JSON line, or a whole run
// directory replayed against the graph.
//
// Output follows the develop-v4 validator: one "ERROR: ..." line per
// problem on stdout and exit 1, or a single "OK: ..." line and exit 0. A
// file under check that is missing or unreadable is reported the same way
// (it is a verdict about that file); a broken skill directory (no usable
// schema) is an error on stderr.

#include "cli/verbs.h"
#include "contracts/schema.h"
#include "graph/graph.h"
#include "graph/keys.h"
#include "replay/replay.h"
#include "skill/personas.h"
#include "skill/skill.h"
#include "templates/render.h"
#include "util/args.h"
#include "util/console.h"
#include "util/fs.h"
#include "validate/contract_check.h"

namespace devgraph {
namespace {

int verdict(const std::vector<std::string>& errors, const std::string& ok) {
  for (const auto& e : errors) out() << "ERROR: " << e << "\n";
  if (!errors.empty()) return 1;
  out() << "OK: " << ok << "\n";
  return 0;
}

// Checks of files that sit beside GRAPH.yaml in the skill directory: the
// contracts, the persona files (agents/<name>.md, exactly one per entry of
// `personas`) and the brief and dispatch templates.
std::vector<std::string> check_skill_assets(const Graph& graph, const std::string& skill_dir) {
  std::vector<std::string> errors = check_persona_files(skill_dir, graph);
  for (auto& e : templates::check_skill_templates(skill_dir)) errors.push_back(std::move(e));
  for (const char* contract :
       {"contracts/run-state.schema.json", "contracts/agent-result.schema.json"})
    if (auto schema = Schema::load(join_path(skill_dir, contract)); !schema)
      errors.push_back(schema.error().message);
  return errors;
}

int validate_graph(const std::string& skill) {
  auto graph = Graph::load(skill);
  if (!graph) return verdict({graph.error().message}, "");
  auto errors = check_graph(*graph);
  for (auto& e : check_skill_graph_keys(skill)) errors.push_back(std::move(e));
  for (auto& e : check_skill_assets(*graph, skill)) errors.push_back(std::move(e));
  return verdict(errors, "graph structure, lanes, events, and capacity thresholds are valid");
}

int validate_state(const std::string& skill, const std::string& path) {
  auto checker = ContractChecker::load(state_schema_path(skill));
  if (!checker) return report_error("validate", checker.error());
  auto state = load_json_file(path);
  if (!state) return verdict({state.error().message}, "");
  return verdict(checker->check(*state), "run state is valid");
}

int validate_result(const std::string& skill, const std::string& path) {
  auto checker = ContractChecker::load(result_schema_path(skill));
  if (!checker) return report_error("validate", checker.error());
  auto text = read_file(path);
  if (!text) return verdict({text.error().message}, "");
  auto result = result_json_line(*text);
  if (!result) return verdict({result.error().message}, "");
  return verdict(checker->check(*result, ContractChecker::Order::by_schema),
                 "agent result is valid");
}

int validate_run(const std::string& skill, const std::string& run_dir) {
  auto graph = Graph::load(skill);
  if (!graph) return report_error("validate", graph.error());
  auto report = replay_run_dir(*graph, run_dir);
  if (!report) return verdict({report.error().message}, "");
  // The state the log is compared with must itself be a valid state.
  auto checker = ContractChecker::load(state_schema_path(skill));
  if (!checker) return report_error("validate", checker.error());
  if (auto state = load_json_file(join_path(run_dir, "state.json")); state)
    for (const auto& v : checker->check(*state)) report->problems.push_back("state.json " + v);
  size_t cursors = report->cursors.size();
  return verdict(report->problems, "run replays cleanly: " + std::to_string(report->events) +
                                       " events, " + std::to_string(cursors) +
                                       (cursors == 1 ? " cursor" : " cursors") +
                                       " agree with state.json");
}

}  // namespace

ArgParser verb_validate_parser() {
  ArgParser parser("devgraph validate");
  parser.description("Check GRAPH.yaml, a run state, a persona result, or a whole run.")
      .positional("check", "graph | state PATH | result PATH | run RUN_DIR")
      .hint(ValueHint::subcommand)
      .option("skill", "skill directory")
      .default_value(kSkillDefault)
      .hint(ValueHint::directory)
      .allow_rest();
  return parser;
}

std::vector<Subcommand> verb_validate_subcommands() {
  std::vector<Subcommand> subs;
  auto add = [&subs](const std::string& name, const std::string& summary) -> ArgParser& {
    subs.push_back({name, summary, ArgParser("devgraph validate " + name)});
    return subs.back().parser;
  };
  auto skill = [](ArgParser& p) {
    p.option("skill", "skill directory").default_value(kSkillDefault).hint(ValueHint::directory);
  };
  skill(add("graph", "the skill's GRAPH.yaml, contracts, personas and templates"));
  skill(add("state", "a state.json against the run-state schema")
            .positional("path", "the state.json to check")
            .hint(ValueHint::file));
  skill(add("result", "a persona transcript's RESULT_JSON line against the result schema")
            .positional("path", "a text file whose last non-empty line is RESULT_JSON: {...}")
            .hint(ValueHint::file));
  skill(add("run", "a run directory's events.jsonl replayed against the graph and state.json")
            .positional("run_dir", "the run directory (state.json and events.jsonl)")
            .hint(ValueHint::directory));
  return subs;
}

int verb_validate(const VerbArgs& args) {
  ArgParser parser = verb_parser("validate");
  auto parsed = parser.parse(args);
  if (!parsed) return report_error("validate", parsed.error());
  const std::string check = parsed->positionals()[0];
  auto subs = verb_validate_subcommands();
  const Subcommand* found = nullptr;
  for (const auto& s : subs)
    if (s.name == check) found = &s;
  if (found == nullptr)
    return report_error("validate", parser.usage_error("argument check: invalid choice: '" + check +
                                                       "' (choose from 'graph', 'state', "
                                                       "'result', 'run')"));
  const ArgParser& sub = found->parser;
  auto subparsed = sub.parse(parsed->rest());
  if (!subparsed) return report_error("validate", subparsed.error());
  auto skill_flag = subparsed->get("skill");
  if (!skill_flag) skill_flag = parsed->get("skill");
  auto skill = locate_skill(skill_flag);
  if (!skill) return report_error("validate", skill.error());

  if (check == "graph") return validate_graph(*skill);
  const std::string target = subparsed->positionals()[0];
  if (check == "state") return validate_state(*skill, target);
  if (check == "result") return validate_result(*skill, target);
  return validate_run(*skill, target);
}

}  // namespace devgraph
