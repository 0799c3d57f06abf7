#!/bin/sh
# Several traces as one run: two processes (pid, host, rank, clock anchors of
# their own, written by `mprof synth --meta`) opened by summary, diff and
# view --render as a set give the aggregated numbers and, with --by-process,
# each process's; a directory and a glob are the same set; bad sets are
# refused in one line, exit 2.
# A `record blocks` trace and a `record` trace of a second run of the same
# command (written by test_blocks --write-pair) open together too.
# usage: test_sets.sh MPROF TMPDIR JSON_SCHEMA_CHECK DOCS HAVE_RENDER
#                     TEST_BLOCKS
mprof=$1
tmp=${2:-/tmp}/sets.$$
schema_check=$3
docs=$4
have_render=$5
test_blocks=$6
. "$(dirname "$0")/common.sh"
mkdir -p "$tmp/run" "$tmp/empty"

# launches of kernel NAME in a JSON summary (the first row of that name,
# or of that name and process with a second argument).
launches() {
  tr '{' '\n' <"$1" | grep "\"short_name\":\"$2\"" | grep -- "${3:-}" | head -1 |
    sed 's/.*"launches":\([0-9]*\).*/\1/'
}

# Two processes of one run on one host whose clock is CLOCK_REALTIME-based
# anchors apart: the same three kernels, 300 and 200 launches.
"$mprof" synth -o "$tmp/run/trace.mprof" --launches 300 --kernels 3 --seed 4 \
  --meta pid=101 --meta ppid=1 --meta host=node1 --meta rank=0 \
  --meta clock=CLOCK_REALTIME --meta clock.anchor.trace_ns=1000000 \
  --meta clock.anchor.realtime_ns=1700000000000000000 >/dev/null
"$mprof" synth -o "$tmp/run/trace.202.mprof" --launches 200 --kernels 3 \
  --seed 4 --timing-seed 9 \
  --meta pid=202 --meta ppid=101 --meta host=node1 --meta rank=1 \
  --meta clock=CLOCK_REALTIME --meta clock.anchor.trace_ns=5000000 \
  --meta clock.anchor.realtime_ns=1700000000000000000 >/dev/null
"$mprof" summary --json --all "$tmp/run/trace.mprof" >"$tmp/a.json" || fail "summary of trace.mprof exited $?"
"$mprof" summary --json --all "$tmp/run/trace.202.mprof" >"$tmp/b.json" || fail "summary of trace.202.mprof exited $?"

# --- summary: aggregated across processes ---------------------------------
"$mprof" summary --json --all "$tmp/run" >"$tmp/set.json" || fail "summary of a directory failed"
"$schema_check" "$docs/summary.schema.json" "$tmp/set.json" || fail "the set's summary does not match the schema"
grep -q '"launches":500' "$tmp/set.json" || fail "the set's summary does not count 500 launches"
grep -q '"kernels":3,' "$tmp/set.json" || fail "the set's summary does not have 3 kernels: $(head -c 300 "$tmp/set.json")"
for k in layernorm_fwd attention_softmax; do
  a=$(launches "$tmp/a.json" "$k"); b=$(launches "$tmp/b.json" "$k")
  s=$(launches "$tmp/set.json" "$k")
  [ -n "$a" ] && [ -n "$b" ] && [ "$s" = $((a + b)) ] ||
    fail "$k: the set counts '$s' launches, the processes $a + $b"
done
grep -q '"processes":2' "$tmp/set.json" || fail "the set's kernels do not say they ran in 2 processes"

# --- two runs 5 s apart (a --pm both pair): gaps stay within a process ----
# On GPU 0 each run launches gemm_tiled once, 2.3 us after layernorm_fwd on
# the same stream; the 5 s between the runs is no idle gap of the kernel's,
# so it is not "Starved". Two GPUs each, the same two: the set lists 2
# devices, --by-process each process's.
mkdir -p "$tmp/pair"
for p in 101:1700000000000000000 202:1700000005000000000; do
  "$mprof" synth -o "$tmp/pair/trace.${p%%:*}.mprof" --launches 4 --kernels 2 \
    --streams 1 --devices 2 --seed 4 --meta pid="${p%%:*}" --meta host=node1 \
    --meta clock=CLOCK_REALTIME --meta clock.anchor.trace_ns=1000000 \
    --meta clock.anchor.realtime_ns="${p#*:}" >/dev/null || fail "synth of the pair"
done
"$mprof" summary --json --all "$tmp/pair" >"$tmp/pair-gaps.json" || fail "summary of the pair exited $?"
gap=$(tr '{' '\n' <"$tmp/pair-gaps.json" |
  grep -o '"short_name":"[^"]*"\|"device":[0-9]*\|"gap_median_ns":[0-9]*\|"gaps":[0-9]*' |
  awk -F: '/short_name/ { k = $2 } /"device"/ { d = $2 }
    /gap_median_ns/ && k == "\"gemm_tiled<64, 64, 8>\"" && d == 0 { g = $2 }
    /"gaps"/ && k == "\"gemm_tiled<64, 64, 8>\"" && d == 0 { print g, $2 }')
[ "$gap" = "2305 2" ] ||
  fail "the pair's gemm_tiled on GPU 0 has gaps '$gap' (want '2305 2': one per run, none between the runs)"
if "$mprof" summary --human --all "$tmp/pair" | grep -q Starved; then
  fail "a kernel of the pair is judged Starved"
fi
n=$("$mprof" summary "$tmp/pair" | grep -c '<device ')
[ "$n" = 2 ] || fail "the pair's summary lists $n devices, not its 2 GPUs once each"
expect 0 " · 2 devices · " "$mprof" summary --human "$tmp/pair"
n=$("$mprof" summary --by-process "$tmp/pair" | grep -c '<device ')
[ "$n" = 4 ] || fail "--by-process lists $n devices, not each process's 2"

# --- summary --by-process: one row per kernel and process -----------------
"$mprof" summary --json --all --by-process "$tmp/run" >"$tmp/split.json" || fail "summary --by-process failed"
"$schema_check" "$docs/summary.schema.json" "$tmp/split.json" || fail "--by-process does not match the schema"
grep -q '"kernels":6,' "$tmp/split.json" || fail "--by-process does not have 6 rows"
for k in layernorm_fwd gemm_tiled; do
  a=$(launches "$tmp/a.json" "$k"); b=$(launches "$tmp/b.json" "$k")
  sa=$(launches "$tmp/split.json" "$k" '"pid":"101"')
  sb=$(launches "$tmp/split.json" "$k" '"pid":"202"')
  [ "$sa" = "$a" ] && [ "$sb" = "$b" ] ||
    fail "$k by process: pid 101 '$sa' (want $a), pid 202 '$sb' (want $b)"
done
expect 0 "pid 202" "$mprof" summary --human --by-process "$tmp/run"
expect 0 "rank 1" "$mprof" summary --human --split process "$tmp/run"
expect 0 'pid="202"' "$mprof" summary --by-process "$tmp/run"
need xmllint libxml2-utils
"$mprof" summary --by-process --all "$tmp/run" >"$tmp/split.xml" || fail "summary --by-process --all exited $?"
xmllint --noout "$tmp/split.xml" || fail "summary --by-process XML is not well-formed"
grep -q '<process index="1" pid="101" ppid="1" host="node1" rank="0"' "$tmp/split.xml" ||
  fail "the XML lacks the set's process list: $(grep '<process' "$tmp/split.xml" | head -2)"
expect_one_line 2 "--split takes 'process'" "$mprof" summary --split kernel "$tmp/run"
expect 0 "2 processes" "$mprof" summary --human "$tmp/run"
# Two processes on one GPU of one host: one device, not one per process.
expect 0 " 1 device · " "$mprof" summary --human "$tmp/run"

# A set merged before processes were kept (no process.I.streams): no row
# belongs to a process, and the JSON still matches the schema.
"$mprof" synth -o "$tmp/old-merge.mprof" --launches 100 --kernels 2 \
  --meta merge.processes=2 --meta process.0.pid=5 --meta process.1.pid=6 >/dev/null
"$mprof" summary --json "$tmp/old-merge.mprof" >"$tmp/old.json" || fail "summary of an old merged trace failed"
"$schema_check" "$docs/summary.schema.json" "$tmp/old.json" || fail "an old merged trace's summary does not match the schema"

# --- a directory, a glob and the listed traces are one set ----------------
"$mprof" summary --json --all "$tmp/run/*.mprof" >"$tmp/glob.raw" || fail "summary of a glob exited $?"
sed 's/"path":"[^"]*"//' "$tmp/glob.raw" >"$tmp/glob.json"
"$mprof" summary --json --all "$tmp/run/trace.202.mprof" "$tmp/run/trace.mprof" >"$tmp/list.raw" ||
  fail "summary of two listed traces exited $?"
sed 's/"path":"[^"]*"//' "$tmp/list.raw" >"$tmp/list.json"
sed 's/"path":"[^"]*"//' "$tmp/set.json" >"$tmp/dir.json"
cmp -s "$tmp/dir.json" "$tmp/glob.json" || fail "a directory and a glob give different summaries"
cmp -s "$tmp/dir.json" "$tmp/list.json" || fail "a directory and its traces give different summaries"

# --- diff on sets -----------------------------------------------------------
mkdir -p "$tmp/cand"
"$mprof" synth -o "$tmp/cand/trace.mprof" --launches 300 --kernels 3 --seed 4 \
  --slowdown 50 --slow-kernel 0 --meta pid=301 --meta host=node1 >/dev/null
"$mprof" synth -o "$tmp/cand/trace.302.mprof" --launches 200 --kernels 3 \
  --seed 4 --timing-seed 9 --slowdown 50 --slow-kernel 0 --meta pid=302 \
  --meta host=node1 >/dev/null
expect 3 "slowed by more than 10%" "$mprof" diff "$tmp/run" "$tmp/cand" --fail-above 10
expect 0 "noise\|faster\|slower" "$mprof" diff "$tmp/run" "$tmp/run/*.mprof" --human --color=never

# --- view --render on a set -------------------------------------------------
if [ "$have_render" = 1 ]; then
  expect 0 "wrote $tmp/set.png: Trace" "$mprof" view "$tmp/run" --tab trace --render "$tmp/set.png"
  [ -s "$tmp/set.png" ] || fail "view --render of a set wrote no PNG"
  expect 0 "wrote $tmp/sum.png: Summary" "$mprof" view "$tmp/run/*.mprof" --render "$tmp/sum.png"
else
  skipped "view --render on a set: this build has no renderer"
fi

# --- the viewer gets every trace of the set --------------------------------
printf '#!/bin/sh\necho "viewer got: $*"\n' >"$tmp/fake-viewer"
chmod +x "$tmp/fake-viewer"
expect 0 "viewer got: --tab trace -- $tmp/run/trace.202.mprof $tmp/run/trace.mprof$" \
  env DISPLAY=:0 MPROF_GTK="$tmp/fake-viewer" "$mprof" view "$tmp/run" --tab trace
expect 0 "viewer got: -- $tmp/run/trace.202.mprof $tmp/run/trace.mprof$" \
  env DISPLAY=:0 MPROF_GTK="$tmp/fake-viewer" "$mprof" view "$tmp/run/*.mprof"
# `mprof DIR` opens the set as `mprof TRACE` opens a trace.
expect 0 "viewer got: -- $tmp/run/trace.202.mprof $tmp/run/trace.mprof$" \
  env DISPLAY=:0 MPROF_GTK="$tmp/fake-viewer" "$mprof" "$tmp/run"

# --- a block trace and a CUPTI trace of two runs of one command -----------
mkdir -p "$tmp/pair"
"$test_blocks" --write-pair "$tmp/pair" || fail "writing the block/CUPTI pair"
expect 0 "2 processes" "$mprof" summary --human "$tmp/pair"
"$mprof" summary --json --all "$tmp/pair" >"$tmp/pair.json" || fail "summary of the pair failed"
n=$(launches "$tmp/pair.json" tail_spin)
[ "$n" = 7 ] || fail "the pair's tail_spin has '$n' launches, not 3 measured + 4 traced"
grep -q '"sm_tail":{"state":"issue","cost":[0-9.]*,"gain":[0-9.]*,"gain_bound":"estimate","saved_ns":[0-9]*,"detail":"A tail: the last SM (7)' "$tmp/pair.json" ||
  fail "the pair's tail is not judged from the blocks: $(grep -o '"sm_tail":{[^}]*' "$tmp/pair.json" | head -1)"
expect 0 "pid 4100" "$mprof" summary --human --by-process "$tmp/pair"
if [ "$have_render" = 1 ]; then
  expect 0 "Mega, .*tail_spin.*(measured)" "$mprof" view "$tmp/pair/blocks.mprof" \
    "$tmp/pair/trace.mprof" --tab mega --kernel tail_spin --render "$tmp/pair.png"
  expect 0 "wrote $tmp/pair-trace.png: Trace" "$mprof" view "$tmp/pair" --tab trace --render "$tmp/pair-trace.png"
else
  skipped "view --render of the block/CUPTI pair: this build has no renderer"
fi

# --- bad sets: one line naming the problem and the fix, exit 2 -------------
expect_one_line 2 "holds no .mprof files" "$mprof" summary "$tmp/empty"
expect_one_line 2 "matches no file; check the pattern" "$mprof" summary "$tmp/run/*.nope"
expect_one_line 2 "matches no file" "$mprof" diff "$tmp/run" "$tmp/none*/x.mprof"
expect_one_line 2 "holds no .mprof files" "$mprof" view "$tmp/empty" --render "$tmp/x.png"
expect_one_line 2 "is given twice" "$mprof" summary "$tmp/run" "$tmp/run/trace.mprof"
expect_one_line 2 "matches no file" "$mprof" info "$tmp/run/*.nope"
expect_one_line 2 "holds no .mprof files" "$mprof" merge "$tmp/empty" -o "$tmp/m.mprof"
expect 0 "set        2 traces" "$mprof" info "$tmp/run/*.mprof"
mkdir -p "$tmp/bad"
cp "$tmp/run/trace.mprof" "$tmp/bad/a.mprof"
echo "not a trace" >"$tmp/bad/notes.mprof"
expect_one_line 2 "notes.mprof: .*leave it out of the set" "$mprof" summary "$tmp/bad"
expect_one_line 2 "notes.mprof: .*leave it out of the set" "$mprof" diff "$tmp/run" "$tmp/bad"
expect_one_line 2 "notes.mprof: .*leave it out of the set" "$mprof" view "$tmp/bad" --render "$tmp/x.png"
# A trace of another format version (the major number at byte 8).
rm "$tmp/bad/notes.mprof"
cp "$tmp/run/trace.202.mprof" "$tmp/bad/v2.mprof"
printf '\002' | dd of="$tmp/bad/v2.mprof" bs=1 seek=8 conv=notrunc 2>/dev/null
expect_one_line 2 "v2.mprof: header at byte 8: format version 2.*upgrade mprof.*; leave it out of the set" "$mprof" summary "$tmp/bad"

finish set
