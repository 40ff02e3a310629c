// The footprint glob engine, pinned by tables: one engine answers both
// "does this path belong to the footprint" and "do two footprints conflict".
#include <gtest/gtest.h>

#include "schedule/schedule.h"

namespace devgraph::schedule {
namespace {

struct MatchCase {
  const char* glob;
  const char* path;
  bool match;
};

// `**` crosses directories, `*` and `?` stay in one segment, a bare path is
// that file or everything beneath it.
const MatchCase kMatches[] = {
    {"src/domain/**", "src/domain/a.ts", true},
    {"src/domain/**", "src/domain/deep/er/a.ts", true},
    {"src/domain/**", "src/domain", false},
    {"src/domain/**", "src/domainx/a.ts", false},
    {"src/*.ts", "src/a.ts", true},
    {"src/*.ts", "src/sub/a.ts", false},
    {"src/*.ts", "src/.ts", true},
    {"src/a?.ts", "src/ab.ts", true},
    {"src/a?.ts", "src/a/.ts", false},
    {"src/a?.ts", "src/a.ts", false},
    {"**/x.md", "x.md", true},
    {"**/x.md", "a/b/x.md", true},
    {"**/x.md", "a/bx.md", false},
    {"src/**/test.ts", "src/test.ts", true},
    {"src/**/test.ts", "src/a/b/test.ts", true},
    {"src/**/test.ts", "src/a/btest.ts", false},
    {"src/**.ts", "src/a/b.ts", true},
    {"src/**.ts", "src/b.ts", true},
    {"**", "anything/at/all", true},
    {"*", "top.txt", true},
    {"*", "dir/file", false},
    {"package.json", "package.json", true},
    {"package.json", "package.json.bak", false},
    {"package.json", "sub/package.json", false},
    {"e2e", "e2e/x", true},
    {"e2e", "e2e", true},
    {"e2e", "e2e-helpers/x", false},
    {"e2e/", "e2e/x", true},
    {"/e2e/", "e2e/x", true},
    {" docs ", "docs/a.md", true},
    {"./src//a/**", "src/a/b", true},
    {"src/a b/*.txt", "src/a b/q\"uote.txt", true},
    {"docs/é*.md", "docs/été.md", true},
    {"docs/?té.md", "docs/été.md", true},  // `?` is one character, not one byte
    {"docs/?.md", "docs/\xff.md", true},   // an invalid byte is one character too
    {"docs/\xff.md", "docs/\xff.md", true},
    {"src/*/*.ts", "src/x/y.ts", true},
    {"src/*/*.ts", "src/x/y/z.ts", false},
    {"a*b*c", "aXXbYYc", true},
    {"a*b*c", "aXXbYY", false},
    {"src/**/**/x", "src/x", true},
};

TEST(Glob, MatchTable) {
  for (const auto& c : kMatches)
    EXPECT_EQ(glob_matches(c.glob, c.path), c.match) << c.glob << " vs " << c.path;
}

TEST(Glob, PathSlashesAreIgnored) {
  EXPECT_TRUE(glob_matches("src/**", "/src/a/"));
  EXPECT_TRUE(glob_matches("README.md", "/README.md"));
}

TEST(Glob, PathologicalPatternStaysFast) {
  // A backtracking matcher would take exponential time here.
  std::string glob = "a";
  for (int i = 0; i < 30; ++i) glob += "*a";
  glob += "b";
  std::string path(5000, 'a');
  EXPECT_FALSE(glob_matches(glob, path));
}

struct PrefixCase {
  const char* glob;
  const char* prefix;
};

const PrefixCase kPrefixes[] = {
    {"src/domain/**", "src/domain"},
    {"src/a*.ts", "src"},
    {"README.md", "README.md"},
    {"**/x", ""},
    {"*", ""},
    {"src/**/x", "src"},
    {"/src/a/", "src/a"},
    {"src//a/*.ts", "src/a"},
    {"./docs/*.md", "docs"},
    {"e2e-helpers/x", "e2e-helpers/x"},
    {"a?b/c", ""},
    {"x/y?/z", "x"},
};

TEST(Glob, LiteralPrefixTable) {
  for (const auto& c : kPrefixes) EXPECT_EQ(literal_prefix(c.glob), c.prefix) << c.glob;
  EXPECT_EQ(Glob("src/a*.ts").literal_prefix(), "src");
}

struct ConflictCase {
  const char* a;
  const char* b;
  bool conflict;
};

const ConflictCase kConflicts[] = {
    {"src/**", "src/domain/x.ts", true},  // parent
    {"src/domain/x.ts", "src/**", true},  // child
    {"src/a/**", "src/b/**", false},      // siblings
    {"src/a*.ts", "src/b*.ts", true},     // share the directory before the wildcard
    {"e2e/**", "e2e-helpers/x", false},   // only looks like a prefix
    {"e2e", "e2e-helpers", false},
    {"**/x", "anything/else", true},         // the whole tree
    {"package.json", "package.json", true},  // a hub file in both
    {"package.json", "package-lock.json", false},
    {"./src/a/", "src/a/b", true},
};

TEST(Glob, ConflictTable) {
  for (const auto& c : kConflicts) {
    EXPECT_EQ(prefixes_conflict(literal_prefix(c.a), literal_prefix(c.b)), c.conflict)
        << c.a << " vs " << c.b;
    EXPECT_EQ(Footprint({c.a}).conflicts_with(Footprint({c.b})), c.conflict)
        << c.a << " vs " << c.b;
  }
}

TEST(Glob, FootprintConflictsListsEveryGlobPair) {
  auto pairs = footprint_conflicts({"src/**", "package.json", "docs/a.md"},
                                   {"src/ui/*.ts", "package.json", "lib/**"});
  std::vector<GlobPair> want = {{"src/**", "src/ui/*.ts"}, {"package.json", "package.json"}};
  EXPECT_EQ(pairs, want);
  EXPECT_TRUE(footprint_conflicts({"a/**"}, {"b/**"}).empty());
}

TEST(Glob, FootprintContainsAnyGlob) {
  Footprint fp({"src/domain/**", "package.json"});
  EXPECT_TRUE(fp.contains("package.json"));
  EXPECT_TRUE(fp.contains("src/domain/x/y.ts"));
  EXPECT_FALSE(fp.contains("src/ui/x.ts"));
  EXPECT_FALSE(Footprint().contains("x"));
}

}  // namespace
}  // namespace devgraph::schedule
