// `devgraph doctor` as a user runs it: the real binary on a real clone in a
// scratch directory, PATH holding only a directory of fake CLIs (git
// itself linked in, a fake gh, a fake claude), HOME and AI_ROOT in the
// scratch directory. Each fixture has one problem class and the test
// asserts the line that reports it and its fix; every run is followed by
// a check that the repository, HOME and AI_ROOT are byte for byte as
// before, and that the fake claude was only asked for its version and
// its help.
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <filesystem>
#include <map>

#include "guard/guard.h"
#include "support/run_scenario.h"
#include "support/test_util.h"
#include "util/fs.h"
#include "util/json.h"

namespace devgraph {
namespace {

namespace fs = std::filesystem;

constexpr const char* kOrigin = "https://github.com/acme/widgets.git";

// claude's help, as far as devgraph's flags go (--max-turns is one claude
// takes without listing it).
constexpr const char* kFakeClaude = R"SH(#!/bin/sh
echo "$*" >> "$FAKE_CLAUDE_LOG"
case "$1" in
  --version) echo "2.0.14 (Claude Code)"; exit 0 ;;
  --help)
    printf '%s\n' "Usage: claude [options] [command] [prompt]" "" "Options:" \
      "  -p, --print                  Print response and exit" \
      "  --output-format <format>     text, json or stream-json" \
      "  --permission-mode <mode>     Permission mode" \
      "  --add-dir <directories...>   Additional directories" \
      "  --allowedTools, --allowed-tools <tools...>" \
      "  --disallowedTools, --disallowed-tools <tools...>" \
      "  --model <model>              Model for the session" \
      "  -r, --resume [value]         Resume a conversation"
    exit 0 ;;
esac
echo "unexpected call: $*" >&2
exit 2
)SH";

std::string fake_gh(bool authenticated) {
  std::string auth = authenticated
                         ? "echo 'github.com: Logged in to github.com account acme'; exit 0 ;;"
                         : "echo 'You are not logged into any GitHub hosts. To log in, run: gh "
                           "auth login' >&2; exit 1 ;;";
  return "#!/bin/sh\n"
         "case \"$1\" in\n"
         "  --version) echo 'gh version 2.23.0 (2023-02-08)'; exit 0 ;;\n"
         "  auth) " +
         auth +
         "\n"
         "esac\n"
         "exit 2\n";
}

void write_executable(const std::string& path, const std::string& text) {
  test::write_text(path, text);
  ASSERT_EQ(::chmod(path.c_str(), 0755), 0);
}

using test::dead_pid;

std::map<std::string, std::string> snapshot(const std::string& dir) {
  return test::tree_snapshot(dir);
}

class DoctorCli : public ::testing::Test {
 protected:
  test::Scratch s;
  std::string repo = s / "repo";
  std::string bin = s / "bin";
  std::string home = s / "home";
  std::string ai = s / "ai";
  std::string claude_log = s / "claude.log";

  void SetUp() override {
    ASSERT_TRUE(make_directories(bin).ok());
    ASSERT_TRUE(make_directories(home).ok());
    ASSERT_TRUE(make_directories(repo).ok());
    test::write_widgets_files(repo);
    git({"init", "-q", "-b", "main"});
    git({"add", "-A"});
    git({"commit", "-q", "-m", "base"});
    auto real_git = test::run_process({"sh", "-c", "command -v git"});
    std::string git_path = real_git.out.substr(0, real_git.out.find('\n'));
    ASSERT_EQ(::symlink(git_path.c_str(), (bin + "/git").c_str()), 0);
    write_executable(bin + "/gh", fake_gh(true));
    write_executable(bin + "/claude", kFakeClaude);
  }

  std::map<std::string, std::string> env() const {
    return {{"PATH", bin},
            {"HOME", home},
            {"AI_ROOT", ai},
            {"FAKE_CLAUDE_LOG", claude_log},
            {"DEVELOP_CLAUDE_BIN", ""},
            {"DEVELOP_WORKTREES_ROOT", ""},
            {"DEVELOP_HOME_ROOT", ""},
            {"DEVELOP_GUARD_EXEMPT", ""},
            {"DEVGRAPH_SKILL", ""},
            {"CLAUDE_CONFIG_DIR", ""},
            {"CODEX_HOME", ""},
            {"COPILOT_HOME", ""},
            {"GIT_AUTHOR_NAME", "t"},
            {"GIT_AUTHOR_EMAIL", "t@example.invalid"},
            {"GIT_COMMITTER_NAME", "t"},
            {"GIT_COMMITTER_EMAIL", "t@example.invalid"}};
  }

  void git(const std::vector<std::string>& args, const std::string& dir = "") {
    std::vector<std::string> argv = {"git"};
    argv.insert(argv.end(), args.begin(), args.end());
    auto e = env();
    e.erase("PATH");
    auto r = test::run_process(argv, e, dir.empty() ? repo : dir);
    ASSERT_EQ(r.exit_code, 0) << r.err;
  }

  // An origin on GitHub, rewritten by the clone's own insteadOf to a bare
  // repository here, with origin/HEAD set: github delivery.
  void github_origin() {
    std::string remote = s / "remote.git";
    git({"init", "-q", "--bare", "-b", "main", remote}, s.path());
    git({"remote", "add", "origin", kOrigin});
    git({"config", "url." + remote + ".insteadOf", kOrigin});
    git({"push", "-q", "-u", "origin", "main"});
    git({"remote", "set-head", "origin", "main"});
  }

  // The repository's develop home and canonical worktrees directory, as
  // the placement guard puts them.
  guard::Placement placement() const {
    guard::Roots roots;
    roots.home = home;
    roots.worktrees = ai + "/worktrees";
    roots.develop_home = ai + "/develop";
    auto p = guard::resolve_placement(repo, std::nullopt, roots);
    EXPECT_TRUE(p.ok());
    return p ? *p : guard::Placement{};
  }

  // Runs doctor and checks that it changed nothing and asked claude
  // nothing but its version and its help.
  test::ProcessResult doctor(std::vector<std::string> args = {}, const std::string& cwd = "") {
    args.insert(args.begin(), "doctor");
    auto before_repo = snapshot(repo);
    auto before_ai = snapshot(ai);
    auto before_home = snapshot(home);
    auto r = test::run_devgraph(args, env(), cwd.empty() ? repo : cwd);
    EXPECT_EQ(snapshot(repo), before_repo) << "doctor changed the repository";
    EXPECT_EQ(snapshot(ai), before_ai) << "doctor changed AI_ROOT";
    EXPECT_EQ(snapshot(home), before_home) << "doctor changed HOME";
    if (fs::exists(claude_log)) {
      for (const auto& line : test::lines_of(test::slurp(claude_log))) {
        EXPECT_TRUE(line == "--version" || line == "--help") << "claude was asked: " << line;
      }
    }
    return r;
  }

  // The table's line for `area` at `level` whose text holds `text`.
  static bool has_line(const std::string& out, const std::string& level, const std::string& area,
                       const std::string& text) {
    for (const auto& line : test::lines_of(out)) {
      std::string lv = level + std::string(9 - level.size(), ' ');
      if (line.rfind(lv + area + " ", 0) == 0 && line.find(text) != std::string::npos) return true;
    }
    return false;
  }
};

TEST_F(DoctorCli, AHealthySetUpExitsZero) {
  github_origin();
  auto install = test::run_devgraph({"install", "claude", "--yes", "--hook"}, env());
  ASSERT_EQ(install.exit_code, 0) << install.err;
  auto r = doctor();
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_EQ(r.err, "");
  EXPECT_TRUE(has_line(r.out, "ok", "git", "git ")) << r.out;
  EXPECT_TRUE(has_line(r.out, "ok", "repository", "primary clone")) << r.out;
  EXPECT_TRUE(has_line(r.out, "ok", "repository", "github delivery to acme/widgets")) << r.out;
  EXPECT_TRUE(has_line(r.out, "ok", "repository", "default branch main (origin's)")) << r.out;
  EXPECT_TRUE(has_line(r.out, "ok", "repository", "test `sh run-tests.sh`")) << r.out;
  EXPECT_TRUE(has_line(r.out, "ok", "gh", "gh 2.23.0, authenticated")) << r.out;
  EXPECT_TRUE(has_line(r.out, "ok", "claude", "flags devgraph passes")) << r.out;
  EXPECT_TRUE(has_line(r.out, "ok", "guard", "self-check passes")) << r.out;
  EXPECT_TRUE(has_line(r.out, "ok", "install", "claude: grants present, guard hook registered"))
      << r.out;
  EXPECT_TRUE(has_line(r.out, "ok", "leftovers", "none orphaned")) << r.out;
  // codex and gemini are not installed: worth knowing, not a failure.
  EXPECT_TRUE(has_line(r.out, "warning", "codex", "codex not found on PATH")) << r.out;
  EXPECT_NE(r.out.find(", 0 problems: devgraph is ready\n"), std::string::npos) << r.out;
}

TEST_F(DoctorCli, NoGhOnPathIsAProblemForGithubDelivery) {
  github_origin();
  ASSERT_EQ(::unlink((bin + "/gh").c_str()), 0);
  auto r = doctor();
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_TRUE(has_line(r.out, "problem", "gh",
                       "gh not found on PATH \xE2\x80\x94 install the GitHub CLI "
                       "(https://cli.github.com), then run: gh auth login"))
      << r.out;
}

TEST_F(DoctorCli, AnUnauthenticatedGhIsAProblemWithTheLoginCommand) {
  github_origin();
  write_executable(bin + "/gh", fake_gh(false));
  auto r = doctor();
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_TRUE(has_line(r.out, "problem", "gh", "gh 2.23.0 is not authenticated")) << r.out;
  EXPECT_TRUE(has_line(r.out, "problem", "gh", "\xE2\x80\x94 run: gh auth login")) << r.out;
}

TEST_F(DoctorCli, AMissingAgentCliIsAProblemForTheSelectedBackend) {
  ASSERT_EQ(::unlink((bin + "/claude").c_str()), 0);
  auto r = doctor();
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_TRUE(has_line(r.out, "problem", "claude", "claude not found on PATH")) << r.out;
  EXPECT_TRUE(has_line(r.out, "problem", "claude", "npm install -g @anthropic-ai/claude-code"))
      << r.out;
  // With another backend selected, the same absence is a warning.
  auto codex = doctor({"--agent", "sim"});
  EXPECT_TRUE(has_line(codex.out, "warning", "claude", "claude not found on PATH")) << codex.out;
}

TEST_F(DoctorCli, APrimaryCloneWithoutOriginIsLocalDelivery) {
  auto r = doctor();
  EXPECT_EQ(r.exit_code, 0) << r.out;
  EXPECT_TRUE(has_line(r.out, "warning", "repository",
                       "no origin remote: local delivery (ready branches and local issues, no "
                       "pull requests) \xE2\x80\x94 for pull requests: git remote add origin "
                       "https://github.com/OWNER/REPO.git"))
      << r.out;
  EXPECT_TRUE(has_line(r.out, "ok", "repository", "default branch main (checked out)")) << r.out;
  // gh is not needed for local delivery.
  EXPECT_TRUE(has_line(r.out, "ok", "gh", "")) << r.out;
}

TEST_F(DoctorCli, AStaleLockIsReportedAndLeftAlone) {
  const std::string develop_home = placement().develop_home;
  int pid = dead_pid();
  test::write_text(develop_home + "/orchestrator.lock", "pid " + std::to_string(pid));
  test::write_text(develop_home + "/runs/20260101T000000Z/state.json",
                   R"({"run_id": "20260101T000000Z", "repo": "local/repo", "status": "running"})");
  auto r = doctor();
  EXPECT_EQ(r.exit_code, 0) << r.out;
  EXPECT_TRUE(has_line(r.out, "warning", "leftovers",
                       "stale lock: " + develop_home + "/orchestrator.lock names pid " +
                           std::to_string(pid) +
                           ", which is gone, but run 20260101T000000Z is still marked running"))
      << r.out;
  EXPECT_TRUE(has_line(r.out, "warning", "leftovers", "run `devgraph run` in the repository"))
      << r.out;
}

TEST_F(DoctorCli, AnOrphanedWorktreeWhoseDirectoryIsGoneIsAProblem) {
  const std::string path = placement().worktrees_dir + "/develop-b1";
  git({"worktree", "add", "-q", "-b", "develop/b1", path, "main"});
  fs::remove_all(path);
  auto r = doctor();
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_TRUE(has_line(
      r.out, "problem", "leftovers",
      "orphaned worktree " + path + " (develop/b1): registered, but its directory is gone"))
      << r.out;
  EXPECT_TRUE(has_line(r.out, "problem", "leftovers", "run: git -C " + repo + " worktree prune"))
      << r.out;
}

TEST_F(DoctorCli, ARunWaitingForAPersonIsReportedWithItsAnswer) {
  const std::string develop_home = placement().develop_home;
  Json state = {
      {"run_id", "r1"},
      {"repo", "local/repo"},
      {"status", "human_required"},
      {"bundles",
       Json::array(
           {{{"id", "b1"}, {"status", "parked"}, {"parked_reason", "the driver kept failing"}}})}};
  test::write_text(develop_home + "/runs/r1/state.json", dump_py(state, 2));
  auto r = doctor();
  EXPECT_EQ(r.exit_code, 0) << r.out;
  EXPECT_TRUE(has_line(r.out, "warning", "leftovers",
                       "b1 (run r1) waits for a person: the driver kept failing \xE2\x80\x94 "
                       "answer it: devgraph answer b1 --run r1"))
      << r.out;
}

TEST_F(DoctorCli, JsonIsOneObjectForScripts) {
  ASSERT_EQ(::unlink((bin + "/claude").c_str()), 0);
  auto r = doctor({"--json"});
  EXPECT_EQ(r.exit_code, 1);
  Json j = Json::parse(r.out);
  EXPECT_EQ(j["ok"], false);
  ASSERT_TRUE(j["checks"].is_array());
  bool claude_problem = false;
  for (const auto& c : j["checks"]) {
    for (const char* key : {"id", "area", "level", "message", "fix"}) {
      EXPECT_TRUE(c[key].is_string()) << c.dump();
    }
    std::string level = c["level"];
    EXPECT_TRUE(level == "ok" || level == "warning" || level == "problem") << level;
    EXPECT_EQ(c["fix"] == "", level == "ok") << c.dump();
    claude_problem = claude_problem || (c["id"] == "agent.claude" && level == "problem");
  }
  EXPECT_TRUE(claude_problem) << r.out;
  EXPECT_EQ(j["counts"]["problem"].get<int>() > 0, true);
}

TEST_F(DoctorCli, OutsideARepositoryTheMachineIsStillChecked) {
  const std::string plain = s / "plain";
  ASSERT_TRUE(make_directories(plain).ok());
  auto here = doctor({}, plain);
  EXPECT_EQ(here.exit_code, 0) << here.out;
  EXPECT_TRUE(has_line(here.out, "warning", "repository", "is not inside a git repository"))
      << here.out;
  EXPECT_TRUE(has_line(here.out, "ok", "git", "git ")) << here.out;
  auto named = doctor({"--repo", plain});
  EXPECT_EQ(named.exit_code, 1) << named.out;
  EXPECT_TRUE(has_line(named.out, "problem", "repository", "is not a git repository")) << named.out;
}

TEST_F(DoctorCli, UsageErrorsExitThree) {
  auto unknown = doctor({"--bogus"});
  EXPECT_EQ(unknown.exit_code, 3);
  EXPECT_NE(unknown.err.find("usage: devgraph doctor"), std::string::npos) << unknown.err;
  auto agent = doctor({"--agent", "vim"});
  EXPECT_EQ(agent.exit_code, 3);
  EXPECT_NE(agent.err.find("invalid choice: 'vim'"), std::string::npos) << agent.err;
  auto help = doctor({"--help"});
  EXPECT_EQ(help.exit_code, 0);
  EXPECT_NE(help.out.find("--json"), std::string::npos);
}

}  // namespace
}  // namespace devgraph
