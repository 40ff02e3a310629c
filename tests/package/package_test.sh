#!/usr/bin/env bash
# The Debian package, built and checked without installing it: CPack makes
# it from the build directory, its control data and file list are read with
# dpkg-deb, then it is unpacked into a scratch root (dpkg -x) and the
# unpacked devgraph runs from outside the source tree with no flags: it
# finds its assets in the unpacked /usr/share/devgraph (a broken copy there
# breaks it), `devgraph demo` delivers, and `devgraph doctor` reports.
# Usage: package_test.sh BUILD_DIR. Exit 77 (skipped) without cpack or dpkg.
set -euo pipefail
build=$(cd "$1" && pwd)
for tool in cpack dpkg-deb dpkg git; do
  command -v "$tool" >/dev/null || { echo "skipped: no $tool"; exit 77; }
done
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

(cd "$build" && cpack -G DEB -B "$work/out" >"$work/cpack.log" 2>&1) ||
  { cat "$work/cpack.log" >&2; fail "cpack failed"; }
deb=$(ls "$work"/out/devgraph_*.deb)
[ "$(echo "$deb" | wc -l)" = 1 ] || fail "expected one package, got: $deb"

# Control data: the name, Depends on git only, gh and chromium recommended.
[ "$(dpkg-deb -f "$deb" Package)" = devgraph ] || fail "Package"
dpkg-deb -f "$deb" Depends | grep -q '^git' || fail "Depends: $(dpkg-deb -f "$deb" Depends)"
recommends=$(dpkg-deb -f "$deb" Recommends)
for r in gh chromium; do
  echo "$recommends" | grep -qw "$r" || fail "Recommends lacks $r: $recommends"
done
# No maintainer scripts and no conffiles: removing the package removes
# exactly what it installed.
control=$(dpkg-deb --ctrl-tarfile "$deb" | tar -t | sed 's|^\./||' | grep -v '^$' | sort | tr '\n' ' ')
for f in preinst postinst prerm postrm conffiles; do
  case " $control " in *" $f "*) fail "the package has a $f: $control" ;; esac
done
# Every file lives under /usr.
outside=$(dpkg-deb -c "$deb" | awk '{print $6}' | grep -v '^\./usr/' | grep -v '^\./$' || true)
[ -z "$outside" ] || fail "files outside /usr: $outside"

root="$work/root"
dpkg -x "$deb" "$root"
for f in usr/bin/devgraph usr/share/devgraph/GRAPH.yaml \
         usr/share/devgraph/contracts/run-state.schema.json \
         usr/share/devgraph/contracts/agent-result.schema.json \
         usr/share/devgraph/agents/developer.md usr/share/devgraph/templates/task-brief.md \
         usr/share/doc/devgraph/copyright usr/share/doc/devgraph/changelog.gz; do
  [ -s "$root/$f" ] || fail "missing or empty: /$f"
done
[ -x "$root/usr/bin/devgraph" ] || fail "/usr/bin/devgraph is not executable"
gzip -t "$root/usr/share/doc/devgraph/changelog.gz" || fail "changelog.gz is not gzip"
# A man page for devgraph and one per verb, each naming its verb; the
# three shells' completions where each shell looks for them.
man="$root/usr/share/man/man1"
grep -q '^\.TH DEVGRAPH 1' "$man/devgraph.1" || fail "devgraph(1) is missing or has no .TH"
verbs=$("$root/usr/bin/devgraph" completion --verbs)
[ -n "$verbs" ] || fail "no verbs listed"
for v in $verbs; do
  [ -s "$man/devgraph-$v.1" ] || fail "no man page for $v"
  # roff writes a hyphen as \-
  grep -qF "devgraph $(printf '%s' "$v" | sed 's/-/\\-/g')" "$man/devgraph-$v.1" ||
    fail "devgraph-$v(1) does not name its verb"
done
for f in usr/share/bash-completion/completions/devgraph usr/share/zsh/vendor-completions/_devgraph \
         usr/share/fish/vendor_completions.d/devgraph.fish; do
  [ -s "$root/$f" ] || fail "missing completion /$f"
done
if command -v bash >/dev/null; then
  got=$(PATH="$root/usr/bin:$PATH" bash --norc -c \
    'source "$1"; COMP_WORDS=(devgraph doc); COMP_CWORD=1; _devgraph; printf "%s\n" "${COMPREPLY[@]}"' \
    _ "$root/usr/share/bash-completion/completions/devgraph")
  [ "$got" = doctor ] || fail "the installed bash completion gave '$got' for 'devgraph doc'"
fi

# From outside the source tree, with no flags and a clean environment.
home="$work/home"
mkdir -p "$home"
cd "$work"
run() { env -i PATH=/usr/bin:/bin HOME="$home" AI_ROOT="$work/ai" "$root/usr/bin/devgraph" "$@"; }
run --version | grep -q '^devgraph ' || fail "--version"
run validate graph >/dev/null || fail "validate graph with the unpacked assets"
# The unpacked assets are the ones it reads: a broken copy breaks it.
cp "$root/usr/share/devgraph/GRAPH.yaml" "$work/GRAPH.yaml.good"
printf 'nodes: [\n' >>"$root/usr/share/devgraph/GRAPH.yaml"
if run validate graph >/dev/null 2>&1; then fail "a broken /usr/share/devgraph/GRAPH.yaml went unnoticed"; fi
cp "$work/GRAPH.yaml.good" "$root/usr/share/devgraph/GRAPH.yaml"

run demo --no-live --latency-ms 1 >"$work/demo.log" 2>&1 ||
  { cat "$work/demo.log" >&2; fail "demo failed"; }
grep -q ': COMPLETE' "$work/demo.log" || { cat "$work/demo.log" >&2; fail "the demo's run did not complete"; }
[ "$(grep -c ' delivered - branch ' "$work/demo.log")" = 3 ] ||
  { cat "$work/demo.log" >&2; fail "the demo delivered fewer than three bundles"; }

if run doctor --help >/dev/null 2>&1; then
  set +e
  run doctor >"$work/doctor.log" 2>&1
  code=$?
  set -e
  case $code in 0 | 1) ;; *) cat "$work/doctor.log" >&2; fail "doctor exited $code" ;; esac
  grep -qi 'git' "$work/doctor.log" || { cat "$work/doctor.log" >&2; fail "doctor said nothing of git"; }
fi
echo "ok: $(basename "$deb") ($(du -k "$deb" | cut -f1) KiB)"
