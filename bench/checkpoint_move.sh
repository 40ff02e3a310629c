#!/usr/bin/env bash
# Whole-process timing of `devgraph checkpoint RUN move` against the
# reference checkpoint.py, on runs holding 10, 100 and 1,000 task cursors.
# Both tools get byte-identical copies of each run and are timed in the
# same invocation of this script.
#
# usage: bench/checkpoint_move.sh BUILD_DIR REFERENCE_DIR [WORK_PARENT]
#   BUILD_DIR      a build tree holding the devgraph binary
#   REFERENCE_DIR  the develop-v4 directory (runtime/checkpoint.py)
#   WORK_PARENT    where the runs live (default: $TMPDIR or /tmp). Point it
#                  at a RAM file system to time the software without the
#                  disk's fsync latency.
# Prints the process floor (`devgraph --version`), then one line per size:
# medians (ms) and the ratio; BENCHMARKS.md quotes them. When the build
# tree has bench/durable_write_floor (DEVGRAPH_BENCH=ON), each line also
# gives that program's median on the same run: the file work of a move
# (state copied, flushed event line, flushed temp file, rename, flushed
# directory)
# with nothing else, so the disk's share of devgraph's time is in view.
set -euo pipefail

build=${1:?usage: bench/checkpoint_move.sh BUILD_DIR REFERENCE_DIR [WORK_PARENT]}
ref=${2:?usage: bench/checkpoint_move.sh BUILD_DIR REFERENCE_DIR [WORK_PARENT]}
parent=${3:-${TMPDIR:-/tmp}}
devgraph="$build/devgraph"
floor="$build/bench/durable_write_floor"
work=$(mktemp -d "$parent/devgraph-bench-XXXXXX")
trap 'rm -rf "$work"' EXIT
export HOME="$work"  # the reference may record session metrics under $HOME

# The process floor in the same minutes: how long this machine takes to
# start and end devgraph doing nothing. On a shared machine it moves by
# half a millisecond from one minute to the next; read the medians
# below against it.
hyperfine -N --warmup 3 --runs 60 --export-json "$work/floor.json" "$devgraph --version" >/dev/null
python3 - "$work/floor.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))["results"][0]
print(f"floor: devgraph --version p50={r['median'] * 1e3:.2f} ms (min {r['min'] * 1e3:.2f})")
PY

for n in 10 100 1000; do
  base="$work/base-$n/runs/r$n"
  "$(dirname "$0")/make_checkpoint_run.sh" "$devgraph" "$base" "$n"
  for copy in dg py fl; do
    mkdir -p "$work/$copy-$n/runs"
    cp -r "$base" "$work/$copy-$n/runs/"
  done
  move=(move --bundle B0 --task T1 --node verify --event IMPLEMENT_DONE)
  py_runs=10
  [ "$n" -ge 1000 ] && py_runs=5
  hyperfine -N --warmup 3 --runs 60 --export-json "$work/dg-$n.json" \
    "$devgraph checkpoint $work/dg-$n/runs/r$n ${move[*]}" >/dev/null
  hyperfine -N --warmup 1 --runs "$py_runs" --export-json "$work/py-$n.json" \
    "python3 $ref/runtime/checkpoint.py $work/py-$n/runs/r$n ${move[*]}" >/dev/null
  floor_json=""
  if [ -x "$floor" ]; then
    floor_json="$work/fl-$n.json"
    hyperfine -N --warmup 3 --runs 60 --export-json "$floor_json" \
      "$floor $work/fl-$n/runs/r$n" >/dev/null
  fi
  python3 - "$n" "$work/dg-$n.json" "$work/py-$n.json" "$(stat -c %s "$base/state.json")" \
    "$floor_json" <<'PY'
import json, sys
n, dg, py, size, fl = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), sys.argv[5]
d = json.load(open(dg))["results"][0]
p = json.load(open(py))["results"][0]
line = (f"tasks={n:>5} state={size / 1024:7.1f} KiB  devgraph p50={d['median'] * 1e3:7.2f} ms "
        f"(min {d['min'] * 1e3:.2f})  checkpoint.py p50={p['median'] * 1e3:8.1f} ms  "
        f"ratio={p['median'] / d['median']:6.1f}x")
if fl:
    f = json.load(open(fl))["results"][0]
    line += f"  durable floor p50={f['median'] * 1e3:.2f} ms"
print(line)
PY
done
