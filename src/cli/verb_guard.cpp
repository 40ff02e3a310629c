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

#include "cli/verbs.h"
#include "guard/guard.h"
#include "util/args.h"
#include "util/console.h"

namespace devgraph {
namespace {

constexpr const char* kModes = "{resolve,check-worktree,check-write,check-bash,hook,self-check}";

std::string process_cwd() {
  char buf[4096];
  return getcwd(buf, sizeof buf) ? std::string(buf) : std::string("/");
}

int usage_error(const std::string& message) {
  err() << "usage: devgraph guard [-h] " << kModes << " ...\n"
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

int verb_guard(const VerbArgs& args) {
  if (args.empty()) return usage_error("the following arguments are required: mode");
  const std::string& mode = args[0];
  if (mode == "-h" || mode == "--help") {
    out() << "usage: devgraph guard [-h] " << kModes << " ...\n\n"
          << "Placement guard: the primary clone is read-only, worktrees live at\n"
          << "<worktrees_root>/<owner>/<repo>/<branch-slug>.\n\n"
          << "  resolve [--cwd DIR] [--branch NAME]  print placement facts as JSON\n"
          << "  check-worktree PATH [--cwd DIR]       exit 0 if PATH is canonical\n"
          << "  check-write PATH [--cwd DIR]          exit 0 if PATH may be written\n"
          << "  check-bash COMMAND [--cwd DIR]        exit 0 if COMMAND is allowed\n"
          << "  hook                                  Claude Code PreToolUse protocol\n"
          << "  self-check                            run the built-in checks\n\n"
          << "Exit codes: 0 allow, 2 deny (reason on stderr), 1 error.\n"
          << "Environment: AI_ROOT, DEVELOP_WORKTREES_ROOT, DEVELOP_HOME_ROOT,\n"
          << "DEVELOP_GUARD_EXEMPT.\n";
    return 0;
  }
  VerbArgs rest(args.begin() + 1, args.end());
  const std::string prog = "devgraph guard " + mode;

  if (mode == "hook" || mode == "self-check") {
    ArgParser parser(prog);
    auto parsed = parser.parse(rest);
    if (!parsed) return report_error("guard", parsed.error());
    if (mode == "hook") return run_hook(guard::Roots::from_env());
    auto failures = guard::self_check();
    for (const auto& f : failures) err() << "FAIL: " << f << "\n";
    if (!failures.empty()) return 1;
    out() << "OK: placement guard self-check passed\n";
    return 0;
  }

  ArgParser parser(prog);
  if (mode == "resolve") {
    parser.option("cwd", "directory inside the repository (default: current)")
        .option("branch", "branch whose canonical worktree path to print");
  } else if (mode == "check-worktree" || mode == "check-write") {
    parser.positional("path").option("cwd", "directory relative paths start from");
  } else if (mode == "check-bash") {
    parser.positional("command").option("cwd", "directory the command runs in");
  } else {
    return usage_error("argument mode: invalid choice: '" + mode + "' (choose from 'resolve', " +
                       "'check-worktree', 'check-write', 'check-bash', 'hook', 'self-check')");
  }
  auto parsed = parser.parse(rest);
  if (!parsed) return report_error("guard", parsed.error());

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
