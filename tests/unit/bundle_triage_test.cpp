#include "bundle/triage.h"

#include <gtest/gtest.h>

namespace devgraph::bundle {
namespace {

PersonaResult result(const std::string& persona, const std::string& status,
                     std::vector<std::string> concerns, Json findings = Json::array()) {
  PersonaResult r;
  r.persona = persona;
  r.status = status;
  r.concerns = std::move(concerns);
  r.findings = std::move(findings);
  return r;
}

TEST(BundleTriage, SuggestionsAndDesignNotesAreObservational) {
  for (const char* text :
       {"consider more edge cases", "Consider more edge cases.", "the naming could be clearer",
        "a design tradeoff: a map instead of a vector", "slow path for large inputs", ""})
    EXPECT_EQ(classify_concern(text), ConcernKind::observational) << text;
}

TEST(BundleTriage, DefectsInTheWorkAreCorrectness) {
  for (const char* text :
       {"fails on empty input", "The test FAILS when run twice", "off by one in the loop",
        "does not handle a missing file", "returns the wrong total", "crashes on unicode",
        "a race between the two writers", "regression in the parser"})
    EXPECT_EQ(classify_concern(text), ConcernKind::correctness) << text;
}

TEST(BundleTriage, WorkBeyondTheBriefIsScope) {
  EXPECT_EQ(classify_concern("changed a file outside the footprint"), ConcernKind::scope);
  EXPECT_EQ(classify_concern("I also refactored the CLI, beyond the brief"), ConcernKind::scope);
}

TEST(BundleTriage, AProblemThatIsNotTheTasksIsObservationalWhateverItNames) {
  EXPECT_EQ(classify_concern("an unrelated, pre-existing bug in a helper"),
            ConcernKind::observational);
  EXPECT_EQ(classify_concern("the old parser fails on tabs; worth a follow-up"),
            ConcernKind::observational);
}

TEST(BundleTriage, WordsMatchOnlyAtTheStartOfAWord) {
  // "debug" holds "bug", "trace" holds "race": neither names a defect.
  EXPECT_EQ(classify_concern("add a debug trace"), ConcernKind::observational);
}

TEST(BundleTriage, FindingsAreDefectsUnlessMarkedMinor) {
  EXPECT_EQ(classify_finding(Json{{"file", "a.py"}, {"title", "x"}}), ConcernKind::correctness);
  EXPECT_EQ(classify_finding(Json{{"severity", "Important"}}), ConcernKind::correctness);
  EXPECT_EQ(classify_finding(Json{{"severity", "Minor"}}), ConcernKind::observational);
  EXPECT_EQ(classify_finding(Json{{"severity", "suggestion"}}), ConcernKind::observational);
  EXPECT_EQ(classify_finding(Json("not an object")), ConcernKind::correctness);
}

TEST(BundleTriage, EachConcernKeepsThePersonaThatRaisedIt) {
  auto tester = result("tester", "DONE_WITH_CONCERNS", {"fails on empty input"});
  auto adversary = result("adversarial-tester", "DONE", {});
  Triage t = triage({&tester, &adversary});
  ASSERT_EQ(t.items.size(), 1u);
  EXPECT_TRUE(t.actionable());
  EXPECT_EQ(t.raised_by(), std::vector<std::string>{"tester"});
  Json j = t.to_json();
  EXPECT_EQ(j["kind"], "actionable");
  EXPECT_EQ(j["concerns"][0]["persona"], "tester");
  EXPECT_EQ(j["concerns"][0]["kind"], "correctness");
}

TEST(BundleTriage, ActionableItemsNameOnlyTheirRaisersAndObservationalOnesStayNotes) {
  auto tester = result("tester", "DONE_WITH_CONCERNS", {"consider more edge cases"});
  auto adversary = result("adversarial-tester", "DONE_WITH_CONCERNS", {},
                          Json::array({{{"file", "src/a.cpp"}, {"title", "wrong sum"}}}));
  Triage t = triage({&tester, &adversary});
  EXPECT_TRUE(t.actionable());
  EXPECT_EQ(t.raised_by(), std::vector<std::string>{"adversarial-tester"});
  ASSERT_EQ(t.texts(true).size(), 1u);
  EXPECT_NE(t.texts(true)[0].find("wrong sum"), std::string::npos);
  EXPECT_EQ(t.texts(false), std::vector<std::string>{"consider more edge cases"});
  EXPECT_EQ(t.items[1].file, "src/a.cpp");
}

TEST(BundleTriage, ConcernsOfAResultThatIsNotDoneWithConcernsAreNotRead) {
  auto done = result("tester", "DONE", {"fails"});
  Triage t = triage({&done});
  EXPECT_TRUE(t.items.empty());
  EXPECT_FALSE(t.actionable());
  EXPECT_EQ(t.to_json()["kind"], "observational");
}

}  // namespace
}  // namespace devgraph::bundle
