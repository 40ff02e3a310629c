// Atomic replacement from one buffer or from many pieces (writev), reads,
// file identities and the lock file's note, and clear errors with nothing
// left behind.
#include "util/fs.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "support/test_util.h"

namespace devgraph {
namespace {

TEST(WriteFileAtomic, ManyPiecesMakeTheirConcatenation) {
  test::Scratch s;
  std::string path = s / "state.json";
  // More pieces than one writev takes (IOV_MAX is 1024 on Linux), empty
  // ones among them, and one large piece.
  std::vector<std::string> owned;
  for (int i = 0; i < 3000; ++i) owned.push_back(i % 7 == 0 ? "" : std::to_string(i) + ",");
  owned.push_back(std::string(1 << 20, 'x'));
  std::vector<std::string_view> pieces(owned.begin(), owned.end());
  std::string expected;
  for (const auto& o : owned) expected += o;
  ASSERT_TRUE(write_file_atomic(path, pieces).ok());
  EXPECT_EQ(test::slurp(path), expected);
  ASSERT_TRUE(write_file_atomic(path, std::vector<std::string_view>{}).ok());
  EXPECT_EQ(test::slurp(path), "");
  EXPECT_EQ(test::entries(s.path()), "state.json\n");
}

TEST(WriteFileAtomic, AFailureNamesThePathAndLeavesTheOldFile) {
  test::Scratch s;
  std::string path = s / "state.json";
  ASSERT_TRUE(write_file_atomic(path, "old\n").ok());
  auto bad = write_file_atomic(s / "missing-dir/state.json", std::vector<std::string_view>{"x"});
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().message.find("missing-dir"), std::string::npos) << bad.error().message;
  EXPECT_EQ(test::slurp(path), "old\n");
}

TEST(ReadFile, ReadsEmptySmallAndLargeFilesWhole) {
  test::Scratch s;
  std::string large;
  for (int i = 0; large.size() < (size_t{300} << 10); ++i) large += std::to_string(i) + "\n";
  for (const std::string& content : {std::string(), std::string("x"), large}) {
    std::string path = s / "f";
    ASSERT_TRUE(write_file_atomic(path, content).ok());
    auto got = read_file(path);
    ASSERT_TRUE(got.ok());
    EXPECT_EQ(*got, content);
    auto buffer = read_file_buffer(path);
    ASSERT_TRUE(buffer.ok());
    EXPECT_EQ(buffer->view(), content);
    EXPECT_EQ(file_size(path), content.size());
  }
}

TEST(ReadFileBuffer, GrowsPastTheSizeStatGaveKeepingWhatWasRead) {
  // A /proc file reports size 0: the buffer starts at one byte and grows,
  // by copying, until the end.
  auto got = read_file_buffer("/proc/self/status");
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(got->view().substr(0, 5), "Name:");
  EXPECT_NE(got->view().find("\nPid:"), std::string_view::npos);
  EXPECT_EQ(got->view().back(), '\n');
  auto missing = read_file_buffer("/nonexistent-devgraph-dir/state.json");
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.error().message.find("/nonexistent-devgraph-dir/state.json"),
            std::string::npos);
}

TEST(ReadFileBuffer, CopyGrowAndTruncateKeepTheBytes) {
  FileBuffer b = FileBuffer::copy_of("abc");
  EXPECT_EQ(b.view(), "abc");
  b.grow(6);
  ASSERT_EQ(b.size(), 6u);
  EXPECT_EQ(b.view().substr(0, 3), "abc");
  b.truncate(2);
  EXPECT_EQ(b.view(), "ab");
  b.truncate(5);  // never longer than it is
  EXPECT_EQ(b.view(), "ab");
  EXPECT_EQ(FileBuffer::copy_of("").view(), "");
  EXPECT_EQ(FileBuffer().view(), "");
}

TEST(ReadFile, ReadsAFileWhoseSizeIsNotKnownAhead) {
  // /proc files report size 0 and are read until end of file.
  auto got = read_file("/proc/self/status");
  ASSERT_TRUE(got.ok());
  EXPECT_NE(got->find("Name:"), std::string::npos);
  EXPECT_EQ(file_size("/proc/self/status"), 0u);
}

TEST(ReadFile, AMissingFileIsAnErrorNamingIt) {
  test::Scratch s;
  auto got = read_file(s / "absent");
  ASSERT_FALSE(got.ok());
  EXPECT_NE(got.error().message.find("absent"), std::string::npos);
  EXPECT_EQ(file_size(s / "absent"), 0u);
}

TEST(ReadFile, ReadsAPipeToItsEnd) {
  // A pipe may answer short before its end: it is read until a read
  // returns nothing. The writer sends in pieces.
  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);
  pid_t pid = ::fork();
  if (pid == 0) {
    ::close(fds[0]);
    for (int i = 0; i < 5; ++i) {
      std::string piece(1000, static_cast<char>('a' + i));
      if (::write(fds[1], piece.data(), piece.size()) != 1000) ::_exit(1);
    }
    ::_exit(0);
  }
  ::close(fds[1]);
  auto got = read_file("/proc/self/fd/" + std::to_string(fds[0]));
  ::close(fds[0]);
  int status = 0;
  ::waitpid(pid, &status, 0);
  ASSERT_TRUE(got.ok());
  ASSERT_EQ(got->size(), 5000u);
  EXPECT_EQ(got->substr(4000), std::string(1000, 'e'));
}

TEST(ReadFileAtMost, ReadsAFileUpToTheLimitAndRefusesALongerOne) {
  test::Scratch s;
  const std::string path = s / "f";
  ASSERT_TRUE(write_file_atomic(path, std::string(100, 'x')).ok());
  auto whole = read_file_at_most(path, 100);
  ASSERT_TRUE(whole.ok()) << whole.error().message;
  EXPECT_EQ(*whole, std::string(100, 'x'));
  auto longer = read_file_at_most(path, 99);
  ASSERT_FALSE(longer.ok());
  EXPECT_NE(longer.error().message.find(path), std::string::npos);
  EXPECT_NE(longer.error().message.find("longer than 99 bytes"), std::string::npos);
  ASSERT_TRUE(write_file_atomic(path, "").ok());
  auto empty = read_file_at_most(path, 0);
  ASSERT_TRUE(empty.ok());
  EXPECT_EQ(*empty, "");
  auto missing = read_file_at_most(s / "absent", 10);
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().kind, ErrorKind::not_found);
}

TEST(ReadFileAtMost, RefusesWhatIsNotARegularFileWithoutBlocking) {
  test::Scratch s;
  const std::string fifo = s / "fifo";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  // No writer ever opens the FIFO: a blocking open would never return.
  for (const std::string& path : {fifo, std::string(s / ""), std::string("/dev/zero")}) {
    auto got = read_file_at_most(path, 1 << 20);
    ASSERT_FALSE(got.ok()) << path;
    EXPECT_NE(got.error().message.find("not a regular file"), std::string::npos)
        << got.error().message;
  }
}

TEST(FileHasBytes, TellsAnExactCopyFromEveryKindOfDifference) {
  test::Scratch s;
  std::string large;  // several of the comparison's blocks
  for (int i = 0; large.size() < (size_t{100} << 10); ++i) large += std::to_string(i) + "\n";
  for (const std::string& content : {std::string(), std::string("x"), large}) {
    const std::string path = s / "f";
    ASSERT_TRUE(write_file_atomic(path, content).ok());
    EXPECT_TRUE(*file_has_bytes(path, content));
    EXPECT_FALSE(*file_has_bytes(path, content + "y"));
    if (!content.empty()) {
      EXPECT_FALSE(*file_has_bytes(path, content.substr(1)));
      // Same size, one byte different: first, in a later block, last.
      for (size_t at : {size_t{0}, content.size() / 2, content.size() - 1}) {
        std::string changed = content;
        changed[at] = changed[at] == 'z' ? 'q' : 'z';
        EXPECT_FALSE(*file_has_bytes(path, changed)) << at;
      }
    }
  }
  // A file of unknown size (stat says 0) is read to its end.
  auto status = read_file("/proc/self/status");
  ASSERT_TRUE(status.ok());
  EXPECT_FALSE(*file_has_bytes("/proc/self/status", ""));
  EXPECT_FALSE(*file_has_bytes("/proc/self/status", "Name:"));
}

TEST(FileHasBytes, AMissingFileIsAnErrorNamingIt) {
  test::Scratch s;
  auto got = file_has_bytes(s / "absent", "x");
  ASSERT_FALSE(got.ok());
  EXPECT_NE(got.error().message.find("absent"), std::string::npos);
  // A directory opens but does not read: the error names it too, and
  // reading leaves the directory as it was.
  ASSERT_TRUE(make_directories(s / "dir").ok());
  auto dir = file_has_bytes(s / "dir", "x");
  ASSERT_FALSE(dir.ok());
  EXPECT_NE(dir.error().message.find("cannot read"), std::string::npos);
  EXPECT_NE(dir.error().message.find("dir"), std::string::npos);
  EXPECT_EQ(test::entries(s / "dir"), "");
}

TEST(FileIdentity, ChangesWhenTheFileIsReplacedOrRewrittenInPlace) {
  test::Scratch s;
  const std::string path = s / "state.json";
  ASSERT_TRUE(write_file_atomic(path, "one\n").ok());
  auto first = file_identity(path);
  ASSERT_TRUE(first.ok());
  EXPECT_EQ(first->size, 4u);
  // Reading names the same file.
  FileIdentity read_id;
  auto text = read_file_buffer(path, &read_id);
  ASSERT_TRUE(text.ok());
  EXPECT_EQ(text->view(), "one\n");
  EXPECT_EQ(read_id, *first);
  EXPECT_EQ(*file_identity(path), *first);
  // Same bytes, new file: another inode.
  ASSERT_TRUE(write_file_atomic(path, "one\n").ok());
  auto replaced = file_identity(path);
  ASSERT_TRUE(replaced.ok());
  EXPECT_NE(*replaced, *first);
  // Rewritten in place with bytes of the same length: the inode stays,
  // the change time does not (checked against a link made meanwhile, which
  // itself moves the change time, so the rewrite is the last change).
  ASSERT_EQ(::link(path.c_str(), (s / "other").c_str()), 0);
  auto linked = file_identity(path);
  ASSERT_TRUE(linked.ok());
  {
    const int fd = ::open(path.c_str(), O_WRONLY | O_TRUNC);
    ASSERT_GE(fd, 0);
    ASSERT_EQ(::write(fd, "two\n", 4), 4);
    ::close(fd);
  }
  auto rewritten = file_identity(path);
  ASSERT_TRUE(rewritten.ok());
  EXPECT_EQ(rewritten->inode, linked->inode);
  EXPECT_EQ(rewritten->size, linked->size);
  EXPECT_TRUE(rewritten->ctime_ns != linked->ctime_ns || rewritten->mtime_ns != linked->mtime_ns);
  auto missing = file_identity(s / "missing");
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.error().message.find("missing"), std::string::npos);
}

TEST(FileLock, KeepsANoteForTheNextHolder) {
  test::Scratch s;
  const std::string path = s / ".lock";
  {
    auto lock = FileLock::acquire(path);
    ASSERT_TRUE(lock.ok());
    auto empty = lock->read_note();
    ASSERT_TRUE(empty.ok());
    EXPECT_EQ(*empty, "");
    ASSERT_TRUE(lock->write_note("a longer first note\n").ok());
    ASSERT_TRUE(lock->write_note("short\n").ok());
  }
  auto again = FileLock::acquire(path);
  ASSERT_TRUE(again.ok());
  auto note = again->read_note();
  ASSERT_TRUE(note.ok());
  EXPECT_EQ(*note, "short\n");
  EXPECT_EQ(test::slurp(path), "short\n");
  // A reader takes at most `limit` bytes.
  ASSERT_TRUE(again->write_note(std::string(1000, 'x')).ok());
  EXPECT_EQ(again->read_note(10)->size(), 10u);
}

}  // namespace
}  // namespace devgraph
