// Strays and the bundle's quarantine: who is suspected of writing a path,
// and a move out of the worktree that keeps bytes and mode, records first,
// and refuses what it must not touch with nothing changed.
#include "bundle/quarantine.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include "support/test_util.h"
#include "util/fs.h"

namespace devgraph::bundle {
namespace {

TEST(StrayLedger, APathKeepsTheTasksInFlightWhenItWasFirstSeen) {
  StrayLedger l;
  l.observe({"notes.md"}, {"T2", "T1", "T2"});
  l.observe({"notes.md", "scratch.log"}, {"T3"});
  EXPECT_EQ(l.suspects_of("notes.md"), (std::vector<std::string>{"T1", "T2"}));
  EXPECT_EQ(l.attributed_to("notes.md"), "");
  EXPECT_EQ(l.attributed_to("scratch.log"), "T3");
  EXPECT_TRUE(l.suspects_of("never-seen").empty());
  EXPECT_EQ(l.attributed_to("never-seen"), "");
  l.forget("scratch.log");
  l.observe({"scratch.log"}, {"T4"});
  EXPECT_EQ(l.attributed_to("scratch.log"), "T4");
}

class Quarantine : public ::testing::Test {
 protected:
  test::Scratch s;
  BundleLayout layout{s / "run", "b1", s / "wt"};
  void SetUp() override { ASSERT_TRUE(make_directories(layout.worktree).ok()); }
  std::string in_worktree(const std::string& rel) const { return layout.worktree + "/" + rel; }
};

TEST_F(Quarantine, AFileMovesWithItsBytesAndModeAndIsRecordedWithItsSuspects) {
  ASSERT_TRUE(make_directories(in_worktree("notes")).ok());
  test::write_text(in_worktree("notes/run.sh"), "#!/bin/sh\necho hi\n");
  ASSERT_EQ(::chmod(in_worktree("notes/run.sh").c_str(), 0755), 0);
  auto r = quarantine(layout, {"notes/run.sh", {"T1"}, "T1", "T2"});
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_FALSE(path_exists(in_worktree("notes/run.sh")));
  std::string kept = layout.dir() + "/" + json_str(*r, "kept_at");
  EXPECT_EQ(json_str(*r, "kept_at"), "quarantine/files/notes/run.sh");
  EXPECT_EQ(test::slurp(kept), "#!/bin/sh\necho hi\n");
  struct stat st{};
  ASSERT_EQ(::stat(kept.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0755u);
  EXPECT_EQ((*r)["mode"], "0755");
  EXPECT_EQ((*r)["bytes"], 18);
  EXPECT_EQ((*r)["attributed_to"], "T1");
  EXPECT_EQ((*r)["found_at"], "T2");
  auto all = quarantined(layout);
  ASSERT_TRUE(all.ok());
  ASSERT_EQ(all->size(), 1u);
  EXPECT_EQ((*all)[0], *r);
}

TEST_F(Quarantine, ASymlinkIsKeptAsALinkAndNobodyIsBlamedWithoutOneSuspect) {
  ASSERT_EQ(::symlink("/etc/hostname", in_worktree("link").c_str()), 0);
  auto r = quarantine(layout, {"link", {"T1", "T2"}, "", "T2"});
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_TRUE((*r)["attributed_to"].is_null());
  EXPECT_EQ((*r)["symlink"], true);
  char target[64] = {};
  ASSERT_GT(::readlink((layout.dir() + "/quarantine/files/link").c_str(), target, 63), 0);
  EXPECT_STREQ(target, "/etc/hostname");
  EXPECT_FALSE(path_exists(in_worktree("link")));
}

TEST_F(Quarantine, TheSamePathQuarantinedTwiceKeepsBothCopies) {
  test::write_text(in_worktree("scratch.log"), "one\n");
  ASSERT_TRUE(quarantine(layout, {"scratch.log", {}, "", "T1"}).ok());
  test::write_text(in_worktree("scratch.log"), "two\n");
  auto r = quarantine(layout, {"scratch.log", {}, "", "T2"});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(json_str(*r, "kept_at"), "quarantine/files/scratch.log.2");
  EXPECT_EQ(test::slurp(layout.dir() + "/quarantine/files/scratch.log"), "one\n");
  EXPECT_EQ(test::slurp(layout.dir() + "/quarantine/files/scratch.log.2"), "two\n");
  EXPECT_EQ(quarantined(layout)->size(), 2u);
}

TEST_F(Quarantine, ARecordWrittenBeforeAKillIsReplacedWhenTheMoveIsTriedAgain) {
  // The kill came after the index was written and before the move: the
  // original is still there, and the retry records it once and moves it.
  test::write_text(in_worktree("scratch.log"), "bytes\n");
  ASSERT_TRUE(make_directories(layout.quarantine_dir()).ok());
  test::write_text(layout.quarantine_index(),
                   R"([{"path": "scratch.log", "kept_at": "quarantine/files/scratch.log"}])");
  auto r = quarantine(layout, {"scratch.log", {"T1"}, "T1", "T1"});
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(json_str(*r, "kept_at"), "quarantine/files/scratch.log");
  auto all = quarantined(layout);
  ASSERT_EQ(all->size(), 1u);
  EXPECT_EQ((*all)[0]["attributed_to"], "T1");
}

TEST_F(Quarantine, PathsItMustNotTouchAreRefusedWithNothingChanged) {
  ASSERT_TRUE(make_directories(in_worktree("dir")).ok());
  test::write_text(s / "outside.txt", "mine\n");
  for (const std::string p : {"", "/etc/passwd", "../outside.txt", "a/../../outside.txt",
                              "./x", "dir", "missing.txt", "a//b"}) {
    auto r = quarantine(layout, {p, {}, "", "T1"});
    ASSERT_FALSE(r.ok()) << p;
    EXPECT_EQ(r.error().message.find('\n'), std::string::npos);
    EXPECT_TRUE(r.error().kind == ErrorKind::usage || r.error().kind == ErrorKind::not_found) << p;
  }
  EXPECT_FALSE(path_exists(layout.quarantine_dir()));
  EXPECT_EQ(test::slurp(s / "outside.txt"), "mine\n");
  EXPECT_TRUE(is_directory(in_worktree("dir")));
}

TEST_F(Quarantine, AnIndexThatIsNotAListOfRecordsIsAnErrorNamingIt) {
  EXPECT_TRUE(quarantined(layout)->empty());
  ASSERT_TRUE(make_directories(layout.quarantine_dir()).ok());
  test::write_text(layout.quarantine_index(), "{}");
  auto r = quarantined(layout);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find(layout.quarantine_index()), std::string::npos);
  test::write_text(in_worktree("x"), "x\n");
  EXPECT_FALSE(quarantine(layout, {"x", {}, "", "T1"}).ok());
  EXPECT_TRUE(path_exists(in_worktree("x")));
}

}  // namespace
}  // namespace devgraph::bundle
