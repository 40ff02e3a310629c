#include "support/run_scenario.h"

#include <gtest/gtest.h>

#include <sstream>

#include "util/fs.h"

namespace devgraph::test {

const char* const kRunTests =
    "#!/bin/sh\n"
    "# Runs every tests/*.sh; fails when one of them fails.\n"
    "status=0\n"
    "for t in tests/*.sh; do\n"
    "  [ -e \"$t\" ] || continue\n"
    "  if sh \"$t\"; then echo \"ok $t\"; else echo \"FAIL $t\"; status=1; fi\n"
    "done\n"
    "exit $status\n";

Json file(const std::string& path, const std::string& content) {
  return Json{{"path", path}, {"content", content}};
}

Json done(const std::string& summary, Json artifacts) {
  Json r{{"status", "DONE"}, {"summary", summary}, {"evidence", Json::array()}};
  if (!artifacts.is_null()) r["artifacts"] = std::move(artifacts);
  return r;
}

Json red(const std::string& summary, const std::string& check) {
  Json r = done(summary);
  r["commands"] = Json::array({check});
  return r;
}

void write_widgets_files(const std::string& repo) {
  EXPECT_TRUE(make_directories(repo + "/tests"));
  EXPECT_TRUE(make_directories(repo + "/.devgraph"));
  write_text(repo + "/run-tests.sh", kRunTests);
  write_text(repo + "/tests/base.sh", "true\n");
  write_text(repo + "/.devgraph/commands.json",
             R"({"test": "sh run-tests.sh", "build": "sh run-tests.sh"})");
}

Json one_task_scenario(const OneTaskScenario& o) {
  Json tasks = {
      {"bundle", "{bundle}"},
      {"tasks",
       Json::array({{{"id", "T1"},
                     {"title", "the {bundle} marker"},
                     {"depends_on", Json::array()},
                     {"files", Json::array({"src/{bundle}.txt", "tests/{bundle}.sh"})}}})}};
  auto rule = [&](Json files, Json result) {
    Json r = {{"latency_ms", o.latency_ms}};
    if (o.cost_usd) r["cost_usd"] = *o.cost_usd;
    if (!files.is_null()) r["files"] = std::move(files);
    r["result"] = std::move(result);
    return r;
  };
  Json personas = Json::object();
  Json planner = Json::array();
  if (!o.first_planner.is_null()) planner.push_back(o.first_planner);
  planner.push_back(
      rule(Json::array({file("docs/develop/plans/{bundle}.md", "# Plan {bundle}\n"),
                        file("docs/develop/plans/{bundle}.tasks.json", dump_py(tasks, 2))}),
           done("planned one task")));
  personas["planner"] = planner;
  personas["tdd-writer"] = Json::array(
      {rule(Json::array({file("tests/{bundle}.sh", "grep -qx {bundle} src/{bundle}.txt\n")}),
            red("red for {task}", "sh tests/{bundle}.sh"))});
  Json developer = Json::array();
  for (const auto& b : o.hang)
    developer.push_back({{"bundle", b}, {"task", "T1"}, {"call", 1}, {"fail", "hang"}});
  developer.push_back(
      rule(Json::array({file("src/{bundle}.txt", "{bundle}\n")}), done("green for {task}")));
  personas["developer"] = developer;
  return Json{{"default", rule(Json(), done("{persona} approves"))}, {"personas", personas}};
}

Json two_waiting_scenario(const OneTaskScenario& options) {
  Json sc = one_task_scenario(options);
  Json& planner = sc["personas"]["planner"];
  Json normal = planner.back();
  Json told = normal;
  told["bundle"] = "b1";
  told["dispatch_contains"] = "XYZZY";
  planner = Json::array({told,
                         Json{{"bundle", "b1"},
                              {"result",
                               {{"status", "NEEDS_CONTEXT"},
                                {"summary", "which alpha?"},
                                {"evidence", Json::array()},
                                {"missing_context", Json::array({"which alpha is meant"})}}}},
                         normal});
  Json& dev = sc["personas"]["developer"];
  dev.insert(dev.begin(), {Json{{"bundle", "b2"},
                                {"dispatch_contains", "XYZZY"},
                                {"files", Json::array({file("src/b2.txt", "b2\n")})},
                                {"result", done("green once told")}},
                           Json{{"bundle", "b2"},
                                {"result",
                                 {{"status", "BLOCKED"},
                                  {"summary", "cannot tell which colour the marker is"},
                                  {"evidence", Json::array()},
                                  {"blockers", Json::array({"the colour of the marker"})}}}}});
  return sc;
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line))
    if (!line.empty()) out.push_back(line);
  return out;
}

Json result_of(const ProcessResult& r) {
  auto at = r.out.rfind("RESULT_JSON: ");
  EXPECT_NE(at, std::string::npos) << r.out << r.err;
  if (at == std::string::npos) return Json::object();
  auto end = r.out.find('\n', at);
  auto j = parse_json(r.out.substr(at + 13, end == std::string::npos ? end : end - at - 13),
                      "RESULT_JSON");
  EXPECT_TRUE(j) << r.out;
  return j ? *j : Json::object();
}

}  // namespace devgraph::test
