#!/usr/bin/env bash
# What each fast path of `devgraph checkpoint RUN move` gains, measured on
# the whole process: the same move with and without the fast path, taken
# in turn by bench/alternate (every command once per round, the rounds
# repeated), on runs of 10 and 1,000 task cursors, beside the reference
# checkpoint.py, the durable-write floor (bench/durable_write_floor) and
# the process floor (bench/process_floor) of the same minutes.
#
# usage: bench/fast_paths.sh BUILD_DIR REFERENCE_DIR [WORK_PARENT] [ROUNDS]
#   BUILD_DIR      a tree built with DEVGRAPH_BENCH=ON
#   REFERENCE_DIR  the develop-v4 directory (runtime/checkpoint.py)
#   WORK_PARENT    where the runs live (default: $TMPDIR or /tmp)
#   ROUNDS         rounds of each alternating loop (default 400); the
#                  reference runs in every 10th
#
# Without a rebuild it compares:
#   schema-byte     a --skill copy whose state schema has one more space
#                   before its last newline: the same schema, other bytes
#   graph-byte      a --skill copy whose GRAPH.yaml differs in one comment
#                   letter: the same graph, other bytes
# Every devgraph command gets --skill, the unchanged copy for all but
# those two. Other builds join with VARIANTS="label=path/to/devgraph ..."
# (the same source with one fast path taken out, say), each compared with
# BUILD_DIR's devgraph. Each comparison is a loop of its own, the two
# commands in turn; a first loop times devgraph, the reference and the
# floors together. COLD=1 runs bench/evict_caches before each timed run,
# so every run starts with cold CPU caches; without it half the runs follow
# a run of the same command. KEEP_RAW=PREFIX keeps the raw timings.
set -euo pipefail

build=${1:?usage: bench/fast_paths.sh BUILD_DIR REFERENCE_DIR [WORK_PARENT] [ROUNDS]}
ref=${2:?usage: bench/fast_paths.sh BUILD_DIR REFERENCE_DIR [WORK_PARENT] [ROUNDS]}
parent=${3:-${TMPDIR:-/tmp}}
rounds=${4:-400}
here=$(cd "$(dirname "$0")" && pwd)
devgraph="$build/devgraph"
for tool in alternate durable_write_floor process_floor evict_caches; do
  [ -x "$build/bench/$tool" ] || { echo "fast_paths: $build/bench/$tool missing (DEVGRAPH_BENCH=ON)" >&2; exit 2; }
done
work=$(mktemp -d "$parent/devgraph-fast-paths-XXXXXX")
trap 'rm -rf "$work"' EXIT
export HOME="$work"  # the reference may record session metrics under $HOME
skill_src="$here/../skill"

mkdir -p "$work/skills"
cp -r "$skill_src" "$work/skills/same"
cp -r "$skill_src" "$work/skills/schema-byte"
cp -r "$skill_src" "$work/skills/graph-byte"
python3 - "$work/skills" <<'PY'
import sys
root = sys.argv[1]
p = f"{root}/schema-byte/contracts/run-state.schema.json"
text = open(p, "rb").read()
assert text.endswith(b"}\n")
open(p, "wb").write(text[:-1] + b" \n")
p = f"{root}/graph-byte/GRAPH.yaml"
text = open(p, "rb").read()
assert text.startswith(b"# devgraph")
open(p, "wb").write(b"# Devgraph" + text[len(b"# devgraph"):])
PY

move="move --bundle B0 --task T1 --node verify --event IMPLEMENT_DONE"
echo "machine: $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg), $(stat -f -c %T "$work") at $parent, ${rounds} rounds${COLD:+, cold caches}"
for n in 10 1000; do
  base="$work/base-$n/r$n"
  "$here/make_checkpoint_run.sh" "$devgraph" "$base" "$n"
  # spec LOOP LABEL EVERY COMMAND...: adds a command to loop LOOP, on its
  # own copy of the run ($work/LOOP-LABEL-n/rN stands for @RUN@).
  spec() {
    local loop=$1 label=$2 every=$3 dir="$work/$1-$2-$n"
    shift 3
    mkdir -p "$dir"
    cp -r "$base" "$dir/"
    echo "$label $every $*" | sed "s|@RUN@|$dir/r$n|g" >>"$work/spec-$loop-$n"
  }
  dg=("$devgraph" checkpoint @RUN@ --skill "$work/skills/same" $move)
  # Where a move stands now: devgraph, the reference and the two floors.
  spec now dg 1 "${dg[@]}"
  spec now durable-floor 1 "$build/bench/durable_write_floor" @RUN@
  spec now process-floor 1 "$build/bench/process_floor"
  spec now reference 10 "$(command -v python3)" "$ref/runtime/checkpoint.py" @RUN@ $move
  # One loop per fast path: devgraph with it and without it, in turn, so
  # both follow each other equally often. "dg-again" is the same command
  # twice: the resolution of the measurement.
  loops=(dg-again schema-byte graph-byte)
  spec dg-again dg 1 "${dg[@]}"
  spec dg-again dg-again 1 "${dg[@]}"
  spec schema-byte dg 1 "${dg[@]}"
  spec schema-byte schema-byte 1 "$devgraph" checkpoint @RUN@ --skill "$work/skills/schema-byte" $move
  spec graph-byte dg 1 "${dg[@]}"
  spec graph-byte graph-byte 1 "$devgraph" checkpoint @RUN@ --skill "$work/skills/graph-byte" $move
  for v in ${VARIANTS:-}; do
    label=${v%%=*}
    loops+=("$label")
    spec "$label" dg 1 "${dg[@]}"
    spec "$label" "$label" 1 "${v#*=}" checkpoint @RUN@ --skill "$work/skills/same" $move
  done
  raws=()
  for loop in now "${loops[@]}"; do
    if [ -n "${COLD:-}" ]; then echo "between 1 $build/bench/evict_caches" >>"$work/spec-$loop-$n"; fi
    "$build/bench/alternate" "$rounds" "$work/spec-$loop-$n" >"$work/raw-$loop-$n"
    raws+=("$work/raw-$loop-$n")
    if [ -n "${KEEP_RAW:-}" ]; then cp "$work/raw-$loop-$n" "$KEEP_RAW-$loop-$n"; fi
  done
  python3 "$here/fast_paths.py" "$n" "$(stat -c %s "$base/state.json")" "${raws[@]}"
done
