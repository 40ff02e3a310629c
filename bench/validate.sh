#!/usr/bin/env bash
# Whole-process timing of `devgraph validate` against the reference
# validator on the same inputs, in the same hyperfine run.
#
# usage: bench/validate.sh BUILD_DIR REFERENCE_DIR
#   BUILD_DIR      a build tree holding the devgraph binary
#   REFERENCE_DIR  the develop-v4 directory (runtime/validate.py, contracts/)
# Prints hyperfine's markdown tables; BENCHMARKS.md quotes the medians.
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
hyperfine -N --warmup 3 --export-markdown "$work/graph.md" \
  -n "devgraph validate graph" "$devgraph validate graph" \
  -n "validate.py graph" "python3 $ref/runtime/validate.py graph" >/dev/null
hyperfine -N --warmup 3 --export-markdown "$work/state.md" \
  -n "devgraph validate state" "$devgraph validate state $state" \
  -n "validate.py state" "python3 $ref/runtime/validate.py state $state" >/dev/null
hyperfine -N --warmup 3 --export-markdown "$work/result.md" \
  -n "devgraph validate result" "$devgraph validate result $work/result.txt" \
  -n "validate.py result" "python3 $ref/runtime/validate.py result $work/result.txt" >/dev/null
hyperfine -N --warmup 3 --export-markdown "$work/run.md" \
  -n "devgraph validate run ($(wc -l <"$work/run/events.jsonl") events)" \
  "$devgraph validate run $work/run" >/dev/null
cat "$work/graph.md" "$work/state.md" "$work/result.md" "$work/run.md"
