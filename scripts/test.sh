#!/usr/bin/env bash
# The whole test suite: the regular build with warnings as errors, then the
# same tests under AddressSanitizer and UndefinedBehaviorSanitizer.
# Expects scripts/bootstrap.sh to have run (it installs the packages).
set -euo pipefail
cd "$(dirname "$0")/.."

jobs=2
echo "== tests (build/)"
cmake -S . -B build -G Ninja -DDEVGRAPH_WERROR=ON >/dev/null
cmake --build build -j"$jobs"
ctest --test-dir build -j"$jobs" --output-on-failure --timeout 600

if [ "${DEVGRAPH_SKIP_SANITIZERS:-0}" != 1 ]; then
  echo "== tests under address,undefined sanitizers (build-asan/)"
  cmake -S . -B build-asan -G Ninja -DDEVGRAPH_WERROR=ON -DCMAKE_BUILD_TYPE=Debug \
    -DDEVGRAPH_SANITIZE="address;undefined" >/dev/null
  cmake --build build-asan -j"$jobs"
  ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1 \
    ctest --test-dir build-asan -j"$jobs" --output-on-failure --timeout 900
fi
