#!/bin/sh
# The Ranks tab in the real window, under X, on 8 synthetic ranks
# (`mprof synth --steps`) where rank 3 runs gemm_tiled four times slower
# in step 4: opened with --tab ranks on the rank traces, the hottest cell
# is rank 3's step 4, named a straggler; a click on it shows the Trace
# zoomed to that step's GPU window, selected, with rank 3's rows on
# screen. Screenshots of each step must not be blank.
# usage: ranks_nav.sh MPROF_GTK MPROF TMPDIR
gtk=$1
mprof=$2
tmp=${3:-/tmp}/gui-ranks.$$
if [ -z "${DISPLAY:-}" ]; then
  echo "skipping the Ranks tab's GUI test: DISPLAY is unset (tools/test.sh starts Xvfb)"
  exit 77
fi
mkdir -p "$tmp/run"
trap 'rm -rf "$tmp"' EXIT
. "$(dirname "$0")/lib.sh"
need_tools convert:imagemagick

for r in 0 1 2 3 4 5 6 7; do
  slow=""
  [ "$r" = 3 ] && slow="--slowdown 300 --slow-kernel 0 --slow-step 4 --slow-scenario barrier"
  # shellcheck disable=SC2086
  "$mprof" synth -o "$tmp/run/rank$r.mprof" --launches 4000 --steps 10 \
    --seed 7 --timing-seed $((r + 1)) --meta rank="$r" --meta world_size=8 \
    $slow >/dev/null || fail "synth of rank $r failed"
done

export GSK_RENDERER=${GSK_RENDERER:-cairo}
MPROF_SELFTEST_RANKS=3:4 "$gtk" --tab ranks --smoke-test "$tmp/shots" \
  "$tmp"/run/rank*.mprof >"$tmp/log" 2>"$tmp/err"
status=$?
cat "$tmp/log"
[ "$status" -eq 0 ] || fail "mprof-gtk --smoke-test exited $status: $(cat "$tmp/err")"
grep -q "^selftest: 0 failure(s)" "$tmp/log" || fail "the Ranks tour reported failures"
for what in "the tour starts on Ranks" "the hottest cell is the planted straggler's step" \
  "a click on a cell shows the Trace" "the step's GPU window is selected" \
  "the Trace is zoomed to the step" "the Trace's rows are scrolled to the rank's process"; do
  grep -q "selftest: ok: $what" "$tmp/log" || fail "not checked: $what"
done
! grep -q "CRITICAL" "$tmp/err" || fail "GTK complained: $(grep CRITICAL "$tmp/err" | head -3)"
for shot in ranks ranks-trace; do
  not_blank "$tmp/shots/$shot.png"
done

[ "$failures" -eq 0 ] || { echo "$failures failure(s)" >&2; exit 1; }
echo "Ranks tab GUI test passed"
