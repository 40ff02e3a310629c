// The evidence gates with the real agent CLIs, offline (as in
// real_cli_test.cpp): a tdd-writer whose test passes at once is sent back
// before any developer starts, and a verifier whose CLI reports no tool
// call is not taken as DONE. The CLI itself runs the scripted turns;
// devgraph judges the answers from what it runs itself (the tdd-writer's
// check) and from what the CLI reports (claude's num_turns, codex's tool
// items, gemini's stats.tools.totalCalls). The relaunched persona's
// dispatch carries the reason it was sent back: the model server plays
// the second attempt's turns only for a prompt that holds that reason.
#include <gtest/gtest.h>

#include <map>
#include <set>
#include <string>
#include <vector>

#include "support/real_cli.h"
#include "support/test_util.h"
#include "util/fs.h"
#include "util/json.h"

namespace devgraph {
namespace {

using namespace devgraph::realcli;

// One task, so the driver's records of it come in one order.
class RealCliEvidence : public RealCliBundle {
 protected:
  RealCliEvidence() { plan = {{"T1", "greeting", "hello", {}}}; }

  const PlannedTask& task() const { return plan.front(); }

  // The details of the journal's events of `type` for task T1, in order,
  // each with its place among all the task's events under "at".
  std::vector<Json> events_of(const std::string& type) const {
    std::vector<Json> out;
    int at = 0;
    for (auto& e : test::read_jsonl(run_dir + "/events.jsonl")) {
      if (!e["detail"].is_object() || e["detail"]["task"] != task().id) continue;
      if (e["type"] == type) {
        Json d = e["detail"];
        d["at"] = at;
        out.push_back(d);
      }
      ++at;
    }
    return out;
  }

  // What the driver did for T1, in order, from run_bundle.log: "launch
  // <persona>" once per persona launch, and "check exited <code>" for each
  // run of the tdd-writer's check by devgraph itself (script()'s test is a
  // grep of the task's file, which exits 2 while the file is not there).
  std::vector<std::string> trace() const {
    std::vector<std::string> out;
    std::set<std::string> handles;
    for (auto& r : test::read_jsonl(bundle_dir + "/run_bundle.log")) {
      std::string event = r.value("event", "");
      if (event == "launched" && r["task"] == task().id &&
          handles.insert(r.value("handle", "")).second)
        out.push_back("launch " + r.value("persona", ""));
      if (event == "command_finished" && r["command"] == "check " + task().id)
        out.push_back("check exited " + r["exit"].dump());
    }
    return out;
  }

  // The scripts the model server played for (persona, T1), one per
  // conversation, in order.
  std::vector<std::string> scripts_played(const std::string& persona) const {
    std::vector<std::string> out;
    for (auto& r : server.of_kind("turn")) {
      if (r.value("persona", "") != persona || r["task"] != task().id) continue;
      std::string name =
          r["script"].is_string() ? r["script"].get<std::string>() : r["script"].dump();
      if (r.value("step", -1) == 0 && (out.empty() || out.back() != name)) out.push_back(name);
    }
    return out;
  }

  // The script() entry for (persona, T1).
  static Json& entry(Json& script, const std::string& persona, const std::string& id) {
    for (auto& c : script["conversations"])
      if (c["persona"] == persona && c.value("task", "") == id) return c;
    ADD_FAILURE() << "no conversation for " << persona << " " << id;
    static Json none;
    return none;
  }

  void expect_done(const Json& res) {
    EXPECT_EQ(res["status"], "DONE") << res.dump();
    EXPECT_EQ(res["tasks_completed"], 1) << res.dump();
    Json state = Json::parse(test::slurp(run_dir + "/state.json"));
    EXPECT_EQ(state["tasks_runtime"]["b1/" + task().id]["status"], "complete");
    std::string trailers =
        git({"log", "--format=%(trailers:key=Devgraph-Task,valueonly)", "main..HEAD"});
    EXPECT_EQ(trailers.find("b1/" + task().id + "\n"), trailers.rfind("b1/" + task().id + "\n"))
        << "one commit for the task: " << trailers;
    EXPECT_NE(trailers.find("b1/" + task().id + "\n"), std::string::npos) << trailers;
    EXPECT_EQ(test::slurp(worktree + "/" + task().impl()), task().word + "\n");
    EXPECT_EQ(git({"status", "--porcelain"}), "");
  }
};

// The tdd-writer's first test passes before anything is implemented (it
// checks a file the repository has already). devgraph runs the check the
// tdd-writer named, sees it pass, and sends the tdd-writer back with the
// reason, before any developer is launched; the second attempt, whose
// dispatch carries that reason, writes a test that fails, and only then
// does the developer start.
TEST_P(RealCliEvidence, ATddWriterWhoseTestPassesAtOnceIsSentBackBeforeAnyDeveloperStarts) {
  const auto& t = task();
  Json script = this->script();
  Json& red = entry(script, "tdd-writer", t.id);
  // The second attempt: the test of script(), over the first one (claude
  // writes over a file only once it has read it).
  Json again = red;
  again["name"] = "failing test";
  again["prompt_contains"] = "passes already";
  again["turns"].insert(again["turns"].begin(), read_turn(worktree + "/" + t.test()));
  // The first attempt: a test that passes already.
  red["name"] = "passing test";
  red["turns"][0] = write_turn(worktree + "/" + t.test(), "grep -q words README.md\n");
  script["conversations"].insert(script["conversations"].begin(), again);
  auto env = start(script);
  ASSERT_FALSE(HasFailure());

  Json res = run_bundle(env);
  expect_done(res);

  // devgraph ran the first check itself, saw it pass and sent the
  // tdd-writer back; the developer started only after a check failed.
  EXPECT_EQ(trace(),
            (std::vector<std::string>{"launch tdd-writer", "check exited 0", "launch tdd-writer",
                                      "check exited 2", "launch developer", "launch tester",
                                      "launch adversarial-tester", "check exited 0"}));
  auto blocked = events_of("BLOCKED");
  ASSERT_EQ(blocked.size(), 1u);
  EXPECT_EQ(blocked[0]["lane_from"], "write_tdd") << blocked[0].dump();
  EXPECT_EQ(blocked[0]["persona"], "tdd-writer") << blocked[0].dump();
  std::string why = blocked[0].value("summary", "");
  EXPECT_NE(why.find("passes already"), std::string::npos) << why;
  EXPECT_NE(why.find("`sh " + t.test() + "` exited 0"), std::string::npos) << why;
  auto tdd = events_of("TDD_DONE");
  ASSERT_EQ(tdd.size(), 1u);
  EXPECT_GT(tdd[0]["at"], blocked[0]["at"]);
  EXPECT_EQ(tdd[0]["check"]["commands"], Json::array({"sh " + t.test()}));
  EXPECT_EQ(tdd[0]["check"]["failed"], "`sh " + t.test() + "` exited 2");

  // The relaunch was a conversation of its own whose prompt held the
  // reason; the CLI really ran the suite in each, green then red.
  EXPECT_EQ(scripts_played("tdd-writer"),
            (std::vector<std::string>{"passing test", "failing test"}));
  auto suite = server.command_results("tdd-writer", t.id, kTestCommand);
  ASSERT_EQ(suite.size(), 2u);
  EXPECT_NE(suite[0].value("output", "").find("ok " + t.test()), std::string::npos)
      << suite[0].dump();
  EXPECT_NE(suite[1].value("output", "").find("FAIL " + t.test()), std::string::npos)
      << suite[1].dump();
  EXPECT_EQ(test::slurp(worktree + "/" + t.test()), "grep -qx hello " + t.impl() + "\n");
  expect_nothing_left_the_machine();
}

// The tester's first answer is DONE with no tool call at all: the CLI
// reports it ran nothing, so devgraph does not take it as verification.
// The task is not committed on it: the whole verification runs again, with
// the reason in its dispatch, and the tester that then runs the suite
// lets the task finish.
TEST_P(RealCliEvidence, AVerifierThatRanNothingIsNotTakenAsDone) {
  const auto& t = task();
  Json script = this->script();
  Json conversations = Json::array();
  conversations.push_back(
      {{"persona", "tester"},
       {"task", t.id},
       {"name", "ran the suite"},
       {"prompt_contains", "reports no tool call"},
       {"turns", Json::array({bash_turn(kTestCommand), final_turn("{persona} approves {task}")})}});
  conversations.push_back({{"persona", "tester"},
                           {"task", t.id},
                           {"name", "ran nothing"},
                           {"turns", Json::array({final_turn("{persona} approves {task}")})}});
  for (auto& c : script["conversations"]) conversations.push_back(c);
  script["conversations"] = conversations;
  auto env = start(script);
  ASSERT_FALSE(HasFailure());

  Json res = run_bundle(env);
  expect_done(res);

  // The first verification was sent back whole; devgraph ran the task's
  // check only after the second.
  EXPECT_EQ(trace(),
            (std::vector<std::string>{"launch tdd-writer", "check exited 2", "launch developer",
                                      "launch tester", "launch adversarial-tester", "launch tester",
                                      "launch adversarial-tester", "check exited 0"}));
  auto blocked = events_of("BLOCKED");
  ASSERT_EQ(blocked.size(), 1u);
  EXPECT_EQ(blocked[0]["lane_from"], "verify") << blocked[0].dump();
  EXPECT_EQ(blocked[0]["persona"], "tester") << blocked[0].dump();
  std::string why = blocked[0].value("summary", "");
  EXPECT_NE(why.find("no tool call"), std::string::npos) << why;
  auto verified = events_of("VERIFY_DONE");
  ASSERT_EQ(verified.size(), 1u);
  EXPECT_GT(verified[0]["at"], blocked[0]["at"]) << "not verified on the answer that ran nothing";
  auto committed = events_of("TASK_COMMITTED");
  ASSERT_EQ(committed.size(), 1u);
  EXPECT_GT(committed[0]["at"], blocked[0]["at"]);

  // What the model saw: the first tester's conversation was one request
  // with no tool result in it; the second ran the suite and saw it green.
  EXPECT_EQ(scripts_played("tester"), (std::vector<std::string>{"ran nothing", "ran the suite"}));
  for (auto& r : server.of_kind("turn")) {
    if (r.value("persona", "") == "tester" && r["script"] == "ran nothing") {
      EXPECT_TRUE(r["tool_results"].empty()) << r.dump();
    }
  }
  auto suite = server.command_results("tester", t.id, kTestCommand);
  ASSERT_EQ(suite.size(), 1u);
  EXPECT_NE(suite[0].value("output", "").find("ok " + t.test()), std::string::npos)
      << suite[0].dump();
  // The tester's saved result is the second one, with the calls its CLI
  // counted.
  auto saved = load_json_file(bundle_dir + "/tasks/" + t.id + "/tester.result.json");
  ASSERT_TRUE(saved.ok()) << saved.error().message;
  EXPECT_GE(saved->value("tool_calls", 0), 1) << saved->dump();
  expect_nothing_left_the_machine();
}

INSTANTIATE_TEST_SUITE_P(Installed, RealCliEvidence, testing::ValuesIn(kClis), cli_name);

}  // namespace
}  // namespace devgraph
