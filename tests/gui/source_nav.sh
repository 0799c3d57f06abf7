#!/bin/sh
# The Source tab in the real window, under X, on the real sample
# samples/transformer_forward.mprof (its source embedded from this
# checkout): a click on a Hotspots row opens the Source tab at that
# instruction's line (the line libmprof gives it), Hottest line, N and
# Shift+N step through the hot lines, the file picker shows a header at
# its hottest line, Ctrl+F focuses the search and the
# window's single-key actions let its keys by, the search marks a line
# that holds the text and Enter the next, a click on a Flame instruction
# opens its line, and a cuBLAS kernel (no line table) says so and keeps
# its SASS: its hottest instruction marked, N to the next, a Hotspots row
# to its instruction. Screenshots of each step must not be blank.
# usage: source_nav.sh MPROF_GTK MPROF TMPDIR SOURCE_DIR
gtk=$1
mprof=$2
tmp=${3:-/tmp}/gui-source.$$
src=$4
if [ -z "${DISPLAY:-}" ]; then
  echo "skipping the Source tab's GUI test: DISPLAY is unset (tools/test.sh starts Xvfb)"
  exit 77
fi
mkdir -p "$tmp"
trap 'rm -rf "$tmp"' EXIT
. "$(dirname "$0")/lib.sh"
need_tools convert:imagemagick

# The sample names its source by the build path it was recorded at
# (/work/main/...): embed this checkout's copy, as a trace copied to a
# laptop carries its code.
cp "$src/samples/transformer_forward.mprof" "$src/samples/transformer_forward.mprof.pc.json" "$tmp/" ||
  fail "cannot copy the sample"
build=$("$mprof" summary --by-line --json "$tmp/transformer_forward.mprof" |
  grep -o '"file": *"[^"]*transformer_forward\.cu"' | head -1 | sed 's/.*"\([^"]*\)producers\/cuda\/examples\/transformer_forward\.cu"/\1/')
[ -n "$build" ] || fail "the sample names no transformer_forward.cu"
"$mprof" sass --source-root "${build%/}=$src" "$tmp/transformer_forward.mprof" >"$tmp/log" 2>&1 ||
  fail "sass --source-root exited $?: $(cat "$tmp/log")"
grep -q "transformer_forward.cu" "$tmp/log" && fail "transformer_forward.cu was not embedded: $(cat "$tmp/log")"

export GSK_RENDERER=${GSK_RENDERER:-cairo}
MPROF_SELFTEST_SOURCE=shfl MPROF_SELFTEST_LIBRARY=Kernel2 \
  "$gtk" --tab hotspots --kernel attention_scores_softmax --smoke-test "$tmp/shots" \
  "$tmp/transformer_forward.mprof" >"$tmp/log" 2>"$tmp/err"
status=$?
cat "$tmp/log"
[ "$status" -eq 0 ] || fail "mprof-gtk --smoke-test exited $status: $(cat "$tmp/err")"
grep -q "^selftest: 0 failure(s)" "$tmp/log" || fail "the Source tour reported failures"
for what in "a Hotspots row opens the Source tab at its line" "the row's line is on screen" \
  "Hottest line goes to the kernel's hottest line" "N goes to the next hottest line" \
  "Shift+N goes back to the hottest line" "Ctrl+F on the Source tab focuses its search" \
  "w types into the search instead of zooming" \
  "the search marks a line that holds the text, on screen" \
  "Enter goes to the next line that holds it" \
  "the file picker shows a header at its hottest line" \
  "a Flame instruction opens the Source tab at its line" \
  "a library kernel says it has no source lines, its SASS kept" \
  "a library kernel's hottest instruction is marked, on screen" \
  "N goes to a library kernel's next hottest instruction" \
  "a library kernel's Hotspots row opens its SASS at that instruction"; do
  grep -q "selftest: ok: $what" "$tmp/log" || fail "not checked: $what"
done
! grep -q "CRITICAL" "$tmp/err" || fail "GTK complained: $(grep CRITICAL "$tmp/err" | head -3)"
for shot in hotspots source-from-hotspots source-next source-find flame source-library \
  source-library-row; do
  not_blank "$tmp/shots/$shot.png"
done

[ "$failures" -eq 0 ] || { echo "$failures failure(s)" >&2; exit 1; }
echo "Source tab GUI test passed"
