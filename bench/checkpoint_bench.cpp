// In-process cost of one checkpoint transaction (lock, load, repair check,
// move, scoped schema check, append, atomic replace) on runs holding 10,
// 100 and 1,000 task cursors, plus its two largest parts. Runs live under
// $TMPDIR; point it at a RAM file system to leave the disk's fsync out.
#include <benchmark/benchmark.h>

#include "contracts/schema.h"
#include "graph/graph.h"
#include "store/deferred_state.h"
#include "store/run_store.h"
#include "util/fs.h"
#include "util/json.h"

namespace devgraph {
namespace {

const std::string kSkill = std::string(DEVGRAPH_SOURCE_DIR) + "/skill";

const Graph& graph() {
  static const Graph g = std::move(Graph::load(kSkill)).value();
  return g;
}
const Schema& schema() {
  static const Schema s = std::move(Schema::load(state_schema_path(kSkill))).value();
  return s;
}

// A run with `n` task cursors, built through the store itself.
struct BenchRun {
  TempDir dir = std::move(TempDir::create("devgraph-bench")).value();
  std::string run = join_path(dir.path(), "r");
  explicit BenchRun(int n) {
    RunStore store(run, graph(), schema());
    (void)store.init({"/src/app", "main", Json()});
    (void)store.transact([n](Transaction& t) {
      Json& tasks = t.state()["tasks_runtime"];
      auto& pairs = tasks.get_ref<Json::object_t&>();
      for (int i = 0; i < n; ++i) {
        Json rec = {{"bundle", "B" + std::to_string(i / 10)},
                    {"task", "T" + std::to_string(i)},
                    {"node", "implement"},
                    {"previous_node", "write_tdd"},
                    {"status", "active"},
                    {"moves", 2},
                    {"updated_at", t.now()},
                    {"base_commit", std::string(40, '0')},
                    {"agent_handles", {{"developer", "agent-" + std::to_string(i)}}}};
        pairs.emplace_back("B" + std::to_string(i / 10) + "/T" + std::to_string(i), std::move(rec));
      }
      return Status{};
    });
  }
};

// Arg 0: cursor count; arg 1: 1 when the cursor maps stay unparsed (what
// `devgraph checkpoint` does), 0 for the full parse the driver uses.
void BM_Move(benchmark::State& st) {
  BenchRun run(static_cast<int>(st.range(0)));
  RunStore store(run.run, graph(), schema());
  store.defer_cursor_maps(st.range(1) != 0);
  MoveRequest m;
  m.bundle = "B0";
  m.task = "T1";
  m.node = "verify";
  m.event = "IMPLEMENT_DONE";
  for (auto _ : st) {
    auto done = store.move(m);
    if (!done) st.SkipWithError(done.error().message.c_str());
  }
}
BENCHMARK(BM_Move)
    ->ArgsProduct({{10, 100, 1000}, {0, 1}})
    ->ArgNames({"tasks", "deferred"})
    ->Unit(benchmark::kMillisecond);

void BM_OpenDeferred(benchmark::State& st) {
  BenchRun run(static_cast<int>(st.range(0)));
  std::string text = *read_file(join_path(run.run, kStateFile));
  for (auto _ : st)
    benchmark::DoNotOptimize(DeferredState::open(text, {"tasks_runtime", "bundles_runtime"}));
}
BENCHMARK(BM_OpenDeferred)->Arg(1000)->Unit(benchmark::kMillisecond);

void BM_ParseState(benchmark::State& st) {
  BenchRun run(static_cast<int>(st.range(0)));
  std::string text = *read_file(join_path(run.run, kStateFile));
  for (auto _ : st) benchmark::DoNotOptimize(parse_json(text, "state.json"));
}
BENCHMARK(BM_ParseState)->Arg(1000)->Unit(benchmark::kMillisecond);

void BM_ParseStateGeneral(benchmark::State& st) {
  BenchRun run(static_cast<int>(st.range(0)));
  std::string text = *read_file(join_path(run.run, kStateFile));
  // nlohmann's own parser, which parse_json replaces.
  for (auto _ : st) benchmark::DoNotOptimize(Json::parse(text));
}
BENCHMARK(BM_ParseStateGeneral)->Arg(1000)->Unit(benchmark::kMillisecond);

void BM_LoadGraph(benchmark::State& st) {
  for (auto _ : st) benchmark::DoNotOptimize(Graph::load(kSkill));
}
BENCHMARK(BM_LoadGraph)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace devgraph
