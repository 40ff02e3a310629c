#!/usr/bin/env bash
# Builds the Debian package of devgraph into ./dist (or $1): the regular
# build in build/ (the static executable), then CPack. Prints the package's
# path. Install it with `apt install ./dist/devgraph_<version>_<arch>.deb`.
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-$PWD/dist}
cmake -S . -B build -G Ninja >/dev/null
cmake --build build -j2
mkdir -p "$out"
(cd build && cpack -G DEB -B "$out" >/dev/null)
rm -rf "$out/_CPack_Packages"
ls "$out"/devgraph_*.deb
