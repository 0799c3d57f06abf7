#!/bin/sh
# The real window under X: open a trace on its Summary, visit every tab,
# zoom and pan with keys and the wheel, zoom to a selection and clear it
# (F, Esc), search the Trace (Ctrl+F, Enter, Esc), fold and hide rows,
# switch kernels, and save a
# screenshot of each step (GTK's own snapshot, and the whole screen with
# xwd); none may be blank. A corrupt trace shows its error in the window
# and on stderr, exit 2. Needs DISPLAY: tools/test.sh starts Xvfb.
gtk=$1
mprof=$2
tmp=${3:-/tmp}/gui.$$
if [ -z "${DISPLAY:-}" ]; then
  echo "skipping the GUI smoke test: DISPLAY is unset (tools/test.sh starts Xvfb)"
  exit 77
fi
mkdir -p "$tmp"
trap 'rm -rf "$tmp"' EXIT
. "$(dirname "$0")/lib.sh"
# ImageMagick counts the colours and x11-apps' xwd takes the screen.
need_tools convert:imagemagick xwd:x11-apps

"$mprof" synth -o "$tmp/t.mprof" --launches 20000 --kernels 6 --seed 2 --sidecar >/dev/null ||
  fail "synth failed"

export GSK_RENDERER=${GSK_RENDERER:-cairo}
"$gtk" --smoke-test "$tmp/shots" "$tmp/t.mprof" >"$tmp/log" 2>"$tmp/err" &
pid=$!
# While it runs, the whole screen as X has it.
sleep 3
xwd -root -silent >"$tmp/screen.xwd" || fail "xwd -root exited $?"
convert "xwd:$tmp/screen.xwd" "$tmp/screen.png" || fail "convert of the screenshot exited $?"
not_blank "$tmp/screen.png"
wait $pid
status=$?
cat "$tmp/log"
[ "$status" -eq 0 ] || fail "mprof-gtk --smoke-test exited $status: $(cat "$tmp/err")"
grep -q "selftest: 0 failure(s)" "$tmp/log" || fail "the self-test reported failures"
for what in "F zooms to the selected range" "Esc clears the selection" \
  "Enter zooms to the selected launch" "the keys window lists the keys" \
  "every kernel of the range is listed" \
  "Ctrl+F opens the Trace's search with the focus in it" \
  "typing in the search bar searches the Trace" \
  "the search bar counts the matches" \
  "Enter selects the first match and shows it" \
  "Enter again selects the next match in time" "F zooms to the match" \
  "Esc clears the search and closes the bar" \
  "a click on the GPU band folds its streams" "Hide this row hides it" \
  "Ctrl+Shift+H shows the hidden rows"; do
  grep -q "selftest: ok: $what" "$tmp/log" || fail "not checked: $what"
done
! grep -q "CRITICAL" "$tmp/err" || fail "GTK complained: $(grep CRITICAL "$tmp/err" | head -3)"
for tab in summary trace trace-zoomed trace-search hotspots flame raster mega mega-rows density summary-second-kernel; do
  not_blank "$tmp/shots/$tab.png"
done

# The synthetic activity demo: it opens on Activity, the Rows and Depth
# switches work, every tab (Mega, Density, Activity included) draws.
"$gtk" --demo-activity --smoke-test "$tmp/dshots" >"$tmp/log" 2>"$tmp/err"
status=$?
[ "$status" -eq 0 ] || fail "--demo-activity exited $status: $(cat "$tmp/err")"
grep -q "selftest: ok: the demo opens on Activity" "$tmp/log" || fail "the demo did not open on Activity"
grep -q "selftest: ok: the Rows and Depth switches" "$tmp/log" || fail "the Activity switches did not switch"
grep -q "selftest: 0 failure(s)" "$tmp/log" || fail "the demo's self-test reported failures: $(grep FAILED "$tmp/log")"
for tab in activity mega mega-rows density; do
  not_blank "$tmp/dshots/$tab.png"
done
"$gtk" --demo-activity "$tmp/t.mprof" >/dev/null 2>"$tmp/err"
[ $? -eq 2 ] || fail "--demo-activity with a trace did not exit 2"

# --kernel opens on another kernel (the dominant one, #0, otherwise).
grep -q "^selftest: kernel #0 " "$tmp/log" ||
  fail "it did not open on the dominant kernel: $(grep 'selftest: kernel' "$tmp/log")"
"$gtk" --kernel layernorm_fwd --smoke-test "$tmp/kshots" "$tmp/t.mprof" >"$tmp/log" 2>"$tmp/err" ||
  fail "--kernel: exited $?: $(cat "$tmp/err")"
grep -q "^selftest: kernel #[0-9][0-9]* .*layernorm_fwd" "$tmp/log" ||
  fail "--kernel layernorm_fwd opened $(grep 'selftest: kernel' "$tmp/log")"

# A corrupt trace: the error in the window and one line on stderr.
head -c 3000 "$tmp/t.mprof" >"$tmp/cut.mprof"
"$gtk" --smoke-test "$tmp/eshots" "$tmp/cut.mprof" >"$tmp/log" 2>"$tmp/err"
status=$?
[ "$status" -eq 2 ] || fail "a corrupt trace exited $status, expected 2"
grep -q "^mprof-gtk: $tmp/cut.mprof: header" "$tmp/err" || fail "stderr lacks the error: $(cat "$tmp/err")"
not_blank "$tmp/eshots/error.png"
# A missing one, likewise.
"$gtk" --smoke-test "$tmp/mshots" "$tmp/missing.mprof" >"$tmp/log" 2>"$tmp/err"
[ $? -eq 2 ] || fail "a missing trace did not exit 2"
grep -q "missing.mprof: cannot open" "$tmp/err" || fail "stderr lacks the error: $(cat "$tmp/err")"

# A damaged sidecar asked for by name: in the window, and the line summary
# prints for it. (The trace's own TRACE.pc.json, damaged, is left out
# instead: the window opens without it, as `view --render` draws it,
# tests/cli/test_sidecar_damaged.sh.)
cp "$tmp/t.mprof" "$tmp/bad.mprof"
echo "not json" >"$tmp/bad.pc.json"
"$gtk" --smoke-test "$tmp/sshots" --sidecar "$tmp/bad.pc.json" "$tmp/bad.mprof" >"$tmp/log" 2>"$tmp/err"
[ $? -eq 2 ] || fail "a damaged --sidecar did not exit 2"
"$mprof" summary --sidecar "$tmp/bad.pc.json" "$tmp/bad.mprof" >/dev/null 2>"$tmp/serr"
[ "$(sed 's/^mprof-gtk: //' "$tmp/err")" = "$(sed 's/^mprof: //' "$tmp/serr")" ] ||
  fail "the viewer says '$(cat "$tmp/err")', summary '$(cat "$tmp/serr")'"
not_blank "$tmp/sshots/error.png"

# No display: one line, exit 2.
env -u DISPLAY -u WAYLAND_DISPLAY "$gtk" "$tmp/t.mprof" >/dev/null 2>"$tmp/err"
[ $? -eq 2 ] || fail "mprof-gtk without a display did not exit 2"
grep -q "no display" "$tmp/err" || fail "no 'no display' message: $(cat "$tmp/err")"
# Usage: an unknown option, two traces.
"$gtk" --bogus >/dev/null 2>"$tmp/err"
[ $? -eq 2 ] || fail "mprof-gtk --bogus did not exit 2"
grep -q "bogus" "$tmp/err" || fail "mprof-gtk --bogus: $(cat "$tmp/err")"
# Usage: the same trace twice (several traces are one run; one trace
# twice would count its launches twice). Bounded: a window left open
# would hang the suite.
timeout 30 "$gtk" "$tmp/t.mprof" "$tmp/t.mprof" >/dev/null 2>"$tmp/err"
[ $? -eq 2 ] || fail "mprof-gtk with the same trace twice did not exit 2"
grep -q "is given twice" "$tmp/err" || fail "mprof-gtk with the same trace twice: $(cat "$tmp/err")"
# Without a trace (a desktop launcher): the welcome page; Ctrl+O shows the
# open dialog; a trace dropped on the window opens in its place and heads
# the recent traces (kept under a scratch XDG_DATA_HOME).
XDG_DATA_HOME="$tmp/xdg" MPROF_SELFTEST_DROP="$tmp/t.mprof" \
  "$gtk" --smoke-test "$tmp/wshots" >"$tmp/log" 2>"$tmp/err" ||
  fail "the welcome page exited $?: $(cat "$tmp/err")"
grep -q "^selftest: 0 failure(s)" "$tmp/log" || fail "welcome page: $(grep -v ': ok:' "$tmp/log")"
grep -q "the dropped trace is the first recent trace" "$tmp/log" || fail "no drop checked: $(cat "$tmp/log")"
not_blank "$tmp/wshots/welcome.png"
not_blank "$tmp/wshots/dropped.png"
# A Megakernels .mkprof (spans exported by `mprof mkprof export`) opens
# on Mega, and the whole self-test holds there too.
"$mprof" synth -o "$tmp/spans.mprof" --spans 4000 --seed 5 >/dev/null &&
  "$mprof" mkprof export "$tmp/spans.mprof" -o "$tmp/spans.mkprof" >/dev/null ||
  fail "could not write a .mkprof"
"$gtk" --smoke-test "$tmp/mkshots" "$tmp/spans.mkprof" >"$tmp/log" 2>"$tmp/err" ||
  fail "mprof-gtk on a .mkprof exited $?: $(cat "$tmp/err")"
grep -q "^selftest: ok: a .mkprof opens on Mega" "$tmp/log" ||
  fail "a .mkprof did not open on Mega: $(grep -v ': ok:' "$tmp/log")"
grep -q "^selftest: 0 failure(s)" "$tmp/log" ||
  fail ".mkprof: $(grep -v ': ok:' "$tmp/log")"

[ "$failures" -eq 0 ] || { echo "$failures failure(s)" >&2; exit 1; }
echo "GUI smoke test passed"
