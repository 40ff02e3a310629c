#include "cli/verbs.h"

#include <cstdio>
#include <cstring>
#include <exception>

#include "util/words.h"
#include "util/console.h"

namespace devgraph {
namespace {

// The one table of verbs. Keep it sorted by how a user meets them.
constexpr Verb kVerbs[] = {
    {"checkpoint", "record run state: init, go, move, event, signal, handoff, resume, show",
     verb_checkpoint},
    {"validate", "check GRAPH.yaml, a state file, a persona result, or a whole run", verb_validate},
    {"guard", "placement guard: resolve paths, check worktrees, writes and shell commands",
     verb_guard},
    {"schedule", "tasks.json checks, runnable tasks, conflicts, critical path, footprint check",
     verb_schedule},
    {"install", "grant devgraph's permissions to an agent CLI (claude, codex, copilot)",
     verb_install},
    {"doctor", "check that this machine and repository are ready; a fix per problem", verb_doctor},
    {"sim-agent", "the simulated agent CLI behind --agent sim (demo, tests, benchmarks)",
     verb_sim_agent},
    {"run", "turn eligible open issues into bundles and drive them to pull requests, resumably",
     verb_run},
    {"clean",
     "clean up the repository's own branches: integrate, verify, delete only what is proven",
     verb_clean},
    {"issue", "local issues: file, list, show and close them", verb_issue},
    {"run-bundle", "drive one bundle: plan, tasks, gates, pull request or ready branch",
     verb_run_bundle},
    {"audit-merge", "audit one merged pull request for `devgraph run` (internal)",
     verb_audit_merge},
    {"inbox", "list what waits for a person in this repository's runs", verb_inbox},
    {"answer", "answer what a bundle or task waits for, so its run can go on", verb_answer},
    {"discuss", "several perspectives critique one artifact at once; code decides consensus",
     verb_discuss},
    {"fix", "the bounded fix and re-review loop on one branch, with the escalation diagnosis",
     verb_fix},
    {"debug", "checkpointed debug sessions: a debugger, a debug file, a person at checkpoints",
     verb_debug},
    {"critique", "one perspective's critique of one artifact, on its backend or a fallback",
     verb_critique},
    {"board", "serve a run's live board in a browser, each event pushed as it happens", verb_board},
    {"metrics", "session metrics: record a run, report its timing and cost, list sessions",
     verb_metrics},
    {"demo", "build a sample repository and drive one bundle to a ready branch, offline",
     verb_demo},
};

void print_usage(std::FILE* out) {
  std::fprintf(out, "usage: devgraph <verb> [args...]\n\nverbs:\n");
  for (const Verb& v : kVerbs) std::fprintf(out, "  %-12s %s\n", v.name, v.summary);
  std::fprintf(out, "\n`devgraph <verb> --help` describes one verb. Exit codes: see README.md.\n");
}

}  // namespace

std::span<const Verb> verb_table() {
  return kVerbs;
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
                   "serve the run's live board while it runs, on PORT (default: 0, one the "
                   "system picks); its URL is printed on stderr",
                   "PORT")
      .option("bind", "with --board: the IPv4 address to listen on (default: 127.0.0.1)")
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
    print_usage(stderr);
    return 2;
  }
  std::string name = argv[1];
  if (name == "-h" || name == "--help" || name == "help") {
    print_usage(stdout);
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
  std::fprintf(stderr, "devgraph: unknown verb '%s' (see `devgraph --help`)\n", name.c_str());
  return 2;
}

}  // namespace devgraph
