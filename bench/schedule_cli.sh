#!/bin/sh
# Whole-process timing of `devgraph schedule` beside the reference script on
# the same generated inputs (bench/schedule_inputs.py).
#
#   bench/schedule_cli.sh DEVGRAPH_BIN REFERENCE_DIR [WORK_DIR]
#
# REFERENCE_DIR is the develop-v4 directory (holding runtime/schedule.py).
# Prints one markdown row per command (medians, ms); hyperfine's JSON is
# kept in WORK_DIR/schedule-*.json.
set -eu
bin=$1
ref=$2/runtime/schedule.py
work=${3:-$(mktemp -d)}
here=$(cd "$(dirname "$0")" && pwd)
python3 "$here/schedule_inputs.py" "$work"
cd "$work"
echo "| command | devgraph median [ms] | reference median [ms] | ratio |"
echo "|:---|---:|---:|---:|"

compare() {
  name=$1
  shift
  # --ignore-failure: footprint-check exits 2 on the (intended) violation.
  hyperfine --warmup 2 --runs "${RUNS:-10}" --ignore-failure --export-json "schedule-$name.json" \
    -n devgraph "$bin schedule $*" -n reference "python3 $ref $*" >/dev/null
  python3 - "schedule-$name.json" "$name" <<'PY'
import json, sys
r = {x["command"]: x for x in json.load(open(sys.argv[1]))["results"]}
d, p = r["devgraph"]["median"] * 1000, r["reference"]["median"] * 1000
print(f"| {sys.argv[2]} | {d:.1f} | {p:.1f} | {p / d:.1f}x faster |")
PY
}

compare check check tasks.json
compare runnable runnable tasks.json --state state.json --bundle bench --max 6
compare critical-path critical-path tasks.json
compare footprint-check footprint-check tasks.json --task T0 --worktree repo --in-flight T1,T2,T3,T4
echo "results in $work"
