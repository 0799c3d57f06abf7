#!/bin/sh
# `mprof view --render` draws a real sample to PNG in every build with
# Cairo, the build without GTK included: the Summary of
# samples/transformer_forward.mprof is a PNG of the asked size with
# something on it.
mprof=$1
tmp=${2:-/tmp}/render-png.$$
samples=$3
check=$4
. "$(dirname "$0")/../cli/common.sh"

out=$("$mprof" view "$samples/transformer_forward.mprof" --render "$tmp/summary.png" --size 800x600 2>&1) ||
  fail "view --render failed: $out"
echo "$out" | grep -q "^wrote $tmp/summary.png: Summary, 800x600, kernel " ||
  fail "view --render said: $out"
"$check" "$tmp/summary.png" 800 600 || fail "the Summary PNG is blank or the wrong size"
# The same check must fail on a blank PNG of the asked size, or it proves
# nothing; and on a drawn PNG of another size.
"$check" --blank "$tmp/blank.png" 800 600 || fail "png_check --blank wrote no PNG"
"$check" "$tmp/blank.png" 800 600 >/dev/null && fail "png_check passed a blank 800x600 PNG"
out=$("$mprof" view "$samples/transformer_forward.mprof" --render "$tmp/t.png" --size 64x16 --tab trace 2>&1) ||
  fail "view --render (trace) failed: $out"
"$check" "$tmp/t.png" 800 600 >/dev/null && fail "png_check passed a PNG of the wrong size"

# SVG keeps its text as text, to search and copy: the Summary of
# samples/gemm_source.mprof names its kernel in a <text> element. That
# kernel is the program's sgemm_tiled, not mprof's own timer probe, which
# took more GPU time.
out=$("$mprof" view "$samples/gemm_source.mprof" --render "$tmp/gs.svg" 2>&1) ||
  fail "view --render (svg) failed: $out"
echo "$out" | grep -q "^wrote $tmp/gs.svg: Summary, 1600x1000, kernel sgemm_tiled" ||
  fail "view --render of gemm_source did not open on sgemm_tiled: $out"
grep -q '<text [^>]*font-weight:bold[^>]*>sgemm_tiled</text>' "$tmp/gs.svg" ||
  fail "the Summary SVG has no <text> naming sgemm_tiled"
grep -q 'glyph' "$tmp/gs.svg" && fail "the Summary SVG draws text as glyph outlines"
out=$("$mprof" view "$samples/gemm_source.mprof" --kernel mprof__source \
  --render "$tmp/probe.svg" 2>&1) || fail "view --render (probe) failed: $out"
grep -q ">mprof__source_timer_probe_kernel(.*mprof's own kernel, not the program's</text>" "$tmp/probe.svg" ||
  fail "the probe's Summary does not say it is mprof's own"

[ "$failures" -eq 0 ] || { echo "$failures failure(s)" >&2; exit 1; }
echo "the minimal renderer draws a PNG, and an SVG with its text as text"
