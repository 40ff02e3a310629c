// orchestrator/ownership.h: which run `devgraph run` continues and what
// the runs that wait for a person keep, over states alone.
#include "orchestrator/ownership.h"

#include <gtest/gtest.h>

#include "orchestrator/bundling.h"

namespace devgraph::orchestrator {
namespace {

const char* const kRepo = "local/widgets";

// A run waiting for a person: b1 parked at its planner (bundle cursor),
// b2's task T1 waiting (task cursor), b3 delivered.
Json waiting_run(const std::string& id, const std::string& status = "human_required") {
  return Json{
      {"run_id", id},
      {"repo", kRepo},
      {"status", status},
      {"bundles",
       Json::array(
           {{{"id", "b1"},
             {"issues", {1}},
             {"branch", "develop/b1-alpha"},
             {"status", "parked"},
             {"parked_reason", "blocked"}},
            {{"id", "b2"}, {"issues", {"#2"}}, {"branch", "develop/b2-beta"}, {"status", "parked"}},
            {{"id", "b3"},
             {"issues", {3}},
             {"branch", "develop/b3-gamma"},
             {"status", "delivered"}}})},
      {"bundles_runtime",
       {{"b1", {{"status", "waiting_human"}, {"recovery_why", "planner question"}}},
        {"b2", {{"status", "active"}}},
        {"b3", {{"status", "done"}}}}},
      {"tasks_runtime",
       {{"b2/T1", {{"status", "waiting_human"}, {"recovery_why", "footprint"}}},
        {"b3/T1", {{"status", "waiting_human"}, {"recovery_why", "stale"}}}}}};
}

TEST(Ownership, WhatWaitsIsEveryWaitingCursorAndParkedEntryOfAnOpenBundle) {
  auto w = waiting_of(waiting_run("R1"), "/runs/R1");
  ASSERT_EQ(w.size(), 2u);
  EXPECT_EQ(w[0].key, "b1");
  EXPECT_EQ(w[0].reason, "planner question");
  EXPECT_EQ(w[0].branch, "develop/b1-alpha");
  EXPECT_EQ(w[0].issues, std::vector<long long>{1});
  EXPECT_EQ(w[1].key, "b2/T1");
  EXPECT_EQ(w[1].bundle, "b2");
  EXPECT_EQ(w[1].issues, std::vector<long long>{2});
  // A parked entry with no waiting cursor is one item itself.
  Json s = waiting_run("R1");
  s["bundles_runtime"]["b1"]["status"] = "active";
  w = waiting_of(s, "/runs/R1");
  ASSERT_EQ(w.size(), 2u);
  EXPECT_EQ(w[0].key, "b1");
  EXPECT_EQ(w[0].reason, "blocked");
  // Rejected and stopped bundles wait for nobody.
  s["bundles"][0]["status"] = "rejected";
  s["bundles"][1]["status"] = "stopped";
  EXPECT_TRUE(waiting_of(s, "/runs/R1").empty());
}

TEST(Ownership, AnUnansweredWaitingRunIsNotContinuedAndKeepsItsIssuesAndBranches) {
  auto o = decide_ownership({RunView{"/runs/R1", waiting_run("R1"), false}}, kRepo, false);
  ASSERT_TRUE(o) << o.error().message;
  EXPECT_EQ(o->resume, "");
  ASSERT_EQ(o->held.size(), 2u);
  EXPECT_EQ(o->issues, (std::set<long long>{1, 2}));
  EXPECT_EQ(o->branches, (std::set<std::string>{"develop/b1-alpha", "develop/b2-beta"}));
  EXPECT_EQ(held_line(o->held),
            "waiting for a person in run R1: b1 (planner question), b2/T1 (footprint)");
}

TEST(Ownership, AnAnsweredRunIsContinuedAndWhatOlderRunsKeepStaysTheirs) {
  // The answer reopened R2 (status running); R1 still waits.
  Json answered = waiting_run("R2", "running");
  answered["bundles"][0]["issues"] = {7};
  answered["bundles"][1]["issues"] = {8};
  auto o = decide_ownership(
      {RunView{"/runs/R2", answered, false}, RunView{"/runs/R1", waiting_run("R1"), false}}, kRepo,
      false);
  ASSERT_TRUE(o);
  EXPECT_EQ(o->resume, "/runs/R2");
  EXPECT_EQ(o->issues, (std::set<long long>{1, 2}));
  ASSERT_EQ(o->held.size(), 2u);
  EXPECT_EQ(o->held[0].run_id, "R1");
  // --new continues nothing: both runs keep what waits in them.
  o = decide_ownership(
      {RunView{"/runs/R2", answered, false}, RunView{"/runs/R1", waiting_run("R1"), false}}, kRepo,
      true);
  ASSERT_TRUE(o);
  EXPECT_EQ(o->resume, "");
  EXPECT_EQ(o->issues, (std::set<long long>{1, 2, 7, 8}));
  EXPECT_EQ(held_line(o->held),
            "waiting for a person: R2 b1 (planner question), R2 b2/T1 (footprint), R1 b1 "
            "(planner question), R1 b2/T1 (footprint)");
}

TEST(Ownership, FinishedRunsOtherRepositoriesAndCleanRunsHoldNothing) {
  Json complete = waiting_run("R1", "complete");
  Json other = waiting_run("R2");
  other["repo"] = "local/other";
  Json clean = waiting_run("R3");
  clean["mode"] = "clean";
  auto o = decide_ownership({RunView{"/runs/R3", clean, false}, RunView{"/runs/R2", other, false},
                             RunView{"/runs/R1", complete, false}},
                            kRepo, false);
  ASSERT_TRUE(o);
  EXPECT_EQ(o->resume, "");
  EXPECT_TRUE(o->held.empty());
  EXPECT_EQ(held_line(o->held), "");
}

TEST(Ownership, AnEndNotRecordedIsFinishedAndARunOfAnotherRepositoryIsRefused) {
  auto o = decide_ownership({RunView{"/runs/R1", waiting_run("R1"), true}}, kRepo, false);
  ASSERT_TRUE(o);
  EXPECT_EQ(o->resume, "/runs/R1");
  EXPECT_TRUE(o->finishing);
  EXPECT_TRUE(o->held.empty());
  Json other = waiting_run("R2", "running");
  other["repo"] = "local/other";
  auto refused = decide_ownership({RunView{"/runs/R2", other, false}}, kRepo, false);
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().kind, ErrorKind::usage);
  EXPECT_NE(refused.error().message.find("belongs to local/other"), std::string::npos);
}

TEST(Ownership, AHeldIssueIsNotWorkAndSaysWhere) {
  issues::Issue one;
  one.number = 1;
  one.state = "open";
  one.title = "alpha";
  issues::Issue two = one;
  two.number = 2;
  IntakePolicy p;
  p.every_open_issue = true;
  auto el = eligible({one, two}, p, {}, {}, {{1, "waiting for a person in run R1 (b1)"}});
  ASSERT_EQ(el.work.size(), 1u);
  EXPECT_EQ(el.work[0].number, 2);
  ASSERT_EQ(el.excluded.size(), 1u);
  EXPECT_EQ(el.excluded[0].why, "waiting for a person in run R1 (b1)");
}

}  // namespace
}  // namespace devgraph::orchestrator
