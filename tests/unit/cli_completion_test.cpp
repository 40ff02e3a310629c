// The completion engine over the real verb table, with ids from a fake
// source, and the ids a develop home holds.
#include "cli/completion.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "issues/local_store.h"
#include "support/test_util.h"

namespace devgraph::completion {
namespace {

class FakeValues : public ValueSource {
 public:
  std::vector<Candidate> values(ValueHint hint, const std::string& repo) override {
    asked.push_back(repo);
    if (hint == ValueHint::bundle) return {{"b1", "Add a flag"}, {"b2", ""}, {"c7", ""}};
    if (hint == ValueHint::issue) return {{"3", "open: Crash"}, {"12", "closed: Typo"}};
    if (hint == ValueHint::run) return {{"20260102T000000Z", ""}};
    return {};
  }
  std::vector<std::string> asked;
};

std::vector<std::string> values(const std::vector<std::string>& words) {
  FakeValues source;
  std::vector<std::string> out;
  for (const auto& c : complete(verb_table(), words, source)) out.push_back(c.value);
  return out;
}

using Words = std::vector<std::string>;

TEST(Complete, OffersTheVerbsThatStartWithTheWord) {
  EXPECT_EQ(values({"ru"}), (Words{"run", "run-bundle"}));
  EXPECT_EQ(values({"in"}), (Words{"inbox", "install"}));
  EXPECT_EQ(values({"--v"}), (Words{"--version"}));
  EXPECT_EQ(values({"zzz"}), Words{});
  EXPECT_EQ(values({}).size(), verb_table().size());
  EXPECT_EQ(values({"nosuchverb", ""}), Words{});
}

TEST(Complete, OffersTheFlagsOfTheParserInForce) {
  EXPECT_EQ(values({"run", "--bo"}), (Words{"--board"}));
  EXPECT_EQ(values({"issue", "list", "--"}), (Words{"--state", "--json", "--repo", "--help"}));
  EXPECT_EQ(values({"checkpoint", "RUN", "signal", "--re"}), (Words{"--reset"}));
  // Where no positional is due, an empty word offers the flags.
  EXPECT_EQ(values({"inbox", ""}), (Words{"--repo", "--skill", "--json", "--help"}));
  // A flag's value is skipped, a switch takes none.
  EXPECT_EQ(values({"inbox", "--repo", "x", "--json", "--j"}), (Words{"--json"}));
}

TEST(Complete, OffersSubcommandsWhereTheyAreDue) {
  EXPECT_EQ(values({"issue", ""}), (Words{"new", "list", "show", "close"}));
  EXPECT_EQ(values({"schedule", "c"}), (Words{"check", "conflicts", "critical-path"}));
  EXPECT_EQ(values({"validate", "--skill", "S", "r"}), (Words{"result", "run"}));
  // checkpoint's command comes after the run directory.
  EXPECT_EQ(values({"checkpoint", ""}), (Words{":dir"}));
  EXPECT_EQ(values({"checkpoint", "RUN", "s"}), (Words{"signal", "show"}));
  EXPECT_EQ(values({"board", ""}), (Words{"serve", "build"}));
}

TEST(Complete, OffersChoicesInEachSpellingOfAValue) {
  EXPECT_EQ(values({"issue", "list", "--state", ""}), (Words{"open", "closed", "all"}));
  EXPECT_EQ(values({"issue", "list", "--state", "c"}), (Words{"closed"}));
  EXPECT_EQ(values({"issue", "list", "--state=c"}), (Words{"--state=closed"}));
  EXPECT_EQ(values({"issue", "list", "--sta=a"}), (Words{"--sta=all"}));
  // bash splits at '=': the candidates replace only its last word.
  EXPECT_EQ(values({"issue", "list", "--state", "=", "c"}), (Words{"closed"}));
  EXPECT_EQ(values({"issue", "list", "--state", "="}), (Words{"=open", "=closed", "=all"}));
  EXPECT_EQ(values({"install", ""}), (Words{"claude", "codex", "copilot"}));
  EXPECT_EQ(values({"completion", "z"}), (Words{"zsh"}));
}

TEST(Complete, AsksTheSourceForIdsAndFilesOfTheShell) {
  EXPECT_EQ(values({"run-bundle", "RUN", "--bundle", "b"}), (Words{"b1", "b2"}));
  EXPECT_EQ(values({"run-bundle", "RUN", "--bundle=c"}), (Words{"--bundle=c7"}));
  EXPECT_EQ(values({"checkpoint", "RUN", "move", "--bundle", ""}), (Words{"b1", "b2", "c7"}));
  EXPECT_EQ(values({"issue", "show", ""}), (Words{"3", "12"}));
  EXPECT_EQ(values({"issue", "new", "T", "--parent", "1"}), (Words{"12"}));
  EXPECT_EQ(values({"answer", "b"}), (Words{"b1", "b2"}));
  EXPECT_EQ(values({"answer", "b1", "--run", ""}), (Words{"20260102T000000Z"}));
  EXPECT_EQ(values({"run", "--sim-scenario", "sc"}), (Words{":file"}));
  EXPECT_EQ(values({"run", "--repo", ""}), (Words{":dir"}));
  // A value with nothing to offer offers nothing.
  EXPECT_EQ(values({"run", "--model", ""}), Words{});
}

TEST(Complete, ReadsIdsFromTheRepositoryTheWordsName) {
  FakeValues source;
  auto c = complete(verb_table(), {"issue", "close", "--repo", "/r", ""}, source);
  ASSERT_EQ(source.asked, Words{"/r"});
  ASSERT_EQ(c.size(), 2u);
  EXPECT_EQ(c[0].description, "open: Crash");
  (void)complete(verb_table(), {"issue", "show", ""}, source);
  EXPECT_EQ(source.asked.back(), ".");
}

TEST(HomeValues, ReadsBundlesIssuesRunsAndSlugsOfADevelopHome) {
  test::Scratch home;
  test::write_text(home / "runs/20260101T000000Z-a/state.json",
                   R"({"bundles": [{"id": "b1", "title": "Add a flag"}],
                       "bundles_runtime": {"b2": {}, "b1": {}}})");
  test::write_text(home / "runs/20260102T000000Z-b/state.json", R"({"bundles": [{"id": "b3"}]})");
  test::write_text(home / "runs/20260103T000000Z-c/state.json", "{not json");
  ASSERT_TRUE(make_directories(home / "runs/no-state").ok());
  issues::LocalIssues store(home / "issues");
  ASSERT_TRUE(store.create({"Crash on start", "", {}, std::nullopt, ""}).ok());
  ASSERT_TRUE(store.create({"Typo", "", {}, std::nullopt, ""}).ok());
  test::write_text(home / "debug/login-loop.md", "notes");
  test::write_text(home / "debug/README.txt", "not a slug");

  auto ids = [](const std::vector<Candidate>& cs) {
    Words out;
    for (const auto& c : cs) out.push_back(c.value);
    return out;
  };
  auto bundles = home_values(ValueHint::bundle, home.path());
  EXPECT_EQ(ids(bundles), (Words{"b1", "b2", "b3"}));
  EXPECT_EQ(bundles[0].description, "Add a flag");
  auto issues = home_values(ValueHint::issue, home.path());
  EXPECT_EQ(ids(issues), (Words{"1", "2"}));
  EXPECT_EQ(issues[0].description, "open: Crash on start");
  EXPECT_EQ(ids(home_values(ValueHint::run, home.path())),
            (Words{"20260103T000000Z-c", "20260102T000000Z-b", "20260101T000000Z-a"}));
  EXPECT_EQ(ids(home_values(ValueHint::slug, home.path())), Words{"login-loop"});

  // A corrupt issue file leaves the numbers, without titles.
  test::write_text(home / "issues/7.md", "no front matter");
  EXPECT_EQ(ids(home_values(ValueHint::issue, home.path())), (Words{"1", "2", "7"}));
  // Nothing there is nothing, not an error.
  test::Scratch empty;
  for (auto hint : {ValueHint::bundle, ValueHint::issue, ValueHint::run, ValueHint::slug})
    EXPECT_TRUE(home_values(hint, empty.path()).empty());
}

TEST(Script, EachShellCallsBackAndFallsBackToFiles) {
  for (const char* shell : {"bash", "zsh", "fish"}) {
    const std::string s = script(shell);
    EXPECT_NE(s.find("completion --complete"), std::string::npos) << shell;
    EXPECT_NE(s.find(":file"), std::string::npos) << shell;
    EXPECT_NE(s.find(":dir"), std::string::npos) << shell;
  }
  EXPECT_EQ(script("tcsh"), "");
}

}  // namespace
}  // namespace devgraph::completion
