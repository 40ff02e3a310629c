// devgraph checkpoint RUN_DIR init|go|move|event|signal|handoff|resume|show:
// the command-line face of the run-state store (src/store/run_store.h),
// with the flags, output and exit codes of the reference checkpoint.py.

#include <limits>

#include "cli/verbs.h"
#include "contracts/schema.h"
#include "graph/graph.h"
#include "metrics/metrics.h"
#include "skill/skill.h"
#include "store/run_store.h"
#include "util/args.h"
#include "util/console.h"
#include "util/fs.h"

namespace devgraph {
namespace {

constexpr const char* kVerb = "checkpoint";
struct Command {
  const char* name;
  const char* summary;
};
constexpr Command kCommands[] = {
    {"init", "create the run: state.json and its first event; prints the run id"},
    {"go", "move the orchestrator to its next node"},
    {"move", "move a bundle's or a task's cursor to its next node"},
    {"event", "record an event without a move"},
    {"signal", "count what grew a context; reports the capacity tier"},
    {"handoff", "hand the session off; prints the handoff file"},
    {"resume", "what a new session needs to go on, as JSON"},
    {"show", "print state.json"},
};

// Splits argv into the words up to and including the command (run dir,
// command, --skill anywhere before it) and the command's own arguments.
size_t command_end(const VerbArgs& args) {
  size_t words = 0;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    // --skill or any prefix of it (argparse abbreviations) takes the next word.
    if (a.size() > 2 && a.find('=') == std::string::npos &&
        std::string_view("--skill").substr(0, a.size()) == a) {
      ++i;
      continue;
    }
    if (a.rfind("--", 0) == 0 || a == "-h") continue;
    if (++words == 2) return i + 1;
  }
  return args.size();
}

// The parser of command `cmd`; with the graph, --type of signal takes only
// the graph's signals.
ArgParser command_parser(const std::string& cmd, const Graph* graph) {
  ArgParser p("devgraph checkpoint RUN_DIR " + cmd);
  p.option("skill", "skill directory").default_value(kSkillDefault).hint(ValueHint::directory);
  if (cmd == "init") {
    p.option("repo", "repository path", true)
        .hint(ValueHint::directory)
        .option("default-branch", "the repository's default branch", true)
        .option("merge", "JSON object deep-merged into the new state");
  } else if (cmd == "go") {
    p.option("node", "the orchestrator's next node", true)
        .option("event", "event type recorded for the move", true)
        .option("merge", "JSON object deep-merged into the state")
        .option("detail", "JSON object recorded as the event's detail");
  } else if (cmd == "move") {
    p.option("bundle", "bundle id", true)
        .hint(ValueHint::bundle)
        .option("task", "task id (moves the task cursor B/T)")
        .option("node", "the cursor's next node", true)
        .option("event", "event type recorded for the move", true)
        .option("merge", "JSON object deep-merged into the cursor record")
        .option("detail", "JSON object recorded as the event's detail")
        .option("plan", "tasks.json to register on the bundle (the board then lists every task)")
        .hint(ValueHint::file);
  } else if (cmd == "event") {
    p.option("event", "event type", true)
        .option("detail", "JSON object recorded as the event's detail")
        .option("merge", "JSON object deep-merged into the state");
  } else if (cmd == "signal") {
    p.option("type", "what grew the context (GRAPH.yaml capacity.signals)", true,
             graph != nullptr ? graph->capacity.signals : std::vector<std::string>{})
        .option("count", "how much")
        .default_value("1")
        .option("bundle", "count for this bundle's tech lead instead of the orchestrator")
        .hint(ValueHint::bundle)
        .flag("reset", "start a fresh context first");
  } else if (cmd == "handoff") {
    p.option("reason", "why the session hands off", true);
  }
  return p;
}

Expected<Json> json_flag(const ParsedArgs& a, const std::string& name) {
  auto raw = a.get(name);
  if (!raw) return Json();
  return parse_json_object(*raw, name);
}

// The reference prints these lines with f-strings: values as Python's str().
int print_committed_line(const Json& state, const std::string& middle, const std::string& event) {
  write_out("[" + py_str(state["run_id"]) + "] " + middle + " event=" + event + "\n");
  return 0;
}

}  // namespace

namespace {

// The session record, written as the reference writes it: at a terminal
// status and at a handoff. A failure only warns; the checkpoint stands.
void record_session(const std::string& run_dir) {
  auto r = metrics::record(run_dir, std::nullopt, std::nullopt);
  if (!r) {
    out().flush();
    err() << "[metrics] WARNING: session metrics not recorded (" << r.error().message
          << "); run: devgraph metrics record " << run_dir << "\n";
  }
}

}  // namespace

ArgParser verb_checkpoint_parser() {
  ArgParser top("devgraph checkpoint");
  top.description(
         "Record run state under RUN_DIR: state.json (the current state) and events.jsonl "
         "(every transition), both shared with the reference runtime.")
      .positional("run_dir", "the run directory")
      .hint(ValueHint::directory)
      .positional("command", "init, go, move, event, signal, handoff, resume or show")
      .hint(ValueHint::subcommand)
      .option("skill", "skill directory")
      .default_value(kSkillDefault)
      .hint(ValueHint::directory)
      .allow_rest();
  return top;
}

std::vector<Subcommand> verb_checkpoint_subcommands() {
  std::vector<Subcommand> subs;
  for (const Command& c : kCommands)
    subs.push_back({c.name, c.summary, command_parser(c.name, nullptr)});
  return subs;
}

int verb_checkpoint(const VerbArgs& args) {
  ArgParser top = verb_parser(kVerb);
  const size_t split = command_end(args);
  VerbArgs head(args.begin(), args.begin() + static_cast<long>(split));
  VerbArgs tail(args.begin() + static_cast<long>(split), args.end());
  auto parsed_top = top.parse(head);
  if (!parsed_top) return report_error(kVerb, parsed_top.error());
  const std::string run_dir = parsed_top->positionals()[0];
  const std::string cmd = parsed_top->positionals()[1];
  bool known = false;
  for (const Command& c : kCommands) known = known || cmd == c.name;
  if (!known) {
    std::string list;
    for (const Command& c : kCommands)
      list += std::string(list.empty() ? "'" : ", '") + c.name + "'";
    return report_error(kVerb, top.usage_error("argument command: invalid choice: '" + cmd +
                                               "' (choose from " + list + ")"));
  }

  // `show` needs neither the graph nor the schema: keep it cheap.
  if (cmd == "show") {
    auto parsed = command_parser(cmd, nullptr).parse(tail);
    if (!parsed) return report_error(kVerb, parsed.error());
    auto state = read_run_state(run_dir);
    if (!state) return report_error(kVerb, state.error());
    out() << dump_py(*state, 2) << "\n";
    return 0;
  }

  std::optional<std::string> skill_flag = parsed_top->get("skill");
  // Parse once without the graph so usage errors need no assets.
  auto pre = command_parser(cmd, nullptr).parse(tail);
  if (!pre) return report_error(kVerb, pre.error());
  if (pre->get("skill")) skill_flag = pre->get("skill");
  auto skill = locate_skill(skill_flag);
  if (!skill) return report_error(kVerb, skill.error());
  auto graph = Graph::load(*skill);
  if (!graph) return report_error(kVerb, graph.error());
  ArgParser parser = command_parser(cmd, &*graph);
  auto a = parser.parse(tail);
  if (!a) return report_error(kVerb, a.error());
  auto schema = Schema::load(state_schema_path(*skill));
  if (!schema) return report_error(kVerb, schema.error());

  RunStore store(run_dir, *graph, *schema);
  // One command, one change: nothing here keeps the returned state, so the
  // cursor maps can stay unparsed.
  store.defer_cursor_maps(true);

  if (cmd == "init") {
    auto merge = json_flag(*a, "merge");
    if (!merge) return report_error(kVerb, merge.error());
    auto done = store.init({*a->get("repo"), *a->get("default-branch"), *merge});
    if (!done) return report_error(kVerb, done.error());
    write_out(store.run_id() + "\n");
    return 0;
  }
  if (cmd == "go" || cmd == "event" || cmd == "move") {
    auto detail = json_flag(*a, "detail");
    if (!detail) return report_error(kVerb, detail.error());
    auto merge = json_flag(*a, "merge");
    if (!merge) return report_error(kVerb, merge.error());
    const std::string event = *a->get("event");
    if (cmd == "go" || cmd == "event") {
      auto done = cmd == "go" ? store.go({*a->get("node"), event, *merge, *detail})
                              : store.event({event, *detail, *merge});
      if (!done) return report_error(kVerb, done.error());
      int code = print_committed_line(done->state, "node=" + py_str(done->state["node"]), event);
      const std::string status = json_str(done->state, "status");
      if (status == "complete" || status == "human_required") record_session(run_dir);
      return code;
    }
    MoveRequest req;
    req.bundle = *a->get("bundle");
    req.task = a->get("task");
    req.node = *a->get("node");
    req.event = event;
    req.merge = *merge;
    req.detail = *detail;
    req.plan_path = a->get("plan");
    auto done = store.move(req);
    if (!done) return report_error(kVerb, done.error());
    const Json& cursor = done->events.back()["detail"]["cursor"];
    return print_committed_line(done->state, "cursor=" + py_str(cursor) + " node=" + req.node,
                                event);
  }
  if (cmd == "signal") {
    SignalRequest req;
    req.type = *a->get("type");
    if (auto raw = a->get("count")) {
      bool too_big = false;
      auto n = parse_int(*raw, &too_big);
      if (too_big)
        return report_error(
            kVerb, parser.usage_error("argument --count: " + *raw +
                                      " is out of range (a counter holds at most " +
                                      std::to_string(std::numeric_limits<long long>::max()) + ")"));
      if (!n)
        return report_error(
            kVerb, parser.usage_error("argument --count: invalid int value: '" + *raw + "'"));
      req.count = *n;
    }
    req.bundle = a->get("bundle");
    req.reset = a->flag("reset");
    auto done = store.signal(req);
    if (!done) return report_error(kVerb, done.error());
    out() << dump_py(done->report) << "\n";
    return 0;
  }
  if (cmd == "handoff") {
    auto done = store.handoff(*a->get("reason"));
    if (!done) return report_error(kVerb, done.error());
    record_session(run_dir);
    write_out(done->handoff_path + "\n");
    return 0;
  }
  // resume
  auto done = store.resume();
  if (!done) return report_error(kVerb, done.error());
  out() << dump_py(done->summary) << "\n";
  return 0;
}

}  // namespace devgraph
