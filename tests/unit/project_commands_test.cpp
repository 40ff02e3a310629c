// The repository's test and build commands: each ecosystem's files, the
// order they are tried in, npm's default test script, a bad
// .devgraph/commands.json, oversized and odd files, and the demo's sample.
#include "project/commands.h"

#include <sys/stat.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <iterator>

#include "demo/sample.h"
#include "support/test_util.h"

namespace devgraph::project {
namespace {

class ProjectCommands : public ::testing::Test {
 protected:
  void put(const std::string& rel, const std::string& text) { test::write_text(repo / rel, text); }
  Commands detect() {
    auto c = detect_commands(repo.path());
    EXPECT_TRUE(c.ok()) << c.error().message;
    return c ? *c : Commands{};
  }
  Error detect_error() {
    auto c = detect_commands(repo.path());
    EXPECT_FALSE(c.ok()) << c->source;
    return c ? Error{} : c.error();
  }

  test::Scratch repo;
};

void expect_commands(const Commands& c, const std::string& test, const std::string& build,
                     const std::string& source) {
  EXPECT_EQ(c.test, test);
  EXPECT_EQ(c.build, build);
  EXPECT_EQ(c.source, source);
}

TEST_F(ProjectCommands, AnEmptyRepositoryHasNone) {
  expect_commands(detect(), "", "", "");
  put("README.md", "# nothing to build\n");
  put("tests/helpers.py", "");
  expect_commands(detect(), "", "", "");
}

TEST_F(ProjectCommands, ADevgraphFileSaysThemAndComesFirst) {
  put("package.json", R"({"scripts": {"test": "jest"}})");
  put("Cargo.toml", "[package]\n");
  put(".devgraph/commands.json", R"({"test": "./run-tests --fast", "build": "bazel build //..."})");
  expect_commands(detect(), "./run-tests --fast", "bazel build //...", ".devgraph/commands.json");
  // Saying there is no build command is saying something: still a hit.
  put(".devgraph/commands.json", R"({"test": "./run-tests"})");
  expect_commands(detect(), "./run-tests", "", ".devgraph/commands.json");
  put(".devgraph/commands.json", "{}");
  expect_commands(detect(), "", "", ".devgraph/commands.json");
}

TEST_F(ProjectCommands, ABadDevgraphFileIsAnErrorNamingIt) {
  put("package.json", R"({"scripts": {"test": "jest"}})");
  for (const char* text : {"{\"test\": ", "[\"npm test\"]", "{\"test\": 1}", "{\"tset\": \"x\"}"}) {
    put(".devgraph/commands.json", text);
    Error e = detect_error();
    EXPECT_EQ(e.kind, ErrorKind::usage) << text;
    EXPECT_NE(e.message.find(".devgraph/commands.json"), std::string::npos) << e.message;
    EXPECT_EQ(e.message.find('\n'), std::string::npos) << e.message;
  }
}

TEST_F(ProjectCommands, PackageJsonScriptsBecomeNpmCommands) {
  put("package.json", R"({"name": "x", "scripts": {"test": "jest", "build": "tsc"}})");
  expect_commands(detect(), "npm test", "npm run build", "package.json scripts");
  put("package.json", R"({"scripts": {"build": "tsc"}})");
  expect_commands(detect(), "", "npm run build", "package.json scripts");
}

TEST_F(ProjectCommands, NpmsDefaultTestScriptIsNoTest) {
  put("package.json",
      R"({"scripts": {"test": "echo \"Error: no test specified\" && exit 1", "build": "tsc"}})");
  expect_commands(detect(), "", "npm run build", "package.json scripts");
  // With nothing else there, package.json is no hit and the next row is.
  put("package.json", R"({"scripts": {"test": "echo \"Error: no test specified\" && exit 1"}})");
  put("go.mod", "module example.com/x\n");
  expect_commands(detect(), "go test ./...", "go build ./...", "go.mod");
  put("package.json", R"({"name": "no scripts"})");
  expect_commands(detect(), "go test ./...", "go build ./...", "go.mod");
}

TEST_F(ProjectCommands, ABrokenPackageJsonIsAnErrorNotAFallback) {
  put("Cargo.toml", "[package]\n");
  for (const char* text : {"{\"scripts\": {", "{\"scripts\": [\"test\"]}"}) {
    put("package.json", text);
    Error e = detect_error();
    EXPECT_EQ(e.kind, ErrorKind::usage);
    EXPECT_NE(e.message.find("package.json"), std::string::npos) << e.message;
  }
}

TEST_F(ProjectCommands, CargoGoAndCMakeByTheirFiles) {
  put("CMakeLists.txt", "project(x)\n");
  expect_commands(detect(),
                  "ctest --build-and-test . build --build-generator \"Unix Makefiles\" "
                  "--test-command ctest --output-on-failure",
                  "ctest --build-and-test . build --build-generator \"Unix Makefiles\"",
                  "CMakeLists.txt");
  put("go.mod", "module example.com/x\n");
  expect_commands(detect(), "go test ./...", "go build ./...", "go.mod");
  put("Cargo.toml", "[package]\nname = \"x\"\n");
  expect_commands(detect(), "cargo test", "cargo build", "Cargo.toml");
}

TEST_F(ProjectCommands, MakefileTargetsBecomeMakeCommands) {
  put("Makefile",
      "CC := cc\nX = a:b\n.PHONY: test all\n# build: not a rule\n"
      "all: prog\n\tcc -o prog prog.c\ntest : all\n\t./prog --self-test\n");
  expect_commands(detect(), "make test", "make", "Makefile targets");
  put("Makefile", "build test: deps\n\ttrue\nall:\n\ttrue\n");
  expect_commands(detect(), "make test", "make build", "Makefile targets");
  // make reads GNUmakefile before Makefile, and only that one.
  put("GNUmakefile", "all:\n\ttrue\n");
  expect_commands(detect(), "", "make", "GNUmakefile targets");
  // Targets only in recipes, assignments or comments are none: no hit.
  put("GNUmakefile", "X := test:\n\ttest: x\n# test:\nTARGET ?= build:\n");
  put("tests/test_x.py", "");
  expect_commands(detect(), "python3 -m unittest discover -s tests -t .",
                  "python3 -m compileall -q .", "tests/test_*.py (unittest)");
}

TEST_F(ProjectCommands, PythonByPytestConfigElseUnittestLayout) {
  put("tests/test_words.py", "import unittest\n");
  expect_commands(detect(), "python3 -m unittest discover -s tests -t .",
                  "python3 -m compileall -q .", "tests/test_*.py (unittest)");
  put("pyproject.toml", "[project]\nname = \"x\"\n");
  expect_commands(detect(), "python3 -m unittest discover -s tests -t .",
                  "python3 -m compileall -q .", "tests/test_*.py (unittest)");
  put("tox.ini", "[testenv]\ncommands = pytest\n");
  expect_commands(detect(), "python3 -m pytest", "python3 -m compileall -q .", "tox.ini (pytest)");
  put("pyproject.toml", "[tool.pytest.ini_options]\naddopts = \"-q\"\n");
  expect_commands(detect(), "python3 -m pytest", "python3 -m compileall -q .",
                  "pyproject.toml (pytest)");
}

TEST_F(ProjectCommands, TheOrderIsTheTables) {
  // Every row's files at once: each removal uncovers the next row.
  put("package.json", R"({"scripts": {"test": "jest"}})");
  put("Cargo.toml", "");
  put("go.mod", "");
  put("CMakeLists.txt", "");
  put("Makefile", "test:\n");
  put("pytest.ini", "[pytest]\n");
  put("tests/test_a.py", "");
  const char* sources[] = {"package.json scripts",
                           "Cargo.toml",
                           "go.mod",
                           "CMakeLists.txt",
                           "Makefile targets",
                           "pytest.ini (pytest)",
                           "tests/test_*.py (unittest)"};
  const char* files[] = {"package.json", "Cargo.toml", "go.mod",         "CMakeLists.txt",
                         "Makefile",     "pytest.ini", "tests/test_a.py"};
  for (size_t i = 0; i < std::size(sources); ++i) {
    EXPECT_EQ(detect().source, sources[i]);
    ASSERT_EQ(::unlink((repo / files[i]).c_str()), 0);
  }
  expect_commands(detect(), "", "", "");
}

TEST_F(ProjectCommands, FilesAreReadBoundedAndOnlyWhenRegular) {
  std::string huge = R"({"scripts": {"test": ")" + std::string(kMaxProjectFileBytes, 'x') + "\"}}";
  put("package.json", huge);
  Error e = detect_error();
  EXPECT_EQ(e.kind, ErrorKind::refused);
  EXPECT_NE(e.message.find("package.json"), std::string::npos) << e.message;
  EXPECT_NE(e.message.find("longer than"), std::string::npos) << e.message;
  // A FIFO where a makefile would be: refused at once, never waited on.
  ASSERT_EQ(::unlink((repo / "package.json").c_str()), 0);
  ASSERT_EQ(::mkfifo((repo / "Makefile").c_str(), 0600), 0);
  e = detect_error();
  EXPECT_NE(e.message.find("Makefile"), std::string::npos) << e.message;
  EXPECT_NE(e.message.find("not a regular file"), std::string::npos) << e.message;
}

TEST_F(ProjectCommands, ReadsOnlyAndRunsNothing) {
  // A build script that would leave a mark if anything ran it.
  put("package.json", R"({"scripts": {"test": "touch ran", "build": "touch ran"}})");
  put("Makefile", "test:\n\ttouch ran\n");
  const std::string before = test::entries(repo.path());
  expect_commands(detect(), "npm test", "npm run build", "package.json scripts");
  EXPECT_EQ(test::entries(repo.path()), before);
}

TEST(ProjectCommandsRepo, ARepositoryThatIsNotADirectoryIsNotFound) {
  test::Scratch s;
  auto c = detect_commands(s / "absent");
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.error().kind, ErrorKind::not_found);
  EXPECT_NE(c.error().message.find("absent"), std::string::npos);
}

TEST(ProjectCommandsRepo, TheDemoSampleIsDetectedAsItsOwnCommands) {
  test::Scratch s;
  for (const auto& f : demo::sample_base_files()) test::write_text(s / f.path, f.content);
  auto c = detect_commands(s.path());
  ASSERT_TRUE(c.ok()) << c.error().message;
  EXPECT_EQ(c->test, demo::kSampleTestCommand);
  EXPECT_EQ(c->build, demo::kSampleBuildCommand);
}

TEST(ProjectCommandsJson, IsTheStateFilesCommandsObject) {
  EXPECT_EQ(commands_json({"npm test", "", "package.json scripts"}),
            Json({{"test", "npm test"}, {"build", ""}, {"source", "package.json scripts"}}));
}

}  // namespace
}  // namespace devgraph::project
