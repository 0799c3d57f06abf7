#!/bin/sh
# The mprof command line as a user meets it: output, one-line errors and
# exit statuses (0 ok, 1 failed, 2 bad usage or bad input).
mprof=$1
tmp=${2:-/tmp}/cli.$$
. "$(dirname "$0")/common.sh"

expect 0 "^mprof [0-9]*\.[0-9]*\.[0-9]* (library" "$mprof" --version
expect 2 "usage: mprof" "$mprof"
expect 0 "Commands:" "$mprof" --help
expect 0 "synth" "$mprof" help
expect 0 "usage: mprof info TRACE" "$mprof" help info
expect 0 "usage: mprof synth" "$mprof" synth --help
expect 2 "unknown command 'frobnicate'" "$mprof" frobnicate
expect 2 "unknown option '--bogus'" "$mprof" --bogus
expect 2 "unknown command 'nope'" "$mprof" help nope
expect_one_line 2 "unknown option '--frob'" "$mprof" synth --frob
expect_one_line 2 "needs a non-negative number" "$mprof" synth --launches -5
expect_one_line 2 "unknown scenario 'slow'" "$mprof" synth --scenario slow
expect_one_line 2 "no trace given" "$mprof" info
expect_one_line 2 "--pm must be on, off, both or alternate, not 'maybe'" "$mprof" record --pm maybe -- true
expect_one_line 2 "--pm alternate takes turns between the repeats of a capture window: add --capture-range (e.g. nvtx:step --range-count 4), or use --pm both" "$mprof" record --pm alternate -- true
expect_one_line 2 "--pm alternate takes turns with continuous PC sampling: drop --pc-mode serialized" "$mprof" record --pm alternate --capture-range cudaProfilerApi --pc-mode serialized -- true
expect_one_line 2 "--alternate-every goes with --pm alternate" "$mprof" record --alternate-every 2 --capture-range cudaProfilerApi -- true
expect_one_line 2 "--alternate-every takes a number of repeats, 1..1000000, not '0'" "$mprof" record --pm alternate --alternate-every 0 --capture-range cudaProfilerApi -- true
expect_one_line 2 "--pm both runs CMD twice under the CUPTI producer; record blocks in a run of its own" "$mprof" record blocks --pm both -- true
expect_one_line 2 "--pm both records a PC-sampled run and a PM-sampled one: drop --pc-mode off, or use --pm on" "$mprof" record --pm both --pc-mode off -- true
expect_one_line 2 "--pm-interval takes a duration from 1us to 1s" "$mprof" record --pm-interval 500ns -- true
expect_one_line 2 "--pm-counters takes 'default', 'sol' or a comma list of CUPTI metric names, not ' , '" "$mprof" record --pm-counters ' , ' -- true
# the set reaches the producer (as MPROF_PM_METRICS) of the program, in a
# build with the CUPTI producer
if ! "$mprof" record -q -o "$tmp/probe.mprof" -- true 2>&1 | grep -q "producer (libmprof-cupti.so) was not found"; then
  expect 1 "^M=sol$" "$mprof" record -q --pm on --pm-counters sol -o "$tmp/pmc.mprof" -- sh -c 'echo "M=$MPROF_PM_METRICS"'
fi
# The capture window's options: one line each, exit 2, before CMD runs.
expect_one_line 2 "--capture-range takes none, cudaProfilerApi, nvtx:NAME" "$mprof" record --capture-range cudaprofilerapi -- true
expect_one_line 2 "--capture-range nvtx:step@: name the range and, after '@', its domain" "$mprof" record --capture-range nvtx:step@ -- true
expect_one_line 2 "is not a POSIX extended regex" "$mprof" record --capture-range 'nvtx:/st(ep/' -- true
expect_one_line 2 "--range-skip counts ranges: add --capture-range cudaProfilerApi or --capture-range nvtx:NAME" "$mprof" record --range-skip 10 -- true
expect_one_line 2 "--range-count takes a whole number >= 1, not '0'" "$mprof" record --capture-range nvtx:step --range-count 0 -- true
expect_one_line 2 "--range-skip takes a whole number, not '-3'" "$mprof" record --capture-range nvtx:step --range-skip -3 -- true
expect_one_line 2 "--kernel-skip counts launches from the start: drop --capture-range" "$mprof" record --capture-range cudaProfilerApi --kernel-skip 3 -- true
expect_one_line 2 "--kernel-count takes a whole number >= 1, not 'many'" "$mprof" record --kernel-count many -- true
expect_one_line 2 "--delay takes seconds .e.g. 600 or 2.5., not '10m'" "$mprof" record --delay 10m -- true
expect_one_line 2 "--duration takes seconds above 0 .e.g. 30 or 0.5., not '0'" "$mprof" record --duration 0 -- true
expect_one_line 2 "--max-size takes a size .e.g. 500M, 2G., not '5X'" "$mprof" record --max-size 5X -- true
expect_one_line 2 "the capture window options work with the CUPTI producer only; 'record blocks' records the whole run" "$mprof" record blocks --delay 5 -- true
expect 0 "--capture-range nvtx:step --range-skip 1000" "$mprof" help record
# ... and reach the producer as the MPROF_* variables it reads (config.c).
# MPROF_CUPTI_LIB: any readable file stands for the producer (a build
# without CUDA has none; `sh` never loads it).
MPROF_CUPTI_LIB=$mprof "$mprof" record -o "$tmp/env.mprof" --capture-range 'nvtx:/st.p/@*' --range-skip 3 \
  --range-count 2 --delay 2.5 --duration 0.5 --max-size 5M -- sh -c 'env | grep "^MPROF_"' \
  >"$tmp/env.txt" 2>/dev/null
for want in 'MPROF_CAPTURE_RANGE=nvtx:/st.p/@\*' MPROF_RANGE_SKIP=3 MPROF_RANGE_COUNT=2 \
  MPROF_DELAY=2.5s MPROF_DURATION=0.5s MPROF_MAX_SIZE=5M; do
  grep -qx "$want" "$tmp/env.txt" || fail "record does not pass $want: $(cat "$tmp/env.txt")"
done
MPROF_CUPTI_LIB=$mprof "$mprof" record -o "$tmp/env.mprof" --kernel gemm --kernel-skip 7 --kernel-count 2 \
  -- sh -c 'env | grep "^MPROF_"' >"$tmp/env.txt" 2>/dev/null
for want in MPROF_KERNEL_REGEX=gemm MPROF_KERNEL_SKIP=7 MPROF_KERNEL_COUNT=2; do
  grep -qx "$want" "$tmp/env.txt" || fail "record does not pass $want: $(cat "$tmp/env.txt")"
done
! grep -q "^MPROF_CAPTURE_RANGE\|^MPROF_DELAY" "$tmp/env.txt" || fail "record passes window options it was not given"
expect_one_line 2 "$tmp/missing.mprof: cannot open: No such file" "$mprof" info "$tmp/missing.mprof"

expect 0 "wrote $tmp/s.mprof: 3000 launches, 5 kernels" "$mprof" synth -o "$tmp/s.mprof" --launches 3000 --kernels 5 --seed 9
expect 0 "5 kernels, 3000 launches" "$mprof" info "$tmp/s.mprof"
expect 0 "device 0   NVIDIA H200 (synthetic) (sm_90, 132 SMs" "$mprof" info "$tmp/s.mprof"

# A truncated trace and a text file are refused in one line, exit 2.
head -c 1000 "$tmp/s.mprof" >"$tmp/cut.mprof"
expect_one_line 2 "$tmp/cut.mprof: header at byte 32: header says" "$mprof" info "$tmp/cut.mprof"
echo "hello" >"$tmp/text.mprof"
expect_one_line 2 "shorter than the 64-byte header" "$mprof" info "$tmp/text.mprof"
head -c 200 /dev/zero >"$tmp/zero.mprof"
expect_one_line 2 "not an mprof trace" "$mprof" info "$tmp/zero.mprof"
expect_one_line 2 "not a regular file" "$mprof" info /dev/null
mkdir -p "$tmp/empty-run"
expect_one_line 2 "holds no .mprof files" "$mprof" info "$tmp/empty-run"
# Writing where we may not: exit 1 or 2 with one line naming the path.
expect_one_line 1 "/nonexistent-dir/x.mprof: cannot create" "$mprof" synth -o /nonexistent-dir/x.mprof
# A full disk when the finished copy is written (x.mprof.finishing leads to
# /dev/full: write(2) fails with ENOSPC): one line says what is kept, and
# the streamed file opens with every launch.
mkdir -p "$tmp/full"
ln -s /dev/full "$tmp/full/x.mprof.finishing"
expect_one_line 1 "$tmp/full/x.mprof: cannot write the trace: No space left on device; the whole capture (up to its final checkpoint, 1) is kept in $tmp/full/x.mprof.partial (open it with mprof)" "$mprof" synth -o "$tmp/full/x.mprof" --launches 3000
[ -e "$tmp/full/x.mprof" ] && fail "synth into a full disk left $tmp/full/x.mprof"
[ -e "$tmp/full/x.mprof.finishing" ] && fail "synth into a full disk left the failed copy"
expect 0 "LAUNCHES=3000" "$mprof" info "$tmp/full/x.mprof.partial"

if [ "$failures" -ne 0 ]; then
  echo "$failures CLI checks failed" >&2
  exit 1
fi
echo "all CLI checks passed"
