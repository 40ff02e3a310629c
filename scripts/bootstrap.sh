#!/usr/bin/env bash
# Set-up for a fresh Debian 12 machine (run as root, or with the packages
# already present): install the Debian packages devgraph needs, then
# configure and build into ./build. Safe to run again; it only installs
# what is missing and rebuilds what changed.
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(cmake ninja-build g++ git python3 pkg-config
          nlohmann-json3-dev libyaml-dev libvalijson-dev
          libgtest-dev libgmock-dev)
if [ "${DEVGRAPH_BENCH:-0}" = 1 ]; then packages+=(libbenchmark-dev hyperfine); fi
if [ "${DEVGRAPH_FUZZ:-0}" = 1 ]; then packages+=(clang libclang-rt-14-dev); fi

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "bootstrap: installing ${missing[*]}" >&2
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

build_dir=${DEVGRAPH_BUILD_DIR:-build}
# Warnings are errors by default: the supported compiler is Debian 12's
# g++, and scripts/test.sh builds the same tree with -Werror, so the two
# configurations match and the test run rebuilds nothing.
# DEVGRAPH_WERROR=0 relaxes it for another compiler.
werror=ON
if [ "${DEVGRAPH_WERROR:-1}" = 0 ]; then werror=OFF; fi
cmake -S . -B "$build_dir" -G Ninja -DDEVGRAPH_WERROR="$werror" \
  -DDEVGRAPH_BENCH="${DEVGRAPH_BENCH:-0}" >/dev/null
cmake --build "$build_dir" -j2
