// Rendering briefs and dispatch texts, checking the persona set, and
// planning an install merge: the in-process costs of the templates,
// personas and install modules.
#include <benchmark/benchmark.h>

#include <filesystem>

#include "graph/graph.h"
#include "install/install.h"
#include "skill/personas.h"
#include "templates/render.h"
#include "util/fs.h"

namespace {

using namespace devgraph;

const std::string kSkill = std::string(DEVGRAPH_SOURCE_DIR) + "/skill";

templates::Values brief_values() {
  templates::Values v;
  for (auto name : templates::template_spec("task-brief")->placeholders)
    v[std::string(name)] = "value of " + std::string(name) + " /abs/path/to/something";
  return v;
}

// Read the file, parse it, check the vocabulary, render: what the driver
// does for every brief.
void BM_RenderBriefFromFile(benchmark::State& state) {
  auto values = brief_values();
  for (auto _ : state) {
    auto out = templates::render_skill_template(kSkill, "task-brief", values);
    benchmark::DoNotOptimize(out);
  }
}
BENCHMARK(BM_RenderBriefFromFile);

// Render only, the template parsed once.
void BM_RenderBriefParsed(benchmark::State& state) {
  auto t = templates::load_template(kSkill + "/templates/task-brief.md");
  auto values = brief_values();
  for (auto _ : state) {
    auto out = t->render(values);
    benchmark::DoNotOptimize(out);
  }
}
BENCHMARK(BM_RenderBriefParsed);

void BM_CheckPersonaFiles(benchmark::State& state) {
  auto graph = Graph::load(kSkill);
  for (auto _ : state) {
    auto problems = check_persona_files(kSkill, *graph);
    benchmark::DoNotOptimize(problems);
  }
}
BENCHMARK(BM_CheckPersonaFiles)->Unit(benchmark::kMillisecond);

void BM_CheckSkillTemplates(benchmark::State& state) {
  for (auto _ : state) {
    auto problems = templates::check_skill_templates(kSkill);
    benchmark::DoNotOptimize(problems);
  }
}
BENCHMARK(BM_CheckSkillTemplates);

// Planning a merge into a settings file with `n` existing allow rules.
void BM_PlanInstallClaude(benchmark::State& state) {
  auto dir = TempDir::create("devgraph-bench");
  std::string rules;
  for (int i = 0; i < state.range(0); ++i)
    rules += std::string(rules.empty() ? "" : ", ") + "\"Bash(tool" + std::to_string(i) + " *)\"";
  (void)make_directories(dir->path() + "/.claude");
  (void)write_file_atomic(dir->path() + "/.claude/settings.json",
                          "{\"model\": \"opus\", \"permissions\": {\"allow\": [" + rules + "]}}\n");
  install::Context ctx;
  ctx.home = dir->path();
  ctx.devgraph_bin = "/usr/local/bin/devgraph";
  ctx.hook = true;
  for (auto _ : state) {
    auto plan = install::plan_install(install::Tool::claude, ctx);
    benchmark::DoNotOptimize(plan);
  }
}
BENCHMARK(BM_PlanInstallClaude)->Arg(10)->Arg(1000);

}  // namespace
