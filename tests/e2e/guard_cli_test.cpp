// `devgraph guard` as a process: flags, environment, exit codes, the hook
// protocol, and agreement with the reference guard on the same inputs.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <map>
#include <string>

#include "guard/guard.h"
#include "support/test_util.h"

namespace devgraph {
namespace {

class GuardCli : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = guard::resolve_path(scratch_.path(), "/", "");
    primary_ = root_ + "/widgets";
    plain_ = root_ + "/plain";
    ASSERT_TRUE(make_directories(primary_).ok());
    ASSERT_TRUE(make_directories(plain_).ok());
    // The cases outside a repository need a temporary directory outside
    // one; git, not the guard under test, is asked (an empty or broken
    // `.git` above does not count for it either).
    auto outside = test::run_process({"git", "-C", plain_, "rev-parse", "--absolute-git-dir"},
                                     {{"GIT_DIR", ""}, {"GIT_WORK_TREE", ""}});
    while (!outside.out.empty() && outside.out.back() == '\n') outside.out.pop_back();
    ASSERT_NE(outside.exit_code, 0)
        << "the temporary directory " << root_ << " lies inside the repository " << outside.out
        << "; set TMPDIR to a directory outside any repository";
    test::write_text(primary_ + "/README.md", "x\n");
    git({"init", "-q"}, primary_);
    git({"remote", "add", "origin", "git@github.com:Acme/Widgets.git"}, primary_);
    git({"add", "."}, primary_);
    git({"commit", "-qm", "init"}, primary_);
    env_ = {{"AI_ROOT", root_ + "/ai"},
            {"DEVELOP_WORKTREES_ROOT", ""},
            {"DEVELOP_HOME_ROOT", ""},
            {"DEVELOP_GUARD_EXEMPT", ""}};
  }

  void git(std::vector<std::string> args, const std::string& cwd) {
    args.insert(args.begin(), {"git", "-c", "user.name=t", "-c", "user.email=t@example.invalid",
                               "-c", "init.defaultBranch=main"});
    auto r = test::run_process(args, {}, cwd);
    ASSERT_EQ(r.exit_code, 0) << r.err;
  }

  test::ProcessResult guard(std::vector<std::string> args, const std::string& input = "") {
    args.insert(args.begin(), "guard");
    return test::run_devgraph(args, env_, plain_, input);
  }

  test::ProcessResult reference(std::vector<std::string> args, const std::string& input = "") {
    args.insert(args.begin(), {"python3", test::reference_dir() + "/runtime/placement_guard.py"});
    return test::run_process(args, env_, plain_, input);
  }

  test::Scratch scratch_;
  std::string root_, primary_, plain_;
  std::map<std::string, std::string> env_;
};

TEST_F(GuardCli, ResolvePrintsPlacementFacts) {
  auto r = guard({"resolve", "--cwd", primary_, "--branch", "develop/add-login"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["owner"], "Acme");
  EXPECT_EQ(j["repo"], "Widgets");
  EXPECT_EQ(j["delivery"], "github");
  EXPECT_EQ(j["primary_top"], primary_);
  EXPECT_EQ(j["checkout_kind"], "primary");
  EXPECT_EQ(j["branch_slug"], "develop-add-login");
  EXPECT_EQ(j["worktree_path"], root_ + "/ai/worktrees/Acme/Widgets/develop-add-login");
  EXPECT_EQ(j["develop_home"], root_ + "/ai/develop/Acme/Widgets");
}

TEST_F(GuardCli, ResolveOutsideARepositoryDenies) {
  auto r = guard({"resolve", "--cwd", plain_});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err.rfind("DENY: ", 0), 0u) << r.err;
}

TEST_F(GuardCli, ChecksUseExitCodes) {
  auto ok = guard({"check-write", plain_ + "/x", "--cwd", plain_});
  EXPECT_EQ(ok.exit_code, 0);
  EXPECT_EQ(ok.out, "OK\n");
  auto deny = guard({"check-write", "README.md", "--cwd", primary_});
  EXPECT_EQ(deny.exit_code, 2);
  EXPECT_EQ(deny.err.rfind("DENY: ", 0), 0u);
  EXPECT_EQ(deny.err.find('\n'), deny.err.size() - 1) << "one line: " << deny.err;
  EXPECT_EQ(guard({"check-bash", "git commit -m x", "--cwd", primary_}).exit_code, 2);
  EXPECT_EQ(guard({"check-bash", "git status", "--cwd", primary_}).exit_code, 0);
  EXPECT_EQ(guard({"check-worktree", root_ + "/ai/worktrees/acme/widgets/x", "--cwd", primary_})
                .exit_code,
            0);
  EXPECT_EQ(guard({"check-worktree", root_ + "/elsewhere", "--cwd", primary_}).exit_code, 2);
}

// What some machines have: an empty `.git` directory, left by another
// program in the temporary directory or a parent of it. git does not take
// it for a repository, and neither does the guard: a plain directory
// below it stays writable and has no placement.
TEST_F(GuardCli, EmptyGitDirectoryAboveIsNotARepository) {
  ASSERT_TRUE(make_directories(root_ + "/.git").ok());
  auto ok = guard({"check-write", plain_ + "/x", "--cwd", plain_});
  EXPECT_EQ(ok.exit_code, 0) << ok.err;
  EXPECT_EQ(ok.out, "OK\n");
  auto redirect = guard({"check-bash", "echo x > out.txt", "--cwd", plain_});
  EXPECT_EQ(redirect.exit_code, 0) << redirect.err;
  auto resolve = guard({"resolve", "--cwd", plain_});
  EXPECT_EQ(resolve.exit_code, 2);
  EXPECT_NE(resolve.err.find("not inside a git repository"), std::string::npos) << resolve.err;
  // The real repository beside it is still a read-only primary clone.
  EXPECT_EQ(guard({"check-write", "README.md", "--cwd", primary_}).exit_code, 2);
}

TEST_F(GuardCli, ExemptRootsAllowWrites) {
  env_["DEVELOP_GUARD_EXEMPT"] = "/nonexistent:" + primary_;
  EXPECT_EQ(guard({"check-write", "README.md", "--cwd", primary_}).exit_code, 0);
  EXPECT_EQ(guard({"check-bash", "git commit -am x", "--cwd", primary_}).exit_code, 0);
}

TEST_F(GuardCli, UsageErrorsExitTwoAndChangeNothing) {
  auto none = guard({});
  EXPECT_EQ(none.exit_code, 2);
  EXPECT_NE(none.err.find("usage:"), std::string::npos);
  EXPECT_EQ(guard({"bogus"}).exit_code, 2);
  EXPECT_EQ(guard({"check-bash"}).exit_code, 2);
  EXPECT_EQ(guard({"check-write", "a", "b"}).exit_code, 2);
  EXPECT_EQ(guard({"resolve", "--nope"}).exit_code, 2);
  EXPECT_EQ(guard({"--help"}).exit_code, 0);
  auto st = test::run_process({"git", "status", "--porcelain", "--ignored"}, {}, primary_);
  EXPECT_EQ(st.out, "");
}

TEST_F(GuardCli, HookDeniesWithJsonAndAllowsSilently) {
  std::string bash = R"({"hook_event_name":"PreToolUse","tool_name":"Bash","cwd":")" + primary_ +
                     R"(","tool_input":{"command":"echo x > out.txt"}})";
  auto r = guard({"hook"}, bash);
  EXPECT_EQ(r.exit_code, 0);
  auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["hookSpecificOutput"]["hookEventName"], "PreToolUse");
  EXPECT_EQ(j["hookSpecificOutput"]["permissionDecision"], "deny");
  EXPECT_NE(j["hookSpecificOutput"]["permissionDecisionReason"].get<std::string>().find(primary_),
            std::string::npos);

  std::string write = R"({"tool_name":"Write","cwd":")" + primary_ +
                      R"(","tool_input":{"file_path":"notes.md","content":"x"}})";
  EXPECT_NE(guard({"hook"}, write).out, "");
  std::string edit = R"({"toolName":"NotebookEdit","cwd":")" + plain_ +
                     R"(","toolInput":{"notebook_path":")" + primary_ + R"(/nb.ipynb"}})";
  EXPECT_NE(guard({"hook"}, edit).out, "");

  std::string fine =
      R"({"tool_name":"Bash","cwd":")" + primary_ + R"(","tool_input":{"command":"git status"}})";
  auto a = guard({"hook"}, fine);
  EXPECT_EQ(a.exit_code, 0);
  EXPECT_EQ(a.out, "");
}

TEST_F(GuardCli, HookAllowsMalformedInput) {
  for (std::string input :
       {"", "   ", "not json", "[1,2]", "{\"tool_name\":\"Bash\",\"tool_input\":\"x\"}",
        "{\"tool_name\":\"Bash\",\"tool_input\":{\"command\":5}}",
        "{\"tool_name\":\"Write\",\"tool_input\":{\"file_path\":[]}}",
        "{\"hook_event_name\":\"PostToolUse\",\"tool_name\":\"Bash\",\"tool_input\":{\"command\":"
        "\"rm -rf /\"}}",
        "{\"tool_name\":\"Bash\",\"cwd\":7,\"tool_input\":{\"command\":\"ls\"}}",
        "{\"tool_name\":\"Bash\",\"tool_input\":{\"command\":\"echo 'unterminated\"}}",
        "{\"a\":"}) {
    auto r = guard({"hook"}, input);
    EXPECT_EQ(r.exit_code, 0) << input;
    EXPECT_EQ(r.out, "") << input;
  }
}

TEST_F(GuardCli, SelfCheckPasses) {
  auto r = guard({"self-check"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "OK: placement guard self-check passed\n");
}

// The nearest `.git` of any kind at or above `dir`, or "": what the
// reference takes for a repository.
std::string any_git_above(std::string dir) {
  while (true) {
    if (path_exists(dir + "/.git")) return dir + "/.git";
    if (dir == "/" || dir.empty()) return "";
    dir = dirname_of(dir);
  }
}

TEST_F(GuardCli, AgreesWithTheReference) {
  if (test::reference_dir().empty()) GTEST_SKIP() << "reference runtime not available";
  // With a `.git` that is no repository above the temporary directory, the
  // reference takes the plain directory for a primary clone, where devgraph
  // differs on purpose (EmptyGitDirectoryAboveIsNotARepository); the cases
  // that touch it are then left out.
  const std::string stray = any_git_above(root_);
  if (!stray.empty()) std::printf("left out the plain directory's cases: %s\n", stray.c_str());
  for (const auto& args : std::vector<std::vector<std::string>>{
           {"resolve", "--cwd", primary_, "--branch", "develop/add-login"},
           {"resolve", "--cwd", primary_},
           {"resolve", "--cwd", plain_},
           {"check-write", "README.md", "--cwd", primary_},
           {"check-write", plain_ + "/x", "--cwd", primary_},
           {"check-worktree", root_ + "/ai/worktrees/acme/widgets/x", "--cwd", primary_},
           {"check-worktree", root_ + "/ai/worktrees/acme/x", "--cwd", primary_},
           {"check-worktree", root_ + "/x", "--cwd", primary_},
           {"check-bash", "git status && git log -1", "--cwd", primary_},
           {"check-bash", "git commit -m x", "--cwd", primary_},
           {"check-bash", "echo x > out", "--cwd", primary_},
           {"check-bash", "cp a " + primary_ + "/b", "--cwd", plain_},
           {"check-bash", "git worktree add " + root_ + "/ai/worktrees/Acme/Widgets/x -b x main",
            "--cwd", primary_},
           {"check-bash", "git worktree add ../x -b x main", "--cwd", primary_},
       }) {
    if (!stray.empty() && std::any_of(args.begin(), args.end(), [&](const std::string& a) {
          return a.find(plain_) != std::string::npos;
        }))
      continue;
    auto mine = guard(args);
    auto theirs = reference(args);
    std::string label = args[0] + " " + args[1];
    EXPECT_EQ(mine.exit_code, theirs.exit_code) << label << "\n" << mine.err << theirs.err;
    if (args[0] == "resolve" && theirs.exit_code == 0) {
      EXPECT_EQ(mine.out, theirs.out) << label;
    } else {
      EXPECT_EQ(mine.out, theirs.out) << label;
      EXPECT_EQ(mine.err.rfind("DENY: ", 0) == 0, theirs.err.rfind("DENY: ", 0) == 0) << label;
    }
  }
  std::string payload = R"({"hook_event_name":"PreToolUse","tool_name":"Bash","cwd":")" + primary_ +
                        R"(","tool_input":{"command":"git commit -m x"}})";
  auto mine = nlohmann::json::parse(guard({"hook"}, payload).out);
  auto theirs = nlohmann::json::parse(reference({"hook"}, payload).out);
  EXPECT_EQ(mine["hookSpecificOutput"]["permissionDecision"],
            theirs["hookSpecificOutput"]["permissionDecision"]);
  EXPECT_EQ(mine["hookSpecificOutput"]["hookEventName"],
            theirs["hookSpecificOutput"]["hookEventName"]);
}

}  // namespace
}  // namespace devgraph
