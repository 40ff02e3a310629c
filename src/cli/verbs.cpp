#include "cli/verbs.h"

#include <cstdio>
#include <cstring>
#include <exception>

#include "cli/help.h"
#include "util/console.h"
#include "util/suggest.h"
#include "util/words.h"

namespace devgraph {
namespace {

// The one table of verbs, by group, each group in the order a user meets
// its verbs. `devgraph --help`, `devgraph VERB --help`, the completions and
// the man pages are all made from it (cli/help.h, cli/completion.h).
constexpr Verb kVerbs[] = {
    // Run the loop.
    {.name = "run",
     .summary = "turn eligible open issues into bundles and drive them to pull requests, resumably",
     .run = verb_run,
     .group = VerbGroup::loop,
     .parser = verb_run_parser,
     .example = "devgraph run --issues local --max-bundles 2 --board",
     .exit_status = "0 the run is complete\n"
                    "1 the issues could not be read\n"
                    "2 the run waits for a person (see devgraph inbox)\n"
                    "3 a usage, state or placement error, or a board port that cannot be had "
                    "(nothing written)\n"
                    "128+N stopped by signal N (the next devgraph run resumes it)"},
    {.name = "issue",
     .summary = "local issues: file, list, show and close them",
     .run = verb_issue,
     .group = VerbGroup::loop,
     .parser = verb_issue_parser,
     .subcommands = verb_issue_subcommands,
     .example = "devgraph issue new 'Add a --json flag' --label cli --priority P1",
     .exit_status = "0 done\n"
                    "1 refused or failed (no such issue, a corrupt issue file, the file system)\n"
                    "3 a usage error, or no git repository at --repo (nothing written)"},
    {.name = "inbox",
     .summary = "list what waits for a person in this repository's runs",
     .run = verb_inbox,
     .group = VerbGroup::loop,
     .parser = verb_inbox_parser,
     .example = "devgraph inbox --json",
     .exit_status = "0 listed, also when nothing waits\n"
                    "3 a usage error, or no git repository at --repo"},
    {.name = "answer",
     .summary = "answer what a bundle or task waits for, so its run can go on",
     .run = verb_answer,
     .group = VerbGroup::loop,
     .parser = verb_answer_parser,
     .example = "devgraph answer b2/T3 --text 'Keep the v1 endpoint; mark it deprecated.'",
     .exit_status = "0 answered\n"
                    "1 refused or failed (the item does not wait, the run refused the change)\n"
                    "3 a usage error, or no git repository at --repo (nothing written)"},
    {.name = "clean",
     .summary =
         "clean up the repository's own branches: integrate, verify, delete only what is proven",
     .run = verb_clean,
     .group = VerbGroup::loop,
     .parser = verb_clean_parser,
     .example = "devgraph clean --dry-run",
     .exit_status = "0 the clean run finished (what it left for a person has its reason)\n"
                    "1 GitHub or git could not be read\n"
                    "3 a usage, state or placement error (nothing written)\n"
                    "128+N stopped by signal N (the next devgraph clean resumes it)"},
    // Look at it.
    {.name = "board",
     .summary = "serve a run's live board in a browser, each event pushed as it happens",
     .run = verb_board,
     .group = VerbGroup::look,
     .parser = verb_board_parser,
     .subcommands = verb_board_subcommands,
     .example = "devgraph board serve --open",
     .exit_status = "0 stopped by a signal (serve), or written (build)\n"
                    "1 the port cannot be had, or the loop failed\n"
                    "3 a usage error, or no run at TARGET",
     .usage = "usage: devgraph board serve [TARGET] [--port P] [--bind ADDR] [--open]\n"
              "       devgraph board build [TARGET] [-o FILE] [--run-id ID]"},
    {.name = "metrics",
     .summary = "session metrics: record a run, report its timing and cost, list sessions",
     .run = verb_metrics,
     .group = VerbGroup::look,
     .parser = verb_metrics_parser,
     .subcommands = verb_metrics_subcommands,
     .example = "devgraph metrics report RUN_DIR",
     .exit_status = "0 done\n"
                    "1 a run or record that cannot be read (nothing written)\n"
                    "2 a usage error"},
    {.name = "doctor",
     .summary = "check that this machine and repository are ready; a fix per problem",
     .run = verb_doctor,
     .group = VerbGroup::look,
     .parser = verb_doctor_parser,
     .example = "devgraph doctor --json",
     .exit_status = "0 no problem (warnings allowed)\n"
                    "1 at least one check found a problem\n"
                    "3 a usage error"},
    // One bundle or branch.
    {.name = "run-bundle",
     .summary = "drive one bundle: plan, tasks, gates, pull request or ready branch",
     .run = verb_run_bundle,
     .group = VerbGroup::bundle,
     .parser = verb_run_bundle_parser,
     .example = "devgraph run-bundle RUN_DIR --bundle b1 --agent sim --sim-scenario scenario.json",
     .exit_status = "0 DONE\n"
                    "2 BLOCKED\n"
                    "3 a usage or state error found before any work (nothing written)\n"
                    "128+N stopped by signal N (resumable)"},
    {.name = "fix",
     .summary = "the bounded fix and re-review loop on one branch, with the escalation diagnosis",
     .run = verb_fix,
     .group = VerbGroup::bundle,
     .parser = verb_fix_parser,
     .example = "devgraph fix --branch develop/b2-add-a-json-flag --validate 'make test'",
     .exit_status = "0 SHIP\n"
                    "1 a failure\n"
                    "2 stopped for a person, blocked or sent back to planning\n"
                    "3 a usage or placement error (nothing run)\n"
                    "128+N stopped by signal N"},
    {.name = "debug",
     .summary = "checkpointed debug sessions: a debugger, a debug file, a person at checkpoints",
     .run = verb_debug,
     .group = VerbGroup::bundle,
     .parser = verb_debug_parser,
     .subcommands = verb_debug_subcommands,
     .example = "devgraph debug start 'the export drops the last row' --tdd",
     .exit_status = "0 the session is resolved\n"
                    "1 a failure, or a step that did not finish (debug continue goes on)\n"
                    "2 a question waits for a person, or a person stopped the session\n"
                    "3 a usage or placement error, a refused answer, or a busy session "
                    "(nothing written)\n"
                    "128+N stopped by signal N"},
    {.name = "discuss",
     .summary = "several perspectives critique one artifact at once; code decides consensus",
     .run = verb_discuss,
     .group = VerbGroup::bundle,
     .parser = verb_discuss_parser,
     .example = "devgraph discuss plan.md --round plan-1 --context issue.md",
     .exit_status = "0 consensus reached\n"
                    "1 a failure (a missing artifact included)\n"
                    "2 consensus blocked\n"
                    "3 a usage error (nothing run)\n"
                    "128+N stopped by signal N"},
    {.name = "demo",
     .summary = "build a sample repository and drive its issues to ready branches, offline",
     .run = verb_demo,
     .group = VerbGroup::bundle,
     .parser = verb_demo_parser,
     .example = "devgraph demo --no-live",
     .exit_status = "0 every bundle reached its ready branch\n"
                    "1 the sample could not be set up\n"
                    "2 the run waits for a person\n"
                    "128+N stopped by signal N"},
    // Building blocks.
    {.name = "checkpoint",
     .summary = "record run state: init, go, move, event, signal, handoff, resume, show",
     .run = verb_checkpoint,
     .group = VerbGroup::blocks,
     .parser = verb_checkpoint_parser,
     .subcommands = verb_checkpoint_subcommands,
     .example = "devgraph checkpoint RUN_DIR go --node bundle --event SCAN_DONE",
     .exit_status = "0 recorded (or shown)\n"
                    "1 refused: the change breaks the graph's or the schema's rules (nothing "
                    "written)\n"
                    "2 a usage error"},
    {.name = "validate",
     .summary = "check GRAPH.yaml, a state file, a persona result, or a whole run",
     .run = verb_validate,
     .group = VerbGroup::blocks,
     .parser = verb_validate_parser,
     .subcommands = verb_validate_subcommands,
     .example = "devgraph validate run RUN_DIR",
     .exit_status = "0 valid: one OK line\n"
                    "1 one ERROR line per problem\n"
                    "2 a usage error"},
    {.name = "schedule",
     .summary = "tasks.json checks, runnable tasks, conflicts, critical path, footprint check",
     .run = verb_schedule,
     .group = VerbGroup::blocks,
     .parser = verb_schedule_parser,
     .subcommands = verb_schedule_subcommands,
     .example = "devgraph schedule runnable tasks.json --state state.json --bundle b1",
     .exit_status = "0 done\n"
                    "1 a plan or state that cannot be read or is invalid\n"
                    "2 a usage error, or a footprint violation (footprint-check)"},
    {.name = "guard",
     .summary = "placement guard: resolve paths, check worktrees, writes and shell commands",
     .run = verb_guard,
     .group = VerbGroup::blocks,
     .parser = verb_guard_parser,
     .subcommands = verb_guard_subcommands,
     .example = "devgraph guard check-bash 'rm -rf ../widgets' --cwd .",
     .exit_status = "0 allow (hook: always 0, the decision is JSON on stdout)\n"
                    "1 an error\n"
                    "2 deny (the reason on stderr), or a usage error"},
    {.name = "critique",
     .summary = "one perspective's critique of one artifact, on its backend or a fallback",
     .run = verb_critique,
     .group = VerbGroup::blocks,
     .parser = verb_critique_parser,
     .example = "devgraph critique plan.md --perspective technical --out critique.json",
     .exit_status = "0 a backend answered\n"
                    "1 every backend failed (the answer says how each did)\n"
                    "3 a usage error (nothing run)\n"
                    "128+N stopped by signal N"},
    {.name = "install",
     .summary = "grant devgraph's permissions to an agent CLI (claude, codex, copilot)",
     .run = verb_install,
     .group = VerbGroup::blocks,
     .parser = verb_install_parser,
     .example = "devgraph install claude --hook --dry-run",
     .exit_status = "0 applied, already in place, or a dry run\n"
                    "1 declined, refused for lack of a terminal, or failed\n"
                    "2 a usage error"},
    {.name = "completion",
     .summary = "shell completion for bash, zsh and fish; the man pages and docs/reference.md",
     .run = verb_completion,
     .group = VerbGroup::blocks,
     .parser = verb_completion_parser,
     .example = "devgraph completion bash > ~/.local/share/bash-completion/completions/devgraph",
     .exit_status = "0 printed (or written)\n"
                    "1 a man page could not be written\n"
                    "2 a usage error"},
    {.name = "sim-agent",
     .summary = "the simulated agent CLI behind --agent sim (demo, tests, benchmarks)",
     .run = verb_sim_agent,
     .group = VerbGroup::blocks,
     .parser = verb_sim_agent_parser,
     .example = "devgraph sim-agent --scenario scenario.json --persona planner --bundle b1",
     .internal = true},
    {.name = "audit-merge",
     .summary = "audit one merged pull request for `devgraph run`",
     .run = verb_audit_merge,
     .group = VerbGroup::blocks,
     .parser = verb_audit_merge_parser,
     .example = "devgraph audit-merge RUN_DIR --key pr-12 --agent sim --sim-scenario scenario.json",
     .exit_status = "0 a result\n"
                    "1 an unexpected error (no result)\n"
                    "3 a bad key or flag, or a bad request (nothing written)\n"
                    "128+N stopped by signal N (no result; run it again)",
     .internal = true},
};

}  // namespace

std::span<const Verb> verb_table() {
  return kVerbs;
}

const char* group_title(VerbGroup group) {
  switch (group) {
    case VerbGroup::loop:
      return "Run the loop";
    case VerbGroup::look:
      return "Look at it";
    case VerbGroup::bundle:
      return "One bundle or branch";
    case VerbGroup::blocks:
      return "Building blocks";
  }
  return "";
}

const Verb* find_verb(std::string_view name) {
  for (const Verb& v : kVerbs)
    if (name == v.name) return &v;
  return nullptr;
}

ArgParser verb_parser(std::string_view name) {
  const Verb* v = find_verb(name);
  if (v == nullptr) return ArgParser("devgraph " + std::string(name));
  ArgParser p = v->parser();
  p.epilog([v] { return help_epilog(*v); });
  return p;
}

std::vector<Subcommand> verb_subcommands(std::string_view name) {
  const Verb* v = find_verb(name);
  return v != nullptr && v->subcommands != nullptr ? v->subcommands() : std::vector<Subcommand>{};
}

const Subcommand* find_subcommand(const std::vector<Subcommand>& subs, const std::string& name,
                                  std::string& choices) {
  const Subcommand* found = nullptr;
  choices.clear();
  for (const auto& s : subs) {
    if (s.name == name) found = &s;
    choices += (choices.empty() ? "'" : ", '") + s.name + "'";
  }
  return found;
}

int report_error(const std::string& verb, const Error& error) {
  if (error.exit_code == 0) {
    out() << error.message << (error.message.empty() || error.message.back() == '\n' ? "" : "\n");
    return 0;
  }
  out().flush();
  bool usage_text = error.message.rfind("usage:", 0) == 0;
  err() << (usage_text ? "" : "devgraph " + verb + ": ") << error.message
        << (error.message.empty() || error.message.back() == '\n' ? "" : "\n");
  return error.exit_code;
}

void declare_board_flags(ArgParser& p) {
  p.optional_value("board",
                   "serve the run's live board while it runs, on PORT (0: one the system picks); "
                   "its URL is printed on stderr",
                   "PORT")
      .default_value("off; PORT 0 when given bare")
      .option("bind", "with --board: the IPv4 address to listen on")
      .default_value("127.0.0.1")
      .flag("open", "with --board: open the board in the browser ($BROWSER, else xdg-open)");
}

Expected<std::optional<board::Listener>> bind_board(const ArgParser& p, const ParsedArgs& a,
                                                    bool dry_run) {
  if (!a.flag("board")) {
    if (a.get("bind") || a.flag("open"))
      return p.usage_error(std::string(a.get("bind") ? "--bind" : "--open") + " needs --board");
    return std::optional<board::Listener>();
  }
  if (dry_run) return p.usage_error("--board and --dry-run exclude each other");
  int port = 0;
  if (auto v = a.get("board")) {
    auto n = parse_int(*v);
    if (!n || *n < 0 || *n > 65535)
      return p.usage_error("argument --board: not a port: '" + *v + "'");
    port = static_cast<int>(*n);
  }
  auto bound = board::Listener::open(a.get_or("bind", "127.0.0.1"), port);
  if (!bound && bound.error().kind == ErrorKind::usage)
    return p.usage_error("argument " + bound.error().message);
  if (!bound) return bound.error();
  return std::optional<board::Listener>(std::move(*bound));
}

Expected<std::vector<std::string>> agent_command_template(const std::optional<std::string>& flag,
                                                          const std::string& agent) {
  if (!flag) return std::vector<std::string>{};
  if (agent != "command")
    return fail("argument --agent-command: only with --agent command (got --agent " + agent + ")");
  auto words = split_command(*flag);
  if (!words) return fail("argument --agent-command: " + words.error().message);
  return std::move(*words);
}

int run_main(int argc, char** argv) {
  if (argc < 2) {
    std::fputs(top_help().c_str(), stderr);
    return 2;
  }
  std::string name = argv[1];
  if (name == "-h" || name == "--help" || name == "help") {
    std::fputs(top_help().c_str(), stdout);
    return 0;
  }
  if (name == "--version" || name == "version") {
    std::printf("devgraph %s\n", DEVGRAPH_VERSION);
    return 0;
  }
  for (const Verb& v : kVerbs) {
    if (name != v.name) continue;
    VerbArgs args(argv + 2, argv + argc);
    try {
      return v.run(args);
    } catch (const std::exception& e) {
      std::fflush(stdout);
      std::fprintf(stderr, "devgraph %s: internal error: %s\n", v.name, e.what());
      return 70;
    }
  }
  std::vector<std::string> names;
  for (const Verb& v : kVerbs) names.push_back(v.name);
  const auto near = closest(name, names);
  const std::string hint = near ? "did you mean " + *near + "? " : "";
  std::fprintf(stderr, "devgraph: unknown verb '%s' (%ssee `devgraph --help`)\n", name.c_str(),
               hint.c_str());
  return 2;
}

}  // namespace devgraph
