#!/bin/sh
# What `mprof info` says of a trace's capture window (CAPTURE), in words a
# user acts on: which ranges or launches it holds, when, and why it ended.
mprof=$1
make=$2 # capture_standin_trace
tmp=${3:-/tmp}/capture-info.$$
. "$(dirname "$0")/common.sh"

"$make" "$tmp/never.mprof" steps=1 trigger=2 skip=1000 count=4 seen=37 reason=6 \
  spec=nvtx:step || fail "capture_standin_trace failed"
expect 0 "^window 0   nvtx:step: no range recorded; the window never opened: the program ended after 37 matching ranges, not more than the 1000 to skip" \
  "$mprof" info "$tmp/never.mprof"

"$make" "$tmp/size.mprof" steps=3 trigger=0 max=8388608 reason=5 delay=2.5 from=2.5 to=4 ||
  fail "capture_standin_trace failed"
expect 0 "^window 0   the run: recorded after a 2.5 s delay, from 2.500 s to 4.000 s of the process; stopped by --max-size 8 MiB: the trace reached it" \
  "$mprof" info "$tmp/size.mprof"

"$make" "$tmp/timed.mprof" steps=3 trigger=0 duration=1 reason=4 from=0.5 to=1.5 ||
  fail "capture_standin_trace failed"
expect 0 "ended when its --duration of 1 s was up" "$mprof" info "$tmp/timed.mprof"

"$make" "$tmp/open.mprof" steps=3 trigger=1 recorded=1 seen=1 reason=0 spec=cudaProfilerApi from=1 ||
  fail "capture_standin_trace failed"
expect 0 "^window 0   cudaProfilerApi: ranges 1-1 recorded, from 1.000 s of the process; still open when the trace was cut" \
  "$mprof" info "$tmp/open.mprof"

"$make" "$tmp/exit.mprof" steps=3 trigger=3 skip=5 recorded=12 seen=17 reason=1 spec=gemm from=1 to=2 ||
  fail "capture_standin_trace failed"
expect 0 "^window 0   launches of 'gemm': launches 6-17 recorded, from 1.000 s to 2.000 s of the process in 12 pieces; ended with the program" \
  "$mprof" info "$tmp/exit.mprof"

# A trace recorded whole has no window line.
"$make" "$tmp/whole.mprof" steps=3 || fail "capture_standin_trace failed"
"$mprof" info "$tmp/whole.mprof" >"$tmp/whole.txt" 2>&1 || fail "info of a whole run failed"
! grep -q "^window" "$tmp/whole.txt" || fail "a whole run printed a window line: $(grep '^window' "$tmp/whole.txt")"

[ "$failures" -eq 0 ] || { echo "$failures capture info checks failed"; exit 1; }
echo "capture info: every window described"
