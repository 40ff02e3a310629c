#!/usr/bin/env bash
# Whole-process timing of `devgraph validate` against the reference
# validator on the same inputs, in the same hyperfine run.
#
# usage: bench/validate.sh BUILD_DIR REFERENCE_DIR
#   BUILD_DIR      a build tree holding the devgraph binary
#   REFERENCE_DIR  the develop-v4 directory (runtime/validate.py, contracts/)
# Prints a markdown table of medians; BENCHMARKS.md quotes it.
set -euo pipefail

build=${1:?usage: bench/validate.sh BUILD_DIR REFERENCE_DIR}
ref=${2:?usage: bench/validate.sh BUILD_DIR REFERENCE_DIR}
devgraph="$build/devgraph"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

state="$ref/contracts/run-state.example.json"
printf 'done\nRESULT_JSON: {"status": "DONE", "summary": "s", "evidence": ["t"]}\n' >"$work/result.txt"

# A reference-written run for `validate run` (no reference counterpart:
# timed alone).
HOME="$work" python3 - "$ref/runtime" "$work/run" <<'EOF'
import contextlib, io, sys
sys.path.insert(0, sys.argv[1])
import checkpoint
run = sys.argv[2]
steps = [["init", "--repo", "/src/app", "--default-branch", "main"],
         ["go", "--node", "bundle", "--event", "SCAN_DONE"],
         ["go", "--node", "bundle_scheduler", "--event", "BUNDLES_FORMED"]]
for b in range(20):
    bid = f"B{b}"
    steps.append(["move", "--bundle", bid, "--node", "plan_bundle", "--event", "BUNDLE_STARTED"])
    steps.append(["move", "--bundle", bid, "--node", "task_scheduler", "--event", "PLAN_DONE"])
    for t in range(5):
        for node, ev in [("write_tdd", "TASK_STARTED"), ("implement", "TDD_DONE"),
                         ("verify", "IMPLEMENT_DONE"), ("commit_task", "TASK_COMMITTED")]:
            steps.append(["move", "--bundle", bid, "--task", f"T{t}", "--node", node, "--event", ev])
    for node, ev in [("bundle_verify", "BUNDLE_TASKS_COMPLETE"), ("final_review", "BUNDLE_VERIFY_PASSED"),
                     ("documentation_review", "REVIEW_APPROVED"), ("create_pr", "PR_CREATED")]:
        steps.append(["move", "--bundle", bid, "--node", node, "--event", ev])
for argv in steps:
    with contextlib.redirect_stdout(io.StringIO()):
        checkpoint.main([run, *argv])
EOF

export DEVGRAPH_SKILL=
time_pair() {  # name, devgraph command, reference command (optional)
  local name=$1; shift
  local args=(-n "devgraph validate $name" "$1")
  [ $# -gt 1 ] && args+=(-n "validate.py $name" "$2")
  hyperfine -N --warmup 3 --runs 15 --export-json "$work/$name.json" "${args[@]}" >/dev/null
}
time_pair graph "$devgraph validate graph" "python3 $ref/runtime/validate.py graph"
time_pair state "$devgraph validate state $state" "python3 $ref/runtime/validate.py state $state"
time_pair result "$devgraph validate result $work/result.txt" \
  "python3 $ref/runtime/validate.py result $work/result.txt"
time_pair run "$devgraph validate run $work/run"

# Medians (hyperfine's markdown export shows means, which the noisy shared
# machine skews).
python3 - "$work" "$(wc -l <"$work/run/events.jsonl")" <<'EOF'
import json, statistics, sys
work, events = sys.argv[1], sys.argv[2]
print("| command | median [ms] | reference median [ms] | ratio |")
print("|:---|---:|---:|---:|")
for name in ["graph", "state", "result", "run"]:
    results = json.load(open(f"{work}/{name}.json"))["results"]
    ours = statistics.median(results[0]["times"]) * 1000
    label = f"validate {name}" + (f" ({events} events)" if name == "run" else "")
    if len(results) > 1:
        theirs = statistics.median(results[1]["times"]) * 1000
        print(f"| {label} | {ours:.1f} | {theirs:.1f} | {theirs / ours:.0f}x faster |")
    else:
        print(f"| {label} | {ours:.1f} | (no reference counterpart) | |")
EOF
