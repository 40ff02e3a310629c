#include "orchestrator/audit.h"

#include <gtest/gtest.h>

namespace devgraph::orchestrator {
namespace {

const std::string kCommit(40, 'a');

TEST(Audit, AMergeCommitIsDiffedAgainstItsFirstParentASquashByThePrsOwnDiff) {
  AuditRange r = audit_range("abc123", 2);
  EXPECT_FALSE(r.pr_diff);
  EXPECT_EQ(r.git_range, "abc123^1..abc123");
  EXPECT_EQ(r.describe(), "abc123^1..abc123");
  r = audit_range("abc123", 1);
  EXPECT_TRUE(r.pr_diff);
  EXPECT_TRUE(r.git_range.empty());
  EXPECT_NE(r.describe().find("gh pr diff"), std::string::npos);
}

TEST(Audit, FindingsAreReadAsThePersonaContractDescribesThem) {
  auto f = parse_findings(Json::parse(R"({"status": "DONE", "findings": [
      {"severity": "High", "file": "src/a.go", "line": 91, "description": "expiry never checked",
       "evidence": "scratch revert"},
      {"severity": "Low", "file": "src/b.go", "description": "duplicate helper", "rule": "dry"}]})"));
  ASSERT_TRUE(f) << f.error().message;
  ASSERT_EQ(f->size(), 2u);
  EXPECT_EQ((*f)[0].severity, Severity::high);
  EXPECT_EQ((*f)[0].line, 91);
  EXPECT_EQ((*f)[0].evidence, "scratch revert");
  EXPECT_EQ((*f)[1].rule, "dry");
  EXPECT_FALSE((*f)[1].line);
  auto none = parse_findings(Json::parse(R"({"status": "DONE"})"));
  ASSERT_TRUE(none);
  EXPECT_TRUE(none->empty());
}

TEST(Audit, MalformedFindingsAreOneLineNamingTheEntry) {
  const std::pair<const char*, const char*> bad[] = {
      {R"({"findings": "lots"})", "findings is not an array"},
      {R"({"findings": ["a string"]})", "finding 1 is not an object"},
      {R"({"findings": [{"severity": "Severe", "file": "a", "description": "d"}]})",
       "finding 1 has no severity"},
      {R"({"findings": [{"severity": "Low", "file": "a", "description": "d"},
                        {"severity": "Low", "description": "d"}]})",
       "finding 2 names no file"},
      {R"({"findings": [{"severity": "Low", "file": "a", "description": ""}]})",
       "finding 1 has no description"},
  };
  for (const auto& [text, want] : bad) {
    auto f = parse_findings(Json::parse(text));
    ASSERT_FALSE(f) << text;
    EXPECT_NE(f.error().message.find(want), std::string::npos) << f.error().message;
    EXPECT_EQ(f.error().message.find('\n'), std::string::npos);
  }
}

TEST(Audit, AFingerprintIgnoresWhatMovesAndKeepsWhatMatters) {
  Finding a{Severity::low, "src/b.go", 12, "Duplicates strings.TrimPrefix.", "", ""};
  Finding moved = a;
  moved.line = 40;
  moved.description = "  duplicates   STRINGS trimprefix ";
  EXPECT_EQ(finding_fingerprint(a), finding_fingerprint(moved));
  EXPECT_EQ(finding_fingerprint(a).size(), 16u);
  // A pinned value: the fingerprint must not change between versions, or
  // every finding would be filed again.
  EXPECT_EQ(finding_fingerprint(a), "5da28c35ae7a5b31");
  Finding other_file = a;
  other_file.file = "src/c.go";
  Finding other_rule = a;
  other_rule.rule = "dry";
  Finding other_words = a;
  other_words.description = "duplicates strings.TrimSuffix";
  for (const auto& f : {other_file, other_rule, other_words})
    EXPECT_NE(finding_fingerprint(f), finding_fingerprint(a));
  // Fields do not run into each other.
  Finding x{Severity::low, "ab", std::nullopt, "c", "", ""};
  Finding y{Severity::low, "a", std::nullopt, "bc", "", ""};
  EXPECT_NE(finding_fingerprint(x), finding_fingerprint(y));
}

TEST(Audit, FingerprintLinesAreFoundInIssueBodies) {
  std::string fp = "0123456789abcdef";
  std::string body =
      "A finding.\n\n" + fingerprint_line(fp) + "\nmore text <!-- devgraph-finding: xyz -->";
  EXPECT_EQ(fingerprints_in(body), (std::set<std::string>{fp}));
  EXPECT_TRUE(fingerprints_in("no marks").empty());
  EXPECT_TRUE(fingerprints_in("<!-- devgraph-finding: 0123456789abcdef").empty());
}

TEST(Audit, TriageSendsSeriousFindingsToRemediationAndFilesTheRestOnce) {
  Finding crit{Severity::critical, "a", std::nullopt, "sql injection", "", ""};
  Finding high{Severity::high, "b", std::nullopt, "missing auth", "", ""};
  Finding med{Severity::medium, "c", std::nullopt, "unbounded cache", "", ""};
  Finding low{Severity::low, "d", std::nullopt, "typo in log", "", ""};
  Finding low_again = low;
  low_again.line = 7;
  Triage t = triage({crit, med, high, low, low_again}, {});
  ASSERT_EQ(t.remediation.size(), 2u);
  EXPECT_EQ(t.remediation[0].description, "sql injection");
  ASSERT_EQ(t.issues.size(), 2u) << "the same finding twice in one window is one issue";
  EXPECT_EQ(t.already_filed, 0u);
  // A second audit of the same code files nothing new.
  std::set<std::string> filed;
  for (const auto& f : t.issues) filed.insert(finding_fingerprint(f));
  Triage again = triage({med, low, crit}, filed);
  EXPECT_TRUE(again.issues.empty());
  EXPECT_EQ(again.already_filed, 2u);
  EXPECT_EQ(again.remediation.size(), 1u);
}

TEST(Audit, AFindingAnEarlierRemediationBundleTookIsNotBundledAgain) {
  Finding crit{Severity::critical, "a", std::nullopt, "sql injection", "", ""};
  Finding high{Severity::high, "b", std::nullopt, "missing auth", "", ""};
  Finding other{Severity::high, "b", std::nullopt, "token never expires", "", ""};
  std::set<std::string> remediated = {finding_fingerprint(crit), finding_fingerprint(high)};
  Finding moved = crit;
  moved.line = 12;  // the same finding, its line moved
  Triage t = triage({moved, high, other}, {}, remediated);
  ASSERT_EQ(t.remediation.size(), 1u);
  EXPECT_EQ(t.remediation[0].description, "token never expires");
  EXPECT_EQ(t.already_remediated, 2u);
  EXPECT_TRUE(triage({crit, high}, {}, remediated).remediation.empty());
}

TEST(Audit, TheMarkerIsACommitIdAndAnythingElseIsCorrupt) {
  auto m = parse_marker(std::string(40, 'A') + "\n");
  ASSERT_TRUE(m) << m.error().message;
  EXPECT_EQ(*m, std::string(40, 'a'));
  EXPECT_TRUE(parse_marker(std::string(64, 'b')));
  for (std::string bad : {std::string(""), std::string("main\n"), std::string(39, 'a'),
                          std::string(40, 'g'), kCommit + " extra"}) {
    auto r = parse_marker(bad);
    ASSERT_FALSE(r) << bad;
    EXPECT_NE(r.error().message.find("corrupt"), std::string::npos);
  }
  EXPECT_EQ(marker_text(kCommit), kCommit + "\n");
  EXPECT_EQ(*parse_marker(marker_text(kCommit)), kCommit);
}

TEST(Audit, TheMarkerNeverPassesAPrThatIsNotAudited) {
  EXPECT_EQ(advance_marker({}), std::nullopt);
  EXPECT_EQ(advance_marker({{"c1", true}, {"c2", true}, {"c3", true}}), "c3");
  EXPECT_EQ(advance_marker({{"c1", true}, {"c2", false}, {"c3", true}}), "c1")
      << "a BLOCKED audit keeps its PR, and every later one, in the next window";
  EXPECT_EQ(advance_marker({{"c1", false}, {"c2", true}}), std::nullopt);
}

}  // namespace
}  // namespace devgraph::orchestrator
