// The live view: the model fed by log records and state.json, the frame
// rendered at fixed times and sizes, and the redraw policy on a manual
// clock.
#include "bundle/view.h"

#include <gtest/gtest.h>

#include "bundle/run.h"
#include "graph/graph.h"
#include "support/shipped.h"
#include "support/test_util.h"

#include <algorithm>
#include <sstream>

namespace devgraph::bundle {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

class ManualClock final : public Clock {
 public:
  std::chrono::system_clock::time_point wall() const override {
    return std::chrono::system_clock::time_point(seconds(1'800'000'000)) +
           (now - std::chrono::steady_clock::time_point());
  }
  std::chrono::steady_clock::time_point steady() const override { return now; }
  std::chrono::steady_clock::time_point now{seconds(1000)};
};

const ViewTime t0{seconds(1000)};

Json rec(const std::string& event, Json fields = Json::object()) {
  Json r = {{"ts", "2026-11-30T08:40:02+00:00"}, {"bundle", "b1"}, {"event", event}};
  for (auto& [k, v] : fields.items()) r[k] = v;
  return r;
}

Json state_with(const std::string& node, int task_count,
                const std::vector<std::tuple<std::string, std::string, std::string>>& tasks) {
  Json s = {{"bundles_runtime", {{"b1", {{"node", node}, {"status", "active"}}}}},
            {"tasks_runtime", Json::object()}};
  if (task_count) s["bundles_runtime"]["b1"]["task_count"] = task_count;
  for (const auto& [id, node_of, status] : tasks)
    s["tasks_runtime"]["b1/" + id] = {{"node", node_of}, {"status", status}};
  // Another bundle's task never shows.
  s["tasks_runtime"]["b2/T9"] = {{"node", "verify"}, {"status", "active"}};
  return s;
}

std::vector<std::string> lines_of(const std::string& frame) {
  std::vector<std::string> out;
  std::istringstream in(frame);
  std::string l;
  while (std::getline(in, l)) out.push_back(l);
  return out;
}

TEST(ViewFrame, TheNodeOrderIsTheGraphsTaskLaneThenItsSharedNodes) {
  Graph g = test::shipped_graph();
  auto order = view_node_order(g);
  std::vector<std::string> want = g.lane("task")->nodes;
  for (const auto& n : g.lane("shared")->nodes) want.push_back(n);
  EXPECT_EQ(order, want);
}

TEST(ViewFrame, GroupsFollowTheNodeOrderTheModelIsGiven) {
  ViewModel m("b1", t0);
  m.set_node_order({"verify", "write_tdd"});
  m.on_state(
      state_with("task_scheduler", 3, {{"T1", "write_tdd", "active"}, {"T2", "verify", "active"}}));
  auto lines = lines_of(render_frame(m, t0, {100, 40}));
  ASSERT_GE(lines.size(), 4u);
  EXPECT_EQ(lines[2], "  verify           T2");
  EXPECT_EQ(lines[3], "  write_tdd        T1");
}

TEST(ViewFrame, GroupsTasksByNodeInLaneOrder) {
  ViewModel m("b1", t0);
  m.set_node_order(view_node_order(test::shipped_graph()));
  m.on_state(state_with("task_scheduler", 6,
                        {{"T1", "commit_task", "complete"},
                         {"T2", "verify", "active"},
                         {"T3", "write_tdd", "active"},
                         {"T6", "implement", "active"},
                         {"T4", "awaiting_human", "waiting_human"}}));
  std::string f = render_frame(m, t0 + seconds(75), {100, 40});
  auto lines = lines_of(f);
  ASSERT_GE(lines.size(), 7u) << f;
  EXPECT_EQ(lines[0], "devgraph bundle b1  node task_scheduler  elapsed 1:15");
  EXPECT_EQ(lines[1], "tasks: 1/6 committed, 1 not started");
  EXPECT_EQ(lines[2], "  write_tdd        T3");
  EXPECT_EQ(lines[3], "  implement        T6");
  EXPECT_EQ(lines[4], "  verify           T2");
  EXPECT_EQ(lines[5], "  awaiting_human   T4");
  EXPECT_EQ(lines[6], "  committed        T1");
  EXPECT_EQ(f.find("T9"), std::string::npos);
}

TEST(ViewFrame, ShowsLivePersonasBackoffsAndPauses) {
  ViewModel m("b1", t0);
  m.on_log(rec("launched", {{"persona", "developer"}, {"task", "T2"}, {"handle", "h1"}}), t0);
  m.on_log(rec("launched", {{"persona", "planner"}, {"task", nullptr}, {"handle", "h0"}}),
           t0 - seconds(5));
  m.on_log(rec("launched", {{"persona", "tester"}, {"task", "T3"}, {"handle", "h2"}}), t0);
  m.on_log(rec("backoff", {{"persona", "tester"},
                           {"task", "T3"},
                           {"handle", "h2"},
                           {"attempt", 1},
                           {"delay_s", 60.0},
                           {"error", "API Error: 529"}}),
           t0 + seconds(2));
  m.on_log(rec("paused", {{"persona", "developer"},
                          {"task", "T5"},
                          {"handle", "h5"},
                          {"wait_s", 900.0},
                          {"reason", "usage limit"}}),
           t0 + seconds(2));
  std::string f = render_frame(m, t0 + seconds(12), {100, 40});
  EXPECT_NE(f.find("personas: 2 running\n"
                   "  planner              -        0:17\n"
                   "  developer            T2       0:12\n"),
            std::string::npos)
      << f;
  EXPECT_NE(f.find("back-offs:\n  tester               T3       retry 2 in 0:50\n"),
            std::string::npos)
      << f;
  EXPECT_NE(f.find("provider limit: new launches wait 14:50 (usage limit)"), std::string::npos)
      << f;
  EXPECT_NE(f.find("08:40:02 backoff tester T3: API Error: 529"), std::string::npos) << f;

  // The relaunch ends the back-off; finishing ends the persona; unpause
  // ends the wait.
  m.on_log(
      rec("launched", {{"persona", "tester"}, {"task", "T3"}, {"handle", "h2"}, {"attempt", 2}}),
      t0 + seconds(62));
  m.on_log(rec("finished", {{"persona", "developer"}, {"task", "T2"}, {"handle", "h1"}}),
           t0 + seconds(63));
  m.on_log(rec("unpaused", {{"agent", "claude"}}), t0 + seconds(63));
  f = render_frame(m, t0 + seconds(64), {100, 40});
  EXPECT_EQ(f.find("back-offs"), std::string::npos) << f;
  EXPECT_EQ(f.find("provider limit"), std::string::npos) << f;
  EXPECT_NE(f.find("  tester               T3       0:02  attempt 2"), std::string::npos) << f;
  EXPECT_EQ(f.find("  developer            T2"), std::string::npos) << f;
}

TEST(ViewFrame, KeepsTheLastFewLogLines) {
  ViewModel m("b1", t0);
  for (int i = 0; i < 10; ++i) m.on_log(rec("note", {{"topic", "n" + std::to_string(i)}}), t0);
  ASSERT_EQ(m.recent().size(), ViewModel::kRecentLines);
  std::string f = render_frame(m, t0, {80, 40});
  EXPECT_EQ(f.find("note n3"), std::string::npos);
  EXPECT_NE(f.find("08:40:02 note n4"), std::string::npos);
  EXPECT_NE(f.find("08:40:02 note n9"), std::string::npos);
}

TEST(ViewFrame, NeverExceedsTheScreen) {
  ViewModel m("b1", t0);
  std::vector<std::tuple<std::string, std::string, std::string>> tasks;
  for (int i = 0; i < 30; ++i)
    tasks.emplace_back("TASK-" + std::to_string(i), "node-" + std::to_string(i), "active");
  m.on_state(state_with("task_scheduler", 30, tasks));
  for (int i = 0; i < 10; ++i)
    m.on_log(rec("launched", {{"persona", "developer"},
                              {"task", "TASK-" + std::to_string(i)},
                              {"handle", "h" + std::to_string(i)},
                              {"error", std::string(200, 'x')}}),
             t0);
  for (FrameSize size : {FrameSize{40, 10}, FrameSize{20, 3}, FrameSize{120, 20}}) {
    auto lines = lines_of(render_frame(m, t0, size));
    EXPECT_LE(lines.size(), static_cast<size_t>(size.rows));
    for (const auto& l : lines) EXPECT_LE(l.size(), static_cast<size_t>(size.columns)) << l;
  }
  auto lines = lines_of(render_frame(m, t0, {40, 10}));
  EXPECT_NE(lines.back().find("more lines"), std::string::npos) << lines.back();
}

TEST(ViewFrame, TheResultEndsTheLiveParts) {
  ViewModel m("b1", t0);
  m.on_log(rec("launched", {{"persona", "code-reviewer"}, {"handle", "h1"}}), t0);
  m.on_log(rec("result", {{"status", "DONE"}}), t0 + seconds(3));
  std::string f = render_frame(m, t0 + seconds(3), {80, 24});
  EXPECT_EQ(lines_of(f)[0], "devgraph bundle b1  node -  elapsed 0:03  DONE");
  EXPECT_NE(f.find("personas: 0 running"), std::string::npos);
}

TEST(ViewFrame, FormatsElapsedTimes) {
  EXPECT_EQ(format_elapsed(milliseconds(999)), "0:00");
  EXPECT_EQ(format_elapsed(seconds(65)), "1:05");
  EXPECT_EQ(format_elapsed(seconds(3723)), "1:02:03");
  EXPECT_EQ(format_elapsed(seconds(-4)), "0:00");
}

// -- the redraw policy ------------------------------------------------------

TEST(LiveViewPolicy, RedrawsOnChangeAtMostNTimesASecond) {
  ManualClock clock;
  std::ostringstream out;
  LiveView v(out, "b1", clock, {80, 24}, 4);  // at most every 250 ms
  v.on_log(rec("start", {{"node", "plan_bundle"}}));
  EXPECT_EQ(v.redraws(), 1);
  // A burst inside the gap is held back...
  for (int i = 0; i < 20; ++i) {
    clock.now += milliseconds(5);
    v.on_log(rec("launched", {{"persona", "tester"}, {"handle", "h" + std::to_string(i)}}));
  }
  EXPECT_EQ(v.redraws(), 1);
  // ...and drawn by the next tick after the gap, once.
  clock.now += milliseconds(200);
  v.tick();
  EXPECT_EQ(v.redraws(), 2);
  v.tick();
  EXPECT_EQ(v.redraws(), 2);
  EXPECT_NE(out.str().find("personas: 20 running"), std::string::npos);
}

TEST(LiveViewPolicy, TicksRedrawOnceASecondWhenNothingChanges) {
  ManualClock clock;
  std::ostringstream out;
  LiveView v(out, "b1", clock, {80, 24});
  v.on_log(rec("launched", {{"persona", "developer"}, {"task", "T1"}, {"handle", "h1"}}));
  int drawn = v.redraws();
  for (int i = 0; i < 3; ++i) {
    clock.now += milliseconds(250);
    v.tick();
  }
  EXPECT_EQ(v.redraws(), drawn);
  clock.now += milliseconds(250);
  v.tick();
  EXPECT_EQ(v.redraws(), drawn + 1);
  EXPECT_NE(out.str().find("developer            T1       0:01"), std::string::npos) << out.str();
}

TEST(LiveViewPolicy, StateChangesThatShowNothingNewDoNotRedraw) {
  ManualClock clock;
  std::ostringstream out;
  LiveView v(out, "b1", clock, {80, 24});
  Json s = state_with("task_scheduler", 2, {{"T1", "verify", "active"}});
  v.on_state(s);
  int drawn = v.redraws();
  clock.now += seconds(0) + milliseconds(500);
  v.on_state(s);
  EXPECT_EQ(v.redraws(), drawn);
}

TEST(LiveViewPolicy, FramesReplaceEachOtherInPlaceAndFinishDrawsTheLast) {
  ManualClock clock;
  std::ostringstream out;
  LiveView v(out, "b1", clock, {80, 24});
  v.on_state(state_with("task_scheduler", 1, {{"T1", "verify", "active"}}));
  std::string first = out.str();
  EXPECT_EQ(first.find("\x1b["), first.find("\x1b[K"));  // no cursor move before the first frame
  int lines = static_cast<int>(lines_of(render_frame(v.model(), clock.now, {80, 23})).size());
  clock.now += milliseconds(10);  // inside the gap: finish draws anyway
  v.on_state(state_with("create_pr", 1, {{"T1", "commit_task", "complete"}}));
  v.finish();
  std::string rest = out.str().substr(first.size());
  EXPECT_EQ(rest.rfind("\x1b[" + std::to_string(lines - 1) + "A\r", 0), 0u);
  EXPECT_NE(rest.find("  committed        T1"), std::string::npos);
  EXPECT_EQ(rest.back(), '\n');
  // Nothing draws after the end.
  int drawn = v.redraws();
  v.on_log(rec("note"));
  clock.now += seconds(5);
  v.tick();
  EXPECT_EQ(v.redraws(), drawn);
}

TEST(LiveViewPolicy, NothingIsDrawnForARunThatNeverStarted) {
  ManualClock clock;
  std::ostringstream out;
  LiveView v(out, "b1", clock, {80, 24});
  v.tick();
  v.finish();
  EXPECT_EQ(out.str(), "");
  EXPECT_EQ(v.redraws(), 0);
}

TEST(ViewFrame, ShowsTheBundlesOwnCommandWhileItRuns) {
  ViewModel m("b1", t0);
  m.on_state(state_with("bundle_verify", 1, {{"T1", "commit_task", "complete"}}));
  m.on_log(rec("command_started", {{"command", "test"}, {"argv", "python3 -m unittest -q"}}),
           t0 + seconds(3));
  ASSERT_TRUE(m.command());
  auto frame = lines_of(render_frame(m, t0 + seconds(75), {100, 30}));
  EXPECT_NE(
      std::find(frame.begin(), frame.end(), "test command running 1:12: python3 -m unittest -q"),
      frame.end())
      << render_frame(m, t0 + seconds(75), {100, 30});
  m.on_log(rec("command_finished",
               {{"command", "test"}, {"exit", 1}, {"timed_out", false}, {"seconds", 72.4}}),
           t0 + seconds(76));
  EXPECT_FALSE(m.command());
  frame = lines_of(render_frame(m, t0 + seconds(76), {100, 30}));
  for (const auto& l : frame) EXPECT_EQ(l.find("command running"), std::string::npos) << l;
  EXPECT_EQ(m.recent().back(), "08:40:02 command_finished test exit 1 after 72.4 s");
}

TEST(ViewFrame, ShowsADiscussRoundWhileItRunsAndItsVerdictAfter) {
  ViewModel m("b1", t0);
  m.on_state(state_with("plan_bundle", 0, {}));
  m.on_log(rec("command_started", {{"command", "discuss"},
                                   {"round", "plan-1"},
                                   {"argv", "devgraph discuss (round plan-1)"}}),
           t0 + seconds(1));
  auto frame = lines_of(render_frame(m, t0 + seconds(4), {100, 30}));
  EXPECT_NE(std::find(frame.begin(), frame.end(),
                      "discuss command running 0:03: devgraph discuss (round plan-1)"),
            frame.end())
      << render_frame(m, t0 + seconds(4), {100, 30});
  m.on_log(rec("command_finished", {{"command", "discuss"}, {"round", "plan-1"}, {"exit", 2}}),
           t0 + seconds(5));
  m.on_log(
      rec("discuss_round", {{"command", "plan-1"}, {"status", "consensus_blocked HIGH -> revise"}}),
      t0 + seconds(5));
  EXPECT_FALSE(m.command());
  EXPECT_EQ(m.recent().back(), "08:40:02 discuss_round consensus_blocked HIGH -> revise plan-1");
}

TEST(LiveViewPolicy, AResizedTerminalGetsTheFrameAtOnceFromTheTop) {
  ManualClock clock;
  std::ostringstream out;
  LiveView v(out, "b1", clock, {100, 24});
  FrameSize terminal{100, 24};
  v.measure_with([&] { return terminal; });
  v.on_state(state_with("task_scheduler", 2, {{"T1", "verify", "active"}}));
  v.on_log(rec("launched", {{"persona", "developer"}, {"task", "T1"}, {"handle", "h1"}}));
  clock.now += seconds(2);
  v.tick();
  const int before = v.redraws();
  // The same size again: nothing to do.
  clock.now += milliseconds(10);
  v.tick();
  EXPECT_EQ(v.redraws(), before);
  // Narrower: redrawn at once, inside the rate limit, from a cleared
  // screen, every line within the new width.
  terminal = {30, 12};
  const size_t mark = out.str().size();
  clock.now += milliseconds(10);
  v.tick();
  EXPECT_EQ(v.redraws(), before + 1);
  std::string rest = out.str().substr(mark);
  EXPECT_EQ(rest.rfind("\x1b[H\x1b[J\r", 0), 0u);
  std::string frame = rest.substr(std::string("\x1b[H\x1b[J\r").size());
  size_t lines = 0;
  for (size_t at = 0; at < frame.size();) {
    size_t end = frame.find("\x1b[K", at);
    if (end == std::string::npos) break;
    EXPECT_LE(end - at, 30u) << frame.substr(at, end - at);
    ++lines;
    at = end + 3;
    if (at < frame.size() && frame[at] == '\n') ++at;
  }
  EXPECT_GE(lines, 3u);
  EXPECT_LE(lines, 11u);  // one line shorter than the screen
  // The next frame moves up over this one as usual.
  clock.now += seconds(2);
  v.on_log(rec("finished", {{"handle", "h1"}}));
  EXPECT_EQ(out.str().find("\x1b[H", mark + 1), std::string::npos);
  EXPECT_NE(out.str().find("A\r", mark), std::string::npos);
}

}  // namespace
}  // namespace devgraph::bundle
