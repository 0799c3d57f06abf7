#!/bin/sh
# A big trace opens on a worker: the window keeps answering while it
# loads (its main loop beats every 10 ms), the loading page shows the step
# and a Cancel button, the trace then opens on its Summary; Cancel brings
# the welcome page back at once and the worker stops, as it does when the
# window is closed while it loads. 2,000,000 launches
# from mprof synth (80 MB). Needs DISPLAY: tools/test.sh starts Xvfb.
gtk=$1
mprof=$2
tmp=${3:-/tmp}/bigtrace.$$
if [ -z "${DISPLAY:-}" ]; then
  echo "skipping the big-trace GUI test: DISPLAY is unset (tools/test.sh starts Xvfb)"
  exit 77
fi
mkdir -p "$tmp"
trap 'rm -rf "$tmp"' EXIT
. "$(dirname "$0")/lib.sh"
need_tools convert:imagemagick

"$mprof" synth -o "$tmp/big.mprof" --launches 2000000 >/dev/null || fail "synth failed"
export GSK_RENDERER=${GSK_RENDERER:-cairo}

# expect LOG WHAT...: each check passed.
expect() {
  log=$1
  shift
  for what in "$@"; do
    grep -q "selftest: ok: $what" "$log" || fail "not checked: $what"
  done
}

for mode in wait cancel close; do
  MPROF_SELFTEST_LOAD=$mode timeout 180 "$gtk" --smoke-test "$tmp/$mode" "$tmp/big.mprof" \
    >"$tmp/$mode.log" 2>"$tmp/$mode.err"
  status=$?
  cat "$tmp/$mode.log"
  [ "$status" -eq 0 ] || fail "$mode: mprof-gtk exited $status: $(cat "$tmp/$mode.err")"
  grep -q "^selftest: 0 failure(s)" "$tmp/$mode.log" || fail "$mode: the self-test reported failures"
  ! grep -q "CRITICAL" "$tmp/$mode.err" || fail "$mode: GTK complained: $(grep CRITICAL "$tmp/$mode.err" | head -3)"
  expect "$tmp/$mode.log" "the window answers while the trace loads" \
    "the loading page shows the step"
  not_blank "$tmp/$mode/loading.png"
done
expect "$tmp/close.log" "the worker of a closed window stops at its next step"
expect "$tmp/wait.log" "the big trace opens" "it opens on the Summary"
grep -q "^selftest: opened 2000000 launches" "$tmp/wait.log" ||
  fail "the window did not open the 2,000,000 launches"
not_blank "$tmp/wait/loaded.png"
# The Summary and the Hotspots copy as text: the Summary as `mprof summary
# --human --full-names` prints the kernel, the Hotspots every sampled
# instruction, hottest first, as the summary ranks them.
expect "$tmp/wait.log" "the Summary copies as text" "the Hotspots copies as text" \
  "Ctrl+Shift+C copies the tab"
kernel=$(sed -n 's/^selftest: copying kernel //p' "$tmp/wait.log")
"$mprof" summary "$tmp/big.mprof" --human --full-names --hot 10 --kernel "$kernel" >"$tmp/summary.txt" ||
  fail "mprof summary --kernel $kernel exited $?"
cmp -s "$tmp/summary.txt" "$tmp/wait/summary.txt" ||
  fail "the copied Summary differs from mprof summary: $(diff "$tmp/summary.txt" "$tmp/wait/summary.txt" | head -5)"
sampled=$(sed -n 's/.*hot instructions (10 of \([0-9]*\) sampled).*/\1/p' "$tmp/summary.txt" | head -1)
rows=$(grep -c "^[0-9][0-9]*	" "$tmp/wait/hotspots.txt")
[ -n "$sampled" ] && [ "$rows" -eq "$sampled" ] ||
  fail "the copied Hotspots has $rows instructions, the summary counts ${sampled:-none}"
hottest=$(sed -n 's/^│     0x0*\([0-9a-f]*\)  *\([0-9.]*%\).*/\1 \2/p' "$tmp/summary.txt" | head -1)
first=$(awk -F'	' '$1 == "1" { sub(/^0x0*/, "", $4); print $4, $2 }' "$tmp/wait/hotspots.txt")
[ -n "$hottest" ] && [ "$first" = "$hottest" ] ||
  fail "the copied Hotspots starts with '$first', the summary with '$hottest'"
expect "$tmp/cancel.log" "the loading page has a Cancel button" \
  "Cancel shows the welcome page at once" "the cancelled worker stops at its next step"
not_blank "$tmp/cancel/cancelled.png"

[ "$failures" -eq 0 ] || { echo "$failures failure(s)" >&2; exit 1; }
echo "big-trace GUI test passed"
