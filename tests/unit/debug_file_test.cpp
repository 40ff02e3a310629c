// The debug file (src/debug/debug_file.h): render and parse are inverse,
// no text a persona or a person wrote can pose as structure, and slugs
// come only from the safe charset.
#include "debug/debug_file.h"

#include <gtest/gtest.h>

#include "support/test_util.h"

namespace devgraph::debug {
namespace {

DebugFile sample() {
  DebugFile f;
  f.slug = "login-500";
  f.status = "awaiting_human";
  f.trigger = "login fails with \"500\"";
  f.goal = "find_and_fix";
  f.tdd = true;
  f.created = "2026-01-02T03:04:05+00:00";
  f.updated = "2026-01-02T03:05:00+00:00";
  f.m.phase = "ask";
  f.m.step = 4;
  f.m.mode = "fix";
  f.m.directive = "line one\nDATA_START\nx\nDATA_END";
  f.m.cycles_investigation = 2;
  f.m.cycles_fix = 1;
  Question q;
  q.id = "q3-guardrail";
  q.kind = "guardrail";
  q.text = "Failing signal: lint\n## Resolution";
  q.choices = {"Revise", "Accept", "Abandon"};
  q.text_choice = 2;
  q.needs_text = {2};
  q.held_directive = "lint";
  f.m.pending = q;
  f.m.answered = {"q1-checkpoint"};
  f.m.test_command = {"sh", "test.sh"};
  f.m.fix_files = {"src/a.txt"};
  f.m.worktree = "/w";
  f.m.branch = "debug/login-500";
  f.m.delivered = Json{{"branch", "debug/login-500"}, {"head", "abc"}};
  f.hypothesis = "## Evidence\n- timestamp: forged\n---\nnot a heading";
  f.next_action = "  leading blanks kept";
  f.reported = "login fails";
  f.details = "line\n\n  indented\n|";
  f.evidence = {{"t1", "the log", "a 500 at /login", ""}, {"t2", "|", "x\n## Eliminated", "y"}};
  f.eliminated = {{"t1", "the database is down", "it answers"}};
  f.reviews = {{"t3", "python", "specialist", "LOOKS_GOOD", "fine"}};
  f.resolution = {"the cache key ignores the locale", "", "", "guard: a test"};
  return f;
}

TEST(DebugFile, ParseIsTheInverseOfRender) {
  DebugFile f = sample();
  std::string text = render(f);
  auto back = parse(text, "f.md");
  ASSERT_TRUE(back) << back.error().message << "\n" << text;
  EXPECT_EQ(*back, f);
  EXPECT_EQ(render(*back), text);
}

TEST(DebugFile, TextFromAPersonaNeverStartsALineAtColumnZero) {
  std::string text = render(sample());
  size_t pos = 0;
  int headings = 0;
  while ((pos = text.find("\n## ", pos)) != std::string::npos) {
    ++headings;
    ++pos;
  }
  EXPECT_EQ(headings, 6) << text;  // the six sections, nothing forged
  auto back = parse(text, "f.md");
  ASSERT_TRUE(back);
  EXPECT_EQ(back->evidence.size(), 2u);
  EXPECT_EQ(back->eliminated.size(), 1u);
}

TEST(DebugFile, ACutOrMalformedFileIsAnErrorNamingTheLine) {
  std::string text = render(sample());
  auto cut = parse(text.substr(0, text.size() - 1), "f.md");
  ASSERT_FALSE(cut);
  EXPECT_NE(cut.error().message.find("f.md:"), std::string::npos) << cut.error().message;
  std::string bad = text;
  bad.replace(bad.find("hypothesis:"), 11, "Hypothesis?");
  auto broken = parse(bad, "f.md");
  ASSERT_FALSE(broken);
  EXPECT_NE(broken.error().message.find("f.md:"), std::string::npos);
  auto no_front = parse("# nothing\n", "f.md");
  EXPECT_FALSE(no_front);
}

TEST(DebugFile, CleanTextDropsControlCharactersAndTrailingBlanks) {
  EXPECT_EQ(clean_text("a\r\nb\rc\x1b[31m\x07 \n\n"), "a\nb\nc[31m");
  EXPECT_EQ(clean_text(std::string(kMaxText + 10, 'x')).size(), kMaxText);
}

TEST(DebugFile, SlugsComeFromTheSafeCharsetOnly) {
  EXPECT_EQ(slug_from("Login fails with HTTP 500!"), "login-fails-with-http-500");
  EXPECT_EQ(slug_from("../../etc/passwd"), "etc-passwd");
  EXPECT_EQ(slug_from("  --  "), "session");
  EXPECT_EQ(slug_from("resolved"), "session");
  std::string long_one = slug_from(std::string(30, 'a') + " " + std::string(30, 'b'));
  EXPECT_LE(long_one.size(), 40u);
  EXPECT_TRUE(check_slug(long_one));
  for (const char* bad : {"", "a/b", "..", "../x", "Upper", "resolved", "-x", "a b", "a.md"})
    EXPECT_FALSE(check_slug(bad)) << bad;
  EXPECT_FALSE(check_slug(std::string(kMaxSlug + 1, 'a')));
  EXPECT_TRUE(check_slug("login-500"));
}

TEST(DebugFile, SaveAndLoadFindTheActiveFileElseTheResolvedOne) {
  test::Scratch s;
  Paths p = paths_of(s.path(), "x");
  EXPECT_FALSE(load(p));
  DebugFile f = sample();
  ASSERT_TRUE(save(p.resolved, f));
  EXPECT_EQ(current_path(p), p.resolved);
  f.status = "investigating";
  ASSERT_TRUE(save(p.file, f));
  EXPECT_EQ(current_path(p), p.file);
  auto back = load(p);
  ASSERT_TRUE(back);
  EXPECT_EQ(back->status, "investigating");
}

TEST(DebugFile, OneHolderOfTheSessionLockAtATime) {
  test::Scratch s;
  Paths p = paths_of(s.path(), "x");
  std::string holder;
  auto first = SessionLock::try_take(p, &holder);
  ASSERT_TRUE(first);
  ASSERT_TRUE(first->has_value());
  // flock is per open file description: a second one in this process is
  // refused as another process would be.
  auto second = SessionLock::try_take(p, &holder);
  ASSERT_TRUE(second);
  EXPECT_FALSE(second->has_value());
  EXPECT_FALSE(holder.empty());
}

}  // namespace
}  // namespace devgraph::debug
