// LocalIssues in process: the file format byte for byte, round trips of
// hostile text, numbering, close and reopen, deliveries, refusals that
// leave the directory as it was, corrupt files, and many writers at once.
#include "issues/local_store.h"

#include <gtest/gtest.h>

#include <unistd.h>

#include <chrono>
#include <fstream>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "support/test_util.h"

namespace devgraph::issues {
namespace {

class SetClock final : public Clock {
 public:
  std::chrono::system_clock::time_point wall() const override { return now; }
  std::chrono::steady_clock::time_point steady() const override { return {}; }
  std::chrono::system_clock::time_point now{std::chrono::seconds(1'796'154'289)};
};

class LocalIssuesTest : public ::testing::Test {
 protected:
  std::string dir() const { return scratch_ / "develop/issues"; }
  LocalIssues store() const { return LocalIssues(dir(), clock_); }

  Issue create(NewIssue n) {
    auto made = store().create(n);
    EXPECT_TRUE(made.ok()) << made.error().message;
    return made.ok() ? *made : Issue{};
  }

  test::Scratch scratch_;
  SetClock clock_;
};

void expect_same(const Issue& a, const Issue& b) {
  EXPECT_EQ(a.number, b.number);
  EXPECT_EQ(a.title, b.title);
  EXPECT_EQ(a.body, b.body);
  EXPECT_EQ(a.state, b.state);
  EXPECT_EQ(a.labels, b.labels);
  EXPECT_EQ(a.parent, b.parent);
  EXPECT_EQ(a.priority, b.priority);
  EXPECT_EQ(a.created, b.created);
  EXPECT_EQ(a.updated, b.updated);
  EXPECT_EQ(a.branch, b.branch);
  EXPECT_EQ(a.head, b.head);
  EXPECT_EQ(a.close_reason, b.close_reason);
}

TEST_F(LocalIssuesTest, WritesTheDocumentedFormat) {
  create({"Add a --json flag", "The list verb\nneeds JSON.\n", {"devgraph", "cli"}, 1, "P1"});
  EXPECT_EQ(test::slurp(dir() + "/1.md"),
            "---\n"
            "number: 1\n"
            "title: \"Add a --json flag\"\n"
            "state: \"open\"\n"
            "labels: [\"devgraph\", \"cli\"]\n"
            "parent: 1\n"
            "priority: \"P1\"\n"
            "created: \"2026-12-01T19:44:49+00:00\"\n"
            "---\n"
            "The list verb\nneeds JSON.\n");
  create({"Bare", "", {}, std::nullopt, ""});
  EXPECT_EQ(test::slurp(dir() + "/2.md"),
            "---\n"
            "number: 2\n"
            "title: \"Bare\"\n"
            "state: \"open\"\n"
            "labels: []\n"
            "created: \"2026-12-01T19:44:49+00:00\"\n"
            "---\n");
  EXPECT_EQ(test::entries(dir()), ".lock\n1.md\n2.md\n");
}

TEST_F(LocalIssuesTest, RoundTripsHostileTitlesAndBodies) {
  const std::vector<std::string> titles = {
      "She said \"hi\" \\ and left",
      "two\nlines\r\nand a tab\t",
      "---",
      "title: \"not this\"\n---\nnumber: 9",
      "Ünïcödé ✓ 🚀 日本語",
      std::string("nul \0 and escape \x1b[31m", 22),
  };
  const std::vector<std::string> bodies = {
      "---\nnumber: 99\ntitle: \"forged\"\nstate: \"closed\"\n---\nafter\n---\n",
      "",
      "no final newline",
      "\r\ncrlf\r\n",
      "\xff\xfe not UTF-8 \xc3",
      std::string("\0\n---", 5),
      "Part of #4\n",
  };
  std::vector<Issue> made;
  for (size_t i = 0; i < titles.size(); ++i)
    for (size_t j = 0; j < bodies.size(); ++j)
      made.push_back(create({titles[i], bodies[j], {"ü", "a:b"}, std::nullopt, ""}));
  auto all = LocalIssues(dir()).list();
  ASSERT_TRUE(all.ok()) << all.error().message;
  ASSERT_EQ(all->size(), made.size());
  for (size_t k = 0; k < made.size(); ++k) {
    SCOPED_TRACE(k);
    EXPECT_EQ(made[k].number, static_cast<long long>(k + 1));
    EXPECT_EQ(made[k].title, titles[k / bodies.size()]);
    EXPECT_EQ(made[k].body, bodies[k % bodies.size()]);
    expect_same((*all)[k], made[k]);
    auto one = store().get(made[k].number);
    ASSERT_TRUE(one.ok()) << one.error().message;
    expect_same(*one, made[k]);
  }
}

TEST_F(LocalIssuesTest, TheBodyIsEveryByteAfterTheClosingLine) {
  auto issue = create({"t", "line\n", {}, std::nullopt, ""});
  const std::string file = test::slurp(dir() + "/1.md");
  EXPECT_EQ(file.substr(file.size() - 9), "---\nline\n");
  // A hand-written file whose front matter ends the file has no body.
  test::write_text(dir() + "/2.md",
                   "---\nnumber: 2\ntitle: \"t\"\nstate: \"open\"\ncreated: \"x\"\n---");
  auto two = store().get(2);
  ASSERT_TRUE(two.ok()) << two.error().message;
  EXPECT_EQ(two->body, "");
  EXPECT_TRUE(two->labels.empty());
}

TEST_F(LocalIssuesTest, NumbersFollowTheHighestIssueFile) {
  EXPECT_EQ(create({"one", "", {}, std::nullopt, ""}).number, 1);
  EXPECT_EQ(create({"two", "", {}, std::nullopt, ""}).number, 2);
  test::write_text(dir() + "/7.md",
                   "---\nnumber: 7\ntitle: \"by hand\"\nstate: \"open\"\ncreated: \"x\"\n---\n");
  // Not issue files: they neither count nor are read.
  for (const char* other : {"9.md~", ".9.md.swp", "10.md.bak", "x.md", "12.MD", "13", "1a.md"})
    test::write_text(dir() + "/" + other, "junk");
  EXPECT_EQ(create({"three", "", {}, std::nullopt, ""}).number, 8);
  auto all = store().list();
  ASSERT_TRUE(all.ok()) << all.error().message;
  std::vector<long long> numbers;
  for (const auto& i : *all) numbers.push_back(i.number);
  EXPECT_EQ(numbers, (std::vector<long long>{1, 2, 7, 8}));
}

TEST_F(LocalIssuesTest, StampsCreationWithTheClock) {
  auto first = create({"one", "", {}, std::nullopt, ""});
  EXPECT_EQ(first.created, "2026-12-01T19:44:49+00:00");
  EXPECT_EQ(first.updated, "");
  clock_.now += std::chrono::hours(24);
  EXPECT_EQ(create({"two", "", {}, std::nullopt, ""}).created, "2026-12-02T19:44:49+00:00");
}

TEST_F(LocalIssuesTest, AMissingDirectoryHoldsNoIssuesAndIsNotCreatedByReads) {
  auto all = store().list();
  ASSERT_TRUE(all.ok()) << all.error().message;
  EXPECT_TRUE(all->empty());
  auto one = store().get(1);
  ASSERT_FALSE(one.ok());
  EXPECT_EQ(one.error().kind, ErrorKind::not_found);
  for (auto result : {store().close(1, "x"), store().reopen(1),
                      store().record_delivery(1, "develop/b1", "0123abcd")}) {
    ASSERT_FALSE(result.ok());
    EXPECT_EQ(result.error().kind, ErrorKind::not_found);
  }
  EXPECT_FALSE(path_exists(dir()));
  EXPECT_EQ(test::entries(scratch_.path()), "");
}

TEST_F(LocalIssuesTest, RefusesBadInputAndWritesNothing) {
  const std::string long_label(65, 'l');
  const std::vector<NewIssue> bad = {
      {"", "", {}, std::nullopt, ""},
      {" \t\n ", "", {}, std::nullopt, ""},
      {"\u00a0\u3000", "", {}, std::nullopt, ""},
      {std::string(257, 't'), "", {}, std::nullopt, ""},
      {"bad \xff utf-8", "", {}, std::nullopt, ""},
      {"t", "", {"a,b"}, std::nullopt, ""},
      {"t", "", {"a b"}, std::nullopt, ""},
      {"t", "", {"a\tb"}, std::nullopt, ""},
      {"t", "", {"a\nb"}, std::nullopt, ""},
      {"t", "", {"a\u00a0b"}, std::nullopt, ""},
      {"t", "", {"a\x7f"}, std::nullopt, ""},
      {"t", "", {""}, std::nullopt, ""},
      {"t", "", {long_label}, std::nullopt, ""},
      {"t", "", {"\xc3"}, std::nullopt, ""},
      {"t", "", {"same", "same"}, std::nullopt, ""},
      {"t", "", {}, 0, ""},
      {"t", "", {}, -3, ""},
      {"t", "", {}, std::nullopt, "P3"},
      {"t", "", {}, std::nullopt, "p1"},
  };
  for (size_t k = 0; k < bad.size(); ++k) {
    SCOPED_TRACE(k);
    auto made = store().create(bad[k]);
    ASSERT_FALSE(made.ok());
    EXPECT_EQ(made.error().kind, ErrorKind::usage);
    EXPECT_EQ(made.error().message.find('\n'), std::string::npos) << made.error().message;
    EXPECT_FALSE(check_new_issue(bad[k]).ok());
  }
  EXPECT_FALSE(path_exists(dir()));
  // The limits themselves are accepted.
  EXPECT_EQ(create({std::string(256, 't'), "", {std::string(64, 'l')}, 5, "P0"}).number, 1);
}

TEST_F(LocalIssuesTest, ClosesAndReopens) {
  create({"t", "b", {}, std::nullopt, ""});
  clock_.now += std::chrono::seconds(60);
  auto closed = store().close(1, "done in \"b1\"\nsee the log");
  ASSERT_TRUE(closed.ok()) << closed.error().message;
  EXPECT_EQ(closed->state, "closed");
  EXPECT_EQ(closed->close_reason, "done in \"b1\"\nsee the log");
  EXPECT_EQ(closed->updated, "2026-12-01T19:45:49+00:00");
  auto read = store().get(1);
  ASSERT_TRUE(read.ok());
  expect_same(*read, *closed);

  // Closing again changes nothing, not even the file.
  const std::string before = test::slurp(dir() + "/1.md");
  clock_.now += std::chrono::seconds(60);
  auto again = store().close(1, "another reason");
  ASSERT_TRUE(again.ok()) << again.error().message;
  EXPECT_EQ(again->close_reason, "done in \"b1\"\nsee the log");
  EXPECT_EQ(test::slurp(dir() + "/1.md"), before);

  auto reopened = store().reopen(1);
  ASSERT_TRUE(reopened.ok()) << reopened.error().message;
  EXPECT_EQ(reopened->state, "open");
  EXPECT_EQ(reopened->close_reason, "");
  EXPECT_EQ(reopened->updated, "2026-12-01T19:46:49+00:00");
  EXPECT_EQ(test::slurp(dir() + "/1.md").find("close_reason"), std::string::npos);
  const std::string open = test::slurp(dir() + "/1.md");
  ASSERT_TRUE(store().reopen(1).ok());
  EXPECT_EQ(test::slurp(dir() + "/1.md"), open);

  auto missing = store().close(2, "");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().kind, ErrorKind::not_found);
  auto zero = store().get(0);
  ASSERT_FALSE(zero.ok());
  EXPECT_EQ(zero.error().kind, ErrorKind::usage);
}

TEST_F(LocalIssuesTest, RecordsADelivery) {
  create({"t", "body\n", {"x"}, 3, ""});
  const std::string head = "0123456789abcdef0123456789abcdef01234567";
  auto delivered = store().record_delivery(1, "develop/b2-add-a-json-flag", head);
  ASSERT_TRUE(delivered.ok()) << delivered.error().message;
  EXPECT_EQ(delivered->branch, "develop/b2-add-a-json-flag");
  EXPECT_EQ(delivered->head, head);
  EXPECT_EQ(delivered->state, "open");
  auto read = store().get(1);
  ASSERT_TRUE(read.ok()) << read.error().message;
  expect_same(*read, *delivered);
  EXPECT_EQ(read->body, "body\n");
  EXPECT_NE(test::slurp(dir() + "/1.md")
                .find("branch: \"develop/b2-add-a-json-flag\"\nhead: \"" + head + "\"\n---\n"),
            std::string::npos);

  const std::string before = test::slurp(dir() + "/1.md");
  for (auto [branch, h] :
       std::vector<std::pair<std::string, std::string>>{{"", head},
                                                        {"has space", head},
                                                        {"-x", head},
                                                        {"a\nb", head},
                                                        {"develop/b2", "XYZ"},
                                                        {"develop/b2", "0123ABCD"},
                                                        {"develop/b2", "012345"},
                                                        {"develop/b2", std::string(65, 'a')}}) {
    auto refused = store().record_delivery(1, branch, h);
    ASSERT_FALSE(refused.ok()) << branch << " " << h;
    EXPECT_EQ(refused.error().kind, ErrorKind::usage);
    EXPECT_EQ(refused.error().message.find('\n'), std::string::npos);
  }
  clock_.now += std::chrono::seconds(5);
  ASSERT_TRUE(store().record_delivery(1, "develop/b2-add-a-json-flag", head).ok());
  EXPECT_EQ(test::slurp(dir() + "/1.md"), before);
}

TEST_F(LocalIssuesTest, ParentAndPriorityFallBackToTheBodyAndLabels) {
  auto derived = create({"t", "Intro\nPart of #12\n", {"bug", "priority/P0"}, std::nullopt, ""});
  EXPECT_EQ(derived.parent, 12);
  EXPECT_EQ(derived.priority, "P0");
  // Only the front matter's own values are written.
  const std::string file = test::slurp(dir() + "/1.md");
  EXPECT_EQ(file.find("parent:"), std::string::npos);
  EXPECT_EQ(file.find("priority:"), std::string::npos);
  ASSERT_TRUE(store().close(1, "").ok());
  EXPECT_EQ(test::slurp(dir() + "/1.md").find("parent:"), std::string::npos);

  auto given = create({"t", "Part of #12\n", {"P0"}, 4, "P2"});
  EXPECT_EQ(given.parent, 4);
  EXPECT_EQ(given.priority, "P2");
}

struct Corrupt {
  const char* what;
  std::string text;
};

TEST_F(LocalIssuesTest, ACorruptFileIsAnErrorNamingIt) {
  const std::string good_tail = "state: \"open\"\ncreated: \"x\"\n---\nbody\n";
  const std::vector<Corrupt> cases = {
      {"empty", ""},
      {"no front matter", "just text\n"},
      {"not closed", "---\nnumber: 3\ntitle: \"t\"\nstate: \"open\"\ncreated: \"x\"\n"},
      {"not key: value", "---\nnumber: 3\ntitle \"t\"\n" + good_tail},
      {"capital key", "---\nNumber: 3\ntitle: \"t\"\n" + good_tail},
      {"bare string", "---\nnumber: 3\ntitle: t\n" + good_tail},
      {"unknown key", "---\nnumber: 3\ntitle: \"t\"\nowner: \"me\"\n" + good_tail},
      {"repeated key", "---\nnumber: 3\ntitle: \"t\"\ntitle: \"u\"\n" + good_tail},
      {"no title", "---\nnumber: 3\n" + good_tail},
      {"empty title", "---\nnumber: 3\ntitle: \"  \"\n" + good_tail},
      {"no number", "---\ntitle: \"t\"\n" + good_tail},
      {"wrong number", "---\nnumber: 4\ntitle: \"t\"\n" + good_tail},
      {"number as text", "---\nnumber: \"3\"\ntitle: \"t\"\n" + good_tail},
      {"fractional number", "---\nnumber: 3.0\ntitle: \"t\"\n" + good_tail},
      {"unknown state", "---\nnumber: 3\ntitle: \"t\"\nstate: \"pending\"\ncreated: \"x\"\n---\n"},
      {"labels not a list", "---\nnumber: 3\ntitle: \"t\"\nlabels: \"a\"\n" + good_tail},
      {"bad label", "---\nnumber: 3\ntitle: \"t\"\nlabels: [\"a b\"]\n" + good_tail},
      {"parent as text", "---\nnumber: 3\ntitle: \"t\"\nparent: \"1\"\n" + good_tail},
      {"negative parent", "---\nnumber: 3\ntitle: \"t\"\nparent: -1\n" + good_tail},
      {"bad priority", "---\nnumber: 3\ntitle: \"t\"\npriority: \"P9\"\n" + good_tail},
      {"huge parent", "---\nnumber: 3\ntitle: \"t\"\nparent: 18446744073709551615\n" + good_tail},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.what);
    ASSERT_TRUE(remove_tree(dir()).ok());
    ASSERT_TRUE(make_directories(dir()).ok());
    test::write_text(dir() + "/3.md", c.text);
    auto all = store().list();
    ASSERT_FALSE(all.ok());
    EXPECT_EQ(all.error().kind, ErrorKind::internal);
    EXPECT_NE(all.error().message.find(dir() + "/3.md"), std::string::npos) << all.error().message;
    EXPECT_EQ(all.error().message.find('\n'), std::string::npos) << all.error().message;
    auto one = store().get(3);
    ASSERT_FALSE(one.ok());
    EXPECT_EQ(one.error().kind, ErrorKind::internal);
    // A write refuses it too, and leaves it as it was.
    auto closed = store().close(3, "");
    ASSERT_FALSE(closed.ok());
    EXPECT_EQ(test::slurp(dir() + "/3.md"), c.text);
  }
}

TEST_F(LocalIssuesTest, AFileNotNamedAfterItsNumberIsCorrupt) {
  ASSERT_TRUE(make_directories(dir()).ok());
  test::write_text(dir() + "/03.md",
                   "---\nnumber: 3\ntitle: \"t\"\nstate: \"open\"\ncreated: \"x\"\n---\n");
  auto all = store().list();
  ASSERT_FALSE(all.ok());
  EXPECT_NE(all.error().message.find("03.md"), std::string::npos) << all.error().message;
  ASSERT_TRUE(remove_tree(dir()).ok());
  ASSERT_TRUE(make_directories(dir()).ok());
  test::write_text(dir() + "/0.md", "---\n---\n");
  all = store().list();
  ASSERT_FALSE(all.ok());
  EXPECT_NE(all.error().message.find("0.md"), std::string::npos) << all.error().message;
}

TEST_F(LocalIssuesTest, CreateRemovesTheTemporaryFilesOfKilledWriters) {
  ASSERT_TRUE(make_directories(dir()).ok());
  test::write_text(dir() + "/1.md.tmp.999.0", "---\nnumber: 1\n");
  auto all = store().list();
  ASSERT_TRUE(all.ok()) << all.error().message;
  EXPECT_TRUE(all->empty());
  create({"t", "", {}, std::nullopt, ""});
  EXPECT_EQ(test::entries(dir()), ".lock\n1.md\n");
}

TEST_F(LocalIssuesTest, WritersAtOnceGetDistinctNumbersAndLoseNothing) {
  // Two stores over one directory, as two processes would have; each
  // create() takes the lock on its own descriptor, so the threads exclude
  // each other as processes do.
  LocalIssues a(dir(), clock_);
  LocalIssues b(dir(), clock_);
  constexpr int kThreads = 8;
  constexpr int kEach = 20;
  std::vector<std::vector<long long>> got(kThreads);
  std::vector<std::string> errors(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      LocalIssues& s = t % 2 ? a : b;
      for (int k = 0; k < kEach; ++k) {
        auto made = s.create({"t" + std::to_string(t) + "-" + std::to_string(k), "", {}, {}, ""});
        if (!made) {
          errors[t] = made.error().message;
          return;
        }
        got[t].push_back(made->number);
        // A close from another writer in between.
        if (k % 5 == 0 && !s.close(made->number, "r").ok()) errors[t] = "close failed";
      }
    });
  for (auto& th : threads) th.join();
  std::set<long long> numbers;
  for (int t = 0; t < kThreads; ++t) {
    EXPECT_EQ(errors[t], "");
    numbers.insert(got[t].begin(), got[t].end());
  }
  ASSERT_EQ(numbers.size(), static_cast<size_t>(kThreads * kEach));
  EXPECT_EQ(*numbers.begin(), 1);
  EXPECT_EQ(*numbers.rbegin(), kThreads * kEach);
  auto all = a.list();
  ASSERT_TRUE(all.ok()) << all.error().message;
  ASSERT_EQ(all->size(), static_cast<size_t>(kThreads * kEach));
  std::set<std::string> titles;
  for (const auto& i : *all) titles.insert(i.title);
  EXPECT_EQ(titles.size(), static_cast<size_t>(kThreads * kEach));
}

}  // namespace
}  // namespace devgraph::issues

namespace devgraph::issues {
namespace {

// The system's clock shifted: a second ahead, every file written before is
// old enough for its identity to tell a later change.
class ShiftedClock final : public Clock {
 public:
  explicit ShiftedClock(std::chrono::seconds shift) : shift_(shift) {}
  std::chrono::system_clock::time_point wall() const override {
    return std::chrono::system_clock::now() + shift_;
  }
  std::chrono::steady_clock::time_point steady() const override { return {}; }

 private:
  std::chrono::seconds shift_;
};

TEST_F(LocalIssuesTest, AListingThatKeepsReadsReadsOnlyTheFilesThatChanged) {
  for (const char* t : {"alpha", "beta", "gamma"}) create({t, "body", {}, std::nullopt, ""});
  ShiftedClock ahead(std::chrono::seconds(1));
  LocalIssues reader(dir(), ahead);
  reader.cache_reads(true);
  ASSERT_TRUE(reader.list());
  EXPECT_EQ(reader.file_reads(), 3u);
  auto again = reader.list();
  ASSERT_TRUE(again);
  EXPECT_EQ(reader.file_reads(), 3u);
  ASSERT_EQ(again->size(), 3u);
  EXPECT_EQ((*again)[1].title, "beta");
  // A write by another process (a new file) and an edit in place.
  ASSERT_TRUE(store().close(2, "done"));
  std::string three = test::slurp(reader.path_of(3));
  size_t at = three.find("gamma");
  ASSERT_NE(at, std::string::npos);
  three.replace(at, 5, "delta");
  {
    std::ofstream f(reader.path_of(3), std::ios::in | std::ios::out | std::ios::binary);
    f << three;
  }
  auto changed = reader.list();
  ASSERT_TRUE(changed);
  EXPECT_EQ(reader.file_reads(), 5u);
  EXPECT_EQ((*changed)[1].state, "closed");
  EXPECT_EQ((*changed)[2].title, "delta");
  // A removed file is gone from the listing; a new one is read.
  ASSERT_EQ(::unlink(reader.path_of(1).c_str()), 0);
  create({"epsilon", "", {}, std::nullopt, ""});
  auto now = reader.list();
  ASSERT_TRUE(now);
  ASSERT_EQ(now->size(), 3u);
  EXPECT_EQ((*now)[2].title, "epsilon");
  EXPECT_EQ(reader.file_reads(), 6u);
}

TEST_F(LocalIssuesTest, AFileChangedJustBeforeItWasListedIsReadAgain) {
  create({"alpha", "", {}, std::nullopt, ""});
  // A clock a second behind: the file is never old enough when read.
  ShiftedClock behind(std::chrono::seconds(-1));
  LocalIssues reader(dir(), behind);
  reader.cache_reads(true);
  ASSERT_TRUE(reader.list());
  ASSERT_TRUE(reader.list());
  EXPECT_EQ(reader.file_reads(), 2u);
  // Without cache_reads every listing reads every file.
  LocalIssues plain(dir());
  ASSERT_TRUE(plain.list());
  ASSERT_TRUE(plain.list());
  EXPECT_EQ(plain.file_reads(), 2u);
}

}  // namespace
}  // namespace devgraph::issues
