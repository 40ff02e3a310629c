// The real agent CLIs end to end, offline: claude, codex and gemini, each
// through one persona launch and then a three-task bundle.
// `DEVGRAPH_REAL_CLIS=1 scripts/bootstrap.sh` installs pinned versions under
// .real-clis/ (docs/real-clis.md); a CLI that is not there skips its tests.
// Each CLI is pointed at tests/support/model_server.py, a scripted model on
// 127.0.0.1 that is also the CLI's HTTP(S) proxy: it plays each persona's
// turns (write a file, run the bundle's test command, answer with
// RESULT_JSON), logs every request with the tool results the CLI sent back,
// and refuses and logs any connection meant for another host. The tests
// assert on what the CLI really did: the files in the worktree, the
// commands' output as the model received it, the commands its deny list
// refused, and that nothing tried to leave the machine.
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <map>
#include <ostream>
#include <set>

#include "agents/runtime.h"
#include "contracts/schema.h"
#include "support/run_scenario.h"
#include "support/shipped.h"
#include "support/test_util.h"
#include "util/fs.h"
#include "util/json.h"

namespace devgraph {
namespace {

using namespace std::chrono_literals;

// The npm prefix the CLIs were installed into: $DEVGRAPH_REAL_CLIS_DIR, else
// .real-clis/ in the source tree.
std::string real_clis_dir() {
  const char* env = std::getenv("DEVGRAPH_REAL_CLIS_DIR");
  return env && *env ? std::string(env) : test::source_dir() + "/.real-clis";
}

// The installed CLI `name`, or "" when it is not there.
std::string real_cli(const std::string& name) {
  std::string path = real_clis_dir() + "/node_modules/.bin/" + name;
  return ::access(path.c_str(), X_OK) == 0 ? path : "";
}

// tests/support/model_server.py as a child of the test: started on a
// script, ready once it has printed its port, stopped with the test (or
// when the test process dies).
class ModelServer {
 public:
  ModelServer() = default;
  ModelServer(const ModelServer&) = delete;
  ModelServer& operator=(const ModelServer&) = delete;
  ~ModelServer() {
    if (pid_ > 0) {
      ::kill(pid_, SIGTERM);
      int status = 0;
      ::waitpid(pid_, &status, 0);
    }
    if (out_ >= 0) ::close(out_);
  }

  // Starts the server in `dir` (script.json, requests.jsonl); returns
  // whether it said ready within the deadline, a failure condition only.
  testing::AssertionResult start(const Json& script, const std::string& dir) {
    log_ = dir + "/requests.jsonl";
    std::string script_path = dir + "/script.json";
    test::write_text(script_path, dump_py(script, 2));
    int pipe_fds[2];
    if (::pipe2(pipe_fds, O_CLOEXEC) != 0) return testing::AssertionFailure() << "pipe";
    std::string server = test::test_dir() + "/support/model_server.py";
    pid_t parent = ::getpid();
    pid_ = ::fork();
    if (pid_ < 0) return testing::AssertionFailure() << "fork";
    if (pid_ == 0) {
      // A test killed by ctest's timeout takes its server with it.
      ::prctl(PR_SET_PDEATHSIG, SIGTERM);
      if (::getppid() != parent) _exit(127);
      ::dup2(pipe_fds[1], 1);
      const char* argv[] = {"python3", server.c_str(), "--script", script_path.c_str(),
                            "--log",   log_.c_str(),   nullptr};
      ::execvp(argv[0], const_cast<char**>(argv));
      _exit(127);
    }
    ::close(pipe_fds[1]);
    out_ = pipe_fds[0];
    std::string line;
    auto deadline = std::chrono::steady_clock::now() + 60s;
    while (line.find('\n') == std::string::npos) {
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
          deadline - std::chrono::steady_clock::now());
      pollfd p = {out_, POLLIN, 0};
      if (left.count() <= 0 || ::poll(&p, 1, static_cast<int>(left.count())) <= 0)
        return testing::AssertionFailure() << "the model server did not say ready";
      char buf[256];
      ssize_t got = ::read(out_, buf, sizeof buf);
      if (got <= 0) return testing::AssertionFailure() << "the model server exited: " << line;
      line.append(buf, static_cast<size_t>(got));
    }
    if (line.rfind("ready ", 0) != 0)
      return testing::AssertionFailure() << "the model server said " << line;
    port_ = std::stoi(line.substr(6));
    return testing::AssertionSuccess();
  }

  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_); }
  std::vector<Json> records() const { return test::read_jsonl(log_); }

  // Every record of `kind` (turn, side, outside, unknown, error).
  std::vector<Json> of_kind(const std::string& kind) const {
    std::vector<Json> out;
    for (auto& r : records())
      if (r.value("kind", "") == kind) out.push_back(r);
    return out;
  }

  // The results the model received for the shell command `command` in the
  // conversation of (persona, task; "" for none): {tool, command, output,
  // is_error} each, in order.
  std::vector<Json> command_results(const std::string& persona, const std::string& task,
                                    const std::string& command) const {
    std::vector<Json> out;
    for (auto& r : of_kind("turn")) {
      if (r.value("persona", "") != persona) continue;
      if ((r["task"].is_string() ? r["task"].get<std::string>() : "") != task) continue;
      for (auto& t : r["tool_results"])
        if (t["command"] == command) out.push_back(t);
    }
    return out;
  }

  // The results the model received for reading `path` in the conversation
  // of (persona, task): a read tool's, or a `cat` of it through the shell
  // (codex has no read tool).
  std::vector<Json> reads(const std::string& persona, const std::string& task,
                          const std::string& path) const {
    std::vector<Json> out;
    for (auto& r : of_kind("turn")) {
      if (r.value("persona", "") != persona) continue;
      if ((r["task"].is_string() ? r["task"].get<std::string>() : "") != task) continue;
      for (auto& t : r["tool_results"]) {
        bool tool_read = t["input"].is_object() && t["input"].value("file_path", "") == path;
        if (tool_read || t["command"] == "cat '" + path + "'") out.push_back(t);
      }
    }
    return out;
  }

  // "persona task" for every conversation the server played.
  std::set<std::string> conversations() const {
    std::set<std::string> out;
    for (auto& r : of_kind("turn"))
      out.insert(r.value("persona", "") + " " +
                 (r["task"].is_string() ? r["task"].get<std::string>() : "-"));
    return out;
  }

 private:
  pid_t pid_ = -1;
  int out_ = -1;
  int port_ = 0;
  std::string log_;
};

Json write_turn(const std::string& path, const std::string& content) {
  return Json{{"write", {{"path", path}, {"content", content}}}};
}
Json read_turn(const std::string& path) {
  return Json{{"read", path}};
}
Json bash_turn(const std::string& command) {
  return Json{{"bash", command}};
}
// The last turn: a DONE result; `commands` are the checks it names (a
// tdd-writer's commands that run its new test, which devgraph runs itself).
Json final_turn(const std::string& summary, const std::vector<std::string>& commands = {}) {
  Json result = {{"status", "DONE"}, {"summary", summary}, {"evidence", Json::array()}};
  if (!commands.empty()) result["commands"] = commands;
  return Json{{"say", "Finished."}, {"result", result}};
}

std::string quoted(const std::string& s) {
  return Json(s).dump();
}

// How a test points one CLI at the model server: the files in its home,
// the environment it runs in, and the words of a refusal by its deny list.
struct CliSetup {
  std::string name;  // the installed program and the --agent value
  agents::BackendKind kind;
  std::string refusal;
  // Writes the CLI's files under `home`; returns the environment.
  std::map<std::string, std::string> (*prepare)(const ModelServer& server, const std::string& home);
};

// What every CLI gets: a home of its own, and the server as its proxy.
std::map<std::string, std::string> common_env(const ModelServer& server, const std::string& home) {
  return {{"HOME", home},
          {"HTTPS_PROXY", server.url()},
          {"HTTP_PROXY", server.url()},
          {"https_proxy", server.url()},
          {"http_proxy", server.url()},
          {"ALL_PROXY", ""},
          {"all_proxy", ""},
          {"NO_PROXY", "127.0.0.1,localhost"},
          {"no_proxy", "127.0.0.1,localhost"}};
}

// What a user of each CLI has set up: its endpoint (the server) and a
// dummy key, nothing else. devgraph itself adds the rest (agents/
// cli_setup.h): claude's and codex's telemetry off, codex's execpolicy
// rules in a CODEX_HOME of the run's own, gemini's policy files, trusted
// workspace and usage statistics off.
std::map<std::string, std::string> prepare_claude(const ModelServer& server,
                                                  const std::string& home) {
  auto env = common_env(server, home);
  env.insert({{"ANTHROPIC_BASE_URL", server.url()},
              {"ANTHROPIC_API_KEY", "dummy"},
              {"ANTHROPIC_AUTH_TOKEN", ""},
              {"CLAUDE_CODE_OAUTH_TOKEN", ""},
              {"CLAUDE_CONFIG_DIR", ""},
              {"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", ""}});
  return env;
}

// codex: a model provider at the server in the user's own CODEX_HOME,
// which devgraph copies into the run's.
std::map<std::string, std::string> prepare_codex(const ModelServer& server,
                                                 const std::string& home) {
  std::string codex_home = home + "/.codex";
  EXPECT_TRUE(make_directories(codex_home).ok());
  test::write_text(codex_home + "/config.toml",
                   "model = \"gpt-5-codex\"\n"
                   "model_provider = \"scripted\"\n"
                   "[model_providers.scripted]\n"
                   "name = \"scripted\"\n"
                   "base_url = " +
                       quoted(server.url() + "/v1") +
                       "\n"
                       "wire_api = \"responses\"\n");
  auto env = common_env(server, home);
  env.insert({{"CODEX_HOME", codex_home},
              {"OPENAI_API_KEY", ""},
              {"OPENAI_BASE_URL", ""},
              {"CODEX_API_KEY", ""}});
  return env;
}

// gemini: the API key route at the server.
std::map<std::string, std::string> prepare_gemini(const ModelServer& server,
                                                  const std::string& home) {
  std::string dir = home + "/.gemini";
  EXPECT_TRUE(make_directories(dir).ok());
  test::write_text(dir + "/settings.json",
                   R"({"security": {"auth": {"selectedType": "gemini-api-key"}}})"
                   "\n");
  auto env = common_env(server, home);
  env.insert({{"GEMINI_API_KEY", "dummy"},
              {"GOOGLE_GEMINI_BASE_URL", server.url()},
              {"GEMINI_CLI_TRUST_WORKSPACE", ""},
              {"GEMINI_CLI_SYSTEM_SETTINGS_PATH", ""},
              {"GEMINI_CLI_SYSTEM_DEFAULTS_PATH", ""},
              {"GOOGLE_API_KEY", ""},
              {"GOOGLE_APPLICATION_CREDENTIALS", ""},
              {"GOOGLE_GENAI_USE_VERTEXAI", ""},
              {"GOOGLE_CLOUD_PROJECT", ""}});
  return env;
}

void PrintTo(const CliSetup& cli, std::ostream* os) {
  *os << cli.name;
}

const CliSetup kClis[] = {
    {"claude", agents::BackendKind::claude, "has been denied", prepare_claude},
    {"codex", agents::BackendKind::codex, "policy forbids", prepare_codex},
    {"gemini", agents::BackendKind::gemini, "denied by policy", prepare_gemini},
};

// Sets variables of this process for one test (an empty value unsets),
// and puts the old values back.
class ScopedEnv {
 public:
  explicit ScopedEnv(const std::map<std::string, std::string>& vars) {
    for (const auto& [k, v] : vars) {
      const char* old = std::getenv(k.c_str());
      saved_[k] = old ? std::optional<std::string>(old) : std::nullopt;
      if (v.empty())
        ::unsetenv(k.c_str());
      else
        ::setenv(k.c_str(), v.c_str(), 1);
    }
  }
  ~ScopedEnv() {
    for (const auto& [k, v] : saved_) {
      if (v)
        ::setenv(k.c_str(), v->c_str(), 1);
      else
        ::unsetenv(k.c_str());
    }
  }

 private:
  std::map<std::string, std::optional<std::string>> saved_;
};

class RealCli : public ::testing::TestWithParam<CliSetup> {
 protected:
  const CliSetup& cli = GetParam();
  test::Scratch s;
  std::string binary = real_cli(cli.name);
  std::string home = s / "home";
  Graph graph = test::shipped_graph();
  ModelServer server;

  void SetUp() override {
    if (binary.empty())
      GTEST_SKIP() << cli.name << " is not installed in " << real_clis_dir()
                   << " (DEVGRAPH_REAL_CLIS=1 scripts/bootstrap.sh installs it; "
                      "docs/real-clis.md)";
    ASSERT_TRUE(make_directories(home).ok());
  }

  // Starts the server on `script` and readies the CLI's home; returns the
  // CLI's environment.
  std::map<std::string, std::string> start(const Json& script) {
    EXPECT_TRUE(server.start(script, s.path()));
    return cli.prepare(server, home);
  }

  void expect_nothing_left_the_machine() const {
    for (auto& r : server.of_kind("outside")) ADD_FAILURE() << "outside connection: " << r.dump();
    for (const char* kind : {"unknown", "error"})
      for (auto& r : server.of_kind(kind)) ADD_FAILURE() << kind << " request: " << r.dump();
  }
};

// The smallest step: one persona launch through the persona runtime and the
// backend's argv, with the shipped graph's tool lists. The persona reads its
// persona file; the commands of the deny list a persona could do harm with
// are refused by the CLI itself, from what devgraph told it.
TEST_P(RealCli, OnePersonaDispatchWritesAFileRunsACommandAndAnswers) {
  std::string worktree = s / "wt";
  std::string run_dir = s / "run";
  ASSERT_TRUE(make_directories(worktree).ok());
  ASSERT_TRUE(make_directories(run_dir).ok());
  std::string persona_file = test::source_dir() + "/skill/agents/developer.md";
  std::string persona_text = test::slurp(persona_file);
  size_t d = persona_text.find("description: ");
  std::string persona_heading = persona_text.substr(d, persona_text.find('\n', d) - d);
  Json script = {
      {"conversations", Json::array({{{"persona", "developer"},
                                      {"task", "T1"},
                                      {"turns", Json::array({
                                                    read_turn(persona_file),
                                                    read_turn(persona_file),
                                                    write_turn(worktree + "/src/T1.txt", "hello\n"),
                                                    bash_turn("cat src/T1.txt"),
                                                    bash_turn("git add -A"),
                                                    bash_turn("git commit -qm mine"),
                                                    bash_turn("git clean -fd"),
                                                    bash_turn("git push origin HEAD"),
                                                    final_turn("wrote {task}"),
                                                })}}})}};
  auto vars = start(script);
  ASSERT_FALSE(HasFailure());
  ScopedEnv env(vars);

  agents::RuntimeConfig cfg;
  cfg.backend.kind = cli.kind;
  cfg.backend.binary = binary;
  cfg.backend.permission_mode = graph.headless.permission_mode;
  cfg.backend.max_turns = graph.headless.max_turns_per_persona;
  cfg.backend.allowed_tools = graph.headless.allowed_tools;
  cfg.backend.disallowed_tools = graph.headless.disallowed_tools;
  cfg.bundle = "b1";
  cfg.log_path = run_dir + "/bundles/b1/run_bundle.log";
  cfg.result_schema = result_schema_path(test::source_dir() + "/skill");
  cfg.persona_timeout = 120s;  // a failure condition only
  cfg.retry_budget = 0s;
  auto rt = agents::PersonaRuntime::create(cfg);
  ASSERT_TRUE(rt) << rt.error().message;
  auto id = (*rt)->launch({"developer", "T1",
                           "Task T1 of bundle b1.\nWrite hello to src/T1.txt and show it.\n",
                           worktree, run_dir, test::source_dir() + "/skill"});
  ASSERT_TRUE(id) << id.error().message;
  std::optional<agents::Completion> done;
  while (auto ev = (*rt)->next_event())
    if (ev->completion) done = ev->completion;

  ASSERT_TRUE(done);
  EXPECT_EQ(done->outcome, agents::Outcome::result) << done->error;
  EXPECT_EQ(done->result["status"], "DONE") << done->result.dump();
  EXPECT_EQ(done->result["summary"], "wrote T1");
  EXPECT_FALSE(done->session_id.empty());
  EXPECT_EQ(done->attempts, 1);
  EXPECT_EQ(test::slurp(worktree + "/src/T1.txt"), "hello\n");
  auto shown = server.command_results("developer", "T1", "cat src/T1.txt");
  ASSERT_EQ(shown.size(), 1u);
  EXPECT_NE(shown[0].value("output", "").find("hello"), std::string::npos) << shown[0].dump();
  EXPECT_EQ(shown[0]["is_error"], false) << shown[0].dump();
  for (const char* command :
       {"git add -A", "git commit -qm mine", "git clean -fd", "git push origin HEAD"}) {
    auto refused = server.command_results("developer", "T1", command);
    ASSERT_EQ(refused.size(), 1u) << command;
    EXPECT_NE(refused[0].value("output", "").find(cli.refusal), std::string::npos)
        << refused[0].dump();
    EXPECT_EQ(refused[0]["is_error"], true) << refused[0].dump();
  }
  // The persona file as the model received it.
  auto read = server.reads("developer", "T1", persona_file);
  ASSERT_FALSE(read.empty());
  for (const auto& r : read) {
    EXPECT_NE(r.value("output", "").find(persona_heading), std::string::npos) << r.dump();
    EXPECT_EQ(r["is_error"], false) << r.dump();
  }
  EXPECT_EQ(server.conversations(), (std::set<std::string>{"developer T1"}));
  expect_nothing_left_the_machine();
}

constexpr const char* kTestCommand = "sh run-tests.sh";

struct PlannedTask {
  std::string id, title, word;  // the task makes src/<id>.txt hold `word`
  std::vector<std::string> depends_on;
  std::string impl() const { return "src/" + id + ".txt"; }
  std::string test() const { return "tests/" + id + ".sh"; }
};

// Bundle b1 of a fresh repository, ready for `devgraph run-bundle`: main
// holds the test runner, the worktree sits on develop/b1, the run's bundle
// cursor is at plan_bundle (as in run_bundle_test.cpp).
class RealCliBundle : public RealCli {
 protected:
  std::string repo = s / "repo";
  std::string worktree = s / "wt/b1";
  std::string run_dir = s / "run";
  std::string bundle_dir = run_dir + "/bundles/b1";
  // T1 and T2 side by side; T3 after both.
  std::vector<PlannedTask> plan = {{"T1", "greeting", "hello", {}},
                                   {"T2", "farewell", "goodbye", {}},
                                   {"T3", "banner", "welcome", {"T1", "T2"}}};

  void SetUp() override {
    RealCli::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    ASSERT_TRUE(make_directories(repo).ok());
    sh(repo, {"git", "init", "-q", "-b", "main"});
    sh(repo, {"git", "config", "user.name", "Test"});
    sh(repo, {"git", "config", "user.email", "test@example.invalid"});
    test::write_text(repo + "/run-tests.sh", test::kRunTests);
    test::write_text(repo + "/README.md", "words\n");
    sh(repo, {"git", "add", "--", "run-tests.sh", "README.md"});
    sh(repo, {"git", "commit", "-q", "-m", "base"});
    sh(repo, {"git", "worktree", "add", "-q", "-b", "develop/b1", worktree, "main"});
    Json init = {
        {"delivery", "local"},
        {"merge_policy", "never"},
        {"commands", {{"test", kTestCommand}, {"build", "sh -n run-tests.sh"}}},
        {"bundles",
         Json::array({{{"id", "b1"}, {"title", "words of welcome"}, {"issues", Json::array()}}})}};
    checkpoint({"init", "--repo", repo, "--default-branch", "main", "--merge", dump_py(init)});
    Json cursor = {{"worktree", worktree}, {"branch", "develop/b1"}, {"base", "main"}};
    checkpoint({"move", "--bundle", "b1", "--node", "plan_bundle", "--event", "BUNDLE_STARTED",
                "--merge", dump_py(cursor)});
    ASSERT_TRUE(make_directories(bundle_dir).ok());
    test::write_text(bundle_dir + "/spec.md", "# b1\n\nEach task adds one word file.\n");
  }

  static void sh(const std::string& cwd, const std::vector<std::string>& argv) {
    auto r = test::run_process(argv, {}, cwd);
    ASSERT_EQ(r.exit_code, 0) << argv[0] << " " << argv[1] << ": " << r.err;
  }
  void checkpoint(std::vector<std::string> args) {
    args.insert(args.begin(), {"checkpoint", run_dir});
    auto r = test::run_devgraph(args);
    ASSERT_EQ(r.exit_code, 0) << r.err;
  }

  // The planner writes the plan; each tdd-writer a test that fails until
  // its developer writes the word, and names the command that runs it;
  // every persona but the planner runs the bundle's test command before it
  // answers.
  Json script() const {
    Json tasks = Json::array();
    std::string md = "# Plan b1\n";
    for (const auto& t : plan) {
      tasks.push_back({{"id", t.id},
                       {"title", t.title},
                       {"depends_on", t.depends_on},
                       {"files", Json::array({t.impl(), t.test()})}});
      md += "\n## Task " + t.id + ": " + t.title + "\n\nWrite `" + t.word + "` to " + t.impl() +
            ".\n";
    }
    Json tasks_doc = {{"bundle", "b1"}, {"tasks", tasks}};
    Json conversations = Json::array();
    conversations.push_back(
        {{"persona", "planner"},
         {"turns", Json::array({write_turn(worktree + "/docs/develop/plans/b1.md", md),
                                write_turn(worktree + "/docs/develop/plans/b1.tasks.json",
                                           dump_py(tasks_doc, 2) + "\n"),
                                final_turn("planned")})}});
    for (const auto& t : plan) {
      conversations.push_back(
          {{"persona", "tdd-writer"},
           {"task", t.id},
           {"turns", Json::array({write_turn(worktree + "/" + t.test(),
                                             "grep -qx " + t.word + " " + t.impl() + "\n"),
                                  bash_turn(kTestCommand),
                                  final_turn("red test for {task}", {"sh " + t.test()})})}});
      conversations.push_back(
          {{"persona", "developer"},
           {"task", t.id},
           {"turns", Json::array({write_turn(worktree + "/" + t.impl(), t.word + "\n"),
                                  bash_turn(kTestCommand), final_turn("wrote {task}")})}});
    }
    return {{"conversations", conversations},
            {"default",
             {{"turns",
               Json::array({bash_turn(kTestCommand), final_turn("{persona} approves {task}")})}}}};
  }

  // "persona task" (task "-" for none) of every persona launch the driver
  // logged.
  std::multiset<std::string> launches() const {
    std::multiset<std::string> out;
    for (auto& r : test::read_jsonl(bundle_dir + "/run_bundle.log"))
      if (r.value("event", "") == "launched")
        out.insert(r.value("persona", "") + " " +
                   (r["task"].is_string() ? r["task"].get<std::string>() : "-"));
    return out;
  }

  std::string git(const std::vector<std::string>& args) const {
    std::vector<std::string> argv = {"git", "-C", worktree};
    argv.insert(argv.end(), args.begin(), args.end());
    auto r = test::run_process(argv);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return r.out;
  }
};

TEST_P(RealCliBundle, ThreeTasksReachDoneAndEveryTestCommandReallyRuns) {
  auto env = start(script());
  ASSERT_FALSE(HasFailure());
  auto r = test::run_devgraph(
      {"run-bundle", run_dir, "--bundle", "b1", "--agent", cli.name, "--claude-bin", binary,
       "--max-parallel", "3", "--persona-timeout-seconds", "300"},
      env);
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  auto pos = r.out.rfind("RESULT_JSON: ");
  ASSERT_NE(pos, std::string::npos) << r.out;
  Json res = Json::parse(r.out.substr(pos + 13, r.out.find('\n', pos) - pos - 13));
  EXPECT_EQ(res["status"], "DONE") << res.dump();
  EXPECT_EQ(res["tasks_completed"], 3);

  // Every task committed once, the tree clean, the suite green.
  Json state = Json::parse(test::slurp(run_dir + "/state.json"));
  EXPECT_EQ(state["bundles_runtime"]["b1"]["status"], "complete");
  std::string trailers =
      git({"log", "--format=%(trailers:key=Devgraph-Task,valueonly)", "main..HEAD"});
  for (const auto& t : plan) {
    EXPECT_EQ(state["tasks_runtime"]["b1/" + t.id]["status"], "complete") << t.id;
    EXPECT_NE(trailers.find("b1/" + t.id + "\n"), std::string::npos) << trailers;
    EXPECT_EQ(test::slurp(worktree + "/" + t.impl()), t.word + "\n");
  }
  EXPECT_EQ(git({"status", "--porcelain"}), "");

  // Each tdd-writer saw its test fail and each developer saw it pass, in
  // the output of the real command as the CLI handed it back.
  for (const auto& t : plan) {
    auto red = server.command_results("tdd-writer", t.id, kTestCommand);
    ASSERT_EQ(red.size(), 1u) << t.id;
    EXPECT_NE(red[0].value("output", "").find("FAIL " + t.test()), std::string::npos)
        << red[0].dump();
    auto green = server.command_results("developer", t.id, kTestCommand);
    ASSERT_EQ(green.size(), 1u) << t.id;
    EXPECT_NE(green[0].value("output", "").find("ok " + t.test()), std::string::npos)
        << green[0].dump();
  }
  // Every launch went through the model server, and every persona but the
  // planner ran the test command.
  auto launched = launches();
  EXPECT_EQ(std::set<std::string>(launched.begin(), launched.end()), server.conversations());
  EXPECT_EQ(launched.count("planner -"), 1u);
  for (const auto& who : std::set<std::string>(launched.begin(), launched.end())) {
    if (who == "planner -") continue;
    auto space = who.find(' ');
    std::string task = who.substr(space + 1) == "-" ? "" : who.substr(space + 1);
    EXPECT_FALSE(server.command_results(who.substr(0, space), task, kTestCommand).empty())
        << who << " never ran " << kTestCommand;
  }
  expect_nothing_left_the_machine();
}

std::string cli_name(const testing::TestParamInfo<CliSetup>& info) {
  return info.param.name;
}
INSTANTIATE_TEST_SUITE_P(Installed, RealCli, testing::ValuesIn(kClis), cli_name);
INSTANTIATE_TEST_SUITE_P(Installed, RealCliBundle, testing::ValuesIn(kClis), cli_name);

}  // namespace
}  // namespace devgraph
