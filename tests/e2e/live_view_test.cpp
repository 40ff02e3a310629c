// The live view end to end: `devgraph run-bundle` run under a
// pseudo-terminal draws one screen redrawn in place (tasks by node, live
// personas), `devgraph demo` the whole run's (one line per bundle), and
// each ends with its final summary; a pipe, --no-live and TERM=dumb get
// plain lines. The same small bundle also runs through `--agent command`.
#include <fcntl.h>
#include <pty.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <cerrno>
#include <functional>
#include <regex>
#include <sstream>

#include "support/build_paths.h"
#include "support/test_util.h"
#include "util/json.h"

namespace devgraph {
namespace {

struct PtyRun {
  int exit_code = -1;
  std::string transcript;  // everything the program wrote to the terminal
};

// Runs the devgraph binary with its stdin, stdout and stderr on a new
// pseudo-terminal of the given size; reads until the program closes it.
// `on_output`, when given, sees the terminal's master side and the
// transcript so far after every read (to resize the terminal mid-run).
PtyRun run_in_pty(const std::vector<std::string>& args,
                  const std::map<std::string, std::string>& env, unsigned short cols,
                  unsigned short rows,
                  const std::function<void(int, const std::string&)>& on_output = {}) {
  winsize ws{};
  ws.ws_col = cols;
  ws.ws_row = rows;
  int master = -1;
  pid_t pid = ::forkpty(&master, nullptr, nullptr, &ws);
  if (pid < 0) ADD_FAILURE() << "forkpty failed: " << std::strerror(errno);
  if (pid == 0) {
    for (const auto& [k, v] : env) {
      if (v.empty())
        ::unsetenv(k.c_str());
      else
        ::setenv(k.c_str(), v.c_str(), 1);
    }
    std::vector<std::string> argv{DEVGRAPH_BIN};
    argv.insert(argv.end(), args.begin(), args.end());
    std::vector<char*> cargv;
    for (auto& a : argv) cargv.push_back(a.data());
    cargv.push_back(nullptr);
    ::execv(cargv[0], cargv.data());
    ::_exit(127);
  }
  PtyRun r;
  char buf[4096];
  while (true) {
    ssize_t n = ::read(master, buf, sizeof buf);
    if (n > 0) {
      r.transcript.append(buf, static_cast<size_t>(n));
      if (on_output) on_output(master, r.transcript);
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    break;  // EIO once the child side is closed
  }
  ::close(master);
  int status = 0;
  ::waitpid(pid, &status, 0);
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

// What a terminal shows after the transcript: it understands the few
// sequences the view writes (cursor up, cursor home, carriage return, erase
// to the end of the line and of the screen). The terminal translates "\n"
// to "\r\n".
std::vector<std::string> screen_after(const std::string& t) {
  std::vector<std::string> screen{""};
  size_t row = 0, col = 0;
  for (size_t i = 0; i < t.size(); ++i) {
    char c = t[i];
    if (c == '\x1b' && i + 1 < t.size() && t[i + 1] == '[') {
      size_t j = i + 2;
      int n = 0;
      bool digits = false;
      while (j < t.size() && std::isdigit(static_cast<unsigned char>(t[j]))) {
        n = n * 10 + (t[j] - '0');
        digits = true;
        ++j;
      }
      if (!digits) n = 1;
      char cmd = j < t.size() ? t[j] : 0;
      if (cmd == 'A') row = row >= static_cast<size_t>(n) ? row - n : 0;
      if (cmd == 'H') row = col = 0;
      if (cmd == 'K' || cmd == 'J') screen[row].resize(std::min(screen[row].size(), col));
      if (cmd == 'J') screen.resize(row + 1);
      i = j;
      continue;
    }
    if (c == '\r') {
      col = 0;
    } else if (c == '\n') {
      ++row;
      col = 0;
      if (row >= screen.size()) screen.emplace_back();
    } else {
      if (screen[row].size() < col + 1) screen[row].resize(col + 1, ' ');
      screen[row][col++] = c;
    }
  }
  return screen;
}

size_t count_of(const std::string& hay, const std::string& needle) {
  size_t n = 0;
  for (size_t p = hay.find(needle); p != std::string::npos; p = hay.find(needle, p + 1)) ++n;
  return n;
}

size_t index_of(const std::vector<std::string>& lines, const std::string& prefix) {
  for (size_t i = 0; i < lines.size(); ++i)
    if (lines[i].rfind(prefix, 0) == 0) return i;
  return lines.size();
}

// The demo draws the whole run as `devgraph run` does: one line per bundle,
// redrawn in place, the last frame showing every bundle delivered, then
// the demo's summary below it.
TEST(LiveView, DemoOnATerminalRedrawsTheRunAndEndsWithTheSummary) {
  test::Scratch s;
  auto r = run_in_pty({"demo", "--latency-ms", "40"},
                      {{"AI_ROOT", s.path()}, {"TERM", "xterm"}, {"NO_COLOR", ""}}, 120, 40);
  ASSERT_EQ(r.exit_code, 0) << r.transcript;
  // Redrawn in place, many times; some frame showed a bundle's tasks moving.
  EXPECT_GE(count_of(r.transcript, "A\r"), 3u) << r.transcript;
  EXPECT_TRUE(std::regex_search(r.transcript, std::regex(R"(  b[1-3] #[0-9].*  running)")))
      << r.transcript;
  // Exactly one frame stays on the screen, every bundle delivered in it.
  auto screen = screen_after(r.transcript);
  std::regex header(R"(devgraph run [0-9]{8}T[0-9]{6}Z  .*)");
  size_t frame = screen.size(), frames_left = 0;
  for (size_t i = 0; i < screen.size(); ++i)
    if (std::regex_match(screen[i], header)) {
      frame = i;
      ++frames_left;
    }
  EXPECT_EQ(frames_left, 1u) << r.transcript;
  ASSERT_LT(frame + 3, screen.size()) << r.transcript;
  EXPECT_EQ(screen[frame + 1], "  b1 #2 #3  delivered  tasks 2/2  develop/b1-normalize-words");
  EXPECT_EQ(screen[frame + 2], "  b2 #4  delivered  tasks 1/1  develop/b2-line-statistics");
  EXPECT_EQ(screen[frame + 3], "  b3 #5  delivered  tasks 1/1  develop/b3-character-classes");
  // No plain progress lines, and the summary below the frame.
  EXPECT_EQ(index_of(screen, "  started b1 in "), screen.size()) << r.transcript;
  size_t ready = index_of(screen, "3 of 3 bundles ready");
  EXPECT_GT(ready, frame);
  EXPECT_LT(ready, screen.size());
  EXPECT_GT(index_of(screen, "how to look at it:"), ready);
}

// A bundle at plan_bundle for run-bundle with the fixed-latency fake.
class RunBundleView : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string repo = s / "src/repo";
    wt = s / "ai/worktrees/local/repo/develop-b1";
    run = s / "ai/develop/local/repo/runs/r1";
    ASSERT_TRUE(make_directories(repo).ok());
    git(repo, {"init", "-q", "-b", "main"});
    test::write_text(repo + "/README.md", "x\n");
    git(repo, {"add", "README.md"});
    git(repo, {"commit", "-q", "-m", "base"});
    git(repo, {"worktree", "add", "-q", "-b", "develop/b1", wt, "main"});
    auto init = test::run_devgraph({"checkpoint", run, "init", "--repo", repo, "--default-branch",
                                    "main", "--merge",
                                    R"({"delivery": "local", "commands": {"test": ")" +
                                        test_command + R"(", "build": "true"}})"});
    ASSERT_EQ(init.exit_code, 0) << init.err;
    Json merge = {{"worktree", wt}, {"branch", "develop/b1"}, {"base", "main"}};
    auto mv =
        test::run_devgraph({"checkpoint", run, "move", "--bundle", "b1", "--node", "plan_bundle",
                            "--event", "BUNDLE_STARTED", "--merge", dump_py(merge)});
    ASSERT_EQ(mv.exit_code, 0) << mv.err;
  }

  void git(const std::string& dir, std::vector<std::string> args) {
    args.insert(args.begin(), {"git", "-C", dir});
    auto r = test::run_process(args, identity());
    ASSERT_EQ(r.exit_code, 0) << r.err;
  }

  static std::map<std::string, std::string> identity() {
    return {{"GIT_AUTHOR_NAME", "t"},
            {"GIT_AUTHOR_EMAIL", "t@t"},
            {"GIT_COMMITTER_NAME", "t"},
            {"GIT_COMMITTER_EMAIL", "t@t"}};
  }

  std::map<std::string, std::string> env(const std::string& term) {
    auto e = identity();
    e["AI_ROOT"] = s / "ai";
    e["FAKE_LATENCY_MS"] = "30";
    e["FAKE_TASKS"] = "2";  // T1 -> T2: enough for the view, quick
    e["TERM"] = term;
    e["NO_COLOR"] = "";
    return e;
  }

  std::vector<std::string> args(bool no_live = false) {
    std::vector<std::string> a = {
        "run-bundle",   run,
        "--bundle",     "b1",
        "--claude-bin", test::test_dir() + "/fixtures/bundle/fake-claude-fixed"};
    if (no_live) a.push_back("--no-live");
    return a;
  }

  test::Scratch s;
  std::string wt, run;
  std::string test_command = "true";
};

// The `launched` records among the JSON lines run-bundle writes on stderr.
std::vector<Json> launches(const std::string& err) {
  std::vector<Json> out;
  std::istringstream in(err);
  std::string line;
  while (std::getline(in, line)) {
    Json rec = Json::parse(line);
    if (rec["event"] == "launched") out.push_back(std::move(rec));
  }
  return out;
}

TEST_F(RunBundleView, OnATerminalTheResultLineFollowsTheLastFrame) {
  auto r = run_in_pty(args(), env("xterm-256color"), 120, 30);
  ASSERT_EQ(r.exit_code, 0) << r.transcript;
  EXPECT_GE(count_of(r.transcript, "A\r"), 3u);
  EXPECT_EQ(r.transcript.find("{\"ts\""), std::string::npos);  // no plain records
  auto screen = screen_after(r.transcript);
  while (!screen.empty() && screen.back().empty()) screen.pop_back();
  ASSERT_FALSE(screen.empty());
  EXPECT_EQ(screen.back().rfind("RESULT_JSON: {\"status\": \"DONE\"", 0), 0u) << screen.back();
  size_t frame = index_of(screen, "devgraph bundle b1  node create_pr");
  ASSERT_LT(frame, screen.size()) << r.transcript;
  EXPECT_EQ(screen[frame + 1], "tasks: 2/2 committed");
  EXPECT_EQ(screen[frame + 2], "  committed        T1 T2");
}

TEST_F(RunBundleView, APipeGetsPlainLines) {
  auto e = env("xterm");
  auto r = test::run_devgraph(args(), e);
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_EQ(r.out.find('\x1b'), std::string::npos);
  EXPECT_EQ(r.err.find('\x1b'), std::string::npos);
  // stdout is the RESULT_JSON line alone; stderr one JSON record a line,
  // the persona runtime's launches included.
  EXPECT_EQ(r.out.rfind("RESULT_JSON: ", 0), 0u);
  EXPECT_EQ(count_of(r.out, "\n"), 1u);
  EXPECT_EQ(launches(r.err).size(), 11u);  // planner, 2 tasks x 4, two reviewers
}

void expect_plain(const PtyRun& r) {
  ASSERT_EQ(r.exit_code, 0) << r.transcript;
  EXPECT_EQ(r.transcript.find('\x1b'), std::string::npos);
  EXPECT_NE(r.transcript.find("{\"ts\": "), std::string::npos);
  EXPECT_NE(r.transcript.find("RESULT_JSON: {\"status\": \"DONE\""), std::string::npos);
}

TEST_F(RunBundleView, NoLiveGetsPlainLinesOnATerminal) {
  expect_plain(run_in_pty(args(true), env("xterm"), 100, 30));
}

TEST_F(RunBundleView, ADumbTerminalGetsPlainLines) {
  expect_plain(run_in_pty(args(), env("dumb"), 100, 30));
}

// The same bundle through `--agent command`: the fixture reads its prompt
// from the file the template names and answers in plain text.
TEST_F(RunBundleView, AnyCliRunsThroughAnAgentCommandTemplate) {
  auto a = args(true);
  a.erase(a.end() - 3, a.end() - 1);  // no --claude-bin
  const std::string fake = test::test_dir() + "/fixtures/bundle/fake-claude-fixed";
  a.insert(a.end(), {"--agent", "command", "--agent-command",
                     "'" + fake + "' --prompt-file {prompt_file} --persona {persona}"});
  auto r = test::run_devgraph(a, env("xterm"));
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_EQ(r.out.rfind("RESULT_JSON: {\"status\": \"DONE\"", 0), 0u) << r.out;
  const auto launched = launches(r.err);
  EXPECT_EQ(launched.size(), 11u);
  for (const Json& rec : launched) EXPECT_EQ(rec["agent"], "command");
  EXPECT_EQ(test::slurp(wt + "/src/T2.txt"), "code for T2\n");
}

TEST_F(RunBundleView, AgentCommandMistakesAreRefusedBeforeAnyWork) {
  const std::string before = test::slurp(run + "/state.json");
  struct Case {
    std::vector<std::string> extra;
    int exit_code;
    std::string says;
  };
  const std::vector<Case> cases = {
      {{"--agent-command", "x {prompt_file}"}, 2, "only with --agent command"},
      {{"--agent", "command", "--agent-command", "x {prompt_file} | tee log"},
       2,
       "--agent-command"},
      {{"--agent", "command", "--agent-command", "'unterminated"}, 2, "--agent-command"},
      {{"--agent", "command"}, 3, "--agent-command"},
      {{"--agent", "command", "--agent-command", "mycli --quiet"}, 3, "{prompt_file}"},
  };
  for (const auto& c : cases) {
    std::vector<std::string> a = {"run-bundle", run, "--bundle", "b1", "--no-live"};
    a.insert(a.end(), c.extra.begin(), c.extra.end());
    auto r = test::run_devgraph(a, env("xterm"));
    EXPECT_EQ(r.exit_code, c.exit_code) << c.extra.back() << "\n" << r.out << r.err;
    EXPECT_NE((r.out + r.err).find(c.says), std::string::npos) << r.out << r.err;
  }
  EXPECT_EQ(test::slurp(run + "/state.json"), before);
  EXPECT_FALSE(path_exists(run + "/bundles/b1/run_bundle.log"));
}

// A bundle whose test suite takes two seconds.
class RunBundleViewSlowTests : public RunBundleView {
 protected:
  RunBundleViewSlowTests() { test_command = "sleep 2"; }
};

TEST_F(RunBundleViewSlowTests, TheViewKeepsTimeDuringTheTestsAndFollowsAResize) {
  bool resized = false;
  size_t resized_at = 0;
  auto r = run_in_pty(args(), env("xterm"), 120, 30, [&](int master, const std::string& t) {
    if (resized || t.find("test command running") == std::string::npos) return;
    winsize ws{};
    ws.ws_col = 40;
    ws.ws_row = 20;
    ::ioctl(master, TIOCSWINSZ, &ws);
    resized = true;
    resized_at = t.size();
  });
  ASSERT_EQ(r.exit_code, 0) << r.transcript;
  ASSERT_TRUE(resized) << "no frame showed the test command: " << r.transcript;
  // Frames kept coming while the two-second command ran: its elapsed time
  // advanced on screen.
  EXPECT_NE(r.transcript.find("test command running 0:01: sleep 2"), std::string::npos)
      << r.transcript;
  // Before the resize a frame line was wider than 40 columns; after it the
  // frame was redrawn from a cleared screen and the last frame fits.
  EXPECT_NE(r.transcript.find("\x1b[H\x1b[J", resized_at), std::string::npos);
  auto screen = screen_after(r.transcript);
  size_t frame = index_of(screen, "devgraph bundle b1");
  ASSERT_LT(frame, screen.size()) << r.transcript;
  size_t result = index_of(screen, "RESULT_JSON: ");
  ASSERT_LT(result, screen.size());
  for (size_t i = frame; i < result; ++i) EXPECT_LE(screen[i].size(), 40u) << screen[i];
  EXPECT_EQ(screen[frame + 1], "tasks: 2/2 committed");
  // The log has the command's records.
  std::string log = test::slurp(run + "/bundles/b1/run_bundle.log");
  EXPECT_NE(log.find(R"("event": "command_started", "command": "test", "argv": "sleep 2")"),
            std::string::npos)
      << log;
  EXPECT_TRUE(std::regex_search(
      log, std::regex(R"("event": "command_finished", "command": "test", "exit": 0, )"
                      R"("timed_out": false, "seconds": [23]\.\d)")))
      << log;
}

}  // namespace
}  // namespace devgraph
