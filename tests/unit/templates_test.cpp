#include "templates/render.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "support/test_util.h"

namespace devgraph::templates {
namespace {

std::string shipped_skill() {
  return test::source_dir() + "/skill";
}

Expected<std::string> render_text(std::string_view text, const Values& values) {
  DG_TRY(Template t, parse_template(text, "t.md"));
  return t.render(values);
}

TEST(Templates, ReplacesNamedPlaceholders) {
  auto out = render_text("Task {{task_id}} in {{ worktree }}; again {{task_id}}.",
                         {{"task_id", "T1"}, {"worktree", "/w"}});
  ASSERT_TRUE(out.ok()) << out.error().message;
  EXPECT_EQ(*out, "Task T1 in /w; again T1.");
}

TEST(Templates, ValuesAreNotReExpanded) {
  auto out = render_text("{{a}}", {{"a", "{{b}}"}});
  ASSERT_TRUE(out.ok());
  EXPECT_EQ(*out, "{{b}}");
}

TEST(Templates, CommentsAndEscapes) {
  auto out =
      render_text("{{# a note\n   over two lines }}\nkeep \\{{literal}} {{# inline }}end\n", {});
  ASSERT_TRUE(out.ok()) << out.error().message;
  EXPECT_EQ(*out, "keep {{literal}} end\n");
}

TEST(Templates, MissingValueNamesThePlaceholderAndLine) {
  auto out = render_text("line one\nuse {{brief_path}} here", {});
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.error().message, "t.md:2: no value for placeholder {{brief_path}}");
}

TEST(Templates, MalformedAndUnterminatedAreErrors) {
  auto bad = parse_template("x {{Bad-Name}} y", "t.md");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().message.find("t.md:1: malformed placeholder {{Bad-Name}}"),
            std::string::npos);
  auto open = parse_template("a\nb {{name", "t.md");
  ASSERT_FALSE(open.ok());
  EXPECT_EQ(open.error().message, "t.md:2: unterminated placeholder (no closing }})");
  auto empty = parse_template("{{}}", "t.md");
  EXPECT_FALSE(empty.ok());
}

TEST(Templates, PlaceholdersInOrderOfFirstUse) {
  auto t = parse_template("{{b}} {{a}} {{b}}", "t.md");
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(t->placeholders(), (std::vector<std::string>{"b", "a"}));
}

// Every shipped template parses, uses only its vocabulary, and renders when
// given every name of that vocabulary.
TEST(Templates, EveryShippedTemplateRendersWithItsVocabulary) {
  EXPECT_TRUE(check_skill_templates(shipped_skill()).empty());
  for (const auto& spec : template_specs()) {
    Values values;
    for (auto name : spec.placeholders) values[std::string(name)] = "<" + std::string(name) + ">";
    auto out = render_skill_template(shipped_skill(), spec.name, values);
    ASSERT_TRUE(out.ok()) << spec.name << ": " << out.error().message;
    EXPECT_EQ(out->find("{{"), std::string::npos) << spec.name;
    EXPECT_FALSE(out->empty()) << spec.name;
  }
  // The six the issue names are among them.
  for (auto name :
       {"task-brief", "tech-lead-dispatch", "final-review-dispatch", "task-review-dispatch",
        "documentation-reviewer-dispatch", "merge-audit-dispatch"})
    EXPECT_NE(template_spec(name), nullptr) << name;
}

TEST(Templates, UnknownPlaceholderInAnEditedTemplateIsNamed) {
  test::Scratch s;
  std::filesystem::copy(shipped_skill() + "/templates", s / "templates");
  test::write_text(s / "templates/task-brief.md", "Task {{task_id}} owned by {{owner}}\n");
  auto out = render_skill_template(s.path(), "task-brief", {{"task_id", "T1"}});
  ASSERT_FALSE(out.ok());
  EXPECT_NE(out.error().message.find("task-brief.md:1: unknown placeholder {{owner}}"),
            std::string::npos)
      << out.error().message;
  auto problems = check_skill_templates(s.path());
  ASSERT_EQ(problems.size(), 1u);
  EXPECT_NE(problems[0].find("{{owner}}"), std::string::npos);
}

TEST(Templates, UnknownTemplateAndMissingFile) {
  test::Scratch s;
  EXPECT_FALSE(render_skill_template(s.path(), "no-such", {}).ok());
  auto out = render_skill_template(s.path(), "task-brief", {});
  ASSERT_FALSE(out.ok());
  EXPECT_NE(out.error().message.find("task-brief.md"), std::string::npos);
  EXPECT_EQ(check_skill_templates(s.path()).size(), template_specs().size());
}

TEST(Templates, BulletList) {
  EXPECT_EQ(bullet_list({}), "none");
  EXPECT_EQ(bullet_list({"src/a/**", "b.h"}), "- `src/a/**`\n- `b.h`");
}

}  // namespace
}  // namespace devgraph::templates
