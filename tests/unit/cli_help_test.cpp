// The verb table as documentation: every verb's help, the top-level help
// and the man pages list what the parsers declare, and nothing else.
#include <gtest/gtest.h>

#include <regex>
#include <set>
#include <string>
#include <vector>

#include "cli/completion.h"
#include "cli/help.h"
#include "cli/verbs.h"

namespace devgraph {
namespace {

// Runs of blanks and newlines as one space: help wraps long lines.
std::string squeezed(const std::string& text) {
  std::string out;
  for (char c : text) {
    const bool blank = c == ' ' || c == '\n';
    if (blank && !out.empty() && out.back() == ' ') continue;
    out.push_back(blank ? ' ' : c);
  }
  return out;
}

// Every parser of a verb: its own and each sub-command's.
std::vector<ArgParser> parsers_of(const Verb& v) {
  std::vector<ArgParser> all{v.parser()};
  if (v.subcommands != nullptr)
    for (auto& s : v.subcommands()) all.push_back(s.parser);
  return all;
}

std::set<std::string> declared_flags(const Verb& v) {
  std::set<std::string> flags{"--help"};
  for (const auto& p : parsers_of(v))
    for (const auto& o : p.options()) flags.insert("--" + o.name);
  return flags;
}

TEST(VerbTable, EveryVerbHasAGroupASummaryAParserAndAnExampleOfItself) {
  std::set<std::string> names;
  for (const Verb& v : verb_table()) {
    SCOPED_TRACE(v.name);
    EXPECT_TRUE(names.insert(v.name).second) << "listed twice";
    EXPECT_NE(std::string(v.summary), "");
    EXPECT_NE(std::string(group_title(v.group)), "");
    ASSERT_NE(v.parser, nullptr);
    EXPECT_EQ(v.parser().prog(), "devgraph " + std::string(v.name));
    EXPECT_EQ(std::string(v.example).rfind("devgraph " + std::string(v.name) + " ", 0), 0u)
        << v.example;
    EXPECT_EQ(find_verb(v.name), &v);
  }
  EXPECT_EQ(find_verb("no-such-verb"), nullptr);
}

TEST(VerbHelp, ListsEveryFlagOfEveryParserWithItsDefaultAndTheExample) {
  for (const Verb& v : verb_table()) {
    SCOPED_TRACE(v.name);
    const std::string help = squeezed(verb_help(v));
    EXPECT_EQ(help.rfind(squeezed(verb_usage(v)), 0), 0u) << help;
    for (const auto& p : parsers_of(v))
      for (const auto& o : p.options()) {
        if (o.hidden) {
          // A test-only or script-only flag: parsed, never offered.
          EXPECT_EQ(help.find("--" + o.name + " "), std::string::npos) << o.name;
          continue;
        }
        EXPECT_NE(help.find("--" + o.name), std::string::npos) << o.name;
        if (o.default_value) {
          EXPECT_NE(help.find("(default: " + squeezed(*o.default_value) + ")"), std::string::npos)
              << o.name;
        }
      }
    if (v.subcommands != nullptr) {
      for (const auto& s : v.subcommands())
        EXPECT_NE(help.find(" " + s.name + " "), std::string::npos) << s.name;
    }
    EXPECT_NE(help.find("example: " + std::string(v.example)), std::string::npos);
    if (*v.exit_status != '\0') {
      EXPECT_NE(help.find("exit status:"), std::string::npos);
    }
  }
}

TEST(VerbHelp, NamesNoFlagTheVerbDoesNotParse) {
  const std::regex flag("--[a-z][a-z0-9-]*");
  for (const Verb& v : verb_table()) {
    SCOPED_TRACE(v.name);
    // Quoted text is a value (a command line of another program).
    const std::string help = std::regex_replace(verb_help(v), std::regex("(^|\\s)'[^']*'"), "$1''");
    const auto declared = declared_flags(v);
    for (auto it = std::sregex_iterator(help.begin(), help.end(), flag);
         it != std::sregex_iterator(); ++it)
      EXPECT_TRUE(declared.count(it->str())) << it->str() << " in\n" << help;
  }
}

// The words that reach parser `index` of parsers_of(v): the verb, then for
// a sub-command any positionals before it and its name.
std::vector<std::string> words_to(const Verb& v, size_t index) {
  std::vector<std::string> words{v.name};
  if (index == 0) return words;
  const ArgParser top = v.parser();
  for (const auto& p : top.positionals()) {
    if (p.hint == ValueHint::subcommand) break;
    words.push_back("X");
  }
  words.push_back(v.subcommands()[index - 1].name);
  return words;
}

class NoValues : public completion::ValueSource {
 public:
  std::vector<completion::Candidate> values(ValueHint, const std::string&) override { return {}; }
};

// Help and completion are made from the same declarations: each flag a
// parser accepts is offered where that parser is in force, and nothing else.
TEST(VerbHelp, AgreesWithTheCompletionOnEveryParsersFlags) {
  NoValues none;
  for (const Verb& v : verb_table()) {
    const auto all = parsers_of(v);
    for (size_t i = 0; i < all.size(); ++i) {
      SCOPED_TRACE(std::string(v.name) + " parser " + std::to_string(i));
      auto words = words_to(v, i);
      words.push_back("--");
      std::set<std::string> offered;
      for (const auto& c : completion::complete(verb_table(), words, none)) offered.insert(c.value);
      std::set<std::string> expected{"--help"};
      for (const auto& o : all[i].options())
        if (!o.hidden) expected.insert("--" + o.name);
      EXPECT_EQ(offered, expected);
    }
  }
}

TEST(TopHelp, ListsEveryVerbUnderItsGroupsHeading) {
  const std::string help = top_help();
  EXPECT_EQ(help.rfind("usage: devgraph <verb> [args...]\n", 0), 0u);
  std::vector<std::pair<size_t, VerbGroup>> headings;
  for (VerbGroup g : {VerbGroup::loop, VerbGroup::look, VerbGroup::bundle, VerbGroup::blocks}) {
    const size_t at = help.find(std::string("\n") + group_title(g) + ":\n");
    ASSERT_NE(at, std::string::npos) << group_title(g);
    if (!headings.empty()) {
      EXPECT_GT(at, headings.back().first) << group_title(g);
    }
    headings.emplace_back(at, g);
  }
  for (const Verb& v : verb_table()) {
    const size_t at = help.find("\n  " + std::string(v.name) + " ");
    if (v.internal) {
      EXPECT_EQ(at, std::string::npos) << v.name << " is internal";
      continue;
    }
    ASSERT_NE(at, std::string::npos) << v.name;
    VerbGroup under = headings.front().second;
    for (const auto& [heading, g] : headings)
      if (heading < at) under = g;
    EXPECT_EQ(under, v.group) << v.name;
  }
  EXPECT_NE(find_verb("run"), nullptr);
  EXPECT_EQ(find_verb("run")->group, VerbGroup::loop);
  EXPECT_EQ(find_verb("board")->group, VerbGroup::look);
  EXPECT_EQ(find_verb("run-bundle")->group, VerbGroup::bundle);
  EXPECT_EQ(find_verb("checkpoint")->group, VerbGroup::blocks);
}

TEST(VerbHelp, EveryLineFitsEightyColumns) {
  auto check = [](const std::string& what, const std::string& text) {
    size_t start = 0;
    while (start < text.size()) {
      size_t end = text.find('\n', start);
      if (end == std::string::npos) end = text.size();
      const std::string line = text.substr(start, end - start);
      // A single word longer than the width (a long example) cannot wrap.
      if (line.find(' ', line.find_first_not_of(' ')) != std::string::npos) {
        EXPECT_LE(line.size(), 79u) << what << ": " << line;
      }
      start = end + 1;
    }
  };
  check("devgraph --help", top_help());
  for (const Verb& v : verb_table()) {
    SCOPED_TRACE(v.name);
    std::string help = verb_help(v);
    // The example is one command line, shown as it is typed.
    const size_t example = help.find("example:\n  ");
    if (example != std::string::npos) {
      const size_t end = help.find('\n', example + 11);
      help.erase(example, end - example);
    }
    check(v.name, help);
  }
}

TEST(ArgParser, HelpWrapsTheUsageLineAsArgparseDoes) {
  ArgParser p("devgraph thing");
  p.option("first-option", "a")
      .option("second-option", "b")
      .option("third-option", "c")
      .option("fourth-option", "d")
      .flag("secret", "only tests pass it")
      .hidden();
  EXPECT_EQ(p.usage(),
            "usage: devgraph thing [-h] [--first-option FIRST_OPTION] [--second-option "
            "SECOND_OPTION] [--third-option THIRD_OPTION] [--fourth-option FOURTH_OPTION]");
  EXPECT_EQ(p.help().substr(0, p.help().find("\n\n")),
            "usage: devgraph thing [-h] [--first-option FIRST_OPTION]\n"
            "                      [--second-option SECOND_OPTION]\n"
            "                      [--third-option THIRD_OPTION]\n"
            "                      [--fourth-option FOURTH_OPTION]");
  EXPECT_EQ(p.help().find("--secret"), std::string::npos);
  auto parsed = p.parse({"--secret"});
  ASSERT_TRUE(parsed.ok());
  EXPECT_TRUE(parsed->flag("secret"));
}

TEST(ManPages, OnePagePerVerbWithEveryFlagAndDefault) {
  const auto pages = man_pages("9.9.9");
  ASSERT_EQ(pages.size(), verb_table().size() + 1);
  ASSERT_TRUE(pages.count("devgraph.1"));
  const std::string& main = pages.at("devgraph.1");
  EXPECT_EQ(main.rfind(".TH DEVGRAPH 1 \"\" \"devgraph 9.9.9\" \"devgraph manual\"\n", 0), 0u);
  for (const char* section : {".SH NAME\n", ".SH SYNOPSIS\n", ".SH DESCRIPTION\n", ".SH VERBS\n",
                              ".SH EXIT STATUS\n", ".SH SEE ALSO\n"})
    EXPECT_NE(main.find(section), std::string::npos) << section;
  auto roff = [](std::string text) {
    std::string out;
    for (char c : text) out += c == '-' ? std::string("\\-") : std::string(1, c);
    return out;
  };
  for (const Verb& v : verb_table()) {
    SCOPED_TRACE(v.name);
    const std::string name = "devgraph-" + std::string(v.name) + ".1";
    ASSERT_TRUE(pages.count(name));
    const std::string& page = pages.at(name);
    std::string upper;
    for (char c : "DEVGRAPH-" + std::string(v.name)) upper += static_cast<char>(std::toupper(c));
    EXPECT_EQ(page.rfind(".TH " + roff(upper) + " 1 ", 0), 0u) << page.substr(0, 80);
    for (const char* section :
         {".SH NAME\n", ".SH SYNOPSIS\n", ".SH DESCRIPTION\n", ".SH EXAMPLE\n", ".SH SEE ALSO\n"})
      EXPECT_NE(page.find(section), std::string::npos) << section;
    EXPECT_EQ(page.find(".SH EXIT STATUS\n") != std::string::npos, *v.exit_status != '\0');
    EXPECT_NE(page.find(roff(v.example)), std::string::npos);
    EXPECT_NE(main.find(".BR devgraph\\-" + roff(v.name) + " (1)"), std::string::npos);
    for (const auto& p : parsers_of(v))
      for (const auto& o : p.options()) {
        EXPECT_NE(page.find("\\-\\-" + roff(o.name)), std::string::npos) << o.name;
        if (o.default_value) {
          EXPECT_NE(page.find("(default: " + roff(*o.default_value) + ")"), std::string::npos)
              << o.name;
        }
      }
  }
}

}  // namespace
}  // namespace devgraph
