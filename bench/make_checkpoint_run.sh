#!/usr/bin/env bash
# Builds a run for the checkpoint benchmarks: `devgraph checkpoint init`,
# then N task cursors spread over bundles of ten, as a tech lead leaves
# them mid-run (written directly, so building the input takes no time).
#
# usage: bench/make_checkpoint_run.sh DEVGRAPH RUN_DIR N
set -euo pipefail
devgraph=${1:?usage: bench/make_checkpoint_run.sh DEVGRAPH RUN_DIR N}
run=${2:?usage: bench/make_checkpoint_run.sh DEVGRAPH RUN_DIR N}
n=${3:?usage: bench/make_checkpoint_run.sh DEVGRAPH RUN_DIR N}
"$devgraph" checkpoint "$run" init --repo /src/app --default-branch main >/dev/null
python3 - "$run/state.json" "$n" <<'PY'
import json, sys
path, n = sys.argv[1], int(sys.argv[2])
with open(path, encoding="utf-8") as f:
    state = json.load(f)
for b in range((n + 9) // 10):
    state["bundles_runtime"][f"B{b}"] = {
        "bundle": f"B{b}", "task": None, "node": "task_scheduler", "previous_node": "plan_bundle",
        "status": "active", "moves": 2, "updated_at": state["started_at"], "branch": f"dev/b{b}"}
for i in range(n):
    state["tasks_runtime"][f"B{i // 10}/T{i}"] = {
        "bundle": f"B{i // 10}", "task": f"T{i}", "node": "implement", "previous_node": "write_tdd",
        "status": "active", "moves": 2, "updated_at": state["started_at"], "base_commit": "0" * 40,
        "agent_handles": {"developer": f"agent-{i}"}}
with open(path, "w", encoding="utf-8") as f:
    json.dump(state, f, indent=2)
    f.write("\n")
PY
