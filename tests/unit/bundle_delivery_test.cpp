// The pull request text, pure; the issue numbers it closes come only from
// digits.
#include "bundle/delivery.h"

#include <gtest/gtest.h>

namespace devgraph::bundle {
namespace {

TEST(Delivery, ThePullRequestBodyListsTasksVerificationAndOneCloseLinePerIssue) {
  PrText t{"b1", "words", {{"T1", "greeting"}, {"T2", ""}}, "sh run-tests.sh", "make", {"12", "7"}};
  std::string body = pr_body(t);
  EXPECT_NE(body.find("## Bundle b1\n\nwords\n"), std::string::npos) << body;
  EXPECT_NE(body.find("- greeting (T1)\n- T2 (T2)\n"), std::string::npos) << body;
  EXPECT_NE(body.find("- test: `sh run-tests.sh`"), std::string::npos);
  EXPECT_NE(body.find("Closes #12\nCloses #7\n"), std::string::npos) << body;
}

TEST(Delivery, ThePullRequestBodyNamesWhatWasKeptOutOfItWithoutMarkupOrLineBreaks) {
  PrText t{"b1", "words", {{"T1", "greeting"}}, "sh run-tests.sh", "make", {"12"}};
  std::string plain = pr_body(t);
  EXPECT_EQ(plain.find("Kept out"), std::string::npos) << plain;
  t.quarantined = {"notes-T1.md", "odd`name\n## Injected"};
  std::string body = pr_body(t);
  EXPECT_NE(body.find("### Kept out of this pull request\n"), std::string::npos) << body;
  EXPECT_NE(body.find("- `notes-T1.md`\n"), std::string::npos) << body;
  EXPECT_NE(body.find("- `odd?name?## Injected`\n"), std::string::npos) << body;
  EXPECT_EQ(body.find("\n## Injected"), std::string::npos) << body;
  EXPECT_NE(body.find("Closes #12\n"), std::string::npos) << body;
}

TEST(Delivery, OnlyDigitsBecomeIssueNumbers) {
  Json state = {
      {"bundles",
       Json::array({{{"id", "b1"}, {"title", "t"}, {"issues", {"#4", 5, "6; rm -rf /", "x", ""}}},
                    {{"id", "b2"}, {"issues", {9}}}})}};
  EXPECT_EQ(bundle_issues(state, "b1"), (std::vector<std::string>{"4", "5"}));
  EXPECT_EQ(bundle_title(state, "b1"), "t");
  EXPECT_EQ(bundle_title(state, "b3"), "b3");
  EXPECT_TRUE(bundle_issues(Json::object(), "b1").empty());
}

}  // namespace
}  // namespace devgraph::bundle
