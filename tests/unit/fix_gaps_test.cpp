#include "fix/gaps.h"

#include <gtest/gtest.h>

namespace devgraph::fix {
namespace {

Gap gap(Severity s, std::string file, std::optional<int> line, std::string description) {
  Gap g;
  g.severity = s;
  g.file = std::move(file);
  g.line = line;
  g.description = std::move(description);
  return g;
}

Json result_with(const Json& findings, const std::string& status = "DONE_WITH_CONCERNS") {
  return Json{{"status", status}, {"summary", "reviewed"}, {"findings", findings}};
}

TEST(FixGaps, SeverityNamesAndReviewerWords) {
  struct Row {
    std::string text;
    std::optional<Severity> want;
  };
  const Row rows[] = {
      {"CRITICAL", Severity::critical}, {"critical", Severity::critical},
      {"Critical", Severity::critical}, {"HIGH", Severity::high},
      {"high", Severity::high},         {"Important", Severity::high},
      {"IMPORTANT", Severity::high},    {"MEDIUM", Severity::medium},
      {"Medium", Severity::medium},     {"Minor", Severity::medium},
      {"LOW", Severity::low},           {"low", Severity::low},
      {"Major", std::nullopt},          {"", std::nullopt},
      {"HIGHEST", std::nullopt},        {"info", std::nullopt},
  };
  for (const auto& row : rows) EXPECT_EQ(severity_from(row.text), row.want) << row.text;
  EXPECT_EQ(severity_name(Severity::critical), "CRITICAL");
  EXPECT_EQ(severity_name(Severity::high), "HIGH");
  EXPECT_EQ(severity_name(Severity::medium), "MEDIUM");
  EXPECT_EQ(severity_name(Severity::low), "LOW");
  EXPECT_EQ(verdict_name(Verdict::ship), "SHIP");
  EXPECT_EQ(verdict_name(Verdict::fix_first), "FIX-FIRST");
  EXPECT_EQ(verdict_name(Verdict::blocked), "BLOCKED");
}

TEST(FixGaps, BlockingIsCriticalOrHigh) {
  EXPECT_TRUE(gap(Severity::critical, "a", {}, "x").blocking());
  EXPECT_TRUE(gap(Severity::high, "a", {}, "x").blocking());
  EXPECT_FALSE(gap(Severity::medium, "a", {}, "x").blocking());
  EXPECT_FALSE(gap(Severity::low, "a", {}, "x").blocking());
}

TEST(FixGaps, ResultFindingsBecomeGapsAndDecideTheVerdict) {
  auto r = review_from_result(result_with(Json::parse(R"([
      {"severity": "Important", "file": "src/net/retry.cpp", "line": 58,
       "description": "catch (...) {} swallows the error", "suggestion": "return it"},
      {"severity": "Minor", "file": "src/a.cpp", "issue": "unused include"}])")));
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->verdict, Verdict::fix_first);
  ASSERT_EQ(r->gaps.size(), 2u);
  EXPECT_EQ(r->gaps[0],
            gap(Severity::high, "src/net/retry.cpp", 58, "catch (...) {} swallows the error"));
  EXPECT_EQ(r->gaps[1], gap(Severity::medium, "src/a.cpp", std::nullopt, "unused include"));
  EXPECT_TRUE(r->reason.empty());
}

TEST(FixGaps, VerdictFromSeverities) {
  struct Row {
    std::vector<std::string> severities;
    Verdict want;
  };
  const Row rows[] = {
      {{}, Verdict::ship},
      {{"LOW"}, Verdict::ship},
      {{"Minor", "MEDIUM", "LOW"}, Verdict::ship},
      {{"Minor", "HIGH"}, Verdict::fix_first},
      {{"Critical"}, Verdict::fix_first},
  };
  for (const auto& row : rows) {
    Json findings = Json::array();
    for (const auto& s : row.severities)
      findings.push_back({{"severity", s}, {"file", "f.cpp"}, {"description", "d"}});
    auto r = review_from_result(result_with(findings));
    ASSERT_TRUE(r) << r.error().message;
    EXPECT_EQ(r->verdict, row.want) << findings.dump();
    EXPECT_EQ(r->gaps.size(), row.severities.size());
  }
}

TEST(FixGaps, DescriptionStandIns) {
  struct Row {
    Json finding;
    std::string want;
  };
  const Row rows[] = {
      {{{"severity", "HIGH"}, {"file", "f"}, {"description", "d"}, {"issue", "i"}}, "d"},
      {{{"severity", "HIGH"}, {"file", "f"}, {"issue", "i"}, {"title", "t"}}, "i"},
      {{{"severity", "HIGH"}, {"file", "f"}, {"title", "t"}, {"summary", "s"}}, "t"},
      {{{"severity", "HIGH"}, {"file", "f"}, {"summary", "s"}}, "s"},
      {{{"severity", "HIGH"}, {"file", "f"}, {"description", ""}, {"issue", "i"}}, "i"},
  };
  for (const auto& row : rows) {
    auto r = review_from_result(result_with(Json::array({row.finding})));
    ASSERT_TRUE(r) << r.error().message;
    ASSERT_EQ(r->gaps.size(), 1u);
    EXPECT_EQ(r->gaps[0].description, row.want);
  }
}

TEST(FixGaps, BadFindingsAreErrorsNamingTheirIndex) {
  struct Row {
    Json finding;
    std::string message;
  };
  const Row rows[] = {
      {"a string", "finding 1 must be an object"},
      {{{"severity", "HIGH"}, {"description", "d"}}, "finding 1 has no file"},
      {{{"severity", "HIGH"}, {"file", ""}, {"description", "d"}}, "finding 1 has no file"},
      {{{"severity", "HIGH"}, {"file", "src/x.cpp"}}, "finding 1 (src/x.cpp) has no description"},
      {{{"severity", "HIGH"}, {"file", "src/x.cpp"}, {"description", "  "}},
       "finding 1 (src/x.cpp) has no description"},
      {{{"file", "src/x.cpp"}, {"description", "d"}}, "finding 1 (src/x.cpp) has no severity"},
      {{{"severity", "Major"}, {"file", "src/x.cpp"}, {"description", "d"}},
       "finding 1 (src/x.cpp): unknown severity \"Major\""},
      {{{"severity", "HIGH"}, {"file", "src/x.cpp"}, {"description", "d"}, {"line", "12"}},
       "finding 1 (src/x.cpp): line must be a positive integer"},
      {{{"severity", "HIGH"}, {"file", "src/x.cpp"}, {"description", "d"}, {"line", 0}},
       "finding 1 (src/x.cpp): line must be a positive integer"},
  };
  for (const auto& row : rows) {
    Json findings = Json::array();
    findings.push_back({{"severity", "LOW"}, {"file", "ok.cpp"}, {"description", "fine"}});
    findings.push_back(row.finding);
    auto r = review_from_result(result_with(findings));
    ASSERT_FALSE(r) << row.finding.dump();
    EXPECT_EQ(r.error().kind, ErrorKind::usage);
    EXPECT_NE(r.error().message.find(row.message), std::string::npos) << r.error().message;
    EXPECT_EQ(r.error().message.find('\n'), std::string::npos);
  }
  auto not_array = review_from_result(Json{{"status", "DONE"}, {"findings", "none"}});
  EXPECT_FALSE(not_array);
  EXPECT_FALSE(review_from_result(Json::array()));
}

TEST(FixGaps, ReviewerBlockedOrNeedsContextIsBlockedWithItsReason) {
  auto blocked = review_from_result(Json::parse(R"({"status": "BLOCKED", "summary": "s",
      "blockers": ["the diff is empty", "no brief"], "findings": []})"));
  ASSERT_TRUE(blocked) << blocked.error().message;
  EXPECT_EQ(blocked->verdict, Verdict::blocked);
  EXPECT_EQ(blocked->reason, "the diff is empty; no brief");

  auto context = review_from_result(Json::parse(R"({"status": "NEEDS_CONTEXT",
      "summary": "s", "missing_context": ["the spec\nfile"],
      "findings": [{"severity": "HIGH", "file": "f", "description": "d"}]})"));
  ASSERT_TRUE(context) << context.error().message;
  EXPECT_EQ(context->verdict, Verdict::blocked);
  EXPECT_EQ(context->reason, "the spec file");
  EXPECT_EQ(context->gaps.size(), 1u);

  auto bare = review_from_result(Json::parse(R"({"status": "BLOCKED", "summary": "no diff"})"));
  ASSERT_TRUE(bare);
  EXPECT_EQ(bare->reason, "no diff");
}

TEST(FixGaps, MarkdownLines) {
  struct Row {
    std::string line;
    Gap want;
  };
  const Row rows[] = {
      {"- [HIGH] swallows the error \xE2\x80\x94 src/a.cpp:12",
       gap(Severity::high, "src/a.cpp", 12, "swallows the error")},
      {"- [HIGH] swallows the error \xE2\x80\x94 src/a.cpp",
       gap(Severity::high, "src/a.cpp", std::nullopt, "swallows the error")},
      {"- [Critical] stub returns ok -- src/b.cpp:3",
       gap(Severity::critical, "src/b.cpp", 3, "stub returns ok")},
      {"- [minor] dead code -- src/b.cpp",
       gap(Severity::medium, "src/b.cpp", std::nullopt, "dead code")},
      {"  - [Important] a -- b \xE2\x80\x94 `src/c.cpp:7`  ",
       gap(Severity::high, "src/c.cpp", 7, "a -- b")},
      {"- [LOW] the last separator wins \xE2\x80\x94 x -- src/d.cpp:1",
       gap(Severity::low, "src/d.cpp", 1, "the last separator wins \xE2\x80\x94 x")},
  };
  for (const auto& row : rows) {
    auto r = parse_review_file("# Review\n\n" + row.line + "\n");
    ASSERT_TRUE(r) << row.line << ": " << r.error().message;
    ASSERT_EQ(r->gaps.size(), 1u) << row.line;
    EXPECT_EQ(r->gaps[0], row.want) << row.line;
    EXPECT_EQ(r->verdict, row.want.blocking() ? Verdict::fix_first : Verdict::ship);
  }
}

TEST(FixGaps, MarkdownErrorsNameTheLine) {
  struct Row {
    std::string text;
    std::string message;
  };
  const Row rows[] = {
      {"ok\n- [HIGH] no file here\n", "line 2: no file"},
      {"- [HIGH] \xE2\x80\x94 src/a.cpp:1\n", "line 1 (src/a.cpp) has no description"},
      {"- [HIGH] desc \xE2\x80\x94 \n", "line 1 has no file"},
      {"- [Major] desc -- src/a.cpp\n", "line 1 (src/a.cpp): unknown severity 'Major'"},
      {"- [HIGH desc -- src/a.cpp\n", "line 1: no ']'"},
      {"Verdict: MAYBE\n", "line 1: verdict must be SHIP, FIX-FIRST or BLOCKED"},
      {"Verdict: SHIP\nVerdict: BLOCKED\n", "line 2: a second verdict"},
  };
  for (const auto& row : rows) {
    auto r = parse_review_file(row.text);
    ASSERT_FALSE(r) << row.text;
    EXPECT_NE(r.error().message.find(row.message), std::string::npos) << r.error().message;
  }
}

TEST(FixGaps, StatedVerdictMustAgreeWithTheGaps) {
  const std::string high = "- [HIGH] d -- f.cpp:1\n";
  const std::string low = "- [LOW] d -- f.cpp:1\n";
  struct Row {
    std::string text;
    std::optional<Verdict> want;  // nullopt: an error
  };
  const Row rows[] = {
      {"Verdict: FIX-FIRST\n" + high, Verdict::fix_first},
      {"Verdict: FIX-FIRST\n" + low, std::nullopt},
      {"Verdict: FIX-FIRST\n", std::nullopt},
      {"Verdict: SHIP\n" + low, Verdict::ship},
      {"Verdict: SHIP\n", Verdict::ship},
      {"verdict: ship\n" + high, std::nullopt},
      {"Verdict: BLOCKED\n" + high, Verdict::blocked},
      {"Verdict: BLOCKED\n", Verdict::blocked},
      {high, Verdict::fix_first},
      {low, Verdict::ship},
  };
  for (const auto& row : rows) {
    auto r = parse_review_file(row.text);
    if (!row.want) {
      EXPECT_FALSE(r) << row.text;
      continue;
    }
    ASSERT_TRUE(r) << row.text << ": " << r.error().message;
    EXPECT_EQ(r->verdict, *row.want) << row.text;
  }
  auto blocked = parse_review_file("Verdict: BLOCKED\nReason: the spec is missing\n");
  ASSERT_TRUE(blocked);
  EXPECT_EQ(blocked->reason, "the spec is missing");
}

TEST(FixGaps, TextWithNothingReadIsAnError) {
  for (std::string text : {"", "   \n\t", "# Review\n\nLooks fine to me.\n"}) {
    auto r = parse_review_file(text);
    ASSERT_FALSE(r) << text;
    EXPECT_NE(r.error().message.find("nothing says"), std::string::npos) << r.error().message;
  }
}

TEST(FixGaps, JsonReviewFiles) {
  auto verdict = parse_review_file(R"({"verdict": "FIX-FIRST",
      "gaps": [{"severity": "CRITICAL", "file": "a.cpp", "line": 4, "description": "stub"}]})");
  ASSERT_TRUE(verdict) << verdict.error().message;
  EXPECT_EQ(verdict->verdict, Verdict::fix_first);
  ASSERT_EQ(verdict->gaps.size(), 1u);
  EXPECT_EQ(verdict->gaps[0], gap(Severity::critical, "a.cpp", 4, "stub"));

  auto blocked = parse_review_file(R"({"verdict": "BLOCKED", "gaps": [], "reason": "no diff"})");
  ASSERT_TRUE(blocked);
  EXPECT_EQ(blocked->verdict, Verdict::blocked);
  EXPECT_EQ(blocked->reason, "no diff");

  auto persona = parse_review_file(R"({"status": "DONE", "summary": "ok", "findings": []})");
  ASSERT_TRUE(persona) << persona.error().message;
  EXPECT_EQ(persona->verdict, Verdict::ship);

  struct Row {
    std::string text;
    std::string message;
  };
  const Row rows[] = {
      {R"({"verdict": "SHIP", "gaps": [{"severity": "HIGH", "file": "a", "description": "d"}]})",
       "says SHIP"},
      {R"({"verdict": "FIX-FIRST", "gaps": []})", "says FIX-FIRST"},
      {R"({"verdict": "LATER", "gaps": []})", "verdict must be"},
      {R"({"verdict": "SHIP", "gaps": [{"severity": "HIGH", "file": "a"}]})",
       "gap 0 (a) has no description"},
      {R"({"verdict": )", "review file"},
  };
  for (const auto& row : rows) {
    auto r = parse_review_file(row.text);
    ASSERT_FALSE(r) << row.text;
    EXPECT_NE(r.error().message.find(row.message), std::string::npos) << r.error().message;
  }
}

TEST(FixGaps, KeyIgnoresLineSeverityCaseAndPunctuation) {
  Gap a = gap(Severity::high, "src/a.cpp", 12, "Catch (...) swallows   the error!");
  Gap b = gap(Severity::critical, "src/a.cpp", 40, "catch swallows the\nerror");
  EXPECT_EQ(gap_key(a), gap_key(b));
  EXPECT_EQ(gap_key(a), "src/a.cpp|catch swallows the error");
  EXPECT_NE(gap_key(a), gap_key(gap(Severity::high, "src/b.cpp", 12, a.description)));
  EXPECT_NE(gap_key(a), gap_key(gap(Severity::high, "src/a.cpp", 12, "catch swallows errors")));
  EXPECT_EQ(gap_key(gap(Severity::low, "f", {}, "Retry 3x, not 2x")), "f|retry 3x not 2x");
}

TEST(FixGaps, SameGapsComparesOnlyBlockingGaps) {
  const Gap high = gap(Severity::high, "a.cpp", 1, "leaks the handle");
  const Gap moved = gap(Severity::critical, "a.cpp", 9, "Leaks the handle.");
  const Gap crit = gap(Severity::critical, "b.cpp", 2, "stub");
  const Gap medium = gap(Severity::medium, "c.cpp", 3, "naming");
  const Gap low = gap(Severity::low, "d.cpp", 4, "typo");
  struct Row {
    std::vector<Gap> a, b;
    bool want;
  };
  const Row rows[] = {
      {{}, {}, true},
      {{high}, {moved}, true},
      {{high, crit}, {crit, high}, true},
      {{high, medium}, {high, low}, true},
      {{medium}, {}, true},
      {{high}, {high, high}, true},
      {{high}, {crit}, false},
      {{high}, {}, false},
      {{high, crit}, {high}, false},
  };
  for (size_t i = 0; i < std::size(rows); ++i) {
    EXPECT_EQ(same_gaps(rows[i].a, rows[i].b), rows[i].want) << "row " << i;
    EXPECT_EQ(same_gaps(rows[i].b, rows[i].a), rows[i].want) << "row " << i;
  }
}

TEST(FixGaps, RenderGapIsOneLine) {
  EXPECT_EQ(render_gap(gap(Severity::high, "src/a.cpp", 12, "swallows the error")),
            "[HIGH] swallows the error \xE2\x80\x94 src/a.cpp:12");
  EXPECT_EQ(render_gap(gap(Severity::low, "src/a.cpp", {}, "two\nlines\r\nhere")),
            "[LOW] two lines here \xE2\x80\x94 src/a.cpp");
  // A rendered gap reads back as the same gap.
  Gap g = gap(Severity::medium, "src/x.cpp", 5, "naming");
  auto r = parse_review_file("- " + render_gap(g) + "\n");
  ASSERT_TRUE(r) << r.error().message;
  ASSERT_EQ(r->gaps.size(), 1u);
  EXPECT_EQ(r->gaps[0], g);
}

TEST(FixGaps, ToJsonReadsBackAsAFinding) {
  Gap with = gap(Severity::critical, "a.cpp", 3, "stub");
  EXPECT_EQ(dump_py(to_json(with)),
            R"({"severity": "CRITICAL", "file": "a.cpp", "line": 3, "description": "stub"})");
  Gap without = gap(Severity::low, "b.cpp", {}, "typo");
  EXPECT_EQ(dump_py(to_json(without)),
            R"({"severity": "LOW", "file": "b.cpp", "description": "typo"})");
  auto r = review_from_result(result_with(Json::array({to_json(with), to_json(without)})));
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->gaps, (std::vector<Gap>{with, without}));
}

}  // namespace
}  // namespace devgraph::fix
