#!/usr/bin/env bash
# Whole-run timing of `devgraph run`: BUNDLES single-issue bundles, PARALLEL
# at a time, every persona played by the simulated agent in LATENCY_MS.
#
# Each bundle plans one task, so its critical path is the planner, the
# tdd-writer, the developer, the two verifiers together, the code reviewer
# and the documentation reviewer: 6 latencies (its test and build commands
# are `true`). With BUNDLES / PARALLEL waves the ideal wall clock, with zero
# overhead, is waves x 6 x LATENCY_MS. A second ideal keeps the drivers'
# own work in: waves x the wall clock of one single-issue run, measured
# here too (so the ratio to it is the orchestrator's cost of running
# bundles side by side). Prints the median wall clocks, the ratios, and the
# orchestrator's own CPU per bundle (from
# RESULT_JSON's orchestrator_cpu_ms: the orchestrator process alone, its
# drivers and personas not included).
#
# usage: bench/run.sh BUILD_DIR [LATENCY_MS] [RUNS] [BUNDLES] [PARALLEL] [WORK_PARENT]
set -euo pipefail

build=${1:?usage: bench/run.sh BUILD_DIR [LATENCY_MS] [RUNS] [BUNDLES] [PARALLEL] [WORK_PARENT]}
latency=${2:-1000}
runs=${3:-3}
bundles=${4:-6}
parallel=${5:-3}
parent=${6:-${TMPDIR:-/tmp}}
devgraph=$(cd "$build" && pwd)/devgraph
work=$(mktemp -d "$parent/devgraph-bench-run-XXXXXX")
if [ -n "${KEEP:-}" ]; then echo "work directory: $work" >&2; else trap 'rm -rf "$work"' EXIT; fi
export GIT_AUTHOR_NAME=bench GIT_AUTHOR_EMAIL=bench@devgraph.invalid
export GIT_COMMITTER_NAME=bench GIT_COMMITTER_EMAIL=bench@devgraph.invalid

python3 - "$work/scenario.json" "$latency" <<'PY'
import json, sys
path, latency = sys.argv[1], int(sys.argv[2])
done = lambda s: {"status": "DONE", "summary": s, "evidence": []}
tasks = {"bundle": "{bundle}", "tasks": [{"id": "T1", "title": "the {bundle} marker",
         "depends_on": [], "files": ["src/{bundle}.txt", "tests/{bundle}.sh"]}]}
f = lambda p, c: {"path": p, "content": c}
scenario = {"default": {"latency_ms": latency, "result": done("{persona} approves")},
            "personas": {
  "planner": [{"latency_ms": latency, "result": done("planned"),
               "files": [f("docs/develop/plans/{bundle}.md", "# Plan {bundle}\n"),
                         f("docs/develop/plans/{bundle}.tasks.json", json.dumps(tasks))]}],
  "tdd-writer": [{"latency_ms": latency,
                  "result": dict(done("red"), commands=["sh tests/{bundle}.sh"]),
                  "files": [f("tests/{bundle}.sh", "grep -qx {bundle} src/{bundle}.txt\n")]}],
  "developer": [{"latency_ms": latency, "result": done("green"),
                 "files": [f("src/{bundle}.txt", "{bundle}\n")]}]}}
json.dump(scenario, open(path, "w"), indent=2)
PY

# One run of `devgraph run` over COUNT issues in a fresh repository;
# prints "wall_ms cpu_ms".
one_run() {
  local root=$1 count=$2
  mkdir -p "$root/repo/.devgraph"
  (cd "$root/repo" && git init -q -b main &&
    echo '{"test": "true", "build": "true"}' > .devgraph/commands.json &&
    git add -A && git commit -qm base)
  for b in $(seq 1 "$count"); do
    AI_ROOT="$root/ai" "$devgraph" issue new "work item $b" --repo "$root/repo" > /dev/null
  done
  local start end out result
  start=$(date +%s%N)
  out=$(cd "$root/repo" && AI_ROOT="$root/ai" "$devgraph" run --agent sim \
    --sim-scenario "$work/scenario.json" --max-bundles "$parallel" --no-live 2>/dev/null)
  end=$(date +%s%N)
  result=$(printf '%s\n' "$out" | grep '^RESULT_JSON: ' | tail -1 | cut -c14-)
  printf '%s' "$result" | python3 -c '
import json, sys
r = json.load(sys.stdin)
if r["status"] != "COMPLETE": sys.exit("run: " + r["status"])
print(sys.argv[1], r["orchestrator_cpu_ms"])' "$(((end - start) / 1000000))"
}

# The floor under one bundle's own work, measured here beside the runs:
# every durable write the store makes (an append with fdatasync, a file
# replaced with fsync of file and directory) and every process a bundle
# starts (git, its test and build commands, each persona). With strace
# present a traced single-issue run counts both; each count is then priced
# at this machine's cost of the same operation, measured now.
floor_ms=""
if command -v strace > /dev/null; then
  mkdir -p "$work/floor"
  strace -f -qq -e trace=execve,fsync,fdatasync -e signal=none -o "$work/floor/trace" \
    bash -c "$(declare -f one_run); devgraph='$devgraph' work='$work' parallel=1 one_run '$work/floor/run' 1" \
    > /dev/null
  syncs=$(grep -cE '(fsync|fdatasync)\(.*= 0$' "$work/floor/trace" || true)
  # execve tries each PATH entry: count the ones that succeeded, less the
  # set-up (git init/add/commit, `devgraph issue new`, the timing's python).
  procs=$(grep -E 'execve\(.*= 0$' "$work/floor/trace" | grep -cE '"(git|true|sim-agent|run-bundle)"' || true)
  floor_ms=$(python3 - "$work/floor" "$syncs" "$procs" <<'PY'
import os, subprocess, sys, time
d, syncs, procs = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
n = 100
start = time.monotonic()
for i in range(n):  # a replace (file and directory fsync) and an append
    with open(f"{d}/f.tmp", "w") as f:
        f.write("x" * 200); f.flush(); os.fsync(f.fileno())
    os.rename(f"{d}/f.tmp", f"{d}/f")
    fd = os.open(d, os.O_RDONLY); os.fsync(fd); os.close(fd)
sync_ms = (time.monotonic() - start) * 1000 / (2 * n)
start = time.monotonic()
for i in range(n // 2):
    subprocess.run(["git", "-C", d, "--version"], stdout=subprocess.DEVNULL, check=True)
proc_ms = (time.monotonic() - start) * 1000 / (n // 2)
# A bundle's worktree costs git far more than a process: priced apart.
repo = f"{d}/run/repo"
start = time.monotonic()
for i in range(5):
    subprocess.run(["git", "-C", repo, "worktree", "add", "-q", "-b", f"floor{i}", f"{d}/wt{i}"],
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
worktree_ms = (time.monotonic() - start) * 1000 / 5
total = syncs * sync_ms + (procs - 1) * proc_ms + worktree_ms
print(f"{total:.0f} {syncs} {sync_ms:.2f} {procs - 1} {proc_ms:.2f} {worktree_ms:.0f}")
PY
)
fi

walls=()
cpus=()
singles=()
for i in $(seq 1 "$runs"); do
  read -r w c < <(one_run "$work/s$i" 1)
  singles+=("$w")
  read -r w c < <(one_run "$work/r$i" "$bundles")
  walls+=("$w")
  cpus+=("$c")
done

python3 - "$latency" "$bundles" "$parallel" "${walls[*]}" "${cpus[*]}" "${singles[*]}" "$floor_ms" <<'PY'
import statistics, sys, math
latency, bundles, parallel = map(int, sys.argv[1:4])
floor = sys.argv[7].split()
walls = [int(x) for x in sys.argv[4].split()]
cpus = [int(x) for x in sys.argv[5].split()]
singles = [int(x) for x in sys.argv[6].split()]
waves = math.ceil(bundles / parallel)
ideal = waves * 6 * latency
wall = statistics.median(walls)
print(f"{bundles} bundles, {parallel} at a time, {latency} ms personas, {len(walls)} runs")
print(f"wall clock median {wall / 1000:.2f} s (runs: {', '.join(f'{w / 1000:.2f}' for w in walls)})")
print(f"ideal {ideal / 1000:.2f} s ({waves} waves x 6 latencies); ratio {wall / ideal:.3f}")
single = statistics.median(singles)
print(f"one single-issue run median {single / 1000:.2f} s; {waves} waves of it {waves * single / 1000:.2f} s; ratio {wall / (waves * single):.3f}")
if floor:
    f = float(floor[0])
    print(f"floor per bundle {f:.0f} ms: {floor[1]} durable syncs x {floor[2]} ms"
          f" + {floor[3]} processes x {floor[4]} ms + a worktree {floor[5]} ms")
    print(f"ideal with {waves} waves of that floor {(ideal + waves * f) / 1000:.2f} s; ratio {wall / (ideal + waves * f):.3f}")
print(f"orchestrator CPU median {statistics.median(cpus)} ms, {statistics.median(cpus) / bundles:.1f} ms per bundle")
PY
