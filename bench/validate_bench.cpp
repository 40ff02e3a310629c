// In-process cost of `devgraph validate`: replaying a large run, checking a
// state against its contract, and loading plus checking the graph.
#include <benchmark/benchmark.h>

#include "contracts/schema.h"
#include "graph/graph.h"
#include "replay/replay.h"
#include "util/fs.h"
#include "validate/contract_check.h"

namespace devgraph {
namespace {

const std::string kSkill = std::string(DEVGRAPH_SOURCE_DIR) + "/skill";

// A legal run of `bundles` bundles with `tasks` tasks each, every task
// walking the whole task lane: the shape of a long real run.
struct SyntheticRun {
  Json state;
  std::string log;
};

SyntheticRun make_run(int bundles, int tasks) {
  SyntheticRun run;
  long long seq = 0;
  std::string orch = "scan";
  Json bundles_rt = Json::object(), tasks_rt = Json::object();
  auto append = [&](const std::string& type, const Json& detail) {
    Json ev = {{"ts", "2026-01-01T00:00:00+00:00"},
               {"seq", ++seq},
               {"type", type},
               {"node", orch},
               {"detail", detail}};
    run.log += dump_py(ev) + "\n";
  };
  auto go = [&](const std::string& to, const std::string& type) {
    Json d = {{"from", orch}, {"to", to}};
    orch = to;
    append(type, d);
  };
  auto move = [&](const std::string& key, Json& map, const std::string& to, const std::string& type,
                  const std::string& status) {
    Json from = map.contains(key) ? map[key]["node"] : Json(nullptr);
    map[key] = {{"bundle", key.substr(0, key.find('/'))}, {"node", to}, {"status", status}};
    append(type, {{"bundle", key.substr(0, key.find('/'))},
                  {"lane_from", from},
                  {"lane_to", to},
                  {"cursor", key}});
  };
  append("RUN_STARTED", {{"run_id", "bench"}});
  go("bundle", "SCAN_DONE");
  go("bundle_scheduler", "BUNDLES_FORMED");
  for (int b = 0; b < bundles; ++b) {
    std::string bid = "B" + std::to_string(b);
    move(bid, bundles_rt, "plan_bundle", "BUNDLE_STARTED", "active");
    move(bid, bundles_rt, "task_scheduler", "PLAN_DONE", "active");
    for (int t = 0; t < tasks; ++t) {
      std::string key = bid + "/T" + std::to_string(t);
      move(key, tasks_rt, "write_tdd", "TASK_STARTED", "active");
      move(key, tasks_rt, "implement", "TDD_DONE", "active");
      move(key, tasks_rt, "verify", "IMPLEMENT_DONE", "active");
      append("VERIFY_DONE", {{"bundle", bid}});
      move(key, tasks_rt, "commit_task", "TASK_COMMITTED", "complete");
    }
    move(bid, bundles_rt, "bundle_verify", "BUNDLE_TASKS_COMPLETE", "active");
    move(bid, bundles_rt, "final_review", "BUNDLE_VERIFY_PASSED", "active");
    move(bid, bundles_rt, "documentation_review", "REVIEW_APPROVED", "active");
    move(bid, bundles_rt, "create_pr", "PR_CREATED", "complete");
  }
  go("monitor_prs", "ALL_BUNDLES_COMPLETE");
  go("cleanup_merged", "PR_CHECKS_INSPECTED");
  go("audit_merged", "CLEANUP_DONE");
  go("scan", "AUDIT_DONE");
  go("complete", "RUN_COMPLETE");
  run.state = {{"run_id", "bench"},
               {"graph_version", 4},
               {"node", orch},
               {"status", "complete"},
               {"bundles_runtime", bundles_rt},
               {"tasks_runtime", tasks_rt},
               {"event_seq", seq}};
  return run;
}

const Graph& graph() {
  static const Graph g = std::move(Graph::load(kSkill)).value();
  return g;
}

void BM_ReplayRun(benchmark::State& st) {
  SyntheticRun run = make_run(static_cast<int>(st.range(0)), 6);
  for (auto _ : st) {
    ReplayReport r = replay_run(graph(), run.state, run.log);
    if (!r.problems.empty()) st.SkipWithError(r.problems.front().c_str());
    benchmark::DoNotOptimize(r);
  }
  st.counters["events"] = static_cast<double>(run.state["event_seq"].get<long long>());
  st.SetItemsProcessed(st.iterations() * run.state["event_seq"].get<long long>());
}
BENCHMARK(BM_ReplayRun)->Arg(3)->Arg(30)->Arg(300)->Unit(benchmark::kMillisecond);

void BM_CheckState(benchmark::State& st) {
  auto checker = ContractChecker::load(state_schema_path(kSkill));
  auto state = load_json_file(kSkill + "/contracts/run-state.example.json");
  for (auto _ : st) benchmark::DoNotOptimize(checker->check(*state));
}
BENCHMARK(BM_CheckState)->Unit(benchmark::kMicrosecond);

void BM_LoadAndCheckGraph(benchmark::State& st) {
  for (auto _ : st) {
    auto g = Graph::load(kSkill);
    benchmark::DoNotOptimize(check_graph(*g));
  }
}
BENCHMARK(BM_LoadAndCheckGraph)->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace devgraph
