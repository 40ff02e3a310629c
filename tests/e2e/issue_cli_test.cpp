// `devgraph issue` as a process, in a temporary git repository with
// AI_ROOT in a temporary directory: new, list (plain and --json), show,
// close, and bad input refused with exit 3 and nothing written.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "guard/guard.h"
#include "support/test_util.h"

namespace devgraph {
namespace {

class IssueCli : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = guard::resolve_path(scratch_.path(), "/", "");
    repo_ = root_ + "/widgets";
    plain_ = root_ + "/plain";
    ASSERT_TRUE(make_directories(repo_).ok());
    ASSERT_TRUE(make_directories(plain_).ok());
    auto outside = test::run_process({"git", "-C", plain_, "rev-parse", "--absolute-git-dir"},
                                     {{"GIT_DIR", ""}, {"GIT_WORK_TREE", ""}});
    ASSERT_NE(outside.exit_code, 0) << "the temporary directory " << root_
                                    << " lies inside a repository; set TMPDIR outside any";
    git({"init", "-q"});
    git({"remote", "add", "origin", "git@github.com:Acme/Widgets.git"});
    env_ = {{"AI_ROOT", root_ + "/ai"},
            {"DEVELOP_WORKTREES_ROOT", ""},
            {"DEVELOP_HOME_ROOT", ""},
            {"DEVELOP_GUARD_EXEMPT", ""},
            {"GIT_DIR", ""},
            {"GIT_WORK_TREE", ""}};
    issues_ = root_ + "/ai/develop/Acme/Widgets/issues";
  }

  void git(std::vector<std::string> args) {
    args.insert(args.begin(), {"git", "-c", "init.defaultBranch=main"});
    auto r = test::run_process(args, {}, repo_);
    ASSERT_EQ(r.exit_code, 0) << r.err;
  }

  // `devgraph issue ARGS` in the repository (or in `cwd`).
  test::ProcessResult issue(std::vector<std::string> args, const std::string& cwd = "",
                            const std::string& input = "") {
    args.insert(args.begin(), "issue");
    return test::run_devgraph(args, env_, cwd.empty() ? repo_ : cwd, input);
  }

  // Files an issue and returns its number as printed.
  std::string file(std::vector<std::string> args) {
    args.insert(args.begin(), "new");
    auto r = issue(args);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(r.err, "");
    return r.out;
  }

  test::Scratch scratch_;
  std::string root_, repo_, plain_, issues_;
  std::map<std::string, std::string> env_;
};

size_t lines(const std::string& text) {
  return static_cast<size_t>(std::count(text.begin(), text.end(), '\n'));
}

TEST_F(IssueCli, NewPrintsTheNumberAloneAndListShowsOneLineEach) {
  EXPECT_EQ(file({"First"}), "1\n");
  EXPECT_EQ(file({"Second", "--label", "cli", "--label", "json", "--priority", "P1", "--parent",
                  "1", "--body", "text"}),
            "2\n");
  EXPECT_EQ(file({"two\nlines \x1b[31m"}), "3\n");
  auto r = issue({"list"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out,
            "#1  open  First\n"
            "#2  open  Second  [cli, json]\n"
            "#3  open  two\\nlines \\x1b[31m\n");
  EXPECT_EQ(test::entries(issues_), ".lock\n1.md\n2.md\n3.md\n");
  const std::string two = test::slurp(issues_ + "/2.md");
  EXPECT_NE(two.find("labels: [\"cli\", \"json\"]\nparent: 1\npriority: \"P1\"\n"),
            std::string::npos)
      << two;
  EXPECT_EQ(two.substr(two.size() - 8), "---\ntext");
}

TEST_F(IssueCli, ListJsonCarriesEveryFieldAndTheBody) {
  const std::string title = "Quote \" backslash \\ ---\nünï 🚀";
  const std::string body = "---\nnumber: 9\n---\nPart of #7\n";
  test::write_text(root_ + "/body.md", body);
  EXPECT_EQ(file({title, "--body-file", root_ + "/body.md", "--label", "x"}), "1\n");
  auto piped = issue({"new", "From stdin", "--body-file", "-", "--priority", "P0"}, "",
                     "line one\nline two\n");
  ASSERT_EQ(piped.exit_code, 0) << piped.err;
  EXPECT_EQ(piped.out, "2\n");

  auto r = issue({"list", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  ASSERT_TRUE(j.is_array());
  ASSERT_EQ(j.size(), 2u);
  EXPECT_EQ(j[0]["number"], 1);
  EXPECT_EQ(j[0]["title"], title);
  EXPECT_EQ(j[0]["state"], "open");
  EXPECT_EQ(j[0]["labels"], nlohmann::json::array({"x"}));
  EXPECT_EQ(j[0]["parent"], 7);  // from the body's "Part of #7"
  EXPECT_TRUE(j[0]["priority"].is_null());
  EXPECT_TRUE(j[0]["branch"].is_null());
  EXPECT_TRUE(j[0]["head"].is_null());
  EXPECT_EQ(j[0]["body"], body);
  const std::string created = j[0]["created"];
  EXPECT_EQ(created.size(), 25u) << created;
  EXPECT_EQ(created.substr(19), "+00:00");
  EXPECT_EQ(j[1]["body"], "line one\nline two\n");
  EXPECT_EQ(j[1]["priority"], "P0");
  for (const char* key : {"number", "title", "state", "labels", "parent", "priority", "created",
                          "branch", "head", "body"})
    EXPECT_TRUE(j[1].contains(key)) << key;

  auto none = issue({"list", "--json", "--state", "closed"});
  ASSERT_EQ(none.exit_code, 0) << none.err;
  EXPECT_EQ(nlohmann::json::parse(none.out), nlohmann::json::array());
}

TEST_F(IssueCli, ShowPrintsTheFieldsThenTheBody) {
  file({"Add a --json flag", "--label", "cli", "--parent", "4", "--priority", "P2", "--body",
        "Body line\n\nmore"});
  auto r = issue({"show", "1"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string head =
      "number: 1\ntitle: Add a --json flag\nstate: open\nlabels: cli\n"
      "parent: 4\npriority: P2\ncreated: ";
  EXPECT_EQ(r.out.substr(0, head.size()), head) << r.out;
  EXPECT_NE(r.out.find("+00:00\n\nBody line\n\nmore\n"), std::string::npos) << r.out;
  auto hashed = issue({"show", "#1"});
  EXPECT_EQ(hashed.exit_code, 0) << hashed.err;
  EXPECT_EQ(hashed.out, r.out);
}

TEST_F(IssueCli, CloseIsIdempotentAndListFiltersByState) {
  file({"One"});
  file({"Two"});
  auto c = issue({"close", "1", "--reason", "duplicate of #2"});
  ASSERT_EQ(c.exit_code, 0) << c.err;
  EXPECT_EQ(c.out, "#1 closed\n");
  const std::string closed = test::slurp(issues_ + "/1.md");
  EXPECT_NE(closed.find("state: \"closed\"\n"), std::string::npos) << closed;
  EXPECT_NE(closed.find("close_reason: \"duplicate of #2\"\n"), std::string::npos) << closed;
  auto again = issue({"close", "1", "--reason", "other"});
  ASSERT_EQ(again.exit_code, 0) << again.err;
  EXPECT_EQ(again.out, "#1 was already closed\n");
  EXPECT_EQ(test::slurp(issues_ + "/1.md"), closed);

  EXPECT_EQ(issue({"list"}).out, "#2  open  Two\n");
  EXPECT_EQ(issue({"list", "--state", "closed"}).out, "#1  closed  One\n");
  EXPECT_EQ(issue({"list", "--state", "all"}).out, "#1  closed  One\n#2  open  Two\n");
  auto show = issue({"show", "1"});
  EXPECT_NE(show.out.find("state: closed\n"), std::string::npos) << show.out;
  EXPECT_NE(show.out.find("close_reason: duplicate of #2\n"), std::string::npos) << show.out;
}

TEST_F(IssueCli, RepoNamesTheRepositoryFromElsewhere) {
  auto r = issue({"new", "From outside", "--repo", repo_}, plain_);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "1\n");
  auto relative = issue({"list", "--repo", "../widgets"}, plain_);
  ASSERT_EQ(relative.exit_code, 0) << relative.err;
  EXPECT_EQ(relative.out, "#1  open  From outside\n");
}

TEST_F(IssueCli, BadInputIsAUsageErrorAndChangesNothing) {
  file({"Kept", "--body", "b"});
  const std::string entries = test::entries(issues_);
  const std::string kept = test::slurp(issues_ + "/1.md");
  test::write_text(root_ + "/body.md", "b");
  const std::vector<std::vector<std::string>> cases = {
      {},
      {"frobnicate"},
      {"new"},
      {"new", "   "},
      {"new", std::string(257, 't')},
      {"new", "t", "--label", "a,b"},
      {"new", "t", "--label", "a b"},
      {"new", "t", "--label", ""},
      {"new", "t", "--label", "x", "--label", "x"},
      {"new", "t", "--priority", "P5"},
      {"new", "t", "--parent", "0"},
      {"new", "t", "--parent", "-2"},
      {"new", "t", "--parent", "x"},
      {"new", "t", "--body", "x", "--body-file", root_ + "/body.md"},
      {"new", "t", "--body-file", root_ + "/missing.md"},
      {"new", "t", "--nope"},
      {"list", "--state", "maybe"},
      {"list", "extra"},
      {"show"},
      {"show", "x"},
      {"show", "0"},
      {"show", "1", "2"},
      {"close", "-1"},
      {"close", "1.5"},
  };
  for (const auto& args : cases) {
    std::string shown;
    for (const auto& a : args) shown += "[" + a + "] ";
    SCOPED_TRACE(shown);
    auto r = issue(args);
    EXPECT_EQ(r.exit_code, 3) << r.err;
    EXPECT_EQ(r.out, "");
    EXPECT_EQ(r.err.rfind("usage: devgraph issue", 0), 0u) << r.err;
    EXPECT_NE(r.err.find("error: "), std::string::npos) << r.err;
    EXPECT_EQ(lines(r.err), 2u) << r.err;
  }
  EXPECT_EQ(test::entries(issues_), entries);
  EXPECT_EQ(test::slurp(issues_ + "/1.md"), kept);
  auto label = issue({"new", "t", "--label", "a,b"});
  EXPECT_NE(label.err.find("label 'a,b' contains a comma"), std::string::npos) << label.err;
}

TEST_F(IssueCli, OutsideARepositoryIsOneLineAndExitThree) {
  for (const auto& args : std::vector<std::vector<std::string>>{
           {"new", "t"}, {"list"}, {"show", "1"}, {"close", "1"}}) {
    SCOPED_TRACE(args[0]);
    auto r = issue(args, plain_);
    EXPECT_EQ(r.exit_code, 3) << r.err;
    EXPECT_EQ(r.out, "");
    EXPECT_EQ(lines(r.err), 1u) << r.err;
    EXPECT_NE(r.err.find("not inside a git repository"), std::string::npos) << r.err;
  }
  EXPECT_FALSE(path_exists(root_ + "/ai"));
}

TEST_F(IssueCli, AnIssuesDirectoryInsideAPrimaryCloneIsRefused) {
  env_["AI_ROOT"] = repo_ + "/ai";
  auto r = issue({"new", "t"});
  EXPECT_EQ(r.exit_code, 3) << r.err;
  EXPECT_EQ(lines(r.err), 1u) << r.err;
  EXPECT_NE(r.err.find("placement guard"), std::string::npos) << r.err;
  EXPECT_FALSE(path_exists(repo_ + "/ai"));
}

TEST_F(IssueCli, AMissingIssueIsARefusal) {
  auto show = issue({"show", "9"});
  EXPECT_EQ(show.exit_code, 1);
  EXPECT_EQ(lines(show.err), 1u) << show.err;
  EXPECT_NE(show.err.find("no issue #9"), std::string::npos) << show.err;
  auto close = issue({"close", "9"});
  EXPECT_EQ(close.exit_code, 1);
  EXPECT_NE(close.err.find("no issue #9"), std::string::npos) << close.err;
  EXPECT_FALSE(path_exists(issues_));
  auto list = issue({"list"});
  EXPECT_EQ(list.exit_code, 0) << list.err;
  EXPECT_EQ(list.out, "");
}

TEST_F(IssueCli, ACorruptIssueFileFailsTheListNamingIt) {
  file({"Fine"});
  test::write_text(issues_ + "/2.md", "---\nnumber: 2\ntitle: unquoted\n---\n");
  for (const auto& args :
       std::vector<std::vector<std::string>>{{"list"}, {"list", "--json"}, {"show", "2"}}) {
    SCOPED_TRACE(args.back());
    auto r = issue(args);
    EXPECT_EQ(r.exit_code, 1) << r.err;
    EXPECT_EQ(r.out, "");
    EXPECT_EQ(lines(r.err), 1u) << r.err;
    EXPECT_NE(r.err.find(issues_ + "/2.md"), std::string::npos) << r.err;
  }
  EXPECT_EQ(issue({"show", "1"}).exit_code, 0);
}

TEST_F(IssueCli, HelpIsExitZero) {
  auto r = issue({"--help"});
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_NE(r.out.find("new TITLE"), std::string::npos);
  auto sub = issue({"new", "--help"});
  EXPECT_EQ(sub.exit_code, 0);
  EXPECT_NE(sub.out.find("--body-file"), std::string::npos) << sub.out;
  auto top = test::run_devgraph({"--help"});
  EXPECT_NE(top.out.find("issue"), std::string::npos);
}

}  // namespace
}  // namespace devgraph
