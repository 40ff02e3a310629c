// The fixture of `devgraph debug`'s end-to-end tests: a fresh repository
// (src/app.txt says "broken" on main), the simulated agent playing the
// debugger and the specialist from rules the test adds (`when`), and the
// readers the tests assert with (the prompts each call was given, the
// calls made, git in the session's worktree). Rules tell the debugger's
// steps apart by what devgraph's directive says ("Start the
// investigation", "chose to fix now", ...). tests/e2e/debug_cli_test.cpp
// and debug_transitions_test.cpp share it.
#pragma once

#include <dirent.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "support/run_scenario.h"
#include "support/test_util.h"
#include "util/fs.h"
#include "util/json.h"

namespace devgraph::test {

class DebugSessionFixture : public ::testing::Test {
 protected:
  Scratch s;
  std::string repo = s / "repo";
  std::string scenario_path = s / "scenario.json";
  std::string develop = s / "develop";
  std::map<std::string, std::string> env;
  Json rules = Json::object();

  void SetUp() override {
    ASSERT_TRUE(make_directories(repo));
    sh(repo, {"git", "init", "-q", "-b", "main"});
    sh(repo, {"git", "config", "user.name", "Test"});
    sh(repo, {"git", "config", "user.email", "test@example.invalid"});
    write_text(repo + "/src/app.txt", "broken\n");
    sh(repo, {"git", "add", "--", "src/app.txt"});
    sh(repo, {"git", "commit", "-q", "-m", "base"});
    env = {{"AI_ROOT", s / "ai"}, {"DEVELOP_HOME_ROOT", develop}, {"NO_COLOR", "1"}};
  }

  static Json file(const std::string& path, const std::string& content) {
    return Json{{"path", path}, {"content", content}};
  }

  // A debugger's answer carrying `debug`.
  static Json answer(Json debug) {
    std::string type = json_str(debug, "type");
    return Json{
        {"status", "DONE"}, {"summary", type}, {"evidence", Json::array()}, {"debug", debug}};
  }

  static Json root_cause(const std::string& hint = "python") {
    return answer(
        {{"type", "ROOT_CAUSE_FOUND"},
         {"hypothesis", "the flag is never set"},
         {"next_action", "fix the flag"},
         {"root_cause", "src/app.txt says broken"},
         {"fix_direction", "make it say fixed"},
         {"specialist_hint", hint},
         {"evidence", {{{"checked", "src/app.txt"}, {"found", "broken"}}}},
         {"eliminated", {{{"hypothesis", "the disk is full"}, {"evidence", "df: 10%"}}}}});
  }

  static Json complete(Json files) {
    return answer({{"type", "DEBUG_COMPLETE"},
                   {"resolution",
                    {{"root_cause", "src/app.txt said broken"},
                     {"fix", "src/app.txt says fixed"},
                     {"verification", "cat src/app.txt"},
                     {"prevention", "why not caught: no check; guard: test.sh"},
                     {"files_changed", files}}}});
  }

  static std::vector<std::string> names(const std::string& dir) {
    std::vector<std::string> out;
    if (DIR* d = ::opendir(dir.c_str())) {
      while (dirent* e = ::readdir(d))
        if (e->d_name[0] != '.') out.push_back(e->d_name);
      ::closedir(d);
    }
    std::sort(out.begin(), out.end());
    return out;
  }

  static void sh(const std::string& cwd, const std::vector<std::string>& argv) {
    auto r = run_process(argv, {}, cwd);
    ASSERT_EQ(r.exit_code, 0) << argv[0] << " " << argv[1] << ": " << r.err;
  }

  void when(const std::string& persona, const std::string& text, Json rule) {
    rule["dispatch_contains"] = text;
    rules[persona].push_back(std::move(rule));
  }

  void write_scenario() {
    Json sc = {{"default",
                {{"result",
                  {{"status", "BLOCKED"}, {"summary", "no rule"}, {"evidence", Json::array()}}}}},
               {"personas", rules}};
    write_text(scenario_path, dump_py(sc, 2));
  }

  ProcessResult debug(std::vector<std::string> args, bool backend = true) {
    std::vector<std::string> argv = {"debug"};
    argv.insert(argv.end(), args.begin(), args.end());
    if (backend) {
      write_scenario();
      for (const char* a : {"--agent", "sim", "--sim-scenario"}) argv.push_back(a);
      argv.push_back(scenario_path);
    }
    argv.insert(argv.end(), {"--repo", repo});
    return run_devgraph(argv, env);
  }

  std::string owner_repo = "local/repo";
  std::string home() const { return develop + "/" + owner_repo + "/debug"; }
  std::string session(const std::string& slug) const { return home() + "/" + slug; }
  // Every prompt the call at `step` was given, concatenated.
  std::string prompts(const std::string& slug, int step) const {
    std::string dir = session(slug) + "/calls/" + std::to_string(step) + "/prompts";
    std::string all;
    for (const auto& n : names(dir)) all += slurp(dir + "/" + n);
    return all;
  }
  size_t calls(const std::string& slug) const { return names(session(slug) + "/calls").size(); }
  std::string wt_git(const std::string& slug, const std::vector<std::string>& args) const {
    std::vector<std::string> argv = {"git", "-C",
                                     s / ("ai/worktrees/" + owner_repo + "/debug-" + slug)};
    argv.insert(argv.end(), args.begin(), args.end());
    return run_process(argv).out;
  }
};

}  // namespace devgraph::test
