// devgraph schedule check|runnable|conflicts|critical-path|footprint-check:
// a printer over the schedule module with the reference script's flags,
// JSON and exit codes (footprint-check exits 2 on a violation).

#include "cli/help.h"
#include "cli/verbs.h"
#include "graph/graph.h"
#include "schedule/schedule.h"
#include "skill/skill.h"
#include "util/args.h"
#include "util/console.h"
#include "util/fs.h"
#include "util/json.h"

namespace devgraph {
namespace {

constexpr const char* kVerb = "schedule";

Error top_usage_error(const std::string& message) {
  return Error{verb_usage(*find_verb(kVerb)) + "\ndevgraph schedule: error: " + message, 2};
}

void print_json(const Json& value) {
  out() << dump_py(value, 2) << "\n";
}

// argparse's `type=int`: a whole number or a usage error naming the flag.
// As in the reference, --max 0 is accepted (it starves the bundle: the
// deadlock route) and --ceiling 0 means the default; negatives are refused.
Expected<std::optional<int>> int_flag(const ArgParser& parser, const ParsedArgs& args,
                                      const std::string& name, int minimum) {
  auto raw = args.get(name);
  if (!raw) return std::optional<int>();
  auto v = parse_int(*raw);
  if (!v || *v < -2147483648LL || *v > 2147483647LL)
    return parser.usage_error("argument --" + name + ": invalid int value: '" + *raw + "'");
  if (*v < minimum)
    return parser.usage_error("argument --" + name + ": must be at least " +
                              std::to_string(minimum));
  return std::optional<int>(static_cast<int>(*v));
}

int run_check(const ParsedArgs& args) {
  auto plan = schedule::load_plan(args.positionals()[0]);
  if (!plan) return report_error(kVerb, plan.error());
  out() << "OK: tasks.json is valid\n";
  return 0;
}

int run_runnable(const ArgParser& parser, const ParsedArgs& args) {
  auto max_flag = int_flag(parser, args, "max", 0);
  if (!max_flag) return report_error(kVerb, max_flag.error());
  auto plan = schedule::load_plan(args.positionals()[0]);
  if (!plan) return report_error(kVerb, plan.error());
  const std::string bundle = *args.get("bundle");
  if (plan->bundle != bundle)
    return report_error(
        kVerb, fail("tasks.json is for bundle '" + plan->bundle + "', not '" + bundle + "'"));
  int max_parallel = 0;
  if (*max_flag) {
    max_parallel = **max_flag;
  } else {
    // The ceiling is configuration: GRAPH.yaml's concurrency block.
    auto skill = locate_skill(args.get("skill"));
    if (!skill) return report_error(kVerb, skill.error());
    auto graph = Graph::load(*skill);
    if (!graph) return report_error(kVerb, graph.error());
    max_parallel = graph->concurrency.max_parallel_tasks_per_bundle;
  }
  const std::string state_path = *args.get("state");
  auto cursors = schedule::read_task_cursors(state_path, bundle);
  if (!cursors)
    return report_error(
        kVerb, fail("cannot read state at " + state_path + ": " + cursors.error().message));
  auto result = schedule::compute_runnable(*plan, *cursors, max_parallel);
  if (!result) return report_error(kVerb, result.error());
  print_json(result->to_json());
  return 0;
}

int run_conflicts(const ParsedArgs& args) {
  auto plan = schedule::load_plan(args.positionals()[0]);
  if (!plan) return report_error(kVerb, plan.error());
  print_json(schedule::conflicts_to_json(schedule::all_conflicts(*plan)));
  return 0;
}

int run_critical_path(const ArgParser& parser, const ParsedArgs& args) {
  auto ceiling = int_flag(parser, args, "ceiling", 0);
  if (!ceiling) return report_error(kVerb, ceiling.error());
  auto plan = schedule::load_plan(args.positionals()[0]);
  if (!plan) return report_error(kVerb, plan.error());
  print_json(schedule::critical_path(*plan, *ceiling).to_json());
  return 0;
}

int run_footprint_check(const ParsedArgs& args) {
  auto plan = schedule::load_plan(args.positionals()[0]);
  if (!plan) return report_error(kVerb, plan.error());
  std::vector<std::string> in_flight;
  const std::string list = args.get_or("in-flight", "");
  size_t start = 0;
  while (start <= list.size()) {
    size_t comma = list.find(',', start);
    if (comma == std::string::npos) comma = list.size();
    std::string id = list.substr(start, comma - start);
    size_t b = id.find_first_not_of(" \t");
    size_t e = id.find_last_not_of(" \t");
    if (b != std::string::npos) in_flight.push_back(id.substr(b, e - b + 1));
    start = comma + 1;
  }
  RealCommandRunner runner;
  auto report = schedule::footprint_check(*plan, *args.get("task"), in_flight,
                                          absolute_path(*args.get("worktree")), runner);
  if (!report) return report_error(kVerb, report.error());
  print_json(report->to_json());
  return report->violation ? 2 : 0;
}

}  // namespace

ArgParser verb_schedule_parser() {
  ArgParser p("devgraph schedule");
  p.description("Deterministic task scheduling for one bundle's tasks.json.");
  return p;
}

std::vector<Subcommand> verb_schedule_subcommands() {
  struct Sub {
    const char* name;
    const char* summary;
  };
  const Sub subs[] = {
      {"check", "validate the plan (every problem, every cycle)"},
      {"runnable", "tasks that may start now and the scheduler route"},
      {"conflicts", "every pair of tasks whose footprints overlap"},
      {"critical-path", "the longest dependency chain (a diagnostic)"},
      {"footprint-check", "classify uncommitted changes; exit 2 on a violation"},
  };
  std::vector<Subcommand> out;
  for (const Sub& s : subs) {
    const std::string sub = s.name;
    ArgParser parser("devgraph schedule " + sub);
    parser.positional("tasks_json", "the planner's tasks.json").hint(ValueHint::file);
    if (sub == "runnable") {
      parser.option("state", "the run's state.json", true)
          .hint(ValueHint::file)
          .option("bundle", "bundle id (must match tasks.json)", true)
          .hint(ValueHint::bundle)
          .option("max", "tasks in flight at most")
          .default_value("GRAPH.yaml concurrency.max_parallel_tasks_per_bundle");
    } else if (sub == "critical-path") {
      parser.option("ceiling", "longest acceptable chain").default_value("max(3, ceil(tasks / 2))");
    } else if (sub == "footprint-check") {
      parser.option("task", "the task about to commit", true)
          .option("worktree", "the bundle's worktree", true)
          .hint(ValueHint::directory)
          .option("in-flight", "comma-separated ids of the other tasks in flight")
          .default_value("none");
    }
    parser.option("skill", "skill directory")
        .default_value(kSkillDefault)
        .hint(ValueHint::directory);
    out.push_back({sub, s.summary, std::move(parser)});
  }
  return out;
}

int verb_schedule(const VerbArgs& args) {
  if (args.empty())
    return report_error(kVerb, top_usage_error("the following arguments are required: cmd"));
  const std::string sub = args[0];
  if (sub == "-h" || sub == "--help")
    return report_error(kVerb, Error{verb_help(*find_verb(kVerb)), 0});
  auto subs = verb_schedule_subcommands();
  std::string choices;
  const Subcommand* found = find_subcommand(subs, sub, choices);
  if (found == nullptr)
    return report_error(kVerb, top_usage_error("argument cmd: invalid choice: '" + sub +
                                               "' (choose from " + choices + ")"));
  const ArgParser& parser = found->parser;
  VerbArgs rest(args.begin() + 1, args.end());
  auto parsed = parser.parse(rest);
  if (!parsed) return report_error(kVerb, parsed.error());

  if (sub == "check") return run_check(*parsed);
  if (sub == "runnable") return run_runnable(parser, *parsed);
  if (sub == "conflicts") return run_conflicts(*parsed);
  if (sub == "critical-path") return run_critical_path(parser, *parsed);
  return run_footprint_check(*parsed);
}

}  // namespace devgraph
