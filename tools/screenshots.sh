#!/bin/sh
# Render every tab of a trace to docs/images/<tab>.png with
# `mprof view --render` (offscreen: no display needed); when the trace
# holds activity spans (source instrumentation, or a .mkprof), also
# mega.png and density.png, fitted to the spans of a kernel that has them.
#
#   tools/screenshots.sh TRACE [KERNEL] [WIDTHxHEIGHT]
#
# KERNEL picks the kernel of the kernel tabs (default: the dominant one);
# the size defaults to 1600x1000. $RANGE (FROM:TO after the trace's start,
# e.g. 160ms:175ms) zooms the Trace tab; $MPROF names the mprof to use
# (default: build/bin/mprof, else the one on PATH); $OUT the folder
# (docs/images).
set -eu
cd "$(dirname "$0")/.."
if [ $# -lt 1 ] || [ $# -gt 3 ]; then
  echo "usage: tools/screenshots.sh TRACE [KERNEL] [WIDTHxHEIGHT]" >&2
  exit 2
fi
trace=$1
kernel=${2:-}
size=${3:-1600x1000}
mprof=${MPROF:-build/bin/mprof}
[ -x "$mprof" ] || mprof=$(command -v mprof) || {
  echo "screenshots: no mprof: build first (cmake --build build)" >&2
  exit 1
}
out=${OUT:-docs/images}
mkdir -p "$out"
for tab in trace summary hotspots flame raster; do
  set -- view "$trace" --tab "$tab" --size "$size" --render "$out/$tab.png"
  [ -z "$kernel" ] || set -- "$@" --kernel "$kernel"
  [ "$tab" != trace ] || [ -z "${RANGE:-}" ] || set -- "$@" --range "$RANGE"
  "$mprof" "$@"
done
# Mega and Density when there are spans: a PC-only trace would only give
# their projection. `mprof info` counts the SPANS records. KERNEL is kept
# when it has spans; otherwise view picks the one with the most time that
# has some.
spans=$("$mprof" info "$trace" 2>/dev/null | sed -n 's/.*SPANS=\([0-9][0-9]*\).*/\1/p')
if [ "${spans:-0}" -gt 0 ] || case "$trace" in *.mkprof) true ;; *) false ;; esac; then
  for tab in mega density; do
    set -- view "$trace" --tab "$tab" --size "$size" --render "$out/$tab.png"
    [ -z "$kernel" ] || set -- "$@" --kernel "$kernel"
    "$mprof" "$@"
  done
else
  echo "screenshots: $trace has no activity spans: no mega.png, density.png"
fi
