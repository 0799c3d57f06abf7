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

[ "$failures" -eq 0 ] || { echo "$failures failure(s)" >&2; exit 1; }
echo "the minimal renderer draws a PNG"
