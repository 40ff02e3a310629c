#include "doctor/tools.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <utility>

#include "util/text.h"

namespace devgraph::doctor {
namespace {

std::string first_line(std::string_view text) {
  size_t b = text.find_first_not_of(" \t\r\n");
  if (b == std::string_view::npos) return "";
  text = text.substr(b);
  return one_line(text.substr(0, text.find('\n')), 120);
}

// Why a command that ran did not answer: "exit 1: <its last line>".
std::string failure(const Probe& p) {
  if (!p.started) return p.error;
  if (p.result.timed_out) return "no answer within " + std::to_string(kProbeTimeout.count()) + " s";
  std::string why = p.result.term_signal
                        ? "killed by signal " + std::to_string(p.result.term_signal)
                        : "exit " + std::to_string(p.result.exit_code);
  std::string last = last_line(p.result.err.empty() ? p.result.out : p.result.err);
  return last.empty() ? why : why + ": " + one_line(last, 160);
}

bool word_char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_';
}

bool has_word(std::string_view text, std::string_view word) {
  for (size_t at = text.find(word); at != std::string_view::npos; at = text.find(word, at + 1)) {
    bool left = at == 0 || !word_char(text[at - 1]);
    size_t end = at + word.size();
    bool right = end == text.size() || !word_char(text[end]);
    if (left && right) return true;
  }
  return false;
}

std::string install_hint(agents::BackendKind kind) {
  switch (kind) {
    case agents::BackendKind::claude:
      return "npm install -g @anthropic-ai/claude-code";
    case agents::BackendKind::codex:
      return "npm install -g @openai/codex";
    case agents::BackendKind::gemini:
      return "npm install -g @google/gemini-cli";
    default:
      return "";
  }
}

}  // namespace

Probe probe(CommandRunner& runner, std::vector<std::string> argv, const std::string& cwd,
            std::map<std::string, std::string> env) {
  CommandSpec spec;
  spec.argv = std::move(argv);
  spec.cwd = cwd;
  spec.env = std::move(env);
  spec.timeout = kProbeTimeout;
  spec.kill_grace = std::chrono::seconds(1);
  spec.max_output_bytes = kProbeOutputBytes;
  Probe p;
  auto r = runner.run(spec);
  if (!r) {
    p.error = r.error().message;
    return p;
  }
  p.started = true;
  p.result = std::move(*r);
  return p;
}

std::optional<std::string> find_on_path(const std::string& program, const std::string& path) {
  auto executable = [](const std::string& file) {
    struct stat st {};
    return ::stat(file.c_str(), &st) == 0 && S_ISREG(st.st_mode) &&
           ::access(file.c_str(), X_OK) == 0;
  };
  if (program.empty()) return std::nullopt;
  if (program.find('/') != std::string::npos)
    return executable(program) ? std::optional<std::string>(program) : std::nullopt;
  size_t start = 0;
  while (start <= path.size()) {
    size_t colon = path.find(':', start);
    if (colon == std::string::npos) colon = path.size();
    std::string dir = path.substr(start, colon - start);
    std::string file = (dir.empty() ? "." : dir) + "/" + program;
    if (executable(file)) return file;
    start = colon + 1;
  }
  return std::nullopt;
}

std::optional<Version> parse_version(std::string_view text) {
  for (size_t i = 0; i < text.size(); ++i) {
    if (!std::isdigit(static_cast<unsigned char>(text[i]))) continue;
    if (i > 0 && std::isdigit(static_cast<unsigned char>(text[i - 1]))) continue;
    int parts[3] = {0, 0, 0};
    int n = 0;
    size_t j = i;
    while (n < 3) {
      size_t k = j;
      long value = 0;
      while (k < text.size() && std::isdigit(static_cast<unsigned char>(text[k])) && k - j < 9)
        value = value * 10 + (text[k++] - '0');
      if (k == j) break;
      parts[n++] = static_cast<int>(value);
      j = k;
      if (j + 1 < text.size() && text[j] == '.' &&
          std::isdigit(static_cast<unsigned char>(text[j + 1])))
        ++j;
      else
        break;
    }
    if (n >= 2) return Version{parts[0], parts[1], parts[2]};
    i = j;
  }
  return std::nullopt;
}

std::string version_text(const Version& v) {
  return std::to_string(v.major) + "." + std::to_string(v.minor) + "." + std::to_string(v.patch);
}

Finding check_git(const Probe& version) {
  const std::string need = "git " + std::to_string(kMinimumGit.major) + "." +
                           std::to_string(kMinimumGit.minor) + " or later";
  if (!version.started)
    return problem("git", "git", "git not found on PATH (" + version.error + ")",
                   "install " + need + " (Debian: apt-get install git)");
  if (!version.ok())
    return problem("git", "git", "git --version failed (" + failure(version) + ")",
                   "check the git on PATH: git --version");
  auto v = parse_version(version.result.out);
  if (!v)
    return warning("git", "git",
                   "cannot read git's version from '" + first_line(version.result.out) + "'",
                   "install " + need);
  if (*v < kMinimumGit)
    return problem("git", "git",
                   "git " + version_text(*v) + " is older than " +
                       std::to_string(kMinimumGit.major) + "." + std::to_string(kMinimumGit.minor) +
                       " (devgraph lists worktrees with `git worktree list -z`)",
                   "install " + need);
  return ok("git", "git", "git " + version_text(*v));
}

Finding check_gh(const Probe& version, const std::optional<Probe>& auth,
                 const std::string& delivery) {
  const bool needed = delivery == "github";
  auto report = [&](std::string message, std::string fix) {
    if (needed) return problem("gh", "gh", std::move(message), std::move(fix));
    return warning("gh", "gh", std::move(message) + " (needed only for github delivery)",
                   std::move(fix));
  };
  if (!version.started) {
    if (delivery == "local") return ok("gh", "gh", "not found on PATH; not needed: local delivery");
    return report("gh not found on PATH",
                  "install the GitHub CLI (https://cli.github.com), then run: gh auth login");
  }
  if (!version.ok())
    return report("gh --version failed (" + failure(version) + ")",
                  "check the gh on PATH: gh --version");
  auto v = parse_version(version.result.out);
  std::string name = v ? "gh " + version_text(*v) : "gh";
  if (!auth || !auth->started)
    return report(
        name + ": cannot ask gh auth status" + (auth ? " (" + auth->error + ")" : std::string()),
        "run: gh auth status");
  if (auth->result.timed_out)
    return report(name + ": gh auth status did not answer within " +
                      std::to_string(kProbeTimeout.count()) + " s",
                  "check the network, then run: gh auth status");
  if (!auth->ok()) {
    if (delivery == "local")
      return ok("gh", "gh", name + ", not authenticated; not needed: local delivery");
    return report(name + " is not authenticated (gh auth status: " + failure(*auth) + ")",
                  "run: gh auth login");
  }
  return ok("gh", "gh", name + ", authenticated");
}

std::vector<std::string> flags_in(const std::vector<std::string>& argv) {
  std::vector<std::string> out;
  for (size_t i = 1; i < argv.size(); ++i) {
    const std::string& w = argv[i];
    if (w.size() < 2 || w[0] != '-') continue;
    if (w.find_first_of(" \n\t") != std::string::npos) continue;  // a value, not a flag
    std::string flag = w.substr(0, w.find('='));
    if (std::find(out.begin(), out.end(), flag) == out.end()) out.push_back(flag);
  }
  return out;
}

std::vector<std::string> help_argv_for(const std::vector<std::string>& argv) {
  std::vector<std::string> out;
  if (argv.empty()) return out;
  out.push_back(argv[0]);
  for (size_t i = 1; i < argv.size() && !argv[i].empty() && argv[i][0] != '-'; ++i)
    out.push_back(argv[i]);
  out.push_back("--help");
  return out;
}

std::vector<std::string> unlisted_flags(agents::BackendKind kind) {
  if (kind == agents::BackendKind::claude) return {"--max-turns"};
  return {};
}

std::vector<std::string> flags_missing_from(const std::vector<std::string>& flags,
                                            std::string_view help,
                                            const std::vector<std::string>& unlisted) {
  std::vector<std::string> out;
  for (const auto& f : flags) {
    if (std::find(unlisted.begin(), unlisted.end(), f) != unlisted.end()) continue;
    if (!has_word(help, f)) out.push_back(f);
  }
  return out;
}

Expected<AgentCli> agent_cli(const agents::BackendOptions& options) {
  DG_TRY(auto backend, agents::make_backend(options));
  agents::LaunchRequest request;
  request.persona = "developer";
  request.task = "T1";
  request.dispatch = "doctor";
  request.worktree = "WORKTREE";
  request.run_dir = "RUN_DIR";
  request.skill_dir = "SKILL_DIR";
  request.model = options.model.value_or("MODEL");
  request.effort = options.effort.value_or("EFFORT");
  agents::PromptRef prompt{"PROMPT", "PROMPT_FILE"};
  auto launch = backend->launch_argv(request, prompt);
  AgentCli cli;
  cli.kind = options.kind;
  cli.program = launch.empty() ? std::string() : launch[0];
  cli.help_argv = help_argv_for(launch);
  cli.flags = flags_in(launch);
  if (backend->can_resume())
    for (auto& f : flags_in(backend->resume_argv(request, "SESSION", prompt)))
      if (std::find(cli.flags.begin(), cli.flags.end(), f) == cli.flags.end())
        cli.flags.push_back(std::move(f));
  return cli;
}

Finding check_agent_cli(const AgentCli& cli, const std::optional<std::string>& path,
                        const Probe& version, const std::optional<Probe>& help, bool selected) {
  const std::string name(agents::backend_name(cli.kind));
  const std::string id = "agent." + name;
  auto report = [&](std::string message, std::string fix) {
    if (selected) return problem(id, name, std::move(message), std::move(fix));
    return warning(id, name, std::move(message), std::move(fix));
  };
  const std::string hint = install_hint(cli.kind);
  if (!version.started) {
    std::string fix = "install it (" + hint + ")";
    if (cli.kind == agents::BackendKind::claude)
      fix += ", or name it with --claude-bin or DEVELOP_CLAUDE_BIN";
    std::string what = selected ? "every persona of `devgraph run --agent " + name + "` runs in it"
                                : "--agent " + name +
                                      " and the discuss perspectives on it cannot run (they fall "
                                      "back to another backend)";
    return report(cli.program + " not found on PATH: " + what, fix);
  }
  // "claude 2.0.14 (Claude Code)"; "codex-cli 0.46.0" names itself.
  std::string label = cli.program;
  if (version.ok()) {
    std::string v = first_line(version.result.out);
    if (!v.empty()) label = v.rfind(cli.program, 0) == 0 ? v : cli.program + " " + v;
  }
  if (path && *path != cli.program) label += " at " + *path;
  std::string asked = join(cli.help_argv, " ");
  if (!help || !help->ok())
    return report(label + ": `" + asked + "` failed (" +
                      (help ? failure(*help) : std::string("not asked")) +
                      "), so devgraph's flags cannot be checked",
                  "run: " + asked);
  auto missing = flags_missing_from(cli.flags, help->result.out + "\n" + help->result.err,
                                    unlisted_flags(cli.kind));
  if (!missing.empty())
    return report(label + ": `" + asked + "` does not list " + join(missing, ", ") +
                      ", which devgraph passes; its launches may be refused",
                  "update it (" + hint + "@latest)");
  return ok(id, name,
            label + ": accepts the " + std::to_string(cli.flags.size()) + " flags devgraph passes");
}

}  // namespace devgraph::doctor
