#!/bin/sh
# Build the Debian package of BUILD (cpack -G DEB), install it with dpkg -i,
# check the installed mprof as a user would meet it (summary on a sample,
# view --render, the man pages, bash completion, the file type), then remove
# the package again. lintian checks the .deb first: an error fails. Needs root (or sudo) and dpkg; skips with a message
# without them, except under CI.
# Usage: tools/test-package.sh BUILD_DIR
set -u
build=${1:-build}
src=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "$build" && pwd)
failures=0
fail() { echo "FAIL: $*" >&2; failures=$((failures + 1)); }

sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo -n"
if ! command -v dpkg >/dev/null 2>&1 || ! $sudo true 2>/dev/null; then
  if [ "${CI:-}" = true ]; then
    echo "FAIL: the package check needs dpkg and root" >&2
    exit 1
  fi
  echo "skipping the package check: it needs dpkg and root (or sudo)"
  exit 0
fi
if dpkg-query -W -f='${Status}' mprof 2>/dev/null | grep -q "ok installed"; then
  echo "FAIL: a package named mprof is already installed; remove it first (dpkg --purge mprof)" >&2
  exit 1
fi

out=$build/package
rm -rf "$out"
(cd "$build" && cpack -G DEB -B "$out" >"$out.log" 2>&1) || {
  cat "$out.log" >&2
  echo "FAIL: cpack -G DEB" >&2
  exit 1
}
deb=$(ls "$out"/mprof_*.deb)
echo "package: $(basename "$deb"), $(du -k "$deb" | cut -f1) KiB"
# Debian's own package checker: any error (E:) fails, warnings (W:) are
# printed. Overrides stay out: what lintian says is what a Debian user sees.
if command -v lintian >/dev/null 2>&1; then
  lintian --no-cfg --no-override --tag-display-limit 0 "$deb" >"$out/lintian.txt" 2>&1
  grep "^W: " "$out/lintian.txt" | sed 's/^/lintian: /'
  if grep -q "^E: " "$out/lintian.txt"; then
    grep "^E: " "$out/lintian.txt" >&2
    fail "lintian reports $(grep -c "^E: " "$out/lintian.txt") error(s) on $(basename "$deb")"
  fi
elif [ "${CI:-}" = true ]; then
  fail "lintian is not installed (tools/install-deps.sh installs it)"
else
  echo "skipping lintian: it is not installed"
fi
$sudo dpkg -i "$deb" >/dev/null || { echo "FAIL: dpkg -i $deb" >&2; exit 1; }
trap '$sudo dpkg --purge mprof >/dev/null 2>&1' EXIT

tmp=$(mktemp -d)
trap '$sudo dpkg --purge mprof >/dev/null 2>&1; rm -rf "$tmp"' EXIT
[ "$(command -v mprof)" = /usr/bin/mprof ] || fail "mprof on PATH is $(command -v mprof), not the package's"
/usr/bin/mprof --version | grep -q "^mprof " || fail "mprof --version"
/usr/bin/mprof summary --human --detail --color=never "$src/samples/gemm.mprof" >"$tmp/summary.txt" 2>&1 ||
  fail "installed mprof summary exited $?: $(head -c 300 "$tmp/summary.txt")"
grep -q "sgemm_tiled" "$tmp/summary.txt" || fail "installed summary lacks the kernel"
grep -q "LDS R50, \[R48\]" "$tmp/summary.txt" || fail "installed summary lacks the SASS of the hottest instruction"
/usr/bin/mprof view "$src/samples/gemm.mprof" --render "$tmp/summary.png" >"$tmp/view.txt" 2>&1 ||
  fail "installed mprof view --render exited $?: $(cat "$tmp/view.txt")"
[ "$(head -c 8 "$tmp/summary.png" | od -An -c | tr -d ' ')" = '211PNG\r\n032\n' ] ||
  fail "view --render did not write a PNG"
[ "$(wc -c <"$tmp/summary.png")" -gt 20000 ] || fail "the rendered PNG is nearly empty"
if [ -x /usr/bin/mprof-gtk ]; then
  grep -q "^Exec=mprof-gtk" /usr/share/applications/mprof.desktop || fail "no desktop entry"
  if command -v man >/dev/null; then
    MANWIDTH=100 man mprof-gtk 2>/dev/null | grep -q "^ *-t, --tab=TAB  *Open on this tab" ||
      fail "man mprof-gtk does not show the viewer's options"
    MANWIDTH=100 man mprof-gtk 2>/dev/null | grep -q "^ *Ctrl+F  *find: kernel and NVTX range names" ||
      fail "man mprof-gtk does not list the viewer's keys"
  fi
fi
/usr/bin/mprof export "$src/samples/gemm.mprof" -q -o "$tmp/gemm.json" || fail "installed mprof export"
# The Python package finds the installed libmprof through the loader.
if /usr/bin/python3 -c 'import cffi, numpy, pandas' 2>/dev/null; then
  PYTHONPATH="$src/python" MPROF_LIBRARY= /usr/bin/python3 -c "
import mprof
k = mprof.open('$src/samples/gemm.mprof').kernel()
assert k.stats['launches'] == 20 and k._repr_png_()[:4] == b'\x89PNG'
" >"$tmp/python.txt" 2>&1 || fail "python package on the installed library: $(tail -1 "$tmp/python.txt")"
fi
# The man pages come from the help text of --help, completion from the
# command table beside it.
for page in mprof mprof-summary mprof-export; do
  [ -f "/usr/share/man/man1/$page.1.gz" ] || fail "no man page $page.1.gz"
done
[ -f /usr/share/doc/mprof/copyright ] || fail "no /usr/share/doc/mprof/copyright"
# pkg-config points at the package's own headers and library.
if command -v pkg-config >/dev/null; then
  inc=$(pkg-config --variable=includedir mprof 2>/dev/null)
  lib=$(pkg-config --variable=libdir mprof 2>/dev/null)
  [ -f "$inc/mprof/version.h" ] || fail "pkg-config's includedir for mprof is '$inc', without mprof/version.h"
  [ -e "$lib/libmprof.so" ] || fail "pkg-config's libdir for mprof is '$lib', without libmprof.so"
fi
if command -v man >/dev/null; then
  MANWIDTH=100 man mprof-export 2>/dev/null | grep -q "speedscope  *writes  *one  *sampled" ||
    fail "man mprof-export does not show the help text"
fi
bash -c '. /usr/share/bash-completion/completions/mprof
  COMP_WORDS=(mprof exp); COMP_CWORD=1; _mprof; [ "${COMPREPLY[*]}" = export ] || exit 1
  COMP_WORDS=(mprof export --fo); COMP_CWORD=2; _mprof; [ "${COMPREPLY[*]}" = --format ] || exit 2
  COMP_WORDS=(mprof export --format s); COMP_CWORD=3; _mprof; [ "${COMPREPLY[*]}" = "speedscope sqlite" ] || exit 3
  COMP_WORDS=(mprof export --format k); COMP_CWORD=3; _mprof; [ "${COMPREPLY[*]}" = kineto ] || exit 4
  COMP_WORDS=(mprof record ""); COMP_CWORD=2; _mprof; [ "${COMPREPLY[*]}" = "source blocks" ] || exit 5' ||
  fail "bash completion (step $?)"
[ -f /usr/share/mime/packages/mprof.xml ] || fail "no shared-mime-info entry"
if command -v gio >/dev/null && [ -f /usr/share/mime/mime.cache ]; then
  # dpkg's trigger runs update-mime-database; make sure, then ask GIO.
  $sudo update-mime-database /usr/share/mime >/dev/null 2>&1
  cp "$src/samples/gemm.mprof" "$tmp/noext"
  type=$(gio info -a standard::content-type "$tmp/noext" 2>/dev/null | sed -n 's/.*content-type: //p')
  [ "$type" = application/x-mprof ] || fail "a trace without .mprof is '$type', not application/x-mprof"
fi

$sudo dpkg --purge mprof >/dev/null || fail "dpkg --purge mprof"
[ ! -e /usr/bin/mprof ] || fail "dpkg -r left /usr/bin/mprof"
if [ "$failures" -ne 0 ]; then
  echo "$failures package check(s) failed" >&2
  exit 1
fi
echo "package: installed, summary, view --render, export, man, completion and file type work; removed"
