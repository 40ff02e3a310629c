#!/usr/bin/env bash
# Whole-process timing of `devgraph discuss`: the five perspectives of
# GRAPH.yaml, each a `devgraph critique` child whose critic (the simulated
# agent) takes LATENCY_MS. They run at once, so the ideal wall clock, with
# zero overhead, is one latency; one after another would be five. Also
# times one `devgraph critique` alone (the floor of one perspective with
# its process, runtime and critic) and an empty process (the machine's
# floor). Prints the medians and the ratios to the ideal.
#
# usage: bench/discuss.sh BUILD_DIR [LATENCY_MS] [RUNS] [WORK_PARENT]
set -euo pipefail

build=${1:?usage: bench/discuss.sh BUILD_DIR [LATENCY_MS] [RUNS] [WORK_PARENT]}
latency=${2:-1000}
runs=${3:-7}
parent=${4:-${TMPDIR:-/tmp}}
devgraph=$(cd "$build" && pwd)/devgraph
work=$(mktemp -d "$parent/devgraph-bench-discuss-XXXXXX")
if [ -n "${KEEP:-}" ]; then echo "work directory: $work" >&2; else trap 'rm -rf "$work"' EXIT; fi

printf '# Plan\n\n1. Copy the rows.\n2. Verify the copy.\n' >"$work/plan.md"
printf -- '- keep the old data\n' >"$work/requirements.md"
python3 - "$work/scenario.json" "$latency" <<'PY'
import json, sys
rules = []
for p in ["product", "technical", "quality", "risk", "coverage"]:
    c = {"perspective": p, "strengths": ["small steps"], "weaknesses": ["no rollback named"],
         "suggestions": ["name the rollback"], "rating": 4}
    if p == "risk": c["risk_level"] = "low"
    if p == "coverage": c["missing_requirements"] = []
    rules.append({"bundle": p, "latency_ms": int(sys.argv[2]),
                  "result": {"status": "DONE", "summary": "rated", "evidence": [], "critique": c}})
json.dump({"default": {"result": {"status": "BLOCKED", "summary": "no rule", "evidence": []}},
           "personas": {"critic": rules}}, open(sys.argv[1], "w"))
PY

now_ns() { date +%s%N; }
median() { sort -n | awk '{a[NR]=$1} END {print (NR % 2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }

time_ms() {  # runs the command RUNS times; prints each wall clock in ms
  for i in $(seq "$runs"); do
    rm -rf "$work/out"
    local t0 t1
    t0=$(now_ns)
    "$@" >/dev/null 2>&1 || [ $? -le 2 ]
    t1=$(now_ns)
    echo $(((t1 - t0) / 1000000))
  done
}

discuss=$(time_ms "$devgraph" discuss "$work/plan.md" --round B1 --context "$work/requirements.md" \
  --out "$work/out" --agent sim --fallback none --sim-scenario "$work/scenario.json" | median)
one=$(time_ms "$devgraph" critique "$work/plan.md" --perspective technical --backends sim \
  --sim-scenario "$work/scenario.json" --dir "$work/out/one" | median)
empty=$(time_ms /bin/true | median)
echo "latency per critic: ${latency} ms; ideal (all five at once): ${latency} ms"
echo "discuss, five perspectives: median ${discuss} ms, ratio to ideal $(awk -v a="$discuss" -v b="$latency" 'BEGIN {printf "%.3f", a / b}')"
echo "critique, one perspective:  median ${one} ms, ratio to ideal $(awk -v a="$one" -v b="$latency" 'BEGIN {printf "%.3f", a / b}')"
echo "empty process:              median ${empty} ms"
echo "one after another would take $((5 * latency)) ms (ratio 5.000)"
