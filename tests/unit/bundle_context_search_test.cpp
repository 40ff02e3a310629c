#include "bundle/context_search.h"

#include <gtest/gtest.h>

#include <string>

namespace devgraph::bundle {
namespace {

using Words = std::vector<std::string>;

TEST(ContextSearch, AQuestionsTermsAreItsWordsWithoutStopWords) {
  auto t = question_terms("Which date format should the report use?");
  EXPECT_EQ(t.words, (Words{"date", "format", "report"}));
  EXPECT_TRUE(t.identifiers.empty());
  EXPECT_TRUE(question_terms("what is it, and should we?").empty());
}

TEST(ContextSearch, IdentifiersAndFileNamesAreKeptWhole) {
  auto t = question_terms("Does parseDate in src/report_gen.py take max_rows? See README.md");
  EXPECT_EQ(t.identifiers, (Words{"parseDate", "src/report_gen.py", "max_rows", "README.md"}));
  // Their words are terms too, each once.
  EXPECT_NE(std::find(t.words.begin(), t.words.end(), "parsedate"), t.words.end());
  EXPECT_EQ(std::count(t.words.begin(), t.words.end(), "readme"), 1);
}

TEST(ContextSearch, TheLineThatAnswersRanksFirst) {
  auto terms = question_terms("Which date format should the report use?");
  std::vector<SourceLine> lines = {
      {Source::repository, "README.md", 3, "See docs/conventions.md for the conventions."},
      {Source::repository, "src/update.sh", 7, "# update the report"},
      {Source::repository, "docs/conventions.md", 3, "Dates in reports use ISO 8601 (YYYY-MM-DD)."},
      {Source::spec, "spec.md", 2, "The weekly report lists the sales."},
  };
  auto found = rank(terms, lines, 8);
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].text(), "docs/conventions.md:3: Dates in reports use ISO 8601 (YYYY-MM-DD).");
}

TEST(ContextSearch, EqualScoresGoInTheDocumentedOrderOfSources) {
  auto terms = question_terms("greeting punctuation");
  std::vector<SourceLine> lines = {
      {Source::artifact, "T1/developer.result.json", 1, "greeting punctuation fixed"},
      {Source::repository, "b.md", 1, "Greeting punctuation: a full stop."},
      {Source::plan, "plan.md", 4, "greeting and its punctuation"},
      {Source::repository, "a.md", 9, "greeting punctuation"},
  };
  auto found = rank(terms, lines, 3);
  ASSERT_EQ(found.size(), 3u);
  EXPECT_EQ(found[0].path, "plan.md");
  EXPECT_EQ(found[1].path, "a.md");
  EXPECT_EQ(found[2].path, "b.md");
}

TEST(ContextSearch, AnIdentifierAloneIsEnoughAndEachPlaceComesOnce) {
  auto terms = question_terms("what does max_rows default to?");
  std::vector<SourceLine> lines = {
      {Source::repository, "src/a.py", 4, "MAX_ROWS = 100"},
      {Source::repository, "src/a.py", 4, "MAX_ROWS = 100"},
      {Source::repository, "src/b.py", 1, "rows = []"},
  };
  auto found = rank(terms, lines, 8);
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].path, "src/a.py");
}

TEST(ContextSearch, PointersAreBoundedAndExcerptsClippedToOneLine) {
  auto terms = question_terms("colour");
  std::vector<SourceLine> lines;
  for (int i = 1; i <= 20; ++i)
    lines.push_back({Source::repository, "f.md", i, "colour\t" + std::string(300, 'x')});
  auto found = rank(terms, lines, 5);
  ASSERT_EQ(found.size(), 5u);
  EXPECT_LE(found[0].excerpt.size(), 163u);
  EXPECT_EQ(found[0].excerpt.find('\t'), std::string::npos);
  EXPECT_TRUE(rank(terms, lines, 0).empty());
  EXPECT_TRUE(rank(SearchTerms{}, lines, 5).empty());
}

TEST(ContextSearch, GrepSearchesFixedStringsAndItsAnswerIsRead) {
  auto args = grep_args(question_terms("date format"), 20);
  EXPECT_EQ(args, (Words{"grep", "-n", "-z", "-I", "-i", "-F", "--max-count=20", "-e", "date", "-e",
                         "format", "--"}));
  std::string out = std::string("docs/a:b.md") + '\0' + "3" + '\0' + "Dates: ISO\n" +
                    "garbage line\n" + "x" + '\0' + "notanumber" + '\0' + "y\n";
  auto lines = parse_grep(out);
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(lines[0].path, "docs/a:b.md");
  EXPECT_EQ(lines[0].line, 3);
  EXPECT_EQ(lines[0].text, "Dates: ISO");
}

TEST(ContextSearch, TextBecomesNumberedLines) {
  auto lines = lines_of(Source::plan, "plan.md", "# Plan\n\nSay hello.\n");
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[1].line, 3);
  EXPECT_EQ(lines[1].text, "Say hello.");
}

}  // namespace
}  // namespace devgraph::bundle
