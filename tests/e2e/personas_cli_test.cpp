// `devgraph validate graph` against persona files: a persona the graph names
// with no file, or a file under agents/ that is no persona, fails the check
// and names the file; nothing on disk changes.
#include <gtest/gtest.h>

#include <filesystem>

#include "support/test_util.h"

namespace devgraph {
namespace {

std::string copy_skill(const test::Scratch& s) {
  std::string dir = s / "skill";
  std::filesystem::copy(test::source_dir() + "/skill", dir,
                        std::filesystem::copy_options::recursive);
  return dir;
}

TEST(PersonasCli, ShippedSkillPasses) {
  test::Scratch s;
  auto r = test::run_devgraph({"validate", "graph", "--skill", copy_skill(s)});
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_EQ(r.out.rfind("OK: ", 0), 0u) << r.out;
}

TEST(PersonasCli, MissingPersonaFileFails) {
  test::Scratch s;
  std::string skill = copy_skill(s);
  std::filesystem::remove(skill + "/agents/merge-auditor.md");
  auto r = test::run_devgraph({"validate", "graph", "--skill", skill});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.out, "ERROR: persona merge-auditor has no file agents/merge-auditor.md\n");
  EXPECT_FALSE(test::slurp(skill + "/agents/tester.md").empty());
}

TEST(PersonasCli, ExtraPersonaFileFails) {
  test::Scratch s;
  std::string skill = copy_skill(s);
  std::string text = test::slurp(skill + "/agents/developer.md");
  test::write_text(skill + "/agents/developer-repair.md", text);
  auto r = test::run_devgraph({"validate", "graph", "--skill", skill});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.out.rfind("ERROR: agents/developer-repair.md is not a persona of the graph", 0), 0u)
      << r.out;
  EXPECT_EQ(r.out.find("OK:"), std::string::npos);
  EXPECT_EQ(test::slurp(skill + "/agents/developer-repair.md"), text);
}

TEST(PersonasCli, PersonaWithoutResultContractFails) {
  test::Scratch s;
  std::string skill = copy_skill(s);
  test::write_text(skill + "/agents/tester.md", "---\nname: tester\n---\n# Tester\nJust test.\n");
  auto r = test::run_devgraph({"validate", "graph", "--skill", skill});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.out.find("ERROR: agents/tester.md: no section stating the RESULT_JSON contract\n"),
            std::string::npos)
      << r.out;
}

TEST(PersonasCli, TemplateWithUnknownPlaceholderFails) {
  test::Scratch s;
  std::string skill = copy_skill(s);
  test::write_text(skill + "/templates/task-review-dispatch.md",
                   "Review {{task_id}} by {{owner}}\n");
  auto r = test::run_devgraph({"validate", "graph", "--skill", skill});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.out.find("task-review-dispatch.md:1: unknown placeholder {{owner}}"),
            std::string::npos)
      << r.out;
}

}  // namespace
}  // namespace devgraph
