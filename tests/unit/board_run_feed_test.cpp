#include "board/run_feed.h"

#include <gtest/gtest.h>

#include "support/test_util.h"
#include "util/fs.h"

namespace devgraph::board {
namespace {

std::string event(int seq, const std::string& type = "NOTE") {
  return R"({"ts": "t", "seq": )" + std::to_string(seq) + R"(, "type": ")" + type +
         R"(", "node": "scan", "detail": {}})";
}

void append(const std::string& path, const std::string& text) {
  auto old = read_file(path);
  test::write_text(path, (old ? *old : std::string()) + text);
}

TEST(BoardRunFeed, TheAnswerIsKeptUntilTheRunChangesAndHoldsTheView) {
  test::Scratch s;
  const std::string log = s / "events.jsonl";
  test::write_text(log, event(1) + "\n");
  RunFeed feed(s.path());
  feed.refresh();
  std::string first = *feed.snapshot_text();
  EXPECT_NE(first.find("\"view\""), std::string::npos);
  EXPECT_FALSE(feed.refresh());
  EXPECT_EQ(*feed.snapshot_text(), first);
  // One text, shared by every connection that sends it.
  EXPECT_EQ(feed.snapshot_text().get(), feed.snapshot_text().get());
  append(log, event(2) + "\n");
  EXPECT_TRUE(feed.refresh());
  std::string second = *feed.snapshot_text();
  EXPECT_NE(second, first);
  auto parsed = parse_json(second, "answer");
  ASSERT_TRUE(parsed);
  EXPECT_EQ((*parsed)["event_seq"], 2);
  EXPECT_EQ((*parsed)["view"]["totals"]["events"], 2);
}

TEST(BoardRunFeed, EventsAreReadAsTheyAreAppendedAndATornLineWaitsForItsEnd) {
  test::Scratch s;
  const std::string log = s / "events.jsonl";
  RunFeed feed(s.path());
  EXPECT_FALSE(feed.refresh()) << "nothing there yet";
  EXPECT_EQ(feed.newest(), 0u);
  test::write_text(log, event(1) + "\n" + event(2));
  EXPECT_TRUE(feed.refresh());
  EXPECT_EQ(feed.newest(), 1u) << "the second line is not ended";
  append(log, "\nnot json\n[1]\n" + event(2) + "\n" + event(3, "SCAN_DONE") + "\n");
  EXPECT_TRUE(feed.refresh());
  EXPECT_EQ(feed.newest(), 3u);
  EXPECT_FALSE(feed.refresh()) << "nothing new";
  auto after = feed.events_after(1);
  ASSERT_EQ(after.size(), 2u);
  EXPECT_EQ(after[0].first, 2u);
  EXPECT_EQ(after[1].second, event(3, "SCAN_DONE"));
  EXPECT_TRUE(feed.events_after(3).empty());
  EXPECT_EQ(feed.events_after(0).size(), 3u);
}

TEST(BoardRunFeed, TheStateIsReadWholeAndTheSnapshotKeepsTheNewestEvents) {
  test::Scratch s;
  RunFeed feed(s.path());
  test::write_text(s / "state.json", R"({"status": "running", "event_seq": 0})");
  EXPECT_TRUE(feed.refresh());
  test::write_text(s / "state.json", "{\"status\": \"comp");  // not a whole state
  EXPECT_FALSE(feed.refresh());
  std::string lines;
  for (int i = 1; i <= static_cast<int>(kSnapshotEvents) + 20; ++i) lines += event(i) + "\n";
  test::write_text(s / "events.jsonl", lines);
  test::write_text(s / "state.json", R"({"status": "complete", "title": "<script>x</script>"})");
  EXPECT_TRUE(feed.refresh());
  Json snap = feed.snapshot();
  EXPECT_EQ(snap["state"]["status"], "complete");
  EXPECT_EQ(snap["state"]["title"], "<script>x</script>");
  EXPECT_EQ(snap["event_seq"], kSnapshotEvents + 20);
  ASSERT_EQ(snap["events"].size(), kSnapshotEvents);
  EXPECT_EQ(snap["events"][0]["seq"], 21);
  EXPECT_EQ(snap["run_dir"], s.path());
}

TEST(BoardRunFeed, TheWatchWakesOnAnAppendAndAMissingRunIsAnError) {
  test::Scratch s;
  RunFeed feed(s.path());
  auto fd = feed.watch();
  ASSERT_TRUE(fd) << fd.error().message;
  char buf[4096];
  EXPECT_LT(::read(*fd, buf, sizeof buf), 0) << "nothing happened yet";
  append(s / "events.jsonl", event(1) + "\n");
  EXPECT_GT(::read(*fd, buf, sizeof buf), 0);
  feed.drain();
  RunFeed gone(s / "no-such-run");
  auto bad = gone.watch();
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().message.find("cannot watch"), std::string::npos);
}

TEST(BoardSessionSnapshot, ARecordsReplayIsTheBoardsDataAndAnythingMalformedIsEmpty) {
  Json events = Json::array();
  for (int i = 1; i <= static_cast<int>(kSnapshotEvents) + 3; ++i)
    events.push_back(*parse_json(event(i), "e"));
  Json session = {
      {"run_id", "r1"},
      {"repo", "/src/w"},
      {"status", "complete"},
      {"node", "complete"},
      {"run_dir", "/gone"},
      {"recorded_at", "2026-12-02T10:00:00Z"},
      {"replay",
       {{"bundles", Json::array({{{"id", "b1"}, {"title", "<i>t</i>"}}})}, {"events", events}}}};
  Json snap = session_snapshot(session, "/m/x.jsonl");
  EXPECT_EQ(snap["state"]["run_id"], "r1");
  EXPECT_EQ(snap["state"]["bundles"][0]["title"], "<i>t</i>");
  EXPECT_EQ(snap["event_seq"], kSnapshotEvents + 3);
  EXPECT_EQ(snap["events"].size(), kSnapshotEvents);
  EXPECT_EQ(snap["source"]["kind"], "session");
  EXPECT_EQ(snap["source"]["path"], "/m/x.jsonl");
  for (const Json& bad :
       {Json("text"), Json{{"replay", "not an object"}}, Json{{"replay", {{"events", 7}}}}}) {
    Json s2 = session_snapshot(bad, "/m/x.jsonl");
    EXPECT_TRUE(s2["events"].empty()) << dump_py(bad);
    EXPECT_EQ(s2["event_seq"], 0) << dump_py(bad);
  }
}

}  // namespace
}  // namespace devgraph::board
