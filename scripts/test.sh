#!/usr/bin/env bash
# The test suite. Expects scripts/bootstrap.sh to have run (it installs the
# packages).
#
#   scripts/test.sh          everything CI runs: the regular build (warnings
#                            are errors) and every tier of its tests, the
#                            same tests again under AddressSanitizer and
#                            UBSan, and a short fuzz run of the parsers
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

echo "== tests (build/)"
cmake -S . -B build -G Ninja -DDEVGRAPH_WERROR=ON >/dev/null
cmake --build build -j"$build_jobs"
if [ "$quick" = 1 ]; then
  ctest --test-dir build -j"$test_jobs" --output-on-failure --timeout 600 -L '^(unit|e2e)$'
  exit 0
fi
ctest --test-dir build -j"$test_jobs" --output-on-failure --timeout 600

if [ "${DEVGRAPH_SKIP_SANITIZERS:-0}" != 1 ]; then
  echo "== tests under address,undefined sanitizers (build-asan/)"
  # -g1: line tables only. The sanitizers' reports still name file and
  # line, and the build is faster than with full debug info.
  cmake -S . -B build-asan -G Ninja -DDEVGRAPH_WERROR=ON -DCMAKE_BUILD_TYPE=Debug \
    -DCMAKE_CXX_FLAGS_DEBUG=-g1 -DDEVGRAPH_SANITIZE="address;undefined" >/dev/null
  cmake --build build-asan -j"$build_jobs"
  # The real agent CLIs' tests (label real-cli) run once, above: their time
  # is the CLIs' own (node), and devgraph's side of them is what the fake
  # CLIs' tests drive under the sanitizers too.
  ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1 \
    ctest --test-dir build-asan -j"${DEVGRAPH_SANITIZED_TEST_JOBS:-$build_jobs}" \
    --output-on-failure --timeout 900 -LE '^real-cli$'
fi

# A short libFuzzer run of the guard's shell parser when clang is present
# (DEVGRAPH_SKIP_FUZZ=1 skips it; DEVGRAPH_FUZZ_SECONDS sets the length).
if [ "${DEVGRAPH_SKIP_FUZZ:-0}" != 1 ] && command -v clang++ >/dev/null 2>&1; then
  echo "== fuzz: guard shell parser (build-fuzz/)"
  cmake -S . -B build-fuzz -G Ninja -DCMAKE_CXX_COMPILER=clang++ -DDEVGRAPH_FUZZ=ON \
    -DDEVGRAPH_TESTS=OFF >/dev/null
  cmake --build build-fuzz -j"$build_jobs" --target guard_shell_fuzz
  fuzz_work=$(mktemp -d)
  cp fuzz/corpus/shell/* "$fuzz_work"/
  build-fuzz/fuzz/guard_shell_fuzz -max_total_time="${DEVGRAPH_FUZZ_SECONDS:-60}" -timeout=5 \
    -max_len=2048 -artifact_prefix="$fuzz_work/" "$fuzz_work"
  rm -rf "$fuzz_work"
fi
