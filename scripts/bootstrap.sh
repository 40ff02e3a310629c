#!/usr/bin/env bash
# Set-up for a fresh Debian 12 machine (run as root, or with the packages
# already present): install the Debian packages devgraph needs, then
# configure and build into ./build. Safe to run again; it only installs
# what is missing and rebuilds what changed. DEVGRAPH_REAL_CLIS=1 also
# installs the real agent CLIs for their end-to-end tests, and
# DEVGRAPH_BROWSER_TESTS=1 Chromium and playwright-core for the board's
# browser tests (see below).
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(cmake ninja-build g++ ccache git python3 pkg-config
          nlohmann-json3-dev libyaml-dev libvalijson-dev
          libgtest-dev libgmock-dev)
if [ "${DEVGRAPH_BENCH:-0}" = 1 ]; then packages+=(libbenchmark-dev hyperfine); fi
if [ "${DEVGRAPH_FUZZ:-0}" = 1 ]; then packages+=(clang libclang-rt-14-dev); fi
if [ "${DEVGRAPH_BROWSER_TESTS:-0}" = 1 ]; then packages+=(chromium); fi

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

# Node 20 or later and npm, for what npm installs below (Debian 12's own
# nodejs is 18, too old for these packages, so it is not installed here).
need_node() {
  if ! command -v npm >/dev/null || ! command -v node >/dev/null; then
    echo "bootstrap: $1 needs node (20 or later) and npm" >&2
    exit 1
  fi
  if [ "$(node -p 'process.versions.node.split(".")[0]')" -lt 20 ]; then
    echo "bootstrap: $1 needs node 20 or later, not $(node --version)" >&2
    exit 1
  fi
}

# DEVGRAPH_REAL_CLIS=1: the real agent CLIs, at pinned versions, in an npm
# prefix of this checkout (git-ignored) where tests/e2e/real_cli_test.cpp
# finds them; docs/real-clis.md. A CLI already at its pinned version is not
# installed again. DEVGRAPH_REAL_CLIS_DIR installs elsewhere, and
# DEVGRAPH_CLAUDE_VERSION, DEVGRAPH_CODEX_VERSION, DEVGRAPH_GEMINI_VERSION
# try other versions.
if [ "${DEVGRAPH_REAL_CLIS:-0}" = 1 ]; then
  clis_dir=${DEVGRAPH_REAL_CLIS_DIR:-$PWD/.real-clis}
  pins=("@anthropic-ai/claude-code@${DEVGRAPH_CLAUDE_VERSION:-2.1.332}"
        "@openai/codex@${DEVGRAPH_CODEX_VERSION:-0.171.0}"
        "@google/gemini-cli@${DEVGRAPH_GEMINI_VERSION:-0.61.0}")
  need_node DEVGRAPH_REAL_CLIS=1
  wanted=()
  for pin in "${pins[@]}"; do
    name=${pin%@*} version=${pin##*@}
    have=$(node -p "try { require('$clis_dir/node_modules/$name/package.json').version } catch (e) { '' }")
    [ "$have" = "$version" ] || wanted+=("$pin")
  done
  if [ ${#wanted[@]} -gt 0 ]; then
    echo "bootstrap: installing ${wanted[*]} into $clis_dir" >&2
    mkdir -p "$clis_dir"
    npm install --prefix "$clis_dir" --save-exact --no-audit --no-fund --loglevel=error \
      "${wanted[@]}" >&2
  fi
fi

# DEVGRAPH_BROWSER_TESTS=1: playwright-core at the version the lock file
# pins, in tests/browser/node_modules (git-ignored), where the board's
# browser tests (tests/browser/run.sh) drive the Chromium installed above.
# It never downloads a browser of its own.
if [ "${DEVGRAPH_BROWSER_TESTS:-0}" = 1 ]; then
  need_node DEVGRAPH_BROWSER_TESTS=1
  pinned=$(PKG="$PWD/tests/browser/package.json" \
    node -p 'require(process.env.PKG).dependencies["playwright-core"]')
  have=$(PKG="$PWD/tests/browser/node_modules/playwright-core/package.json" \
    node -p 'try { require(process.env.PKG).version } catch (e) { "" }')
  if [ "$have" != "$pinned" ]; then
    echo "bootstrap: installing playwright-core $pinned into tests/browser/node_modules" >&2
    (cd tests/browser && PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 \
      npm ci --no-audit --no-fund --loglevel=error >&2)
  fi
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
cmake --build "$build_dir" -j"$(nproc)"
