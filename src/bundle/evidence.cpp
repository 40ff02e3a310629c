#include "bundle/evidence.h"

#include <algorithm>
#include <array>

#include "util/words.h"
#include "util/text.h"

namespace devgraph::bundle {
namespace {

std::string_view base_name(std::string_view path) {
  auto slash = path.rfind('/');
  return slash == std::string_view::npos ? path : path.substr(slash + 1);
}

bool one_of(std::string_view word, std::initializer_list<std::string_view> set) {
  return std::find(set.begin(), set.end(), word) != set.end();
}

// The interpreter family of a program, by its name: "python3.11" is python.
enum class Family { none, shell, python, node, perl_ruby, other };

Family family_of(std::string_view program) {
  std::string_view n = base_name(program);
  if (one_of(n, {"sh", "bash", "dash", "zsh", "ksh"})) return Family::shell;
  if (n.rfind("python", 0) == 0) return Family::python;
  if (one_of(n, {"node", "nodejs", "deno", "bun"})) return Family::node;
  if (one_of(n, {"perl", "ruby"})) return Family::perl_ruby;
  if (one_of(n, {"php", "Rscript", "lua", "tclsh"})) return Family::other;
  return Family::none;
}

// Programs a check may never be, whatever else allows it.
bool forbidden_program(std::string_view program) {
  return one_of(base_name(program),
                {"git",  "gh",   "devgraph", "rm",    "sudo",  "su",    "curl",   "wget",
                 "ssh",  "scp",  "rsync",    "env",   "xargs", "nohup", "setsid", "eval",
                 "exec", "find", "dd",       "chmod", "chown", "kill",  "pkill",  "killall"});
}

// An option that makes an interpreter run the code that follows it (or,
// for a shell, read commands from anywhere but a script file).
std::string inline_code(Family f, std::string_view arg) {
  if (arg.size() < 2 || arg[0] != '-') return "";
  const bool long_opt = arg.rfind("--", 0) == 0;
  switch (f) {
    case Family::shell:
      // Short options may be bundled (-ec): any c, s or i is refused.
      if (!long_opt && arg.find_first_of("csi", 1) != std::string_view::npos)
        return std::string(arg);
      if (long_opt && arg != "--") return std::string(arg);
      return "";
    case Family::python:
      if (!long_opt && arg.find('c', 1) != std::string_view::npos) return std::string(arg);
      return "";
    case Family::node:
      if (one_of(arg, {"-e", "-p", "--eval", "--print", "-pe", "-ep"}) ||
          arg.rfind("--eval=", 0) == 0 || arg.rfind("--print=", 0) == 0)
        return std::string(arg);
      return "";
    case Family::perl_ruby:
      if (!long_opt && arg.find_first_of("eE", 1) != std::string_view::npos)
        return std::string(arg);
      return "";
    case Family::other:
      if (one_of(arg, {"-r", "-e"})) return std::string(arg);
      return "";
    case Family::none:
      return "";
  }
  return "";
}

// A worktree-relative path: not absolute, no `..`, not an option.
bool inside_worktree(std::string_view path) {
  if (path.empty() || path[0] == '/' || path[0] == '-' || path[0] == '~') return false;
  size_t start = 0;
  while (start <= path.size()) {
    size_t end = path.find('/', start);
    if (end == std::string_view::npos) end = path.size();
    if (path.substr(start, end - start) == "..") return false;
    start = end + 1;
  }
  return true;
}

std::string normal(std::string_view path) {
  std::string p(path);
  while (p.rfind("./", 0) == 0) p.erase(0, 2);
  return p;
}

// The words of a recorded command that a check must start with: those
// before its first option, at most two ("npm test", "go test", "ctest"),
// and an interpreter's `-m MODULE`.
std::vector<std::string> leading_words(const std::vector<std::string>& argv) {
  std::vector<std::string> out;
  for (size_t i = 0; i < argv.size(); ++i) {
    const std::string& w = argv[i];
    if (i > 0 && w == "-m" && family_of(argv[0]) == Family::python && i + 1 < argv.size()) {
      out.push_back(w);
      out.push_back(argv[i + 1]);
      break;
    }
    if (i > 0 && (w.empty() || w[0] == '-')) break;
    out.push_back(w);
    if (out.size() == 2) break;
  }
  return out;
}

Expected<CheckCommand> check_one(const std::string& text, const CheckInputs& in) {
  auto split = split_command(text);
  if (!split) return fail("`" + text + "` is not a single command: " + split.error().message);
  std::vector<std::string> argv = *split;
  const std::string& program = argv[0];
  if (forbidden_program(program))
    return fail("`" + text + "` runs " + std::string(base_name(program)) +
                ", which a check may never run");
  auto owned = [&](const std::string& word) {
    if (!inside_worktree(word)) return false;
    std::string p = normal(word);
    if (in.footprint && in.footprint->contains(p)) return true;
    return std::any_of(in.artifacts.begin(), in.artifacts.end(),
                       [&](const std::string& a) { return normal(a) == p; });
  };
  const Family fam = family_of(program);
  for (size_t i = 1; i < argv.size(); ++i) {
    if (argv[i] == "--") break;
    std::string bad = inline_code(fam, argv[i]);
    if (!bad.empty())
      return fail("`" + text + "` gives " + std::string(base_name(program)) + " " + bad +
                  ": a check runs a test file, never inline code");
  }
  for (const auto& word : argv) {
    // An absolute path or a parent step may name anything on the machine;
    // an option's value (--rootdir=/x) counts too.
    std::string_view v = word;
    if (v.size() > 1 && v[0] == '-' && v.find('=') != std::string_view::npos)
      v = v.substr(v.find('=') + 1);
    if (!v.empty() && v[0] != '-' && !inside_worktree(v))
      return fail("`" + text + "` names " + word + ": a check stays inside the worktree");
  }
  // (a) the recorded test or build command's program and leading words.
  for (const auto& rec : in.recorded) {
    auto rec_argv = split_command(rec);
    if (!rec_argv || rec_argv->empty()) continue;
    auto lead = leading_words(*rec_argv);
    if (argv.size() >= lead.size() && std::equal(lead.begin(), lead.end(), argv.begin()))
      return CheckCommand{argv, text};
  }
  // (b) a file of the task's own.
  if (owned(program)) return CheckCommand{argv, text};
  // (c) an interpreter given one.
  if (fam != Family::none) {
    for (size_t i = 1; i < argv.size(); ++i)
      if (owned(argv[i])) return CheckCommand{argv, text};
  }
  return fail("`" + text +
              "` is neither the project's test command nor a test file of this task: name "
              "the recorded test command with your test selected, or your test file");
}

}  // namespace

Expected<std::vector<CheckCommand>> check_commands(const CheckInputs& in) {
  std::vector<CheckCommand> out;
  for (const auto& text : in.commands) {
    if (text.find_first_not_of(" \t\n") == std::string::npos) continue;
    DG_TRY(auto c, check_one(text, in));
    out.push_back(std::move(c));
  }
  if (out.empty())
    return fail(
        "the result names no command: put the commands that run your new test in `commands`, "
        "so devgraph can see it fail");
  return out;
}

CheckVerdict verdict_of(const Expected<CommandResult>& run) {
  if (!run) return CheckVerdict::not_run;
  const CommandResult& r = *run;
  if (r.timed_out || r.interrupted()) return CheckVerdict::not_run;
  if (r.exit_code == 0) return CheckVerdict::green;
  if (r.exit_code == 126 || r.exit_code == 127) return CheckVerdict::not_run;
  return CheckVerdict::red;  // a failure exit, or death by a signal
}

std::string describe_check(const CheckCommand& cmd, const Expected<CommandResult>& run) {
  std::string what = "`" + cmd.text + "`";
  if (!run) return what + " could not be started: " + run.error().message;
  const CommandResult& r = *run;
  if (r.timed_out) return what + " timed out";
  if (r.interrupted()) return what + " was interrupted";
  if (r.exit_code == -1) return what + " died by signal " + std::to_string(r.term_signal);
  return what + " exited " + std::to_string(r.exit_code);
}

}  // namespace devgraph::bundle
