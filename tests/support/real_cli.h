// Shared by the end-to-end tests with the real agent CLIs: where they are
// installed, the scripted model server as a child of the test, how each CLI
// is pointed at it (a user's minimal set-up; devgraph adds the rest), and
// the fixtures for one persona launch and for a three-task bundle. See
// tests/e2e/real_cli_test.cpp and docs/real-clis.md.
#pragma once

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
#include <optional>
#include <ostream>
#include <set>
#include <string>
#include <vector>

#include "agents/backend.h"
#include "agents/runtime.h"
#include "contracts/schema.h"
#include "graph/graph.h"
#include "support/run_scenario.h"
#include "support/shipped.h"
#include "support/test_util.h"
#include "util/fs.h"
#include "util/json.h"

namespace devgraph::realcli {

using namespace std::chrono_literals;

// The npm prefix the CLIs were installed into: $DEVGRAPH_REAL_CLIS_DIR, else
// .real-clis/ in the source tree.
inline std::string real_clis_dir() {
  const char* env = std::getenv("DEVGRAPH_REAL_CLIS_DIR");
  return env && *env ? std::string(env) : test::source_dir() + "/.real-clis";
}

// The installed CLI `name`, or "" when it is not there.
inline std::string real_cli(const std::string& name) {
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

inline Json write_turn(const std::string& path, const std::string& content) {
  return Json{{"write", {{"path", path}, {"content", content}}}};
}
inline Json read_turn(const std::string& path) {
  return Json{{"read", path}};
}
inline Json bash_turn(const std::string& command) {
  return Json{{"bash", command}};
}
// The last turn: a DONE result; `commands` are the checks it names (a
// tdd-writer's commands that run its new test, which devgraph runs itself).
inline Json final_turn(const std::string& summary, const std::vector<std::string>& commands = {}) {
  Json result = {{"status", "DONE"}, {"summary", summary}, {"evidence", Json::array()}};
  if (!commands.empty()) result["commands"] = commands;
  return Json{{"say", "Finished."}, {"result", result}};
}

inline std::string quoted(const std::string& s) {
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
inline std::map<std::string, std::string> common_env(const ModelServer& server,
                                                     const std::string& home) {
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
inline std::map<std::string, std::string> prepare_claude(const ModelServer& server,
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
inline std::map<std::string, std::string> prepare_codex(const ModelServer& server,
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
inline std::map<std::string, std::string> prepare_gemini(const ModelServer& server,
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

// Cuts a CLI's own retries of a failed model request short, after
// cli.prepare() wrote its home (as tests/support/capture_cli_failures.py
// does): claude CLAUDE_CODE_MAX_RETRIES in `env`; codex's provider
// request_max_retries = `retries` and stream_max_retries = `reconnects`
// (each reconnect is a "Reconnecting..." event) in its config.toml;
// gemini general.maxAttempts = `retries` + 1 in settings.json. Zero makes
// every launch one model request, so a script's "times" counts launches.
inline void limit_own_retries(agents::BackendKind kind, const std::string& home,
                              std::map<std::string, std::string>& env, int retries,
                              int reconnects = 0) {
  switch (kind) {
    case agents::BackendKind::claude:
      env["CLAUDE_CODE_MAX_RETRIES"] = std::to_string(retries);
      break;
    case agents::BackendKind::codex: {
      // The provider's table is the last one prepare_codex wrote.
      std::string path = home + "/.codex/config.toml";
      test::write_text(path, test::slurp(path) +
                                 "request_max_retries = " + std::to_string(retries) +
                                 "\nstream_max_retries = " + std::to_string(reconnects) + "\n");
      break;
    }
    case agents::BackendKind::gemini: {
      std::string path = home + "/.gemini/settings.json";
      Json settings = Json::parse(test::slurp(path));
      settings["general"]["maxAttempts"] = retries + 1;
      test::write_text(path, dump_py(settings, 2) + "\n");
      break;
    }
    case agents::BackendKind::command:
    case agents::BackendKind::sim:
      break;
  }
}

inline void PrintTo(const CliSetup& cli, std::ostream* os) {
  *os << cli.name;
}

inline const CliSetup kClis[] = {
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

  // The persona runtime's configuration for this CLI with the shipped
  // graph's tool lists, logging under run_dir/bundles/b1; the timeout is a
  // failure condition only.
  agents::RuntimeConfig runtime_config(const std::string& run_dir) const {
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
    cfg.persona_timeout = 120s;
    return cfg;
  }

  void expect_nothing_left_the_machine() const {
    for (auto& r : server.of_kind("outside")) ADD_FAILURE() << "outside connection: " << r.dump();
    for (const char* kind : {"unknown", "error"})
      for (auto& r : server.of_kind(kind)) ADD_FAILURE() << kind << " request: " << r.dump();
  }
};

inline constexpr const char* kTestCommand = "sh run-tests.sh";

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

  // Runs the bundle to its end; its RESULT_JSON.
  Json run_bundle(const std::map<std::string, std::string>& env) {
    auto r = test::run_devgraph(
        {"run-bundle", run_dir, "--bundle", "b1", "--agent", cli.name, "--claude-bin", binary,
         "--max-parallel", "3", "--persona-timeout-seconds", "300"},
        env);
    EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
    auto pos = r.out.rfind("RESULT_JSON: ");
    if (pos == std::string::npos) {
      ADD_FAILURE() << r.out << r.err;
      return Json::object();
    }
    return Json::parse(r.out.substr(pos + 13, r.out.find('\n', pos) - pos - 13));
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

inline std::string cli_name(const testing::TestParamInfo<CliSetup>& info) {
  return info.param.name;
}

}  // namespace devgraph::realcli
