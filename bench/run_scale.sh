#!/usr/bin/env bash
# How `devgraph run`'s cost grows with the number of bundles: N single-issue
# local bundles, PARALLEL at a time, every persona played by the simulated
# agent with no latency (so nothing but devgraph's own work is timed).
#
# For each N it prints medians over RUNS runs of:
# - the orchestrator's own CPU, in all and per bundle (user + sys of the
#   `devgraph run` process alone, its getrusage(RUSAGE_SELF) at the end, as
#   RESULT_JSON's orchestrator_cpu_ms reports it), and per bundle added
#   since the previous N (the run's fixed cost cancels out: flat when the
#   cost is linear);
# - the CPU per bundle of the whole tree (user + sys of `devgraph run` and
#   every process it waited for: drivers, personas, git; wait4's rusage);
# - the peak RSS of the largest process in that tree (wait4's ru_maxrss);
# - the run directory's size per bundle (du --apparent-size);
# - `devgraph board build` of the finished run: its CPU (user + sys) and
#   wall clock.
# CPU time, not wall time, is the measure: it holds on a loaded machine.
#
# usage: bench/run_scale.sh BUILD_DIR [RUNS] [PARALLEL] [WORK_PARENT]
# Environment: SIZES="4 16 48 96" (the values of N), KEEP=1 keeps the
# work directory (printed). A quick look: SIZES="4 16" bench/run_scale.sh build 1
set -euo pipefail

build=${1:?usage: bench/run_scale.sh BUILD_DIR [RUNS] [PARALLEL] [WORK_PARENT]}
runs=${2:-3}
parallel=${3:-4}
parent=${4:-${TMPDIR:-/tmp}}
sizes=${SIZES:-4 16 48 96}
devgraph=$(cd "$build" && pwd)/devgraph
work=$(mktemp -d "$parent/devgraph-bench-scale-XXXXXX")
if [ -n "${KEEP:-}" ]; then echo "work directory: $work" >&2; else trap 'rm -rf "$work"' EXIT; fi
export GIT_AUTHOR_NAME=bench GIT_AUTHOR_EMAIL=bench@devgraph.invalid
export GIT_COMMITTER_NAME=bench GIT_COMMITTER_EMAIL=bench@devgraph.invalid

# The scenario of bench/run.sh with every latency 0: each bundle plans one
# task, which is written red, made green, verified and reviewed.
python3 - "$work/scenario.json" <<'PY'
import json, sys
done = lambda s: {"status": "DONE", "summary": s, "evidence": []}
tasks = {"bundle": "{bundle}", "tasks": [{"id": "T1", "title": "the {bundle} marker",
         "depends_on": [], "files": ["src/{bundle}.txt", "tests/{bundle}.sh"]}]}
f = lambda p, c: {"path": p, "content": c}
scenario = {"default": {"latency_ms": 0, "result": done("{persona} approves")},
            "personas": {
  "planner": [{"latency_ms": 0, "result": done("planned"),
               "files": [f("docs/develop/plans/{bundle}.md", "# Plan {bundle}\n"),
                         f("docs/develop/plans/{bundle}.tasks.json", json.dumps(tasks))]}],
  "tdd-writer": [{"latency_ms": 0,
                  "result": dict(done("red"), commands=["sh tests/{bundle}.sh"]),
                  "files": [f("tests/{bundle}.sh", "grep -qx {bundle} src/{bundle}.txt\n")]}],
  "developer": [{"latency_ms": 0, "result": done("green"),
                 "files": [f("src/{bundle}.txt", "{bundle}\n")]}]}}
json.dump(scenario, open(sys.argv[1], "w"), indent=2)
PY

# One run over COUNT local issues in a fresh repository. Prints one line:
# "own_cpu_ms tree_cpu_ms maxrss_kib run_dir_bytes board_cpu_ms board_wall_ms".
one_run() {
  local root=$1 count=$2
  mkdir -p "$root/repo/.devgraph"
  (cd "$root/repo" && git init -q -b main &&
    echo '{"test": "true", "build": "true"}' > .devgraph/commands.json &&
    git add -A && git commit -qm base)
  for b in $(seq 1 "$count"); do
    AI_ROOT="$root/ai" "$devgraph" issue new "work item $b" --repo "$root/repo" > /dev/null
  done
  python3 - "$root" "$devgraph" "$work/scenario.json" "$parallel" "$count" <<'PY'
import json, os, subprocess, sys, time
root, devgraph, scenario, parallel, count = sys.argv[1:6]
env = dict(os.environ, AI_ROOT=f"{root}/ai")
def timed(argv, out):
    """Runs argv; returns (exit code, CPU ms of it and its waited-for children, maxrss KiB, wall ms)."""
    start = time.monotonic()
    p = subprocess.Popen(argv, cwd=f"{root}/repo", env=env, stdout=out, stderr=subprocess.DEVNULL)
    _, status, ru = os.wait4(p.pid, 0)
    wall = (time.monotonic() - start) * 1000
    return os.waitstatus_to_exitcode(status), (ru.ru_utime + ru.ru_stime) * 1000, ru.ru_maxrss, wall
with open(f"{root}/out", "w") as out:
    code, tree_cpu, maxrss, _ = timed([devgraph, "run", "--agent", "sim", "--sim-scenario", scenario,
                                       "--max-bundles", parallel, "--no-live"], out)
result = None
for line in open(f"{root}/out"):
    if line.startswith("RESULT_JSON: "):
        result = json.loads(line[len("RESULT_JSON: "):])
if code != 0 or result is None or result["status"] != "COMPLETE":
    sys.exit(f"run over {count} issues: exit {code}, {result and result['status']}; see {root}/out")
run_dir = result.get("run_dir") or os.path.realpath(f"{root}/ai/develop/current-run")
delivered = sum(1 for b in result.get("bundles", []) if b.get("status") == "delivered")
if delivered != int(count):
    sys.exit(f"run over {count} issues: {delivered} bundles delivered; see {root}/out")
size = int(subprocess.run(["du", "-sb", run_dir], capture_output=True, text=True,
                          check=True).stdout.split()[0])
with open(os.devnull, "w") as null:
    bcode, board_cpu, _, board_wall = timed([devgraph, "board", "build", run_dir], null)
if bcode != 0:
    sys.exit(f"board build of {run_dir}: exit {bcode}")
print(result["orchestrator_cpu_ms"], round(tree_cpu), maxrss, size, round(board_cpu),
      round(board_wall))
PY
}

lines=()
for n in $sizes; do
  for i in $(seq 1 "$runs"); do
    lines+=("$n $(one_run "$work/n$n-$i" "$n")")
    echo "N=$n run $i: ${lines[-1]#* }" >&2
  done
done

printf '%s\n' "${lines[@]}" | python3 -c '
import statistics, sys
parallel, runs = sys.argv[1:3]
rows = {}
for line in sys.stdin:
    n, *v = line.split()
    rows.setdefault(int(n), []).append([float(x) for x in v])
print(f"{parallel} at a time, zero-latency personas, median of {runs} runs; CPU is user + sys")
print("|   N | orchestrator CPU | per bundle | ratio to first N | per added bundle | with drivers / bundle | peak RSS | run dir / bundle | board build CPU | board build wall |")
print("|----:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
first = None
prev = None
for n in sorted(rows):
    med = [statistics.median(col) for col in zip(*rows[n])]
    own = med[0] / n
    first = first or own
    # The orchestrator CPU the bundles since the previous N added, each:
    # what stays flat when the cost is linear (the run fixed cost cancels).
    added = f"{(med[0] - prev[1]) / (n - prev[0]):.1f} ms" if prev else ""
    prev = (n, med[0])
    print(f"| {n:3} | {med[0]:.0f} ms | {own:.1f} ms | {own / first:.2f} | {added} | {med[1] / n:.0f} ms "
          f"| {med[2] / 1024:.1f} MiB | {med[3] / n / 1024:.1f} KiB | {med[4]:.0f} ms | {med[5]:.0f} ms |")
' "$parallel" "$runs"
