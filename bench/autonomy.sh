#!/usr/bin/env bash
# The autonomy suite as a figure: one `devgraph run` over the ten issues of
# bench/autonomy/ (one bundle each), the simulated agent playing
# bench/autonomy/scenario.json, in which every bundle meets one
# misbehaviour of a real agent that devgraph is meant to recover from
# (bench/autonomy/README.md lists them). The repository has no origin, so
# a delivered bundle is a ready branch.
#
# Prints the bundles, how many were delivered with no person asked, how
# many waited for a person (and why, from `devgraph inbox`), the autonomy
# rate (delivered unattended / recoverable), the wrong commits (files on a
# ready branch outside every task's footprint and the bundle's plan, and
# files a task's commit holds outside that task's own footprint), the
# wall clock of the run and the machine's load average as it started.
# Tests/e2e/autonomy_test.cpp runs the same files and asserts a rate of 1
# and no wrong commit. Nothing is downloaded.
#
# usage: bench/autonomy.sh BUILD_DIR [RUNS] [MAX_BUNDLES] [WORK_PARENT]
set -euo pipefail

usage="usage: bench/autonomy.sh BUILD_DIR [RUNS] [MAX_BUNDLES] [WORK_PARENT]"
build=${1:?$usage}
runs=${2:-1}
max_bundles=${3:-3}
parent=${4:-${TMPDIR:-/tmp}}
devgraph=$(cd "$build" && pwd)/devgraph
suite=$(cd "$(dirname "$0")/autonomy" && pwd)
work=$(mktemp -d "$parent/devgraph-bench-autonomy-XXXXXX")
if [ -n "${KEEP:-}" ]; then echo "work directory: $work" >&2; else trap 'rm -rf "$work"' EXIT; fi
export GIT_AUTHOR_NAME=bench GIT_AUTHOR_EMAIL=bench@devgraph.invalid
export GIT_COMMITTER_NAME=bench GIT_COMMITTER_EMAIL=bench@devgraph.invalid
export NO_COLOR=1

# One run in ROOT; prints one line of JSON with its figures.
one_run() {
  local root=$1
  mkdir -p "$root"
  cp -R "$suite/repo" "$root/repo"
  (cd "$root/repo" && git init -q -b main && git add -A && git commit -qm base)
  while IFS= read -r title; do
    [ -n "$title" ] || continue
    AI_ROOT="$root/ai" "$devgraph" issue new "$title" --body "$title." --repo "$root/repo" \
      > /dev/null
  done < "$suite/issues.txt"
  local load start end code=0
  load=$(cut -d' ' -f1 /proc/loadavg)
  start=$(date +%s%N)
  (cd "$root/repo" && AI_ROOT="$root/ai" "$devgraph" run --agent sim \
    --sim-scenario "$suite/scenario.json" --api-backoff-seconds 0 \
    --max-bundles "$max_bundles" --no-live > "$root/run.out" 2> "$root/run.err") || code=$?
  end=$(date +%s%N)
  (cd "$root/repo" && AI_ROOT="$root/ai" "$devgraph" inbox --json > "$root/inbox.json")
  python3 - "$root" "$code" "$(((end - start) / 1000000))" "$load" <<'PY'
import json, os, subprocess, sys
root, code, wall_ms, load = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
repo = os.path.join(root, "repo")
lines = [l for l in open(os.path.join(root, "run.out")) if l.startswith("RESULT_JSON: ")]
res = json.loads(lines[-1][len("RESULT_JSON: "):]) if lines else {}
state = json.load(open(os.path.join(res["run_dir"], "state.json"))) if "run_dir" in res else {}
inbox = json.load(open(os.path.join(root, "inbox.json")))
bundles = res.get("bundles", [])
waited = [b["id"] for b in bundles if b.get("status") != "delivered"]
waited += [i["bundle"] for i in inbox if i.get("bundle") not in waited]
unattended = [b["id"] for b in bundles if b.get("status") == "delivered" and b["id"] not in waited]
wrong = []
for b in state.get("bundles", []):
    branch = b.get("branch")
    if not branch:
        continue
    git = lambda *args: subprocess.run(["git", *args], cwd=repo, capture_output=True, text=True,
                                       check=True).stdout
    tasks = b.get("tasks", [])
    # The branch: nothing outside the plan's footprints and the plan itself.
    allowed = {f"docs/develop/plans/{b['id']}.md", f"docs/develop/plans/{b['id']}.tasks.json"}
    allowed.update(f for t in tasks for f in t.get("files", []))
    wrong += [f"{b['id']}: {p}" for p in git("diff", "--name-only", "main.." + branch).split()
              if p not in allowed]
    # Each task's commit: nothing outside that task's own footprint.
    for t in tasks:
        key = f"Devgraph-Task: {b['id']}/{t['id']}"
        for sha in git("log", "--format=%H", "--fixed-strings", "--grep", key,
                       "main.." + branch).split():
            wrong += [f"{b['id']}/{t['id']}: {p}"
                      for p in git("show", "--name-only", "--format=", sha).split()
                      if p not in t.get("files", [])]
reasons = [f"{i.get('key')}: {i.get('question', i.get('reason', ''))}" for i in inbox]
print(json.dumps({"exit": code, "status": res.get("status"), "bundles": len(bundles),
                  "unattended": len(unattended), "waited": sorted(set(waited)),
                  "wrong": wrong, "wall_ms": wall_ms, "load": load, "reasons": reasons}))
PY
}

results=()
for i in $(seq 1 "$runs"); do
  results+=("$(one_run "$work/r$i")")
done

# Every issue's misbehaviour is one devgraph is meant to recover from.
recoverable=$(grep -c . "$suite/issues.txt")
python3 - "$max_bundles" "$recoverable" "${results[@]}" <<'PY'
import json, statistics, sys
max_bundles, recoverable = int(sys.argv[1]), int(sys.argv[2])
runs = [json.loads(r) for r in sys.argv[3:]]
for i, r in enumerate(runs, 1):
    print(f"run {i}: exit {r['exit']} ({r['status']}), {r['wall_ms'] / 1000:.2f} s, load {r['load']} at the start")
    for reason in r["reasons"]:
        print(f"  waits for a person: {reason}")
    for w in r["wrong"]:
        print(f"  wrong commit: {w}")
last = runs[-1]
walls = [r["wall_ms"] for r in runs]
print(f"bundles: {last['bundles']}, {max_bundles} at a time")
print(f"delivered with no person: {last['unattended']}")
print(f"waited for a person: {len(last['waited'])}" + (f" ({', '.join(last['waited'])})" if last['waited'] else ""))
print(f"autonomy rate: {last['unattended']}/{recoverable} = {last['unattended'] / recoverable:.2f}")
print(f"wrong commits: {len(last['wrong'])}")
print(f"wall time median {statistics.median(walls) / 1000:.2f} s over {len(runs)} run(s)"
      f" (runs: {', '.join(f'{w / 1000:.2f}' for w in walls)})")
PY
