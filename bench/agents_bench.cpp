// Persona runtime overhead: 200 simulated personas of 50 ms each, at most
// 16 live at once, through the real supervision path (each persona is a
// `devgraph sim-agent` child process). Overhead per persona is the time
// from launch() to its completion being handed to the driver, minus the
// 50 ms the simulated agent waits on purpose. Reported as counters:
// overhead_median_ms, overhead_p95_ms, and wall_ms for the whole batch
// (the ideal is 200 / 16 x 50 ms = 625 ms).
#include <benchmark/benchmark.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <stdexcept>

#include "agents/runtime.h"
#include "contracts/schema.h"
#include "util/fs.h"

namespace {

using namespace devgraph;
using namespace devgraph::agents;

constexpr int kPersonas = 200;
constexpr int kLive = 16;
constexpr int kLatencyMs = 50;

void BM_SimPersonas(benchmark::State& state) {
  auto tmp = TempDir::create("devgraph-bench");
  if (!tmp) throw std::runtime_error(tmp.error().message);
  std::string wt = join_path(tmp->path(), "wt");
  (void)make_directories(wt);
  std::string scenario = join_path(tmp->path(), "scenario.json");
  std::ofstream(scenario) << R"({"default": {"latency_ms": )" << kLatencyMs
                          << R"(, "result": {"status": "DONE", "summary": "s", "evidence": []}}})";
  std::vector<double> overhead;
  double wall_total = 0;
  for (auto _ : state) {
    RuntimeConfig cfg;
    cfg.backend.kind = BackendKind::sim;
    cfg.backend.binary = DEVGRAPH_BIN;
    cfg.backend.sim_scenario = scenario;
    cfg.bundle = "bench";
    cfg.log_path = join_path(tmp->path(), "run/run_bundle.log");
    cfg.result_schema = result_schema_path(std::string(DEVGRAPH_SOURCE_DIR) + "/skill");
    auto rt = PersonaRuntime::create(cfg);
    if (!rt) throw std::runtime_error(rt.error().message);
    LaunchRequest req{"developer", std::nullopt, "bench",
                      wt,          tmp->path(),  std::string(DEVGRAPH_SOURCE_DIR) + "/skill"};
    auto start = std::chrono::steady_clock::now();
    // Overhead is measured here, from just before launch() to the moment
    // next_event() hands the completion over, with sub-millisecond
    // precision (the completion's own `elapsed` is whole milliseconds).
    std::map<LaunchId, std::chrono::steady_clock::time_point> launched_at;
    int launched = 0, done = 0;
    while (done < kPersonas) {
      while (launched < kPersonas && (*rt)->outstanding() < static_cast<size_t>(kLive)) {
        req.task = "T" + std::to_string(launched++);
        auto at = std::chrono::steady_clock::now();
        auto id = (*rt)->launch(req);
        if (!id) throw std::runtime_error("launch failed");
        launched_at[*id] = at;
      }
      auto ev = (*rt)->next_event();
      if (!ev) break;
      if (!ev->completion) continue;
      auto handed = std::chrono::steady_clock::now();
      ++done;
      if (ev->completion->outcome != Outcome::result)
        state.SkipWithError(ev->completion->error.c_str());
      overhead.push_back(
          std::chrono::duration<double, std::milli>(handed - launched_at[ev->completion->id])
              .count() -
          kLatencyMs);
    }
    wall_total +=
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  }
  std::sort(overhead.begin(), overhead.end());
  state.counters["overhead_median_ms"] = overhead[overhead.size() / 2];
  state.counters["overhead_p95_ms"] = overhead[overhead.size() * 95 / 100];
  state.counters["wall_ms"] = wall_total / static_cast<double>(state.iterations());
}
BENCHMARK(BM_SimPersonas)->Unit(benchmark::kMillisecond)->Iterations(3)->UseRealTime();

}  // namespace
