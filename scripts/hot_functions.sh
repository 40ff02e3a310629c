#!/usr/bin/env bash
# Writes cmake/hot-functions.txt: the functions the short-lived commands
# run, in the order they first run, for the linker to place side by side
# (see "The executable" in ARCHITECTURE.md). Each first touch of a 64 KiB
# stretch of code costs a page fault; with the code a checkpoint or guard
# hook needs gathered in one place, it costs a few instead of dozens.
#
# usage: scripts/hot_functions.sh BUILD_DIR
#   BUILD_DIR  a Release build tree (its devgraph is profiled)
# Needs valgrind (callgrind lists every function a run executes), nm and
# python3. Run it again after large changes to the code those commands
# run; a stale list is harmless (missing names are skipped), only less
# effective.
set -euo pipefail
cd "$(dirname "$0")/.."
devgraph=$(realpath "${1:?usage: scripts/hot_functions.sh BUILD_DIR}/devgraph")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export HOME="$work"

profile() {
  valgrind --tool=callgrind --demangle=no --callgrind-out-file="$work/cg.$((n++))" \
    "$devgraph" "$@" >/dev/null 2>&1 || true
}
n=0

# A run with cursors, as a tech lead leaves it mid-bundle, then the
# checkpoint commands a run makes most.
run="$work/runs/r1"
"$devgraph" checkpoint "$run" init --repo /src/app --default-branch main >/dev/null
# 400 tasks, a state file of about 150 KiB.
for t in $(seq 400); do
  "$devgraph" checkpoint "$run" move --bundle B1 --task "T$t" --node write_tdd \
    --event TASK_STARTED >/dev/null
done
profile --version
profile checkpoint "$run" move --bundle B1 --task T1 --node implement --event TDD_DONE
profile checkpoint "$run" move --bundle B1 --node task_scheduler --event TASKS_SCHEDULED
profile checkpoint "$run" event --event NOTE --detail '{"text": "x"}'
profile checkpoint "$run" signal --type tool_call --count 3
profile checkpoint "$run" show
# The guard hook, allowing and denying.
git -c init.defaultBranch=main init -q "$work/primary"
printf '{"hook_event_name":"PreToolUse","tool_name":"Bash","cwd":"%s","tool_input":{"command":"echo x > out.txt && git commit -am wip"}}\n' \
  "$work/primary" >"$work/deny.json"
printf '{"hook_event_name":"PreToolUse","tool_name":"Bash","cwd":"%s","tool_input":{"command":"git status --short"}}\n' \
  "$work/primary" >"$work/allow.json"
profile guard hook <"$work/deny.json"
profile guard hook <"$work/allow.json"

# Function names (mangled) in first-seen order, one per line.
cat "$work"/cg.* | sed -nE 's/^c?fn=\([0-9]+\) (.+)$/\1/p' | grep -v -e '^0x' -e '^(below main)' |
  awk '!seen[$0]++' >"$work/profiled.txt"

# Two kinds of code every run executes that the profile cannot name:
# - glibc picks a string function's variant for the CPU at start-up, and
#   valgrind emulates a CPU without AVX-512, so the profile names the AVX2
#   or SSE2 variants. Each is followed by its EVEX and AVX-512 siblings, the
#   ones a machine with AVX-512 runs.
# - start-up code that is missing from the profile (found by recording
#   the page faults of a real run: perf record -e page-faults -d).
nm --defined-only "$devgraph" | awk '{print $3}' >"$work/symbols.txt"
python3 - "$work/profiled.txt" "$work/symbols.txt" >cmake/hot-functions.txt <<'PY'
import re, sys
profiled = open(sys.argv[1]).read().split()
symbols = set(open(sys.argv[2]).read().split())
startup = ["frame_dummy", "_dl_new_object", "_dl_setup_hash", "_dl_non_dynamic_init",
           "__libc_setup_tls", "___pthread_mutex_lock", "__pthread_mutex_unlock_usercnt"]
# (Not the variants for CPUs with TSX or without vzeroupper: rarely chosen.)
wide = re.compile(r"^__([a-z0-9]+)_(evex|avx512)(?!.*(_rtm|no_vzeroupper))")
siblings = {}
for name in sorted(symbols):
    m = wide.match(name)
    if m:
        siblings.setdefault(m.group(1), []).append(name)
out, seen = [], set()
def emit(name):
    if name not in seen:
        seen.add(name)
        out.append(name)
for name in startup:
    if name in symbols:
        emit(name)
for name in profiled:
    emit(name)
    # "__strlen_avx2", "strlen" and "strlen_ifunc" all name strlen's family.
    m = re.match(r"^__([a-z0-9]+)_(sse|avx|erms)", name) or re.match(r"^([a-z0-9]+)(_ifunc)?$", name)
    if m:
        for sibling in siblings.get(m.group(1), []):
            emit(sibling)
print("\n".join(out))
PY
echo "cmake/hot-functions.txt: $(wc -l <cmake/hot-functions.txt) functions" >&2
