// `devgraph validate graph|state|result` through the real binary: output
// lines, exit codes, where the skill directory comes from (flag, variable,
// build tree, an install), and the same verdicts as the reference validator.
#include <gtest/gtest.h>

#include "support/build_paths.h"
#include "support/test_util.h"
#include "util/json.h"

namespace devgraph {
namespace {

using test::run_devgraph;

// The environment of a test run must not leak a skill directory into it.
const std::map<std::string, std::string> kNoSkillEnv = {{"DEVGRAPH_SKILL", ""}};

// A private copy of the shipped assets that a test may break.
std::string copy_skill(const test::Scratch& dir) {
  std::string skill = dir / "skill";
  auto r = test::run_process({"cp", "-r", test::source_dir() + "/skill", skill});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return skill;
}

void replace_in(const std::string& path, const std::string& from, const std::string& to) {
  std::string text = test::slurp(path);
  size_t at = text.find(from);
  ASSERT_NE(at, std::string::npos) << from;
  text.replace(at, from.size(), to);
  test::write_text(path, text);
}

int count_lines(const std::string& s) {
  int n = 0;
  for (char c : s) n += c == '\n';
  return n;
}

TEST(ValidateCli, ShippedGraphFromTheBuildTree) {
  test::Scratch cwd;
  auto r = run_devgraph({"validate", "graph"}, kNoSkillEnv, cwd.path());
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "OK: graph structure, lanes, events, and capacity thresholds are valid\n");
  EXPECT_EQ(r.err, "");
}

TEST(ValidateCli, BrokenGraphViaFlagAndVariableChangesNothing) {
  test::Scratch dir;
  std::string skill = copy_skill(dir);
  replace_in(skill + "/GRAPH.yaml", "    next: bundle_scheduler\n", "    next: nowhere\n");
  replace_in(skill + "/GRAPH.yaml", "  - PLAN_DONE\n", "");
  std::string before = test::slurp(skill + "/GRAPH.yaml");

  auto flag = run_devgraph({"validate", "graph", "--skill", skill}, kNoSkillEnv);
  EXPECT_EQ(flag.exit_code, 1);
  EXPECT_NE(flag.out.find("ERROR: bundle: next -> unknown node nowhere\n"), std::string::npos)
      << flag.out;
  EXPECT_EQ(flag.out.find("OK:"), std::string::npos);

  auto env = run_devgraph({"validate", "graph"}, {{"DEVGRAPH_SKILL", skill}});
  EXPECT_EQ(env.exit_code, 1);
  EXPECT_EQ(env.out, flag.out);
  // The flag goes before or after the check name alike, and beats the variable.
  auto before_check = run_devgraph({"validate", "--skill", skill, "graph"},
                                   {{"DEVGRAPH_SKILL", test::source_dir() + "/skill"}});
  EXPECT_EQ(before_check.out, flag.out);
  EXPECT_EQ(test::slurp(skill + "/GRAPH.yaml"), before);
}

// An edit no code would act on is refused, not accepted and ignored: a
// misspelt setting, and a changed description of what the engine always
// does. The merge policy, which the engine reads, is accepted.
TEST(ValidateCli, AGraphEditNoCodeWouldReadIsRefused) {
  test::Scratch dir;
  std::string skill = copy_skill(dir);
  replace_in(skill + "/GRAPH.yaml", "\n    merge: never\n", "\n    merge: auto_when_checks_pass\n");
  auto accepted = run_devgraph({"validate", "graph", "--skill", skill}, kNoSkillEnv);
  EXPECT_EQ(accepted.exit_code, 0) << accepted.out << accepted.err;

  replace_in(skill + "/GRAPH.yaml", "\n    merge: auto_when_checks_pass\n",
             "\n    merge: auto_when_checks_pass\n    merge_method: squash\n");
  replace_in(skill + "/GRAPH.yaml", "\n  driver: devgraph run-bundle\n",
             "\n  driver: my-own-driver\n");
  std::string before = test::slurp(skill + "/GRAPH.yaml");
  auto r = run_devgraph({"validate", "graph", "--skill", skill}, kNoSkillEnv);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.out,
            "ERROR: headless.driver: describes what devgraph always does (a bundle is always "
            "driven by `devgraph run-bundle`); no code reads another value than \"devgraph "
            "run-bundle\"\n"
            "ERROR: delivery.github.merge_method: no code reads this key (a misspelt name, or a "
            "setting this engine lacks)\n");
  EXPECT_EQ(test::slurp(skill + "/GRAPH.yaml"), before);
}

TEST(ValidateCli, UnreadableGraphIsOneErrorLine) {
  test::Scratch dir;
  std::string skill = copy_skill(dir);
  test::write_text(skill + "/GRAPH.yaml", "version: [\n");
  auto r = run_devgraph({"validate", "graph", "--skill", skill});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.out.rfind("ERROR: ", 0), 0u) << r.out;
  EXPECT_NE(r.out.find("not valid YAML"), std::string::npos) << r.out;
  EXPECT_EQ(count_lines(r.out), 1) << r.out;
}

TEST(ValidateCli, BrokenContractIsReportedByGraphAndRefusedByState) {
  test::Scratch dir;
  std::string skill = copy_skill(dir);
  test::write_text(skill + "/contracts/run-state.schema.json", "{\"type\": 12}");
  auto g = run_devgraph({"validate", "graph", "--skill", skill});
  EXPECT_EQ(g.exit_code, 1);
  EXPECT_NE(g.out.find("run-state.schema.json: not a usable JSON schema"), std::string::npos)
      << g.out;
  auto s = run_devgraph({"validate", "state",
                         test::source_dir() + "/skill/contracts/run-state.example.json", "--skill",
                         skill});
  EXPECT_EQ(s.exit_code, 1);
  EXPECT_EQ(s.out, "");
  EXPECT_EQ(count_lines(s.err), 1) << s.err;
}

TEST(ValidateCli, SkillDirectoryWithoutGraphIsAnError) {
  test::Scratch dir;
  auto flag = run_devgraph({"validate", "graph", "--skill", dir.path()});
  EXPECT_EQ(flag.exit_code, 1);
  EXPECT_EQ(flag.err,
            "devgraph validate: --skill " + dir.path() + ": no GRAPH.yaml in that directory\n");
  auto env = run_devgraph({"validate", "graph"}, {{"DEVGRAPH_SKILL", dir.path()}});
  EXPECT_EQ(env.exit_code, 1);
  EXPECT_NE(env.err.find("DEVGRAPH_SKILL="), std::string::npos) << env.err;
}

TEST(ValidateCli, UsageErrorsExitTwo) {
  auto none = run_devgraph({"validate"});
  EXPECT_EQ(none.exit_code, 2);
  EXPECT_NE(none.err.find("the following arguments are required: check"), std::string::npos);
  auto bogus = run_devgraph({"validate", "bogus"});
  EXPECT_EQ(bogus.exit_code, 2);
  EXPECT_NE(bogus.err.find("invalid choice: 'bogus'"), std::string::npos) << bogus.err;
  auto no_path = run_devgraph({"validate", "state"});
  EXPECT_EQ(no_path.exit_code, 2);
  EXPECT_NE(no_path.err.find("required: path"), std::string::npos) << no_path.err;
  auto extra = run_devgraph({"validate", "graph", "extra"});
  EXPECT_EQ(extra.exit_code, 2);
  auto help = run_devgraph({"validate", "--help"});
  EXPECT_EQ(help.exit_code, 0);
  EXPECT_NE(help.out.find("usage: devgraph validate"), std::string::npos);
}

TEST(ValidateCli, StateVerdicts) {
  test::Scratch dir;
  auto ok = run_devgraph(
      {"validate", "state", test::source_dir() + "/skill/contracts/run-state.example.json"});
  EXPECT_EQ(ok.exit_code, 0) << ok.err;
  EXPECT_EQ(ok.out, "OK: run state is valid\n");

  test::write_text(dir / "bad.json", R"({"run_id": "r", "repo": "x", "default_branch": "main",
    "node": "scan", "round": 0, "bundles": [], "prs": [], "status": "lost"})");
  auto bad = run_devgraph({"validate", "state", dir / "bad.json"});
  EXPECT_EQ(bad.exit_code, 1);
  EXPECT_EQ(bad.out,
            "ERROR: ['round']: 0 is less than the minimum of 1\n"
            "ERROR: ['status']: 'lost' is not one of ['running', 'handoff', 'complete', "
            "'human_required']\n");

  auto missing = run_devgraph({"validate", "state", dir / "nope.json"});
  EXPECT_EQ(missing.exit_code, 1);
  EXPECT_EQ(count_lines(missing.out), 1);
  EXPECT_NE(missing.out.find("ERROR: cannot read " + (dir / "nope.json")), std::string::npos)
      << missing.out;

  test::write_text(dir / "corrupt.json", "{\"run_id\": ");
  auto corrupt = run_devgraph({"validate", "state", dir / "corrupt.json"});
  EXPECT_EQ(corrupt.exit_code, 1);
  EXPECT_EQ(count_lines(corrupt.out), 1);
  EXPECT_NE(corrupt.out.find("is not valid JSON"), std::string::npos) << corrupt.out;

  auto directory = run_devgraph({"validate", "state", dir.path()});
  EXPECT_EQ(directory.exit_code, 1);
  EXPECT_EQ(count_lines(directory.out), 1) << directory.out;
}

TEST(ValidateCli, ResultVerdicts) {
  test::Scratch dir;
  test::write_text(dir / "ok.txt",
                   "work done\nRESULT_JSON: {\"status\": \"DONE\", \"summary\": \"s\", "
                   "\"evidence\": [\"t\"]}\n\n");
  auto ok = run_devgraph({"validate", "result", dir / "ok.txt"});
  EXPECT_EQ(ok.exit_code, 0);
  EXPECT_EQ(ok.out, "OK: agent result is valid\n");

  struct Case {
    std::string text, out;
  } cases[] = {
      {"", "ERROR: empty result file\n"},
      {"RESULT_JSON: {}\nand then I said\n", "ERROR: result must start with RESULT_JSON:\n"},
      {"RESULT_JSON: [1]\n", "ERROR: []: [1] is not of type 'object'\n"},
      {"RESULT_JSON: {\"status\": \"DONE\", \"summary\": \"s\", \"evidence\": [], \"findings\": "
       "[1]}",
       "ERROR: ['findings', 0]: 1 is not of type 'object'\n"},
  };
  for (const auto& c : cases) {
    test::write_text(dir / "r.txt", c.text);
    auto r = run_devgraph({"validate", "result", dir / "r.txt"});
    EXPECT_EQ(r.exit_code, 1) << c.text;
    EXPECT_EQ(r.out, c.out) << c.text;
  }
  test::write_text(dir / "r.txt", "RESULT_JSON: {\"status\": ");
  auto corrupt = run_devgraph({"validate", "result", dir / "r.txt"});
  EXPECT_EQ(corrupt.exit_code, 1);
  EXPECT_EQ(count_lines(corrupt.out), 1);
  EXPECT_NE(corrupt.out.find("RESULT_JSON is not valid JSON"), std::string::npos) << corrupt.out;
  auto missing = run_devgraph({"validate", "result", dir / "none.txt"});
  EXPECT_EQ(missing.exit_code, 1);
  EXPECT_EQ(count_lines(missing.out), 1);
}

// The reference validator and devgraph print the same lines for the same
// files (except for JSON syntax errors, whose wording is the decoder's own).
TEST(ValidateCli, SameVerdictsAsTheReference) {
  if (test::reference_dir().empty()) GTEST_SKIP() << "reference runtime not available";
  test::Scratch dir;
  std::vector<std::pair<std::string, std::string>> files = {
      {"state", test::reference_dir() + "/contracts/run-state.example.json"},
  };
  test::write_text(dir / "s1.json", R"({"run_id": 1, "repo": "x", "node": "scan", "round": 1,
    "bundles": [{}, 2], "prs": [], "capacity": {"tier": "blue", "counters": {"turn": -1}},
    "tasks_runtime": {"B/T": {"bundle": "B", "node": null, "status": "active", "moves": "3"}}})");
  files.push_back({"state", dir / "s1.json"});
  test::write_text(dir / "r1.txt",
                   "x\nRESULT_JSON: {\"status\": \"MAYBE\", \"evidence\": \"no\", "
                   "\"tasks_total\": -3, \"pr\": 5}\n");
  files.push_back({"result", dir / "r1.txt"});
  test::write_text(dir / "r2.txt",
                   "RESULT_JSON: {\"status\": \"HANDOFF\", \"summary\": \"s\", "
                   "\"evidence\": [], \"human_required\": \"yes\"}\n");
  files.push_back({"result", dir / "r2.txt"});
  test::write_text(dir / "r3.txt", "\n\n");
  files.push_back({"result", dir / "r3.txt"});
  // One Python process runs the reference on every file: its start-up is
  // most of its cost.
  Json jobs = Json::array();
  for (const auto& [check, path] : files) jobs.push_back({check, path});
  const std::string driver =
      "import contextlib, io, json, sys\n"
      "sys.path.insert(0, sys.argv[1])\n"
      "try:\n"
      "    import jsonschema  # noqa: F401\n"
      "except ImportError:\n"
      "    sys.exit(3)\n"
      "import validate\n"
      "out = []\n"
      "for check, path in json.load(sys.stdin):\n"
      "    sys.argv = ['validate.py', check, path]\n"
      "    buf = io.StringIO()\n"
      "    with contextlib.redirect_stdout(buf):\n"
      "        try:\n"
      "            rc = validate.main()\n"
      "        except SystemExit as e:\n"
      "            rc = e.code\n"
      "    out.append([rc, buf.getvalue()])\n"
      "print(json.dumps(out))\n";
  auto ref = test::run_process({"python3", "-c", driver, test::reference_dir() + "/runtime"}, {},
                               "", dump_py(jobs));
  if (ref.exit_code == 3) GTEST_SKIP() << "the reference validator needs python3-jsonschema";
  ASSERT_EQ(ref.exit_code, 0) << ref.err;
  Json theirs = Json::parse(ref.out);
  ASSERT_EQ(theirs.size(), files.size());
  for (size_t i = 0; i < files.size(); ++i) {
    auto ours = run_devgraph({"validate", files[i].first, files[i].second});
    EXPECT_EQ(ours.exit_code, theirs[i][0].get<int>()) << files[i].second;
    EXPECT_EQ(ours.out, theirs[i][1].get<std::string>()) << files[i].second;
  }
}

TEST(ValidateCli, InstalledCopyFindsItsOwnAssets) {
  test::Scratch prefix;
  std::string build_dir = dirname_of(DEVGRAPH_BIN);
  // The sanitized twin's binary (build/sanitized/) is never installed:
  // `cmake --install` takes the regular one, which the regular test checks.
  if (!path_exists(build_dir + "/cmake_install.cmake"))
    GTEST_SKIP() << "no install tree beside " << DEVGRAPH_BIN;
  auto install = test::run_process({"cmake", "--install", build_dir, "--prefix", prefix.path()},
                                   {{"DESTDIR", ""}});
  ASSERT_EQ(install.exit_code, 0) << install.out << install.err;
  std::string bin = prefix / "bin/devgraph";
  ASSERT_TRUE(path_exists(bin));
  ASSERT_TRUE(path_exists(prefix / "share/devgraph/GRAPH.yaml"));

  test::Scratch cwd;
  auto ok = test::run_process({bin, "validate", "graph"}, kNoSkillEnv, cwd.path());
  EXPECT_EQ(ok.exit_code, 0) << ok.out << ok.err;
  EXPECT_EQ(ok.out, "OK: graph structure, lanes, events, and capacity thresholds are valid\n");
  auto state = test::run_process(
      {bin, "validate", "state", prefix / "share/devgraph/contracts/run-state.example.json"},
      kNoSkillEnv, cwd.path());
  EXPECT_EQ(state.exit_code, 0) << state.out << state.err;

  // Proof that the installed copy, not the source tree, is the one read.
  replace_in(prefix / "share/devgraph/GRAPH.yaml", "    next: bundle_scheduler\n",
             "    next: installed_copy\n");
  auto broken = test::run_process({bin, "validate", "graph"}, kNoSkillEnv, cwd.path());
  EXPECT_EQ(broken.exit_code, 1);
  EXPECT_NE(broken.out.find("unknown node installed_copy"), std::string::npos) << broken.out;
}

}  // namespace
}  // namespace devgraph
