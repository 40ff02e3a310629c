#include "skill/personas.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "contracts/schema.h"
#include "support/test_util.h"

namespace devgraph {
namespace {

std::string shipped_skill() {
  return test::source_dir() + "/skill";
}

Graph shipped_graph() {
  auto g = Graph::load(shipped_skill());
  EXPECT_TRUE(g.ok()) << (g.ok() ? "" : g.error().message);
  return std::move(g).value();
}

// A copy of the shipped skill directory the test may break.
std::string copy_skill(const test::Scratch& s) {
  std::string dir = s / "skill";
  std::filesystem::copy(shipped_skill(), dir, std::filesystem::copy_options::recursive);
  return dir;
}

TEST(Personas, ShippedSetMatchesTheGraphAndIsSound) {
  Graph g = shipped_graph();
  EXPECT_EQ(g.personas.size(), 15u);
  auto problems = check_persona_files(shipped_skill(), g);
  for (const auto& p : problems) ADD_FAILURE() << p;
}

// Every persona file states its RESULT_JSON contract: the section, the
// statuses, the schema it must satisfy, the one-line/last-line rule, and an
// example line that satisfies the schema.
TEST(Personas, EveryPersonaStatesItsResultContract) {
  Graph g = shipped_graph();
  auto schema = Schema::load(result_schema_path(shipped_skill()));
  ASSERT_TRUE(schema.ok());
  for (const auto& p : g.personas) {
    SCOPED_TRACE(p);
    std::string text = test::slurp(persona_file(shipped_skill(), p));
    EXPECT_TRUE(check_persona_text(p, text, &*schema).empty());
    EXPECT_NE(text.find("## The result line (`RESULT_JSON:`)"), std::string::npos);
    EXPECT_NE(text.find("contracts/agent-result.schema.json"), std::string::npos);
    EXPECT_NE(text.find("last line"), std::string::npos);
    for (const char* status : {"DONE", "DONE_WITH_CONCERNS", "NEEDS_CONTEXT", "BLOCKED"})
      EXPECT_NE(text.find(std::string("`") + status + "`"), std::string::npos) << status;
    EXPECT_NE(text.find("array of objects"), std::string::npos);
    // HANDOFF is the tech lead's alone.
    const char* handoff =
        p == "tech-lead" ? "`HANDOFF`" : "`HANDOFF` is reserved for the tech lead";
    EXPECT_NE(text.find(handoff), std::string::npos);
  }
}

TEST(Personas, EveryPersonaHasTheRequiredSections) {
  Graph g = shipped_graph();
  const std::set<std::string> writers = {"tdd-writer", "developer", "iac-developer"};
  const std::set<std::string> readers = {"tester", "adversarial-tester"};
  for (const auto& p : g.personas) {
    SCOPED_TRACE(p);
    std::string text = test::slurp(persona_file(shipped_skill(), p));
    for (const char* section :
         {"## When goals conflict", "## Worked examples", "## Red flags", "## Capacity"})
      EXPECT_NE(text.find(section), std::string::npos) << section;
    if (p != "tech-lead") {
      EXPECT_NE(text.find("## Mandate"), std::string::npos);
      EXPECT_NE(text.find("## Report"), std::string::npos);
      EXPECT_NE(text.find("\"blockers\": [\"capacity\"]"), std::string::npos);
    }
    if (writers.count(p) || readers.count(p)) {
      EXPECT_NE(text.find("## Working in a shared worktree"), std::string::npos);
    }
    if (writers.count(p)) {
      EXPECT_NE(text.find("`git stash`"), std::string::npos);
      EXPECT_NE(text.find("devgraph guard check-write"), std::string::npos);
    }
    // devgraph's own commands, never the reference's scripts.
    EXPECT_EQ(text.find("python3 "), std::string::npos);
    EXPECT_EQ(text.find(".py"), std::string::npos);
  }
  std::string lead = test::slurp(persona_file(shipped_skill(), "tech-lead"));
  for (const char* cmd :
       {"devgraph checkpoint <run-dir> move", "devgraph checkpoint <run-dir> signal",
        "devgraph schedule runnable", "devgraph schedule footprint-check",
        "devgraph guard check-bash", "headless.enabled", "| red |"})
    EXPECT_NE(lead.find(cmd), std::string::npos) << cmd;
}

TEST(Personas, MissingPersonaFileIsReported) {
  test::Scratch s;
  std::string skill = copy_skill(s);
  std::filesystem::remove(skill + "/agents/tester.md");
  auto problems = check_persona_files(skill, shipped_graph());
  ASSERT_EQ(problems.size(), 1u);
  EXPECT_EQ(problems[0], "persona tester has no file agents/tester.md");
}

TEST(Personas, ExtraFileIsReported) {
  test::Scratch s;
  std::string skill = copy_skill(s);
  std::filesystem::copy(skill + "/agents/developer.md", skill + "/agents/developer-repair.md");
  test::write_text(skill + "/agents/NOTES.txt", "not markdown, ignored\n");
  auto problems = check_persona_files(skill, shipped_graph());
  ASSERT_EQ(problems.size(), 1u);
  EXPECT_EQ(problems[0].rfind("agents/developer-repair.md is not a persona of the graph", 0), 0u)
      << problems[0];
}

TEST(Personas, ContractProblemsInOneFile) {
  auto schema = Schema::load(result_schema_path(shipped_skill()));
  ASSERT_TRUE(schema.ok());
  auto wrong_name =
      check_persona_text("tester",
                         "---\nname: testr\n---\n## Result\n`RESULT_JSON: {\"status\": \"DONE\", "
                         "\"summary\": \"s\", \"evidence\": []}`\n",
                         &*schema);
  ASSERT_EQ(wrong_name.size(), 1u);
  EXPECT_EQ(wrong_name[0], "agents/tester.md: front matter names 'testr', not 'tester'");

  auto no_example = check_persona_text("tester", "---\nname: tester\n---\n## Result\n", nullptr);
  ASSERT_EQ(no_example.size(), 1u);
  EXPECT_NE(no_example[0].find("no example"), std::string::npos);

  auto bad_example = check_persona_text("tester",
                                        "---\nname: tester\n---\n## Result\nRESULT_JSON: "
                                        "{\"status\": \"FINE\", \"summary\": \"s\"}\n",
                                        &*schema);
  ASSERT_EQ(bad_example.size(), 1u);
  EXPECT_NE(bad_example[0].find("breaks the result schema"), std::string::npos) << bad_example[0];

  auto no_section = check_persona_text("tester", "no front matter\n", nullptr);
  EXPECT_EQ(no_section.size(), 3u);
}

}  // namespace
}  // namespace devgraph
