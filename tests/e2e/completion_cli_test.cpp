// Help, shell completion and man pages as a user meets them: the real
// binary's --help for every verb it lists, its suggestions for a mistyped
// verb or flag, the bash script it prints driven as bash drives it, and the
// man pages it writes.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <map>
#include <string>
#include <vector>

#include "support/build_paths.h"
#include "cli/verbs.h"
#include "guard/guard.h"
#include "support/test_util.h"

namespace devgraph {
namespace {

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  size_t i = 0;
  while (i < text.size()) {
    size_t end = text.find('\n', i);
    if (end == std::string::npos) end = text.size();
    out.push_back(text.substr(i, end - i));
    i = end + 1;
  }
  return out;
}

std::string squeezed(const std::string& text) {
  std::string out;
  for (char c : text) {
    const bool blank = c == ' ' || c == '\n';
    if (blank && !out.empty() && out.back() == ' ') continue;
    out.push_back(blank ? ' ' : c);
  }
  return out;
}

// The words before a parser's flags: the verb, then for a sub-command the
// positionals before it and its name.
std::vector<std::string> words_to(const Verb& v, const std::string& sub) {
  std::vector<std::string> words{v.name};
  if (sub.empty()) return words;
  for (const auto& p : v.parser().positionals()) {
    if (p.hint == ValueHint::subcommand) break;
    words.push_back("RUN");
  }
  words.push_back(sub);
  return words;
}

// Every verb the binary lists answers --help with exit 0, every flag of its
// parsers and their defaults, and its example; and each flag the help shows
// is one the binary's parser takes (`--flag=VALUE --help` is the help, where
// an unknown flag would be a usage error).
TEST(HelpCli, EveryVerbTheBinaryListsDocumentsEveryFlagItParses) {
  auto listed = test::run_devgraph({"completion", "--verbs"});
  ASSERT_EQ(listed.exit_code, 0) << listed.err;
  const auto verbs = lines_of(listed.out);
  ASSERT_EQ(verbs.size(), verb_table().size());
  for (const auto& name : verbs) {
    SCOPED_TRACE(name);
    const Verb* v = find_verb(name);
    ASSERT_NE(v, nullptr);
    auto help = test::run_devgraph({name, "--help"});
    ASSERT_EQ(help.exit_code, 0) << help.err;
    EXPECT_EQ(help.err, "");
    const std::string text = squeezed(help.out);
    EXPECT_NE(text.find("example: " + std::string(v->example)), std::string::npos) << text;
    std::vector<std::pair<std::string, ArgParser>> parsers{{"", v->parser()}};
    if (v->subcommands != nullptr)
      for (auto& s : v->subcommands()) parsers.emplace_back(s.name, s.parser);
    for (const auto& [sub, parser] : parsers)
      for (const auto& o : parser.options()) {
        SCOPED_TRACE(sub + " --" + o.name);
        // A hidden flag (what only tests or the scripts pass) is parsed
        // like any other, and never shown.
        EXPECT_EQ(text.find("--" + o.name) != std::string::npos, !o.hidden);
        if (o.default_value) {
          EXPECT_NE(text.find("(default: " + squeezed(*o.default_value) + ")"), std::string::npos);
        }
        auto args = words_to(*v, sub);
        if (o.is_flag)
          args.push_back("--" + o.name);
        else
          args.push_back("--" + o.name + "=" + (o.choices.empty() ? "x" : o.choices[0]));
        args.push_back("--help");
        auto taken = test::run_devgraph(args);
        EXPECT_EQ(taken.exit_code, 0) << taken.err;
      }
  }
}

TEST(HelpCli, TheTopHelpGroupsTheVerbsByJob) {
  auto r = test::run_devgraph({"--help"});
  ASSERT_EQ(r.exit_code, 0);
  size_t last = 0;
  for (const char* heading : {"\nRun the loop:\n", "\nLook at it:\n", "\nOne bundle or branch:\n",
                              "\nBuilding blocks:\n"}) {
    const size_t at = r.out.find(heading);
    ASSERT_NE(at, std::string::npos) << heading << r.out;
    EXPECT_GT(at, last);
    last = at;
  }
  auto bare = test::run_devgraph({});
  EXPECT_EQ(bare.exit_code, 2);
  EXPECT_EQ(bare.err, r.out);
}

TEST(HelpCli, AMistypedFlagOrVerbSaysWhatWasMeant) {
  auto flag = test::run_devgraph({"run", "--bord"});
  EXPECT_EQ(flag.exit_code, 3);
  const auto err = lines_of(flag.err);
  ASSERT_EQ(err.size(), 2u) << flag.err;
  EXPECT_EQ(err[0].rfind("usage: devgraph run [-h] ", 0), 0u) << flag.err;
  EXPECT_EQ(err[1], "devgraph run: error: unrecognized arguments: --bord (did you mean --board?)");
  auto far = test::run_devgraph({"run", "--frobnicate"});
  EXPECT_EQ(far.exit_code, 3);
  EXPECT_EQ(lines_of(far.err)[1], "devgraph run: error: unrecognized arguments: --frobnicate");
  auto sub = test::run_devgraph({"issue", "list", "--jsno"});
  EXPECT_EQ(sub.exit_code, 3);
  EXPECT_NE(sub.err.find("unrecognized arguments: --jsno (did you mean --json?)"),
            std::string::npos)
      << sub.err;

  auto verb = test::run_devgraph({"rnu"});
  EXPECT_EQ(verb.exit_code, 2);
  EXPECT_EQ(verb.err, "devgraph: unknown verb 'rnu' (did you mean run? see `devgraph --help`)\n");
  auto none = test::run_devgraph({"frobnicate"});
  EXPECT_EQ(none.exit_code, 2);
  EXPECT_EQ(none.err, "devgraph: unknown verb 'frobnicate' (see `devgraph --help`)\n");
}

// A repository with a develop home: one local issue and one run with a
// bundle, as the completion reads them.
class CompletionCli : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = guard::resolve_path(scratch_.path(), "/", "");
    repo_ = root_ + "/widgets";
    ASSERT_TRUE(make_directories(repo_).ok());
    auto init = test::run_process({"git", "-c", "init.defaultBranch=main", "init", "-q"},
                                  {{"GIT_DIR", ""}, {"GIT_WORK_TREE", ""}}, repo_);
    ASSERT_EQ(init.exit_code, 0) << init.err;
    auto origin = test::run_process(
        {"git", "remote", "add", "origin", "git@github.com:Acme/Widgets.git"}, {}, repo_);
    ASSERT_EQ(origin.exit_code, 0) << origin.err;
    env_ = {{"AI_ROOT", root_ + "/ai"},
            {"DEVELOP_WORKTREES_ROOT", ""},
            {"DEVELOP_HOME_ROOT", ""},
            {"DEVELOP_GUARD_EXEMPT", ""},
            {"GIT_DIR", ""},
            {"GIT_WORK_TREE", ""}};
    home_ = root_ + "/ai/develop/Acme/Widgets";
  }

  // Loads the bash script the binary prints, sets COMP_WORDS to `words`
  // (the binary's path first) with the cursor on the last, calls the
  // completion function and returns COMPREPLY, one a line.
  test::ProcessResult bash_complete(const std::vector<std::string>& words) {
    std::string script =
        "source <(\"$DEVGRAPH\" completion bash) || exit 9\n"
        "COMP_WORDS=(\"$DEVGRAPH\" \"$@\"); COMP_CWORD=$#\n"
        "_devgraph\n"
        "printf '%s\\n' \"${COMPREPLY[@]}\"\n";
    std::vector<std::string> argv{"bash", "--norc", "--noprofile", "-c", script, "bash"};
    argv.insert(argv.end(), words.begin(), words.end());
    auto env = env_;
    env["DEVGRAPH"] = DEVGRAPH_BIN;
    return test::run_process(argv, env, repo_);
  }

  test::Scratch scratch_;
  std::string root_, repo_, home_;
  std::map<std::string, std::string> env_;
};

TEST_F(CompletionCli, TheBashScriptCompletesVerbsSubcommandsAndFlags) {
  auto verb = bash_complete({"ru"});
  ASSERT_EQ(verb.exit_code, 0) << verb.err;
  EXPECT_EQ(verb.out, "run\nrun-bundle\n");
  auto flag = bash_complete({"run", "--max-b"});
  EXPECT_EQ(flag.out, "--max-bundles\n") << flag.err;
  auto sub = bash_complete({"issue", "cl"});
  EXPECT_EQ(sub.out, "close\n") << sub.err;
  auto choice = bash_complete({"issue", "list", "--state", "c"});
  EXPECT_EQ(choice.out, "closed\n") << choice.err;
  // bash splits `--state=c` into three words.
  auto split = bash_complete({"issue", "list", "--state", "=", "c"});
  EXPECT_EQ(split.out, "closed\n") << split.err;
}

TEST_F(CompletionCli, TheBashScriptCompletesIssueNumbersAndBundleIdsOfTheRepository) {
  auto filed = test::run_devgraph({"issue", "new", "Crash on start"}, env_, repo_);
  ASSERT_EQ(filed.exit_code, 0) << filed.err;
  ASSERT_EQ(filed.out, "1\n");
  test::write_text(home_ + "/runs/20260101T000000Z-abcd/state.json",
                   R"({"bundles": [{"id": "b7", "title": "Crash on start"}]})");

  EXPECT_EQ(bash_complete({"issue", "show", ""}).out, "1\n");
  EXPECT_EQ(bash_complete({"issue", "close", "--reason", "dup", ""}).out, "1\n");
  EXPECT_EQ(bash_complete({"run-bundle", "RUN", "--bundle", ""}).out, "b7\n");
  EXPECT_EQ(bash_complete({"answer", "b"}).out, "b7\n");
  EXPECT_EQ(bash_complete({"answer", "b7", "--run", "2026"}).out, "20260101T000000Z-abcd\n");
  // With descriptions, as zsh and fish ask.
  auto described = test::run_devgraph(
      {"completion", "--complete", "--describe", "--", "issue", "show", ""}, env_, repo_);
  EXPECT_EQ(described.out, "1\topen: Crash on start\n");
}

TEST_F(CompletionCli, ACompletionThatCannotReadTheRunsSaysNothing) {
  test::write_text(home_ + "/runs/20260101T000000Z-abcd/state.json", "{not json");
  auto broken = bash_complete({"run-bundle", "RUN", "--bundle", ""});
  EXPECT_EQ(broken.exit_code, 0);
  EXPECT_EQ(broken.out, "\n");  // printf of an empty COMPREPLY
  EXPECT_EQ(broken.err, "");
  // Outside any repository: no ids, no error.
  auto outside =
      test::run_devgraph({"completion", "--complete", "--", "issue", "show", ""}, env_, root_);
  EXPECT_EQ(outside.exit_code, 0);
  EXPECT_EQ(outside.out, "");
  EXPECT_EQ(outside.err, "");
}

TEST_F(CompletionCli, TheBashScriptFallsBackToFilesForAFileValue) {
  test::write_text(repo_ + "/scenario.json", "{}");
  auto r = bash_complete({"run", "--sim-scenario", "scen"});
  EXPECT_EQ(r.out, "scenario.json\n") << r.err;
}

// zsh and fish are tested only where they are installed.
TEST_F(CompletionCli, TheZshAndFishScriptsLoad) {
  bool any = false;
  if (test::run_process({"sh", "-c", "command -v zsh"}).exit_code == 0) {
    any = true;
    std::string script =
        "autoload -Uz compinit && compinit -u -D; "
        "source <(\"$DEVGRAPH\" completion zsh) && whence -w _devgraph";
    auto env = env_;
    env["DEVGRAPH"] = DEVGRAPH_BIN;
    auto r = test::run_process({"zsh", "-f", "-c", script}, env, repo_);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_NE(r.out.find("_devgraph: function"), std::string::npos) << r.out;
  }
  if (test::run_process({"sh", "-c", "command -v fish"}).exit_code == 0) {
    any = true;
    std::string script = "\"$DEVGRAPH\" completion fish | source; and complete -C 'devgraph ru'";
    auto env = env_;
    env["DEVGRAPH"] = DEVGRAPH_BIN;
    env["PATH"] = dirname_of(DEVGRAPH_BIN) + ":" + std::string(std::getenv("PATH"));
    auto r = test::run_process({"fish", "--no-config", "-c", script}, env, repo_);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_NE(r.out.find("run\t"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("run-bundle\t"), std::string::npos) << r.out;
  }
  if (!any) GTEST_SKIP() << "neither zsh nor fish is installed";
}

TEST(ManCli, WritesOnePagePerVerbThatListsItsFlags) {
  test::Scratch dir;
  auto r = test::run_devgraph({"completion", "man", dir / "man"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto pages = lines_of(test::entries(dir / "man"));
  ASSERT_EQ(pages.size(), verb_table().size() + 1);
  EXPECT_NE(std::find(pages.begin(), pages.end(), "devgraph.1"), pages.end());
  const bool groff = test::run_process({"sh", "-c", "command -v groff"}).exit_code == 0;
  for (const Verb& v : verb_table()) {
    SCOPED_TRACE(v.name);
    const std::string path = dir / ("man/devgraph-" + std::string(v.name) + ".1");
    const std::string page = test::slurp(path);
    EXPECT_EQ(page.rfind(".TH DEVGRAPH\\-", 0), 0u);
    std::vector<ArgParser> parsers{v.parser()};
    if (v.subcommands != nullptr)
      for (auto& s : v.subcommands()) parsers.push_back(s.parser);
    for (const auto& p : parsers)
      for (const auto& o : p.options()) {
        std::string flag = "\\-\\-";
        for (char c : o.name) flag += c == '-' ? std::string("\\-") : std::string(1, c);
        EXPECT_NE(page.find(flag), std::string::npos) << o.name;
      }
    if (groff) {
      auto render = test::run_process({"groff", "-man", "-Tutf8", "-ww", "-z", path});
      EXPECT_EQ(render.exit_code, 0);
      EXPECT_EQ(render.err, "") << path;
    }
  }
  auto usage = test::run_devgraph({"completion", "man"});
  EXPECT_EQ(usage.exit_code, 2);
  EXPECT_NE(usage.err.find("man needs DIR"), std::string::npos);
  auto bad = test::run_devgraph({"completion", "tcsh"});
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.err.find("invalid choice: 'tcsh'"), std::string::npos);
}

}  // namespace
}  // namespace devgraph
