// Scale targets of the schedule module (see BENCHMARKS.md, "schedule"):
// check, runnable and critical-path on a 5,000-task plan whose longest
// chain is 2,000 tasks; footprint classification of 20,000 changed files.
//
// The inputs have the same shape as those bench/schedule_inputs.py writes
// for the whole-process comparison with the reference.
#include <benchmark/benchmark.h>

#include <string>
#include <vector>

#include "schedule/schedule.h"

namespace devgraph::schedule {
namespace {

constexpr int kTasks = 5000;
constexpr int kChain = 2000;

// T0 <- T1 <- ... <- T1999 is the critical chain; every other task depends
// on one or two earlier tasks a few hundred back, so chains stay short. Each
// task owns its own module directory; every 50th also lists a hub file.
std::string plan_text() {
  Json doc = {{"bundle", "bench"}, {"tasks", Json::array()}};
  unsigned seed = 12345;
  auto next = [&] {
    seed = seed * 1103515245u + 12345u;
    return (seed >> 8) & 0xFFFFFF;
  };
  for (int i = 0; i < kTasks; ++i) {
    Json deps = Json::array();
    if (i > 0 && i < kChain) {
      deps.push_back("T" + std::to_string(i - 1));
    } else if (i >= kChain) {
      deps.push_back("T" + std::to_string(next() % 300));
      if (i % 3 == 0) deps.push_back("T" + std::to_string(kChain + next() % (i - kChain + 1) / 2));
    }
    Json files = {"src/mod" + std::to_string(i) + "/**", "tests/mod" + std::to_string(i) + "/*.ts"};
    if (i % 50 == 0) files.push_back("package.json");
    doc["tasks"].push_back({{"id", "T" + std::to_string(i)},
                            {"title", "task " + std::to_string(i)},
                            {"depends_on", deps},
                            {"files", files},
                            {"kind", "code"}});
  }
  return doc.dump();
}

// The first 1,000 chain tasks complete, the next one and four side tasks in
// flight.
std::string state_text() {
  Json runtime = Json::object();
  auto add = [&](int i, const char* status, const char* node) {
    std::string id = "T" + std::to_string(i);
    runtime["bench/" + id] = {
        {"bundle", "bench"}, {"task", id}, {"node", node}, {"status", status}};
  };
  for (int i = 0; i < 1000; ++i) add(i, "complete", "commit_task");
  add(1000, "active", "verify");
  for (int i = 0; i < 4; ++i) add(kChain + i, "active", "write_tdd");
  return Json({{"tasks_runtime", runtime}}).dump();
}

Plan load(const std::string& text) {
  auto plan = plan_from_json(Json::parse(text));
  if (!plan) throw std::runtime_error(plan.error().message);
  return std::move(plan).value();
}

void BM_CheckPlan(benchmark::State& state) {
  const std::string text = plan_text();
  for (auto _ : state) {
    auto problems = check_plan(Json::parse(text));
    benchmark::DoNotOptimize(problems);
  }
}
BENCHMARK(BM_CheckPlan)->Unit(benchmark::kMillisecond);

void BM_LoadPlan(benchmark::State& state) {
  const std::string text = plan_text();
  for (auto _ : state) benchmark::DoNotOptimize(load(text));
}
BENCHMARK(BM_LoadPlan)->Unit(benchmark::kMillisecond);

// What `schedule runnable` does after loading: cursors plus the set.
void BM_Runnable(benchmark::State& state) {
  const Plan plan = load(plan_text());
  const Json st = Json::parse(state_text());
  for (auto _ : state) {
    auto r = compute_runnable(plan, cursors_from_state(st, "bench"), 6);
    benchmark::DoNotOptimize(r);
  }
}
BENCHMARK(BM_Runnable)->Unit(benchmark::kMillisecond);

void BM_RunnableIncludingLoad(benchmark::State& state) {
  const std::string text = plan_text();
  const std::string st = state_text();
  for (auto _ : state) {
    Plan plan = load(text);
    auto r = compute_runnable(plan, cursors_from_state(Json::parse(st), "bench"), 6);
    benchmark::DoNotOptimize(r->to_json().dump());
  }
}
BENCHMARK(BM_RunnableIncludingLoad)->Unit(benchmark::kMillisecond);

void BM_CriticalPath(benchmark::State& state) {
  const Plan plan = load(plan_text());
  for (auto _ : state) {
    auto cp = critical_path(plan, std::nullopt);
    if (cp.path.size() != kChain) state.SkipWithError("wrong chain length");
    benchmark::DoNotOptimize(cp);
  }
}
BENCHMARK(BM_CriticalPath)->Unit(benchmark::kMillisecond);

void BM_CriticalPathIncludingLoad(benchmark::State& state) {
  const std::string text = plan_text();
  for (auto _ : state) benchmark::DoNotOptimize(critical_path(load(text), std::nullopt));
}
BENCHMARK(BM_CriticalPathIncludingLoad)->Unit(benchmark::kMillisecond);

// 20,000 changed paths: a quarter the task's own, a quarter another
// in-flight task's, the rest outside every footprint; some renames.
std::string status_text() {
  std::string out;
  for (int i = 0; i < 20000; ++i) {
    std::string path;
    switch (i % 4) {
      case 0:
        path = "src/mod0/dir" + std::to_string(i % 97) + "/file " + std::to_string(i) + ".ts";
        break;
      case 1:
        path = "src/mod1/f" + std::to_string(i) + ".ts";
        break;
      case 2:
        path = "tests/mod2/n\xc3\xa9w" + std::to_string(i) + ".ts";
        break;
      default:
        path = "lib/other/deep/er/x" + std::to_string(i) + ".js";
        break;
    }
    if (i % 10 == 0) {
      out += "R  " + path + '\0' + "old/" + path + '\0';
    } else {
      out += "?? " + path + '\0';
    }
  }
  return out;
}

void BM_FootprintClassify20k(benchmark::State& state) {
  const Plan plan = load(plan_text());
  const std::string text = status_text();
  const std::vector<std::string> in_flight = {"T1", "T2", "T3", "T4", "T5"};
  for (auto _ : state) {
    auto changes = git::parse_porcelain_z(text);
    auto r = classify_changes(plan, "T0", in_flight, *changes);
    if (r->own.size() != 5000) state.SkipWithError("wrong classification");
    benchmark::DoNotOptimize(r->to_json().dump());
  }
}
BENCHMARK(BM_FootprintClassify20k)->Unit(benchmark::kMillisecond);

void BM_ConflictsAllPairs(benchmark::State& state) {
  const Plan plan = load(plan_text());
  for (auto _ : state) benchmark::DoNotOptimize(all_conflicts(plan));
}
BENCHMARK(BM_ConflictsAllPairs)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace devgraph::schedule
