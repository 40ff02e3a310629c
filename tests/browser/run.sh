#!/usr/bin/env bash
# The board's browser tests (CTest's board_browser): every *.test.mjs here,
# under node's test runner, against DEVGRAPH. Exit 77 (CTest's skip) with a
# one-line reason when the tooling is missing: node 20 or later,
# playwright-core as pinned in package.json (`npm ci` here), a Chromium
# (/usr/bin/chromium, Debian's package; DEVGRAPH_CHROMIUM names another)
# and python3; with DEVGRAPH_BROWSER_TESTS=1 a missing tool is a failure.
#
# usage: tests/browser/run.sh DEVGRAPH [TEST_FILE...]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
devgraph=${1:?usage: tests/browser/run.sh DEVGRAPH [TEST_FILE...]}
shift
[ -x "$devgraph" ] || { echo "board_browser: no devgraph binary at $devgraph" >&2; exit 1; }
devgraph=$(realpath "$devgraph")
chromium=${DEVGRAPH_CHROMIUM:-/usr/bin/chromium}

missing() {
  local how="DEVGRAPH_BROWSER_TESTS=1 ./scripts/bootstrap.sh installs it"
  if [ "${DEVGRAPH_BROWSER_TESTS:-0}" = 1 ]; then
    echo "board_browser: $1, which DEVGRAPH_BROWSER_TESTS=1 requires ($how)" >&2
    exit 1
  fi
  echo "board_browser: skipped: $1 ($how)"
  exit 77
}

command -v node >/dev/null || missing "node is not installed"
[ "$(node -p 'process.versions.node.split(".")[0]')" -ge 20 ] ||
  missing "node $(node --version) is older than 20"
pinned=$(PKG="$here/package.json" \
  node -p 'require(process.env.PKG).dependencies["playwright-core"]')
have=$(PKG="$here/node_modules/playwright-core/package.json" \
  node -p 'try { require(process.env.PKG).version } catch (e) { "" }')
[ "$have" = "$pinned" ] ||
  missing "playwright-core $pinned is not in tests/browser/node_modules"
[ -x "$chromium" ] || missing "no Chromium at $chromium"
command -v python3 >/dev/null || missing "python3 is not installed"

export DEVGRAPH_BIN=$devgraph DEVGRAPH_CHROMIUM=$chromium
files=()
for f in "$@"; do files+=("$(realpath "$f")"); done
cd "$here"
if [ ${#files[@]} -eq 0 ]; then files=(./*.test.mjs); fi
# The tests time what a page shows, so one file at a time.
exec node --test --test-concurrency=1 --test-timeout=60000 --test-reporter=spec "${files[@]}"
