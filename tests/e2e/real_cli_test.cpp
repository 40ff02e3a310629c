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
#include <gtest/gtest.h>

#include <optional>
#include <set>
#include <string>

#include "agents/runtime.h"
#include "contracts/schema.h"
#include "support/real_cli.h"
#include "support/test_util.h"
#include "util/fs.h"
#include "util/json.h"

namespace devgraph {
namespace {

using namespace std::chrono_literals;
using namespace devgraph::realcli;

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

  agents::RuntimeConfig cfg = runtime_config(run_dir);
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
  // Tokens mean the same for every CLI: the server answers each model
  // request it generates for (persona turns and side requests alike) with
  // 10 input and 5 output tokens, however the CLI then reports them.
  long long answered = 0;
  for (const auto& r : server.records()) {
    std::string path = r.value("path", "");
    std::string kind = r.value("kind", "");
    bool generated = (kind == "turn" || kind == "side") && r.value("method", "") == "POST" &&
                     path.find("count_tokens") == std::string::npos &&
                     path.find("countTokens") == std::string::npos;
    answered += generated;
  }
  EXPECT_GT(answered, 0);
  EXPECT_EQ(done->token_usage.input, 10 * answered) << done->usage.dump();
  EXPECT_EQ(done->token_usage.output, 5 * answered) << done->usage.dump();
  EXPECT_EQ(done->tokens, 15 * answered) << done->usage.dump();
}

TEST_P(RealCliBundle, ThreeTasksReachDoneAndEveryTestCommandReallyRuns) {
  auto env = start(script());
  ASSERT_FALSE(HasFailure());
  Json res = run_bundle(env);
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

INSTANTIATE_TEST_SUITE_P(Installed, RealCli, testing::ValuesIn(kClis), cli_name);
INSTANTIATE_TEST_SUITE_P(Installed, RealCliBundle, testing::ValuesIn(kClis), cli_name);

}  // namespace
}  // namespace devgraph
