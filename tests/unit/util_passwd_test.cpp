// Home directories read from a password file: names, uids, the first entry
// winning, and lines that are not entries.
#include "util/passwd.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include "support/test_util.h"

namespace devgraph {
namespace {

const char* kPasswd =
    "root:x:0:0:root:/root:/bin/bash\n"
    "# not an entry\n"
    "broken:x:1000\n"
    "alice:x:1001:1001:Alice,,,:/home/alice:/bin/sh\n"
    "alice:x:1002:1002::/elsewhere:/bin/sh\n"
    "nohome:x:1003:1003:::/bin/sh\n"
    "extra:x:1004:1004::/home/extra:/bin/sh:eighth\n"
    "bob:x:1005:1005::/home/bob:/bin/sh";  // no final newline

TEST(Passwd, FindsAHomeByNameAndTheFirstEntryWins) {
  test::Scratch s;
  std::string file = s / "passwd";
  test::write_text(file, kPasswd);
  EXPECT_EQ(home_of_user("root", file), "/root");
  EXPECT_EQ(home_of_user("alice", file), "/home/alice");
  EXPECT_EQ(home_of_user("bob", file), "/home/bob");
}

TEST(Passwd, FindsAHomeByUid) {
  test::Scratch s;
  std::string file = s / "passwd";
  test::write_text(file, kPasswd);
  EXPECT_EQ(home_of_uid(0, file), "/root");
  EXPECT_EQ(home_of_uid(1002, file), "/elsewhere");
  EXPECT_EQ(home_of_uid(4242, file), std::nullopt);
}

TEST(Passwd, UnknownUsersMalformedLinesAndEmptyHomesFindNothing) {
  test::Scratch s;
  std::string file = s / "passwd";
  test::write_text(file, kPasswd);
  EXPECT_EQ(home_of_user("nobody-here", file), std::nullopt);
  EXPECT_EQ(home_of_user("broken", file), std::nullopt);
  EXPECT_EQ(home_of_user("extra", file), std::nullopt);
  EXPECT_EQ(home_of_user("nohome", file), std::nullopt);
  EXPECT_EQ(home_of_user("", file), std::nullopt);
  EXPECT_EQ(home_of_user("# not an entry", file), std::nullopt);
  EXPECT_EQ(home_of_user("root", s / "missing"), std::nullopt);
}

TEST(Passwd, TheMachinesOwnFileKnowsTheCurrentUser) {
  // Every machine the tests run on lists its users in /etc/passwd.
  auto home = home_of_uid(getuid());
  ASSERT_TRUE(home.has_value());
  EXPECT_FALSE(home->empty());
}

}  // namespace
}  // namespace devgraph
