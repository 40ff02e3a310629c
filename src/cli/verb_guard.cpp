// devgraph guard: the placement guard as a command (and as a PreToolUse
// hook). Exit codes: 0 allow, 2 deny (reason on stderr), 1 error; in hook
// mode the decision is JSON on stdout and the exit code is always 0.
//
// This verb sits on the path of every agent tool call, so it reads no
// GRAPH.yaml and no schemas: only the environment and the checkouts it is
// asked about.
#include <unistd.h>

#include <cerrno>
#include <cstdio>

#include "cli/help.h"
#include "cli/verbs.h"
#include "guard/guard.h"
#include "util/args.h"
#include "util/console.h"

namespace devgraph {
namespace {

std::string process_cwd() {
  char buf[4096];
  return getcwd(buf, sizeof buf) ? std::string(buf) : std::string("/");
}

int usage_error(const std::string& message) {
  err() << verb_usage(*find_verb("guard")) << "\n"
        << "devgraph guard: error: " << message << "\n";
  return 2;
}

int deny_or_ok(const guard::Verdict& reason) {
  if (reason) {
    err() << "DENY: " << *reason << "\n";
    return 2;
  }
  out() << "OK\n";
  return 0;
}

int run_hook(const guard::Roots& roots) {
  std::string payload;
  char buf[65536];
  while (true) {
    ssize_t n = read(0, buf, sizeof buf);
    if (n > 0) {
      payload.append(buf, static_cast<size_t>(n));
    } else if (n == 0 || errno != EINTR) {
      break;
    }
  }
  std::string out = guard::hook_response(payload, process_cwd(), roots);
  std::fwrite(out.data(), 1, out.size(), stdout);
  return 0;
}

}  // namespace

ArgParser verb_guard_parser() {
  ArgParser p("devgraph guard");
  p.description(
      "Placement guard: the primary clone is read-only, worktrees live at "
      "<worktrees_root>/<owner>/<repo>/<branch-slug>. Environment: AI_ROOT, "
      "DEVELOP_WORKTREES_ROOT, DEVELOP_HOME_ROOT, DEVELOP_GUARD_EXEMPT.");
  return p;
}

std::vector<Subcommand> verb_guard_subcommands() {
  ArgParser resolve("devgraph guard resolve");
  resolve.option("cwd", "directory inside the repository")
      .default_value("the current directory")
      .hint(ValueHint::directory)
      .option("branch", "branch whose canonical worktree path to print");
  ArgParser worktree("devgraph guard check-worktree");
  worktree.positional("path", "the worktree to check")
      .hint(ValueHint::directory)
      .option("cwd", "directory relative paths start from")
      .default_value("the current directory")
      .hint(ValueHint::directory);
  ArgParser write("devgraph guard check-write");
  write.positional("path", "the path to be written")
      .hint(ValueHint::file)
      .option("cwd", "directory relative paths start from")
      .default_value("the current directory")
      .hint(ValueHint::directory);
  ArgParser bash("devgraph guard check-bash");
  bash.positional("command", "the shell command, one word")
      .option("cwd", "directory the command runs in")
      .default_value("the current directory")
      .hint(ValueHint::directory);
  return {{"resolve", "print placement facts as JSON", std::move(resolve)},
          {"check-worktree", "exit 0 if PATH is canonical", std::move(worktree)},
          {"check-write", "exit 0 if PATH may be written", std::move(write)},
          {"check-bash", "exit 0 if COMMAND is allowed", std::move(bash)},
          {"hook", "Claude Code PreToolUse protocol: the decision as JSON on stdout",
           ArgParser("devgraph guard hook")},
          {"self-check", "run the built-in checks", ArgParser("devgraph guard self-check")}};
}

int verb_guard(const VerbArgs& args) {
  if (args.empty()) return usage_error("the following arguments are required: mode");
  const std::string& mode = args[0];
  if (mode == "-h" || mode == "--help") {
    out() << verb_help(*find_verb("guard"));
    return 0;
  }
  VerbArgs rest(args.begin() + 1, args.end());
  const auto subs = verb_guard_subcommands();
  std::string choices;
  const Subcommand* sub = find_subcommand(subs, mode, choices);
  if (sub == nullptr)
    return usage_error("argument mode: invalid choice: '" + mode + "' (choose from " + choices +
                       ")");
  auto parsed = sub->parser.parse(rest);
  if (!parsed) return report_error("guard", parsed.error());
  if (mode == "hook") return run_hook(guard::Roots::from_env());
  if (mode == "self-check") {
    auto failures = guard::self_check();
    for (const auto& f : failures) err() << "FAIL: " << f << "\n";
    if (!failures.empty()) return 1;
    out() << "OK: placement guard self-check passed\n";
    return 0;
  }

  guard::Roots roots = guard::Roots::from_env();
  const std::string cwd =
      guard::resolve_path(parsed->get_or("cwd", process_cwd()), process_cwd(), roots.home);
  if (mode == "resolve") {
    auto placement = guard::resolve_placement(cwd, parsed->get("branch"), roots);
    if (!placement) {
      err() << "DENY: " << placement.error().message << "\n";
      return 2;
    }
    out() << dump_py(placement->to_json(), 2) << "\n";
    return 0;
  }
  const std::string& subject = parsed->positionals()[0];
  if (mode == "check-worktree") return deny_or_ok(guard::check_worktree(subject, cwd, roots));
  if (mode == "check-write") return deny_or_ok(guard::check_write(subject, cwd, roots));
  return deny_or_ok(guard::check_bash(subject, cwd, roots));
}

}  // namespace devgraph
