// The documents a newcomer reads, held to the verb table: the README's verb
// table is `devgraph --help` (same verbs, same order, same lines), the
// README stays short, its test command is the one CI runs, every link of
// the README and docs/ resolves, and the generated reference (checked in
// as docs/reference.md, compared by the docs.ReferenceIsCurrent test)
// names every verb. ARCHITECTURE.md maps every module under src/.
#include <gtest/gtest.h>

#include <filesystem>
#include <regex>
#include <string>
#include <vector>

#include "cli/help.h"
#include "cli/verbs.h"
#include "support/test_util.h"

namespace devgraph {
namespace {

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    lines.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  return lines;
}

std::string readme() {
  return test::slurp(test::source_dir() + "/README.md");
}

// The rows of the README's "## Verbs" table: (verb, what it does).
std::vector<std::pair<std::string, std::string>> readme_verb_rows() {
  std::vector<std::pair<std::string, std::string>> rows;
  bool in_verbs = false;
  static const std::regex row(R"(^\| `([a-z-]+)` \| (.*) \|$)");
  for (const auto& line : lines_of(readme())) {
    if (line.rfind("## ", 0) == 0) in_verbs = line == "## Verbs";
    std::smatch m;
    if (in_verbs && std::regex_match(line, m, row)) rows.emplace_back(m[1], m[2]);
  }
  return rows;
}

TEST(Readme, VerbTableIsTheHelpsVerbsInItsOrderWithTheirSummaries) {
  std::vector<std::pair<std::string, std::string>> expected;
  for (VerbGroup g : {VerbGroup::loop, VerbGroup::look, VerbGroup::bundle, VerbGroup::blocks})
    for (const Verb& v : verb_table())
      if (v.group == g && !v.internal) expected.emplace_back(v.name, v.summary);
  ASSERT_FALSE(expected.empty());
  EXPECT_EQ(readme_verb_rows(), expected)
      << "README.md's verb table lists the verbs of `devgraph --help`, in its order, each with "
         "its summary from src/cli/verbs.cpp";
  const std::string help = top_help();
  for (const auto& [name, summary] : expected)
    EXPECT_NE(help.find("\n  " + name + " "), std::string::npos) << name;
}

TEST(Readme, NamesTheInternalVerbsThatHelpLeavesOut) {
  const std::string text = readme();
  const std::string help = top_help();
  for (const Verb& v : verb_table()) {
    if (!v.internal) continue;
    EXPECT_EQ(help.find("\n  " + std::string(v.name) + " "), std::string::npos) << v.name;
    EXPECT_NE(text.find("`" + std::string(v.name) + "`"), std::string::npos) << v.name;
  }
}

TEST(Readme, StaysUnderTwoHundredLines) {
  EXPECT_LT(lines_of(readme()).size(), 200u)
      << "move the detail to docs/ and link it from the README";
}

TEST(Readme, QuickStartTestCommandIsTheOneCiRuns) {
  // .ci/run runs the README's quick-start test command verbatim: its last
  // line, word for word, is a line of the README's Quick start.
  const auto ci = lines_of(test::slurp(test::source_dir() + "/.ci/run"));
  ASSERT_FALSE(ci.empty());
  const std::string command = ci.back();
  EXPECT_EQ(command, "./scripts/bootstrap.sh && ./scripts/test.sh");
  bool in_quick_start = false, found = false;
  for (const auto& line : lines_of(readme())) {
    if (line.rfind("## ", 0) == 0) in_quick_start = line == "## Quick start";
    if (in_quick_start && line == command) found = true;
  }
  EXPECT_TRUE(found) << "README.md's Quick start has no line `" << command << "`";
}

TEST(Docs, EveryRelativeLinkOfTheReadmeAndDocsResolves) {
  namespace fs = std::filesystem;
  std::vector<fs::path> files{fs::path(test::source_dir()) / "README.md",
                              fs::path(test::source_dir()) / "ARCHITECTURE.md",
                              fs::path(test::source_dir()) / "CONTRIBUTING.md"};
  for (const auto& entry : fs::directory_iterator(fs::path(test::source_dir()) / "docs"))
    if (entry.path().extension() == ".md") files.push_back(entry.path());
  static const std::regex link(R"(\]\(([^)#\s]+)(#[^)\s]*)?\))");
  size_t links = 0;
  for (const auto& file : files) {
    const std::string text = test::slurp(file.string());
    for (std::sregex_iterator it(text.begin(), text.end(), link), end; it != end; ++it) {
      const std::string target = (*it)[1];
      if (target.find("://") != std::string::npos || target.rfind("mailto:", 0) == 0) continue;
      ++links;
      EXPECT_TRUE(fs::exists(file.parent_path() / target))
          << file.filename().string() << " links to " << target << ", which is not there";
    }
  }
  EXPECT_GT(links, 10u);
}

TEST(Architecture, MapsEveryModuleAndGivesEachItsContractLine) {
  namespace fs = std::filesystem;
  const std::string text = test::slurp(test::source_dir() + "/ARCHITECTURE.md");
  size_t modules = 0;
  for (const auto& entry : fs::directory_iterator(fs::path(test::source_dir()) / "src")) {
    if (!entry.is_directory()) continue;
    const std::string name = entry.path().filename().string();
    ++modules;
    EXPECT_NE(text.find("\nsrc/" + name + "/"), std::string::npos)
        << "src/" << name << "/ is missing from ARCHITECTURE.md's map";
    EXPECT_NE(text.find("\n- **" + name + "** ("), std::string::npos)
        << "src/" << name << "/ has no contract line in ARCHITECTURE.md";
  }
  EXPECT_GT(modules, 20u);
}

TEST(Reference, HasASectionPerVerbAndEveryFlag) {
  const std::string md = reference_markdown();
  EXPECT_EQ(md.rfind("# devgraph verb reference\n", 0), 0u);
  EXPECT_EQ(md.find("9.9.9"), std::string::npos);
  size_t last = 0;
  for (const Verb& v : verb_table()) {
    SCOPED_TRACE(v.name);
    const size_t at = md.find("\n### " + std::string(v.name) + "\n");
    ASSERT_NE(at, std::string::npos);
    if (!v.internal) {
      EXPECT_GT(at, last) << "out of --help order";
      last = at;
    } else {
      EXPECT_GT(at, md.find("\n## Internal verbs\n"));
    }
    EXPECT_NE(md.find(v.example, at), std::string::npos);
    std::vector<ArgParser> parsers{v.parser()};
    if (v.subcommands != nullptr)
      for (auto& s : v.subcommands()) parsers.push_back(s.parser);
    for (const auto& p : parsers)
      for (const auto& o : p.options())
        EXPECT_NE(md.find("- `--" + o.name, at), std::string::npos) << o.name;
  }
}

TEST(Reference, EscapesMarkupOutsideCode) {
  const std::string md = reference_markdown();
  // <develop_home> in a default would be an HTML tag to a Markdown reader.
  EXPECT_NE(md.find("&lt;develop_home>"), std::string::npos);
  EXPECT_EQ(md.find(" <develop_home>"), std::string::npos);
}

}  // namespace
}  // namespace devgraph
