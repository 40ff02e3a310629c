#!/bin/sh
# Whole-process timing of `devgraph schedule` beside the reference script on
# the same generated inputs (bench/schedule_inputs.py).
#
#   bench/schedule_cli.sh DEVGRAPH_BIN REFERENCE_DIR [WORK_DIR]
#
# REFERENCE_DIR is the develop-v4 directory (holding runtime/schedule.py).
# Results go to WORK_DIR/schedule-*.md (hyperfine's markdown export).
set -eu
bin=$1
ref=$2/runtime/schedule.py
work=${3:-$(mktemp -d)}
here=$(cd "$(dirname "$0")" && pwd)
python3 "$here/schedule_inputs.py" "$work"
cd "$work"

compare() {
  name=$1
  shift
  # --ignore-failure: footprint-check exits 2 on the (intended) violation.
  hyperfine --warmup 2 --runs "${RUNS:-10}" --ignore-failure --export-markdown "schedule-$name.md" \
    -n devgraph "$bin schedule $*" -n reference "python3 $ref $*"
}

compare check check tasks.json
compare runnable runnable tasks.json --state state.json --bundle bench --max 6
compare critical-path critical-path tasks.json
compare footprint-check footprint-check tasks.json --task T0 --worktree repo --in-flight T1,T2,T3,T4
echo "results in $work"
