#!/usr/bin/env bash
# Whole-process timing of the placement guard (check-bash and the
# PreToolUse hook) against the reference guard on the same inputs, in the
# same hyperfine run. hyperfine subtracts its own shell's start-up, so the
# `< payload` redirection costs nothing in the figures.
#
# usage: bench/guard_hook.sh BUILD_DIR REFERENCE_DIR
# Prints a markdown table of medians; BENCHMARKS.md quotes it.
set -euo pipefail

build=${1:?usage: bench/guard_hook.sh BUILD_DIR REFERENCE_DIR}
ref=${2:?usage: bench/guard_hook.sh BUILD_DIR REFERENCE_DIR}
devgraph=$(realpath "$build/devgraph")
guard_py=$(realpath "$ref/runtime/placement_guard.py")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# A primary clone with an origin remote and a linked worktree of it.
export AI_ROOT="$work/ai"
git -c init.defaultBranch=main init -q "$work/primary"
git -C "$work/primary" remote add origin https://github.com/acme/widgets.git
git -C "$work/primary" -c user.name=b -c user.email=b@example.invalid commit -q --allow-empty -m init
git -C "$work/primary" worktree add -q "$AI_ROOT/worktrees/acme/widgets/feat" -b feat

cmd='cd src && git status --short && grep -rn "a > b" . | head -5 > /dev/null; git log --oneline -3'
printf '{"hook_event_name":"PreToolUse","tool_name":"Bash","cwd":"%s","tool_input":{"command":"echo x > out.txt && git commit -am wip"}}\n' \
  "$work/primary" >"$work/deny.json"
printf '{"hook_event_name":"PreToolUse","tool_name":"Bash","cwd":"%s","tool_input":{"command":"make -j2 && git add -A && git commit -m wip"}}\n' \
  "$AI_ROOT/worktrees/acme/widgets/feat" >"$work/allow.json"
printf '{"hook_event_name":"PreToolUse","tool_name":"Write","cwd":"%s","tool_input":{"file_path":"notes.md","content":"x"}}\n' \
  "$work/primary" >"$work/write.json"

hyperfine --warmup 10 --min-runs 40 --export-markdown "$work/table.md" -S bash \
  -n "process floor: /bin/true" "/bin/true" \
  -n "devgraph check-bash (primary, allow)" "'$devgraph' guard check-bash '$cmd' --cwd '$work/primary'" \
  -n "reference check-bash (primary, allow)" "python3 '$guard_py' check-bash '$cmd' --cwd '$work/primary'" \
  -n "devgraph hook Bash (deny)" "'$devgraph' guard hook < '$work/deny.json'" \
  -n "reference hook Bash (deny)" "python3 '$guard_py' hook < '$work/deny.json'" \
  -n "devgraph hook Bash (worktree, allow)" "'$devgraph' guard hook < '$work/allow.json'" \
  -n "reference hook Bash (worktree, allow)" "python3 '$guard_py' hook < '$work/allow.json'" \
  -n "devgraph hook Write (deny)" "'$devgraph' guard hook < '$work/write.json'" \
  -n "reference hook Write (deny)" "python3 '$guard_py' hook < '$work/write.json'" >&2
cat "$work/table.md"
