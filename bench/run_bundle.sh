#!/usr/bin/env bash
# Whole-process timing of `devgraph run-bundle` against the reference
# run_bundle.py on the same bundle, driven by the same fake agent CLI
# (tests/fixtures/bundle/fake-claude-fixed: every persona takes LATENCY_MS).
#
# The planner's plan has six tasks and a known critical path:
#   plan -> T1 -> T2 -> T3 -> final_review -> documentation_review
# with T4, T5 (independent) and T6 (after T1) running beside it. Each task
# is write_tdd, implement and verify (tester and adversarial tester in
# parallel): three latencies. So the ideal wall clock, with zero overhead,
# is (1 + 3*3 + 2) * LATENCY_MS = 12 latencies. The test and build commands
# are `true`, so bundle_verify costs only the driver's own work.
#
# usage: bench/run_bundle.sh BUILD_DIR REFERENCE_DIR [LATENCY_MS] [RUNS] [WORK_PARENT]
#   BUILD_DIR      a build tree holding the devgraph binary
#   REFERENCE_DIR  the develop-v4 directory (runtime/run_bundle.py)
#   LATENCY_MS     each persona's time (default 200)
#   RUNS           runs per tool (default 5)
#   WORK_PARENT    where repositories and runs live (default $TMPDIR or /tmp)
# Environment: REF_POLL_SECONDS sets the reference's --poll-seconds (default:
# its own default, 3 s); ONLY=dg or ONLY=py times one tool; KEEP=1 keeps the
# work directory (printed) for a look at the logs. Prints medians, the
# ideal, and the ratios.
set -euo pipefail

build=${1:?usage: bench/run_bundle.sh BUILD_DIR REFERENCE_DIR [LATENCY_MS] [RUNS] [WORK_PARENT]}
ref=${2:?usage: bench/run_bundle.sh BUILD_DIR REFERENCE_DIR [LATENCY_MS] [RUNS] [WORK_PARENT]}
latency=${3:-200}
runs=${4:-5}
parent=${5:-${TMPDIR:-/tmp}}
here=$(cd "$(dirname "$0")" && pwd)
devgraph=$(cd "$build" && pwd)/devgraph
fake="$here/../tests/fixtures/bundle/fake-claude-fixed"
work=$(mktemp -d "$parent/devgraph-bench-XXXXXX")
if [ -n "${KEEP:-}" ]; then echo "work directory: $work" >&2; else trap 'rm -rf "$work"' EXIT; fi
export FAKE_LATENCY_MS=$latency
export GIT_AUTHOR_NAME=bench GIT_AUTHOR_EMAIL=bench@devgraph.invalid
export GIT_COMMITTER_NAME=bench GIT_COMMITTER_EMAIL=bench@devgraph.invalid
ref_poll=()
[ -n "${REF_POLL_SECONDS:-}" ] && ref_poll=(--poll-seconds "$REF_POLL_SECONDS")

now_ms() { echo $(($(date +%s%N) / 1000000)); }

# One bundle at plan_bundle, ready for a driver: a repository with one
# commit on main, the bundle worktree at its canonical place under AI_ROOT,
# and a run whose bundle cursor names it. Prints the run directory.
setup() {
  local root=$1 checkpoint=$2
  local repo="$root/src/repo" wt="$root/worktrees/local/repo/develop-b1"
  local run="$root/develop/runs/r1"
  mkdir -p "$repo" "$(dirname "$wt")"
  git -C "$repo" init -q -b main
  echo "bench" > "$repo/README.md"
  git -C "$repo" add README.md
  git -C "$repo" commit -q -m "base"
  git -C "$repo" worktree add -q -b develop/b1 "$wt" main
  AI_ROOT=$root $checkpoint "$run" init --repo "$repo" --default-branch main --merge \
    '{"delivery": "local", "merge_policy": "never", "commands": {"test": "true", "build": "true"},
      "bundles": [{"id": "b1", "title": "benchmark bundle", "issues": []}]}' >/dev/null
  AI_ROOT=$root $checkpoint "$run" move --bundle b1 --node plan_bundle --event BUNDLE_STARTED \
    --merge "{\"worktree\": \"$wt\", \"branch\": \"develop/b1\", \"base\": \"main\"}" >/dev/null
  mkdir -p "$run/bundles/b1"
  echo "# Benchmark bundle" > "$run/bundles/b1/spec.md"
  echo "$run"
}

# Runs one tool once; prints its wall clock in ms. Fails unless the bundle
# ends ready with all six tasks committed.
one() {
  local tool=$1 i=$2 root="$work/$1-$2" run t0 t1 code=0
  if [ "$tool" = dg ]; then
    run=$(setup "$root" "$devgraph checkpoint")
    t0=$(now_ms)
    AI_ROOT=$root "$devgraph" run-bundle "$run" --bundle b1 --claude-bin "$fake" \
      >"$root/out" 2>"$root/err" || code=$?
    t1=$(now_ms)
  else
    run=$(setup "$root" "python3 $ref/runtime/checkpoint.py")
    t0=$(now_ms)
    AI_ROOT=$root python3 "$ref/runtime/run_bundle.py" "$run" --bundle b1 --claude-bin "$fake" \
      "${ref_poll[@]}" >"$root/out" 2>"$root/err" || code=$?
    t1=$(now_ms)
  fi
  local done
  done=$(grep -c '"TASK_COMMITTED"' "$run/events.jsonl" || true)
  if [ "$code" != 0 ] || [ "$done" != 6 ]; then
    echo "$tool run $i: exit $code, $done tasks committed; see $root" >&2
    tail -3 "$root/out" >&2
    trap - EXIT
    exit 1
  fi
  echo $((t1 - t0))
}

dg_ms=() py_ms=()
only=${ONLY:-}
for i in $(seq 1 "$runs"); do
  [ "$only" != py ] && dg_ms+=("$(one dg "$i")")
  [ "$only" != dg ] && py_ms+=("$(one py "$i")")
done
# What one fake persona really takes on this machine right now (process
# start-up and scheduling included): the floor no driver can beat.
mkdir -p "$work/fake-alone"
cd "$work/fake-alone"
fake_ms=()
for i in $(seq 1 10); do
  t0=$(now_ms)
  "$fake" -p "agents/tester.md Task T1 of bundle b1" >/dev/null
  fake_ms+=($(($(now_ms) - t0)))
done
cd - >/dev/null
python3 - "$latency" "${dg_ms[*]}" "${py_ms[*]}" "${fake_ms[*]}" <<'PY'
import statistics, sys
latency = int(sys.argv[1])
ideal = 12 * latency
fake = statistics.median(int(v) for v in sys.argv[4].split())
print(f"one fake persona alone: median {fake:.0f} ms for a latency of {latency} ms; "
      f"12 of them: {12 * fake:.0f} ms")
for name, values in (("devgraph", sys.argv[2]), ("reference", sys.argv[3])):
    ms = [int(v) for v in values.split()]
    if not ms:
        continue
    med = statistics.median(ms)
    print(f"{name:9}  median {med:7.0f} ms  ideal {ideal} ms  ratio {med / ideal:.3f}  "
          f"over 12 fakes {med / (12 * fake):.3f}  runs {ms}")
PY
