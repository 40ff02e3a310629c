#include "util/args.h"

#include <gtest/gtest.h>

#include <limits>
#include <optional>
#include <string>
#include <vector>

namespace devgraph {
namespace {

ArgParser move_parser() {
  ArgParser p("prog");
  p.option("bundle", "", true).option("node", "", true).option("detail").flag("reset");
  return p;
}

TEST(ArgParser, TakesAnyUnambiguousPrefixOfALongOption) {
  auto a = move_parser().parse({"--bu", "B1", "--no=plan", "--det", "{}", "--re"});
  ASSERT_TRUE(a.ok()) << a.error().message;
  EXPECT_EQ(a->get("bundle"), "B1");
  EXPECT_EQ(a->get("node"), "plan");
  EXPECT_EQ(a->get("detail"), "{}");
  EXPECT_TRUE(a->flag("reset"));
  // --h is a prefix of --help alone here.
  auto h = move_parser().parse({"--h"});
  ASSERT_FALSE(h.ok());
  EXPECT_EQ(h.error().exit_code, 0);
  EXPECT_NE(h.error().message.find("options:"), std::string::npos);
}

TEST(ArgParser, RefusesAnAmbiguousPrefix) {
  ArgParser p("prog");
  p.option("node").option("notes");
  auto a = p.parse({"--no", "x"});
  ASSERT_FALSE(a.ok());
  EXPECT_EQ(a.error().exit_code, 2);
  EXPECT_NE(a.error().message.find("prog: error: ambiguous option: --no could match --node, "
                                   "--notes"),
            std::string::npos)
      << a.error().message;
  // An exact name wins over a longer option it is a prefix of.
  ArgParser q("prog");
  q.option("node").option("node-id");
  auto b = q.parse({"--node", "x"});
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(b->get("node"), "x");
}

TEST(ArgParser, AValueThatLooksLikeAnOptionIsMissing) {
  for (const char* word : {"-x", "--", "--zz", "--no", "-h"}) {
    auto a = move_parser().parse({"--bundle", word, "--node", "n"});
    ASSERT_FALSE(a.ok()) << word;
    EXPECT_EQ(a.error().exit_code, 2);
    EXPECT_NE(a.error().message.find("argument --bundle: expected one argument"), std::string::npos)
        << word << ": " << a.error().message;
  }
  // Negative numbers, "-" alone and words with a space are values.
  for (const char* word : {"-5", "-1.5", "-.5", "-", "-x y"}) {
    auto a = move_parser().parse({"--bundle", word, "--node", "n"});
    ASSERT_TRUE(a.ok()) << word << ": " << a.error().message;
    EXPECT_EQ(a->get("bundle"), word);
  }
}

TEST(ArgParser, SwitchesTakeNoValueAndUnknownsAreErrors) {
  auto a = move_parser().parse({"--bundle", "B", "--node", "n", "--res=1"});
  ASSERT_FALSE(a.ok());
  EXPECT_NE(a.error().message.find("argument --reset: ignored explicit argument '1'"),
            std::string::npos);
  auto b = move_parser().parse({"--bundle", "B", "--node", "n", "--zz"});
  ASSERT_FALSE(b.ok());
  EXPECT_NE(b.error().message.find("unrecognized arguments: --zz"), std::string::npos);
  auto c = move_parser().parse({"--bundle", "B"});
  ASSERT_FALSE(c.ok());
  EXPECT_NE(c.error().message.find("the following arguments are required: --node"),
            std::string::npos);
}

TEST(ArgParser, ARepeatedOptionKeepsEveryValueInOrder) {
  ArgParser p("prog");
  p.repeated("label").option("repo");
  auto a = p.parse({"--label", "a", "--repo", "r", "--label=b", "--lab", "a", "--repo", "s"});
  ASSERT_TRUE(a.ok()) << a.error().message;
  EXPECT_EQ(a->all("label"), (std::vector<std::string>{"a", "b", "a"}));
  EXPECT_EQ(a->get("label"), "a");
  // A plain option keeps its last value and lists none.
  EXPECT_EQ(a->get("repo"), "s");
  EXPECT_TRUE(a->all("repo").empty());
  auto none = p.parse({});
  ASSERT_TRUE(none.ok());
  EXPECT_TRUE(none->all("label").empty());
  EXPECT_FALSE(none->has("label"));
  auto missing = p.parse({"--label"});
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.error().message.find("argument --label: expected one argument"),
            std::string::npos);
}

// `devgraph run --board [PORT]`: every spelling of an option whose value
// may be left out.
TEST(ArgParser, AnOptionalValueComesBareAsTheNextWordOrAfterAnEqualsSign) {
  ArgParser p("prog");
  p.optional_value("board", "", "PORT").option("bind").flag("open").option("budget-usd");
  struct Case {
    std::vector<std::string> args;
    bool given;
    std::optional<std::string> value;
  };
  const std::vector<Case> cases = {
      {{}, false, std::nullopt},
      {{"--board"}, true, std::nullopt},                       // the last word
      {{"--board", "--open"}, true, std::nullopt},             // another flag after it
      {{"--board", "--bind", "0.0.0.0"}, true, std::nullopt},  // an option after it
      {{"--board", "--"}, true, std::nullopt},
      {{"--board", "8080"}, true, "8080"},
      {{"--board=8080"}, true, "8080"},
      {{"--board="}, true, ""},
      {{"--boa", "8080", "--open"}, true, "8080"},           // a prefix, as for any option
      {{"--board", "-1"}, true, "-1"},                       // a negative number is a value
      {{"--board", "8080", "--board"}, true, std::nullopt},  // the last spelling decides
      {{"--board", "--board=9"}, true, "9"},
  };
  for (const auto& c : cases) {
    std::string words;
    for (const auto& w : c.args) words += w + " ";
    auto a = p.parse(c.args);
    ASSERT_TRUE(a.ok()) << words << a.error().message;
    EXPECT_EQ(a->flag("board"), c.given) << words;
    EXPECT_EQ(a->get("board"), c.value) << words;
  }
  auto both = p.parse({"--board", "--open", "--bind", "0.0.0.0"});
  ASSERT_TRUE(both.ok());
  EXPECT_TRUE(both->flag("open"));
  EXPECT_EQ(both->get("bind"), "0.0.0.0");
  // A word that is no option and no value of one is still an error.
  auto extra = p.parse({"--board", "1", "2"});
  ASSERT_FALSE(extra.ok());
  EXPECT_NE(extra.error().message.find("unrecognized arguments: 2"), std::string::npos);
  // `--b` could be any of three.
  auto ambiguous = p.parse({"--b"});
  ASSERT_FALSE(ambiguous.ok());
  EXPECT_NE(ambiguous.error().message.find("ambiguous option"), std::string::npos);
  EXPECT_NE(p.usage().find("[--board [PORT]]"), std::string::npos) << p.usage();
  EXPECT_NE(p.help().find("  --board [PORT]"), std::string::npos) << p.help();
}

TEST(ArgParser, AUsageErrorIsOfKindUsage) {
  auto a = move_parser().parse({"--bundle", "B"});
  ASSERT_FALSE(a.ok());
  EXPECT_EQ(a.error().kind, ErrorKind::usage);
  EXPECT_EQ(a.error().exit_code, 2);
  EXPECT_EQ(move_parser().usage_error("x").kind, ErrorKind::usage);
}

TEST(ParseInt, ReadsWhatPythonsIntReads) {
  EXPECT_EQ(parse_int("3"), 3);
  EXPECT_EQ(parse_int(" 3\t\n"), 3);
  EXPECT_EQ(parse_int("+7"), 7);
  EXPECT_EQ(parse_int("-7"), -7);
  EXPECT_EQ(parse_int("1_000"), 1000);
  EXPECT_EQ(parse_int("007"), 7);
  EXPECT_EQ(parse_int("9223372036854775807"), std::numeric_limits<long long>::max());
  EXPECT_EQ(parse_int("-9223372036854775808"), std::numeric_limits<long long>::min());
  for (const char* bad :
       {"", " ", "+", "-", "_1", "1_", "1__0", "1.0", "0x10", "1e3", "3 4", "--3", "+-3", "١"}) {
    bool range = true;
    EXPECT_EQ(parse_int(bad, &range), std::nullopt) << bad;
    EXPECT_FALSE(range) << bad;
  }
}

TEST(ParseInt, ReportsNumbersBeyondSixtyFourBits) {
  for (const char* big :
       {"9223372036854775808", "-9223372036854775809", "100000000000000000000000000000"}) {
    bool range = false;
    EXPECT_EQ(parse_int(big, &range), std::nullopt) << big;
    EXPECT_TRUE(range) << big;
  }
}

}  // namespace
}  // namespace devgraph

namespace devgraph {
namespace {

TEST(ParseSeconds, TakesWholeFiniteNumbersOnly) {
  EXPECT_EQ(parse_seconds("1.5"), 1.5);
  EXPECT_EQ(parse_seconds("0"), 0.0);
  EXPECT_FALSE(parse_seconds("1.5s"));
  EXPECT_FALSE(parse_seconds("inf"));
  EXPECT_FALSE(parse_seconds("nan"));
  EXPECT_FALSE(parse_seconds(""));
}

}  // namespace
}  // namespace devgraph

namespace devgraph {
namespace {

ArgParser documented_parser() {
  ArgParser p("prog");
  p.description("What prog does.")
      .positional("item", "the item")
      .hint(ValueHint::bundle)
      .option("repo", "the repository")
      .default_value("the current directory")
      .hint(ValueHint::directory)
      .option("state", "which ones", false, {"open", "closed"})
      .default_value("open")
      .flag("json", "print JSON")
      .repeated("label", "a label")
      .epilog([] { return std::string("example:\n  prog b1 --json\n"); });
  return p;
}

TEST(ArgParser, HelpListsEveryDeclarationWithItsValueAndDefaultThenTheEpilog) {
  const std::string h = documented_parser().help();
  EXPECT_EQ(
      h.rfind("usage: prog [-h] [--repo REPO] [--state STATE] [--json] [--label LABEL] item\n", 0),
      0u)
      << h;
  EXPECT_NE(h.find("\nWhat prog does.\n"), std::string::npos) << h;
  EXPECT_NE(h.find("  item                  the item\n"), std::string::npos) << h;
  EXPECT_NE(h.find("  -h, --help            show this help message and exit\n"), std::string::npos)
      << h;
  EXPECT_NE(h.find("  --repo REPO           the repository (default: the current directory)\n"),
            std::string::npos)
      << h;
  EXPECT_NE(h.find("  --state {open,closed}\n                        which ones (default: open)\n"),
            std::string::npos)
      << h;
  EXPECT_NE(h.find("  --json                print JSON\n"), std::string::npos) << h;
  EXPECT_EQ(h.substr(h.size() - 26), "example:\n  prog b1 --json\n") << h;
}

TEST(ArgParser, HelpOnlyFieldsLeaveTheUsageAsArgparseWritesIt) {
  ArgParser plain("prog");
  plain.positional("item", "the item")
      .option("repo", "the repository")
      .option("state", "which ones", false, {"open", "closed"})
      .flag("json", "print JSON")
      .repeated("label", "a label");
  EXPECT_EQ(documented_parser().usage(), plain.usage());
  auto e = documented_parser().parse({});
  ASSERT_FALSE(e.ok());
  EXPECT_EQ(e.error().message,
            plain.usage_error("the following arguments are required: item").message);
}

TEST(ArgParser, AnUnknownOptionSaysWhichOneWasMeantOnTheSameLine) {
  auto a = documented_parser().parse({"b1", "--jsno"});
  ASSERT_FALSE(a.ok());
  EXPECT_EQ(a.error().exit_code, 2);
  EXPECT_EQ(a.error().message, documented_parser().usage() +
                                   "\nprog: error: unrecognized arguments: --jsno (did you mean "
                                   "--json?)");
  auto far = documented_parser().parse({"b1", "--frobnicate"});
  ASSERT_FALSE(far.ok());
  EXPECT_EQ(far.error().message,
            documented_parser().usage() + "\nprog: error: unrecognized arguments: --frobnicate");
  auto help = documented_parser().parse({"--hlep"});
  ASSERT_FALSE(help.ok());
  EXPECT_NE(help.error().message.find("(did you mean --help?)"), std::string::npos);
}

TEST(ArgParser, AnOptionalPositionalMayBeLeftOut) {
  ArgParser p("prog");
  p.positional("shell", "").choices({"bash", "zsh"}).optional().positional("dir", "").optional();
  EXPECT_EQ(p.usage(), "usage: prog [-h] [shell] [dir]");
  auto none = p.parse({});
  ASSERT_TRUE(none.ok()) << none.error().message;
  EXPECT_TRUE(none->positionals().empty());
  auto one = p.parse({"bash"});
  ASSERT_TRUE(one.ok());
  EXPECT_EQ(one->positionals(), std::vector<std::string>{"bash"});
  EXPECT_FALSE(p.parse({"a", "b", "c"}).ok());
  EXPECT_NE(p.help().find("  {bash,zsh}\n"), std::string::npos) << p.help();
}

TEST(ArgParser, TheSynopsisShowsPositionalsInCapitalsThenTheOptions) {
  EXPECT_EQ(documented_parser().synopsis(),
            "ITEM [--repo REPO] [--state {open,closed}] [--json] [--label LABEL...]");
  EXPECT_EQ(documented_parser().options()[0].hint, ValueHint::directory);
  EXPECT_EQ(documented_parser().positionals()[0].hint, ValueHint::bundle);
  EXPECT_EQ(documented_parser().options()[1].default_value, "open");
  EXPECT_EQ(documented_parser().options()[2].default_value, std::nullopt);
}

}  // namespace
}  // namespace devgraph
