#!/usr/bin/env bash
# The test suite. Expects scripts/bootstrap.sh to have run (it installs the
# packages).
#
#   scripts/test.sh          everything CI runs: the regular build (warnings
#                            are errors) and every tier of its tests, the
#                            same tests again under AddressSanitizer and
#                            UBSan, and short fuzz runs of the parsers
#   scripts/test.sh --quick  the edit loop: the regular build, then the unit
#                            and end-to-end tiers (no kill, real-cli,
#                            browser, package or compat tests, no sanitizers)
#
# Tiers are ctest labels (tests/CMakeLists.txt): `ctest --test-dir build -L
# kill` runs one. DEVGRAPH_TEST_JOBS sets how many tests run at once
# (default: twice the cores, since most tests wait on the processes they
# start rather than compute; the sanitized suite, whose processes compute
# two to three times as long, runs one per core, DEVGRAPH_SANITIZED_TEST_JOBS).
# The tests' temporary directories go to a
# tmpfs when /dev/shm is one (DEVGRAPH_TEST_TMPDIR picks another place):
# they prove crash consistency against a killed process, which the page
# cache gives on any file system, not against a lost disk.
set -euo pipefail
cd "$(dirname "$0")/.."

quick=0
case "${1:-}" in
  "") ;;
  --quick) quick=1 ;;
  *) echo "usage: scripts/test.sh [--quick]" >&2; exit 2 ;;
esac

build_jobs=$(nproc)
test_jobs=${DEVGRAPH_TEST_JOBS:-$((2 * build_jobs))}

tmp_base=${DEVGRAPH_TEST_TMPDIR:-}
if [ -z "$tmp_base" ]; then
  if [ "$(stat -f -c %T /dev/shm 2>/dev/null)" = tmpfs ] && [ -w /dev/shm ]; then
    tmp_base=/dev/shm
  else
    tmp_base=${TMPDIR:-/tmp}
  fi
fi
TMPDIR=$(mktemp -d "$tmp_base/devgraph-tests.XXXXXX")
export TMPDIR
trap 'rm -rf "$TMPDIR"' EXIT

sanitize=1 fuzz=1
[ "$quick" = 0 ] && [ "${DEVGRAPH_SKIP_SANITIZERS:-0}" != 1 ] || sanitize=0
{ [ "$quick" = 0 ] && [ "${DEVGRAPH_SKIP_FUZZ:-0}" != 1 ] && command -v clang++ >/dev/null 2>&1; } ||
  fuzz=0

echo "== [${SECONDS} s] tests (build/)"
twin=()
if [ "$quick" = 0 ]; then
  twin=(-DDEVGRAPH_SANITIZED_TWIN=$([ "$sanitize" = 1 ] && echo ON || echo OFF))
fi
cmake -S . -B build -G Ninja -DDEVGRAPH_WERROR=ON "${twin[@]}" >/dev/null
cmake --build build -j"$build_jobs" --target devgraph_regular
if [ "$quick" = 1 ]; then
  ctest --test-dir build -j"$test_jobs" --output-on-failure --timeout 600 -L '^(unit|e2e)$'
  exit 0
fi

# What else there is to build compiles while the regular suite runs: its
# tests mostly wait on the processes they start, which leaves the cores
# free more than half the time. It builds at a lower priority, so the tests
# come first.
#   build/ (all): the sanitized twin, the library and the binary again
#     under AddressSanitizer and UBSan, linked with the same test objects
#     (CMakeLists.txt, DEVGRAPH_SANITIZED_TWIN).
#   build-fuzz/: libFuzzer targets of the guard's shell parser, the
#     board's HTTP request parser and the untrusted-text fence, with clang.
# The package test waits for it (cpack builds the tree's install target).
side_log=$TMPDIR/side-builds.log
side_builds() {
  cmake --build build -j"$build_jobs"
  if [ "$fuzz" = 1 ]; then
    cmake -S . -B build-fuzz -G Ninja -DCMAKE_CXX_COMPILER=clang++ -DDEVGRAPH_FUZZ=ON \
      -DDEVGRAPH_TESTS=OFF >/dev/null
    cmake --build build-fuzz -j"$build_jobs" --target guard_shell_fuzz board_http_fuzz \
      untrusted_fence_fuzz
  fi
}
echo "== [${SECONDS} s] building the rest beside the tests (its log follows if it fails)"
# In a process group of its own (setsid), so that an interrupted run stops
# the compilers too.
setsid nice -n 10 bash -c "set -euo pipefail; $(declare -f side_builds)
  fuzz=$fuzz build_jobs=$build_jobs side_builds" >"$side_log" 2>&1 &
side_pid=$!
trap '[ -z "$side_pid" ] || kill -- -"$side_pid" 2>/dev/null; rm -rf "$TMPDIR"' EXIT

# The sanitized tests not yet built show up as <target>_NOT_BUILT: not
# these tests' business.
tests_rc=0
ctest --test-dir build -j"$test_jobs" --output-on-failure --timeout 600 \
  -LE '^(sanitized-.*|package)$' -E '_NOT_BUILT$' || tests_rc=$?
side_rc=0
wait "$side_pid" || side_rc=$?
side_pid=
if [ "$side_rc" != 0 ]; then
  echo "== [${SECONDS} s] the sanitized or fuzz build failed:" >&2
  tail -n 60 "$side_log" >&2
fi
[ "$tests_rc" = 0 ] && [ "$side_rc" = 0 ] || exit 1

# The package test, and the sanitized tests (sanitized processes compute
# two to three times as long, so one per core).
labels=package
if [ "$sanitize" = 1 ]; then
  echo "== [${SECONDS} s] the package, and the tests under address,undefined sanitizers (build/sanitized/)"
  labels='package|sanitized-.*'
fi
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1 \
  ctest --test-dir build -j"${DEVGRAPH_SANITIZED_TEST_JOBS:-$build_jobs}" \
  --output-on-failure --timeout 900 -L "^($labels)\$"

# Short libFuzzer runs of the guard's shell parser, the board's HTTP
# request parser and the fence for untrusted text when clang is present
# (DEVGRAPH_SKIP_FUZZ=1 skips them; DEVGRAPH_FUZZ_SECONDS sets the guard's
# length, the other two get half each).
fuzz_run() {
  local target=$1 corpus=$2 seconds=$3 work
  echo "== [${SECONDS} s] fuzz: $target (build-fuzz/, $seconds s)"
  work=$(mktemp -d)
  cp "fuzz/corpus/$corpus"/* "$work"/
  "build-fuzz/fuzz/$target" -max_total_time="$seconds" -timeout=5 -max_len=2048 \
    -artifact_prefix="$work/" "$work"
  rm -rf "$work"
}
if [ "$fuzz" = 1 ]; then
  fuzz_seconds=${DEVGRAPH_FUZZ_SECONDS:-30}
  fuzz_run guard_shell_fuzz shell "$fuzz_seconds"
  fuzz_run board_http_fuzz http "$(( (fuzz_seconds + 1) / 2 ))"
  fuzz_run untrusted_fence_fuzz fence "$(( (fuzz_seconds + 1) / 2 ))"
fi
echo "== [${SECONDS} s] done"
