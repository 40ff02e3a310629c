#include "discuss/rules.h"

#include <gtest/gtest.h>

#include <map>

#include "util/text.h"

namespace devgraph::discuss {
namespace {

std::string role_of(const std::string& name) {
  static const std::map<std::string, std::string> roles = {{"product", "Product Manager"},
                                                           {"technical", "Tech Lead"},
                                                           {"quality", "QA Lead"},
                                                           {"risk", "Risk Analyst"},
                                                           {"coverage", "Requirements Analyst"}};
  auto it = roles.find(name);
  return it == roles.end() ? "Analyst" : it->second;
}

// What the shipped graph's perspectives report.
std::vector<std::string> reports_of(const std::string& name) {
  if (name == "risk") return {"risk_level"};
  if (name == "coverage") return {"missing_requirements"};
  return {};
}

Perspective rated(const std::string& name, int rating) {
  Perspective p;
  p.name = name;
  p.role = role_of(name);
  p.rating = rating;
  return p;
}

Perspective failed(const std::string& name) {
  return failed_perspective(name, role_of(name), "every backend failed", reports_of(name));
}

std::vector<Perspective> ratings(const std::vector<int>& values) {
  static const char* names[] = {"product", "technical", "quality", "risk", "coverage", "extra"};
  std::vector<Perspective> ps;
  for (size_t i = 0; i < values.size(); ++i) {
    ps.push_back(rated(names[i], values[i]));
    if (ps.back().name == "risk") ps.back().risk_level = RiskLevel::low;
  }
  return ps;
}

std::vector<std::string> kinds(const std::vector<Divergence>& ds) {
  std::vector<std::string> out;
  for (const auto& d : ds)
    out.push_back(std::string(divergence_kind_name(d.kind)) + ":" +
                  std::string(severity_name(d.severity)));
  return out;
}

Consensus decided(const std::vector<Perspective>& ps, const Round& round = {}) {
  return decide(ps, detect_divergences(ps), round);
}

TEST(DiscussParse, AWellFormedAnswerIsReadWithItsPointsTidied) {
  auto p = parse_answer(Json::parse(R"({"strengths": ["  clear\n scope "], "weaknesses": [],
      "suggestions": ["add tests", "   "], "rating": 4, "risk_level": "critical",
      "missing_requirements": ["offline mode"], "extra": true})"),
                        "risk", "Risk Analyst");
  ASSERT_TRUE(p) << p.error().message;
  EXPECT_EQ(p->name, "risk");
  EXPECT_EQ(p->role, "Risk Analyst");
  EXPECT_EQ(p->rating, 4);
  EXPECT_EQ(p->strengths, std::vector<std::string>{"clear scope"});
  EXPECT_TRUE(p->weaknesses.empty());
  EXPECT_EQ(p->suggestions, std::vector<std::string>{"add tests"});
  EXPECT_EQ(p->risk_level, RiskLevel::critical);
  EXPECT_EQ(p->missing_requirements, std::vector<std::string>{"offline mode"});
  EXPECT_FALSE(p->failed);

  auto bare = parse_answer(Json::parse(R"({"rating": 1})"), "product", "Product Manager");
  ASSERT_TRUE(bare);
  EXPECT_TRUE(bare->strengths.empty());
  EXPECT_EQ(bare->risk_level, std::nullopt);
}

TEST(DiscussParse, ARatingThatIsNotAnIntegerFromOneToFiveIsAnErrorNamingThePerspective) {
  for (int good : {1, 5}) EXPECT_TRUE(parse_answer(Json{{"rating", good}}, "product", "PM"));
  for (const char* bad :
       {R"({"rating": 0})", R"({"rating": 6})", R"({"rating": -3})", R"({"rating": 3.0})",
        R"({"rating": 3.5})", R"({"rating": "3"})", R"({"rating": true})", R"({"rating": null})",
        R"({})", R"({"rating": 99999999999999})"}) {
    auto p = parse_answer(Json::parse(bad), "product", "PM");
    ASSERT_FALSE(p) << bad;
    EXPECT_EQ(p.error().kind, ErrorKind::usage);
    EXPECT_NE(p.error().message.find("perspective product: rating"), std::string::npos)
        << p.error().message;
  }
}

TEST(DiscussParse, WrongTypesAndUnknownRiskLevelsAreErrorsNamingTheField) {
  struct Case {
    const char* answer;
    const char* field;
  };
  for (const auto& c : std::vector<Case>{
           {R"([4])", "JSON object"},
           {R"("rating: 4")", "JSON object"},
           {R"({"rating": 4, "strengths": "clear"})", "strengths must be an array"},
           {R"({"rating": 4, "weaknesses": [1]})", "weaknesses[0] must be a string"},
           {R"({"rating": 4, "suggestions": ["ok", null]})", "suggestions[1] must be a string"},
           {R"({"rating": 4, "missing_requirements": {}})", "missing_requirements must be"},
           {R"({"rating": 4, "risk_level": "severe"})", "risk_level must be low, medium"},
           {R"({"rating": 4, "risk_level": "HIGH"})", "risk_level must be"},
           {R"({"rating": 4, "risk_level": 3})", "risk_level must be"},
       }) {
    auto p = parse_answer(Json::parse(c.answer), "quality", "QA Lead");
    ASSERT_FALSE(p) << c.answer;
    EXPECT_EQ(p.error().kind, ErrorKind::usage);
    EXPECT_NE(p.error().message.find(c.field), std::string::npos) << p.error().message;
  }
}

TEST(DiscussParse, APerspectiveMustStateWhatItReports) {
  auto risk = parse_answer(Json{{"rating", 4}}, "risk", "Risk Analyst", {"risk_level"});
  ASSERT_FALSE(risk);
  EXPECT_NE(risk.error().message.find("risk_level is missing"), std::string::npos);
  auto coverage = parse_answer(Json{{"rating", 4}}, "coverage", "Requirements Analyst",
                               {"missing_requirements"});
  ASSERT_FALSE(coverage);
  EXPECT_NE(coverage.error().message.find("missing_requirements is missing"), std::string::npos);
  EXPECT_TRUE(parse_answer(Json::parse(R"({"rating": 4, "missing_requirements": []})"), "coverage",
                           "Requirements Analyst", {"missing_requirements"}));
  // A perspective of another name reporting a risk level must state it too;
  // one that reports nothing need not.
  EXPECT_FALSE(parse_answer(Json{{"rating", 4}}, "security", "Security Lead", {"risk_level"}));
  EXPECT_TRUE(parse_answer(Json{{"rating", 4}}, "risk", "Risk Analyst"));
}

TEST(DiscussDivergence, EachRuleFiresAtItsBoundaryAndNotBelowIt) {
  auto with = [](int rating, std::optional<RiskLevel> risk, std::vector<std::string> missing) {
    auto p = rated("risk", rating);
    p.risk_level = risk;
    p.missing_requirements = std::move(missing);
    return std::vector<Perspective>{p};
  };
  struct Case {
    std::vector<Perspective> perspectives;
    std::vector<std::string> expected;
  };
  std::vector<Case> cases = {
      {with(3, std::nullopt, {}), {}},
      {with(3, std::nullopt, {"offline mode"}), {"coverage_gap:high"}},
      {with(3, RiskLevel::low, {}), {}},
      {with(3, RiskLevel::medium, {}), {}},
      {with(3, RiskLevel::high, {}), {"high_risk:high"}},
      {with(3, RiskLevel::critical, {}), {"high_risk:high"}},
      {with(2, std::nullopt, {}), {"low_rating:medium"}},
      {with(1, RiskLevel::critical, {"x"}),
       {"coverage_gap:high", "high_risk:high", "low_rating:medium"}},
      {ratings({5, 2}), {"low_rating:medium", "rating_spread:medium"}},
      {ratings({4, 1}), {"low_rating:medium", "rating_spread:medium"}},
      {ratings({5, 3}), {}},
      {ratings({4, 3, 3}), {}},
  };
  for (size_t i = 0; i < cases.size(); ++i)
    EXPECT_EQ(kinds(detect_divergences(cases[i].perspectives)), cases[i].expected) << "case " << i;
}

TEST(DiscussDivergence, ASpreadNamesThePerspectivesOnEachSideAndSkipsFailedOnes) {
  auto ps = ratings({5, 2, 5, 3});
  ps.push_back(failed("coverage"));
  auto ds = detect_divergences(ps);
  ASSERT_EQ(ds.size(), 2u);
  EXPECT_EQ(ds[0].kind, DivergenceKind::low_rating);
  EXPECT_EQ(ds[0].perspectives, std::vector<std::string>{"technical"});
  EXPECT_EQ(ds[1].kind, DivergenceKind::rating_spread);
  EXPECT_EQ(ds[1].perspectives, (std::vector<std::string>{"product", "quality", "technical"}));
  EXPECT_EQ(ds[1].description, "ratings range from 2 (technical) to 5 (product, quality)");
  EXPECT_TRUE(detect_divergences({failed("risk"), failed("coverage")}).empty());
}

TEST(DiscussConsensus, AnAverageOfExactlyThreeReachesAndJustUnderBlocks) {
  struct Case {
    std::vector<int> ratings;
    bool reached;
  };
  for (const auto& c : std::vector<Case>{
           {{3, 3, 3}, true},   // 9 = 3 * 3
           {{4, 4, 1}, true},   // 9: a low rating and a spread are medium only
           {{4, 3, 1}, false},  // 8 = 3 * 3 - 1
           {{4, 2}, true},      // 6 = 3 * 2
           {{3, 2}, false},     // 5
           {{5, 5, 5, 5, 1}, true},
           {{3, 3, 3, 3, 2}, false},  // 14 = 3 * 5 - 1: 2.80
           {{3}, true},
       }) {
    auto consensus = decided(ratings(c.ratings));
    EXPECT_EQ(consensus.reached, c.reached) << testing::PrintToString(c.ratings);
    EXPECT_EQ(consensus.severity.has_value(), !c.reached);
  }
  auto c = decided(ratings({3, 3, 3, 3, 2}));
  EXPECT_EQ(c.reasons, std::vector<std::string>{"the average rating 2.80 is under 3.00"});
}

TEST(DiscussConsensus, SeverityAndRecommendationFollowTheFirstRuleThatApplies) {
  auto risk = [](RiskLevel level) {
    auto ps = ratings({4, 4});
    ps.push_back(rated("risk", 4));
    ps.back().risk_level = level;
    return ps;
  };
  auto gap = ratings({4, 4});
  gap.push_back(rated("coverage", 4));
  gap.back().missing_requirements = {"audit log"};
  auto without = [](std::vector<Perspective> ps, const std::string& name) {
    ps.push_back(failed(name));
    return ps;
  };
  Round final_gate{"DISCUSS-006", true, false};
  Round second{"DISCUSS-002", false, true};
  struct Case {
    const char* what;
    std::vector<Perspective> perspectives;
    Round round;
    const char* severity;  // "" when reached
    Recommendation recommendation;
  };
  for (const auto& c : std::vector<Case>{
           {"all well", ratings({4, 4, 3}), {}, "", Recommendation::proceed},
           {"medium risk", risk(RiskLevel::medium), {}, "", Recommendation::proceed},
           {"coverage gap", gap, {}, "HIGH", Recommendation::revise},
           {"critical risk", risk(RiskLevel::critical), {}, "HIGH", Recommendation::revise},
           {"two low ratings", ratings({2, 2, 4}), {}, "HIGH", Recommendation::revise},
           {"the only answer low", ratings({2}), {}, "HIGH", Recommendation::revise},
           {"lone low rating",
            ratings({1, 3, 3}),
            {},
            "MEDIUM",
            Recommendation::proceed_with_caution},
           {"high risk", risk(RiskLevel::high), {}, "MEDIUM", Recommendation::proceed_with_caution},
           {"risk failed",
            without(ratings({4, 4}), "risk"),
            {},
            "MEDIUM",
            Recommendation::proceed_with_caution},
           {"coverage failed",
            without(ratings({4, 4}), "coverage"),
            {},
            "MEDIUM",
            Recommendation::proceed_with_caution},
           {"quality failed",
            without(ratings({4, 4}), "quality"),
            {},
            "LOW",
            Recommendation::proceed_with_caution},
           {"high at the final sign-off", gap, final_gate, "HIGH", Recommendation::escalate},
           {"high after a revision", risk(RiskLevel::critical), second, "HIGH",
            Recommendation::escalate},
           {"medium at the final sign-off", ratings({1, 3, 3}), final_gate, "MEDIUM",
            Recommendation::proceed_with_caution},
           {"nobody answered",
            {failed("product"), failed("risk")},
            {},
            "HIGH",
            Recommendation::escalate},
       }) {
    auto consensus = decided(c.perspectives, c.round);
    EXPECT_EQ(consensus.reached, std::string(c.severity).empty()) << c.what;
    EXPECT_EQ(consensus.severity ? std::string(severity_label(*consensus.severity)) : "",
              c.severity)
        << c.what;
    EXPECT_EQ(consensus.recommendation, c.recommendation) << c.what;
  }
}

TEST(DiscussFailure, AFailedPerspectiveIsLeftOutOfTheAverageRecordedAndBlocks) {
  auto ps = ratings({4, 5});
  ps.insert(ps.begin() + 1, failed("quality"));
  auto c = decided(ps);
  EXPECT_FALSE(c.reached);
  EXPECT_EQ(c.average.sum, 9);
  EXPECT_EQ(c.average.count, 2);
  EXPECT_EQ(c.average.two_decimals(), "4.50");
  EXPECT_EQ(c.failed, std::vector<std::string>{"quality"});
  EXPECT_EQ(c.reasons, std::vector<std::string>{"quality did not answer"});
}

TEST(DiscussFailure, NobodyAnsweringIsBlockedHighAndEscalatedNeverAPass) {
  auto outcome = discuss({failed("product"), failed("technical")}, {});
  const auto& c = outcome.consensus;
  EXPECT_FALSE(c.reached);
  EXPECT_EQ(c.severity, Severity::high);
  EXPECT_EQ(c.recommendation, Recommendation::escalate);
  EXPECT_EQ(c.average.two_decimals(), "n/a");
  EXPECT_EQ(c.reasons.front(), "no perspective answered");
  EXPECT_TRUE(outcome.synthesis.actions.empty());
  auto r = result_json({}, "a.md", {failed("product"), failed("technical")}, outcome, "r.md");
  EXPECT_EQ(r["verdict"], "consensus_blocked");
  EXPECT_TRUE(r["average"].is_null());
  EXPECT_EQ(r["failed"], Json::parse(R"(["product", "technical"])"));
  EXPECT_TRUE(decided({}).severity == Severity::high);
}

TEST(DiscussAverage, PrintsTwoDecimalsRoundedHalfUpFromIntegers) {
  struct Case {
    int sum, count;
    const char* text;
  };
  for (const auto& c : std::vector<Case>{{10, 3, "3.33"},
                                         {11, 3, "3.67"},
                                         {1, 8, "0.13"},
                                         {3, 1, "3.00"},
                                         {9, 2, "4.50"},
                                         {14, 5, "2.80"},
                                         {0, 0, "n/a"}})
    EXPECT_EQ((Average{c.sum, c.count}.two_decimals()), c.text) << c.sum << "/" << c.count;
  EXPECT_TRUE((Average{9, 3}.at_least_three()));
  EXPECT_FALSE((Average{8, 3}.at_least_three()));
  EXPECT_FALSE((Average{0, 0}.at_least_three()));
}

TEST(DiscussMatching, PointsMatchWhenTwoThirdsOfTheirContentWordsAreSharedAfterNormalizing) {
  EXPECT_EQ(point_words("The Tests are missing, for the API!"),
            (std::vector<std::string>{"api", "test"}));
  EXPECT_EQ(point_words("Process access"), (std::vector<std::string>{"access", "process"}));
  EXPECT_EQ(point_words("testing tested tests test"), std::vector<std::string>{"test"});
  EXPECT_EQ(point_words("handle handled handling"), std::vector<std::string>{"handl"});
  EXPECT_EQ(point_words("policies classes stopped running status"),
            (std::vector<std::string>{"class", "policy", "run", "status", "stop"}));
  struct Case {
    const char* a;
    const char* b;
    bool same;
  };
  for (const auto& c : std::vector<Case>{
           {"No rollback plan", "no rollback plan.", true},
           {"No rollback plan", "Rollback plan is missing", true},  // absence words left out
           // Near misses that stay apart: one content word of each differs.
           {"The plan has no rollback step.", "The plan has no test step.", false},  // 2 of 4
           {"Error handling is thorough", "Error handling is thin", false},          // 2 of 4
           {"Add integration tests", "Integration test coverage is thin", false},    // 2 of 5
           // Near misses that merge: paraphrases, other forms of the same words.
           {"The plan has no rollback step.", "There is no rollback step in the plan", true},
           {"The plan has no rollback step.", "Rollback steps are missing from the plan", true},
           {"The plan has no rollback step.", "The deployment plan lacks a rollback step",
            true},  // 3 of 4
           {"Errors are not handled", "No error handling", true},
           {"Pricing unclear", "Unclear pricing", true},
           {"the of and", "the of and", false},  // nothing but stop words
           {"Scalability", "Security", false},
       })
    EXPECT_EQ(same_point(c.a, c.b), c.same) << c.a << " / " << c.b;
}

TEST(DiscussSynthesis, TwoPerspectivesMissingDifferentStepsHaveNoThemeInCommon) {
  auto ps = ratings({3, 3});
  ps[0].weaknesses = {"The plan has no rollback step."};
  ps[1].weaknesses = {"The plan has no test step."};
  EXPECT_TRUE(synthesize(ps, {}).convergent.empty());
  ps[1].weaknesses = {"Rollback steps are missing from the plan"};
  auto s = synthesize(ps, {});
  ASSERT_EQ(s.convergent.size(), 1u);
  EXPECT_EQ(s.convergent[0].text, "The plan has no rollback step.");
  EXPECT_EQ(s.convergent[0].perspectives, (std::vector<std::string>{"product", "technical"}));
}

TEST(DiscussSynthesis, APointRaisedByTwoPerspectivesIsConvergentAndByOneIsNot) {
  auto ps = ratings({4, 3, 4});
  ps[0].weaknesses = {"No rollback plan", "Pricing is vague"};
  ps[1].weaknesses = {"Rollback plan missing"};
  ps[2].strengths = {"Pricing is vague"};  // a strength does not join a weakness's theme
  auto s = synthesize(ps, detect_divergences(ps));
  ASSERT_EQ(s.convergent.size(), 1u);
  EXPECT_EQ(s.convergent[0].kind, PointKind::weakness);
  EXPECT_EQ(s.convergent[0].text, "No rollback plan");
  EXPECT_EQ(s.convergent[0].perspectives, (std::vector<std::string>{"product", "technical"}));

  ps[1].weaknesses = {"No rollback plan", "no rollback plan!"};  // one perspective twice
  ps[0].weaknesses = {};
  EXPECT_TRUE(synthesize(ps, {}).convergent.empty());
}

TEST(DiscussSynthesis, ThemesAreOrderedByPerspectivesThenFirstAppearanceTheSameEveryTime) {
  auto ps = ratings({4, 4, 4});
  ps[0].suggestions = {"Add a glossary", "Add load tests"};
  ps[1].suggestions = {"Add load tests", "Add a glossary"};
  ps[1].weaknesses = {"Slow startup"};
  ps[2].weaknesses = {"Startup is slow"};
  ps[2].suggestions = {"add load tests"};
  auto s = synthesize(ps, {});
  ASSERT_EQ(s.convergent.size(), 3u);
  EXPECT_EQ(s.convergent[0].text, "Add load tests");  // three perspectives
  EXPECT_EQ(s.convergent[1].text, "Add a glossary");  // two, first seen before the startup one
  EXPECT_EQ(s.convergent[2].text, "Slow startup");
  EXPECT_EQ(s.convergent[2].perspectives, (std::vector<std::string>{"technical", "quality"}));
  auto again = synthesize(ps, {});
  ASSERT_EQ(again.convergent.size(), s.convergent.size());
  for (size_t i = 0; i < s.convergent.size(); ++i)
    EXPECT_EQ(again.convergent[i].text, s.convergent[i].text);
}

TEST(DiscussSynthesis, AStrengthToOnePerspectiveThatIsAWeaknessToAnotherIsAConflict) {
  auto ps = ratings({4, 3});
  ps[0].strengths = {"The plan has a rollback step"};
  ps[1].weaknesses = {"The plan has no rollback step"};
  auto s = synthesize(ps, {});
  ASSERT_EQ(s.divergent.size(), 1u);
  EXPECT_EQ(s.divergent[0].kind, DivergenceKind::conflict);
  EXPECT_EQ(s.divergent[0].severity, Severity::low);
  EXPECT_EQ(s.divergent[0].perspectives, (std::vector<std::string>{"product", "technical"}));
  EXPECT_TRUE(decided(ps).reached);  // a conflict informs; it does not block
  ps[1].weaknesses = {};
  ps[0].weaknesses = {"The plan has no rollback step"};
  EXPECT_TRUE(synthesize(ps, {}).divergent.empty());
}

TEST(DiscussSynthesis, ActionItemsPutGapsAndHighRisksFirstAndMergeDuplicates) {
  auto ps = ratings({4, 2});
  ps[0].suggestions = {"Document the API", "Add a threat model"};
  ps[0].weaknesses = {"Docs are thin"};
  ps[1].suggestions = {"Write a migration guide"};
  ps[1].weaknesses = {"No migration path"};
  auto risk = rated("risk", 3);
  risk.risk_level = RiskLevel::critical;
  risk.weaknesses = {"Single point of failure"};
  risk.suggestions = {"Add a threat model"};
  ps.push_back(risk);
  auto coverage = rated("coverage", 4);
  coverage.missing_requirements = {"Audit logging", "Offline mode"};
  ps.push_back(coverage);
  auto s = synthesize(ps, detect_divergences(ps));
  std::vector<std::string> got;
  for (const auto& a : s.actions)
    got.push_back(std::string(severity_name(a.priority)) + " " + a.text + " [" +
                  join(a.perspectives, ",") + "]");
  EXPECT_EQ(got, (std::vector<std::string>{
                     "high Audit logging [coverage]",
                     "high Offline mode [coverage]",
                     "high Single point of failure [risk]",
                     "medium Write a migration guide [technical]",
                     "medium No migration path [technical]",
                     "low Add a threat model [product,risk]",
                     "low Document the API [product]",
                     "low Docs are thin [product]",
                 }));
  ASSERT_EQ(s.coverage_gaps.size(), 2u);
  EXPECT_EQ(s.coverage_gaps[0].perspectives, std::vector<std::string>{"coverage"});
}

TEST(DiscussRecord, NobodyAnsweringReadsNoneAndALeftOutPerspectiveIsNamed) {
  std::vector<Perspective> ps = {failed("product"), failed("risk")};
  Round round{"R", false, false, {"coverage: no requirements file"}};
  std::string rec = render_record(round, "plan.md", ps, discuss(ps, round));
  EXPECT_NE(rec.find("**Perspectives**: product, risk\n**Left Out**: coverage: no requirements "
                     "file\n"),
            std::string::npos)
      << rec;
  EXPECT_NE(rec.find("\n**Average Rating**: none (no perspective answered)\n"), std::string::npos)
      << rec;
  EXPECT_EQ(rec.find("n/a"), std::string::npos) << rec;
  Json res = result_json(round, "plan.md", ps, discuss(ps, round), "rec.md");
  EXPECT_TRUE(res["average"].is_null());
  EXPECT_EQ(res["left_out"], Json::array({"coverage: no requirements file"}));
}

TEST(DiscussRecord, TheRecordOfASmallDiscussionHasThisExactText) {
  auto product = rated("product", 4);
  product.strengths = {"Clear user value"};
  product.weaknesses = {"No rollback plan"};
  product.suggestions = {"Add a pricing section"};
  auto technical = rated("technical", 2);
  technical.weaknesses = {"Rollback plan is missing", "Schema is unclear"};
  technical.suggestions = {"Describe the rollback"};
  auto coverage = rated("coverage", 3);
  coverage.missing_requirements = {"Offline mode"};
  std::vector<Perspective> ps = {product, technical, failed("risk"), coverage};
  Round round{"DISCUSS-002", false, false};
  auto outcome = discuss(ps, round);
  EXPECT_EQ(render_record(round, "spec/product-brief.md", ps, outcome),
            R"md(# Discussion Record: DISCUSS-002

**Artifact**: spec/product-brief.md
**Perspectives**: product, technical, risk, coverage
**Consensus**: blocked (HIGH, recommendation: revise)
**Average Rating**: 3.00/5 (over 3 of 4 perspectives; risk left out: no answer)

## Blocked By
- coverage finds requirements missing: Offline mode
- risk did not answer

## Failed Perspectives
- **risk**: every backend failed

## Convergent Themes
- No rollback plan (weakness; product, technical)

## Divergent Views
- **coverage gap** (high): coverage finds requirements missing: Offline mode
- **low rating** (medium): technical rates it 2/5

## Coverage Gaps
- Offline mode (coverage)

## Action Items
1. [high] Offline mode (missing requirement; coverage)
2. [medium] Rollback plan is missing (weakness; technical, product)
3. [medium] Describe the rollback (suggestion; technical)
4. [medium] Schema is unclear (weakness; technical)
5. [low] Add a pricing section (suggestion; product)

## Ratings
| Perspective | Role | Rating |
|-------------|------|--------|
| product | Product Manager | 4/5 |
| technical | Tech Lead | 2/5 |
| risk | Risk Analyst | failed |
| coverage | Requirements Analyst | 3/5 |
)md");
  EXPECT_EQ(render_record(round, "spec/product-brief.md", ps, discuss(ps, round)),
            render_record(round, "spec/product-brief.md", ps, outcome));
}

TEST(DiscussResult, TheResultNamesVerdictSeverityAverageTheFirstThreeAndTheRecord) {
  auto ps = ratings({4, 4, 1});
  ps[0].suggestions = {"One", "Two things", "Three more things", "Four other things here"};
  auto outcome = discuss(ps, {"DISCUSS-004", false, false});
  auto r = result_json({"DISCUSS-004", false, false}, "spec/architecture/_index.md", ps, outcome,
                       "discussions/DISCUSS-004-discussion.md");
  EXPECT_EQ(dump_py(r),
            R"j({"verdict": "consensus_reached", "severity": null, "average": 3.0, )j"
            R"j("answered": 3, "perspectives": 3, "failed": [], )j"
            R"j("action_items": ["One", "Two things", "Three more things"], )j"
            R"j("divergences": [{"kind": "low_rating", "severity": "medium", )j"
            R"j("perspectives": ["quality"], "description": "quality rates it 1/5"}, )j"
            R"j({"kind": "rating_spread", "severity": "medium", )j"
            R"j("perspectives": ["product", "technical", "quality"], )j"
            R"j("description": "ratings range from 1 (quality) to 4 (product, technical)"}], )j"
            R"j("recommendation": "proceed", "round": "DISCUSS-004", )j"
            R"j("artifact": "spec/architecture/_index.md", )j"
            R"j("record": "discussions/DISCUSS-004-discussion.md"})j");
  auto blocked = discuss(ratings({3, 2}), {});
  auto b = result_json({}, "a.md", ratings({3, 2}), blocked, "r.md");
  EXPECT_EQ(b["verdict"], "consensus_blocked");
  EXPECT_EQ(b["severity"], "MEDIUM");
  EXPECT_EQ(b["average"], 2.5);
  EXPECT_EQ(b["recommendation"], "proceed-with-caution");
}

}  // namespace
}  // namespace devgraph::discuss
