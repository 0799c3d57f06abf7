#!/bin/bash
# Source instrumentation on a real GPU: record gemm_source and
# transformer_source with `mprof record source`, check that every span is
# accounted for (kept or counted as overflow), measure the %globaltimer step,
# report the alignment of the spans on the CUPTI timeline and the cost of
# the markers (CUDA-event kernel times with and without them), and write
# OUTDIR/results.txt. Skips (exit 77) when there is no GPU.
#
# Usage: tests/gpu/validate_source.sh OUTDIR [BUILD_DIR]
#   BUILD_DIR  a CMake build of mprof with the CUPTI producer and the CUDA
#              examples, gemm_source and transformer_source included
#              (default: build)
set -uo pipefail
out=${1:?usage: validate_source.sh OUTDIR [BUILD_DIR]}
build=${2:-build}

if ! command -v nvidia-smi >/dev/null 2>&1 || ! nvidia-smi -L >/dev/null 2>&1; then
  echo "validate_source: no GPU here (nvidia-smi missing or failing); skipping the GPU checks"
  exit 77
fi

mkdir -p "$out"
out=$(cd "$out" && pwd)
build=$(cd "$build" && pwd)
log="$out/validate_source.log"
results="$out/results.txt"
# Clear what an earlier run left: a trace, a cached `mprof info` or an
# appended probe file from before must not be scored as this run's.
rm -rf "$out"/*.mprof "$out"/*.mprof.source "$out"/*.info.txt "$out"/*.txt "$out"/*.json \
  "$out"/*.mkprof "$out"/*.err "$out"/cost.* "$out/samples"
: >"$log"
: >"$results"
mprof="$build/bin/mprof"
bin="$build/bin"
for need in "$mprof" "$bin/gemm" "$bin/gemm_source" "$bin/transformer_forward" \
  "$bin/transformer_source" "$build/lib/libmprof-cupti.so"; do
  if [ ! -e "$need" ]; then
    echo "validate_source: $need is missing; build with the CUDA toolkit present" >&2
    exit 2
  fi
done

say() { echo "$*" | tee -a "$log"; }
result() { echo "$*" | tee -a "$results" >>"$log"; echo "$*"; }
failures=0
check() { # check DESCRIPTION COMMAND...
  if "${@:2}" >>"$log" 2>&1; then say "ok    $1"; else say "FAIL  $1"; failures=$((failures + 1)); fi
}
# meta TRACE KEY: the value of a META key, from `mprof info` (kept in
# TRACE.info.txt: info checks every checksum, slow on big traces)
meta() {
  [ -s "$1.info.txt" ] || "$mprof" info "$1" >"$1.info.txt" 2>&1
  sed -n "s/^meta       $2 = //p" "$1.info.txt" | tail -n 1
}
# timing FILE KERNEL: mean_us of an EVENT_TIMING line
timing() { sed -n "s/^EVENT_TIMING kernel=$2 launches=[0-9]* mean_us=\([0-9.]*\).*/\1/p" "$1" | head -n 1; }
# stated FILE DEFAULT: the spans the program says it made (a line
# SOURCE_SPANS expected=N, as the self-test's stand-ins print), else DEFAULT
# (the count the shape of the run gives)
stated() {
  local n
  n=$(sed -n 's/^SOURCE_SPANS expected=\([0-9]*\).*/\1/p' "$1" 2>/dev/null | tail -n 1)
  echo "${n:-$2}"
}
pct() { awk -v a="$1" -v b="$2" 'BEGIN { if (a > 0 && b != "") printf "%+.2f%%", (b / a - 1) * 100; else printf "n/a" }'; }

say "== machine"
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,memory.total --format=csv,noheader | tee -a "$log"
result "machine: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -n 1)"

# ---------------------------------------------------------------------------
say "== %globaltimer resolution (gemm_source --timer-probe, 5 runs)"
for run in 1 2 3 4 5; do
  "$bin/gemm_source" --timer-probe >"$out/timer_probe.$run.txt" 2>&1
  check "timer probe $run exits 0 (exit $?)" test "$?" -eq 0
  grep '^TIMER_PROBE' "$out/timer_probe.$run.txt" | tee -a "$out/timer_probe.txt" >>"$log"
done
steps=$(sed -n 's/.*min_step_ns=\([0-9]*\).*/\1/p' "$out/timer_probe.txt" | sort -n | uniq | tr '\n' ' ')
max_steps=$(sed -n 's/.*max_step_ns=\([0-9]*\).*/\1/p' "$out/timer_probe.txt" | sort -n | uniq | tr '\n' ' ')
means=$(sed -n 's/.*mean_step_ns=\([0-9.]*\).*/\1/p' "$out/timer_probe.txt" | tr '\n' ' ')
deltas=$(sed -n 's/.*globaltimer_minus_realtime_ns=\(-*[0-9]*\).*/\1/p' "$out/timer_probe.txt" | tr '\n' ' ')
result "globaltimer min step (ns, per run): $steps"
result "globaltimer max step (ns, per run): $max_steps"
result "globaltimer mean step between changes (ns): $means"
result "globaltimer - CLOCK_REALTIME at the probe (ns, host bracket included): $deltas"
check "timer probe ran" test -n "$steps"

# ---------------------------------------------------------------------------
# record_source NAME EXPECTED_SPANS CAPACITY [record flags] -- ARGS
record_source() {
  local name=$1 expected=$2 capacity=$3
  shift 3
  local flags=()
  while [ "$1" != "--" ]; do flags+=("$1"); shift; done
  shift
  say "command: MPROF_SOURCE_CAPACITY=$capacity mprof record source ${flags[*]} -o $name.mprof -- $name $*"
  MPROF_SOURCE_CAPACITY=$capacity "$mprof" record source "${flags[@]}" -o "$out/$name.mprof" -- \
    "$bin/$name" "$@" >"$out/$name.record.txt" 2>"$out/$name.record.err"
  local rc=$?
  tee -a "$log" <"$out/$name.record.err"
  expected=$(stated "$out/$name.record.txt" "$expected")
  check "$name: record source exits 0 (exit $rc)" test "$rc" -eq 0
  check "$name: program output unchanged (RESULT ok)" grep -q "RESULT ok" "$out/$name.record.txt"
  check "$name: trace is valid" "$mprof" info "$out/$name.mprof"
  check "$name: .source file written" test -s "$out/$name.mprof.source"
  "$mprof" info "$out/$name.mprof" >"$out/$name.mprof.info.txt" 2>&1
  check "$name: mprof source info exits 0" "$mprof" source info "$out/$name.mprof.source"
  "$mprof" source info "$out/$name.mprof.source" >"$out/$name.source-info.txt" 2>&1
  timeout 300 "$mprof" summary --human "$out/$name.mprof" >"$out/$name.summary.txt" 2>&1
  check "$name: summary --human exits 0 (exit $?)" test "$?" -eq 0
  local events overflow
  events=$(meta "$out/$name.mprof" source.events)
  overflow=$(meta "$out/$name.mprof" source.overflow)
  result "$name: spans kept $events, overflowed $overflow, expected in all $expected"
  check "$name: every span kept or counted (kept + overflow = $expected)" \
    test "$((${events:-0} + ${overflow:-0}))" -eq "$expected"
  for key in alignment_method launches launches_matched launches_unmatched \
    alignment_offset_ns alignment_error_ns alignment_error_median_ns \
    alignment_launches alignment_drift_ppm anchor_offset_ns clock_map \
    globaltimer_step_ns globaltimer_step_max_ns spans_outside_launch; do
    result "$name: source.$key = $(meta "$out/$name.mprof" "source.$key")"
  done
  check "$name: every instrumented launch matched a CUPTI launch" \
    test "$(meta "$out/$name.mprof" source.launches_unmatched)" = 0
}

say "== gemm_source: loader / consumer / storer spans per block"
# 2048^2: 32 x 32 blocks, 128 k-tiles: 2 spans each + 1 store = 257 per block
gemm_launches=4
record_source gemm_source $((1024 * 257 * gemm_launches)) 8M -- 2048 $gemm_launches

say "== transformer_source: per-block phases, per-warp attention scores"
# per pass (B=4 S=256 D=512 H=8 F=2048): layernorm 2 x 1024 blocks x 3,
# attention 8192 blocks x (3 + 8 warps), attention_pv 8192 x 2, add_bias
# 4096, bias_gelu 4096, bias_residual_add 2 x 2048; 10 passes + 1 warm-up
tf_per_pass=$((2 * 1024 * 3 + 8192 * 11 + 8192 * 2 + 4096 + 4096 + 2 * 2048))
record_source transformer_source $((tf_per_pass * 11)) 16M --drop-code -- 1 10

say "== overflow is counted, not lost (gemm_source, 100000-record buffer)"
MPROF_SOURCE_CAPACITY=100000 "$mprof" record source -q --pc-mode off -o "$out/overflow.mprof" -- \
  "$bin/gemm_source" 2048 2 >"$out/overflow.record.txt" 2>"$out/overflow.record.err"
ov_rc=$?
ov_expected=$(stated "$out/overflow.record.txt" $((1024 * 257 * 2)))
check "overflow: record source exits 0 (exit $ov_rc)" test "$ov_rc" -eq 0
tee -a "$log" <"$out/overflow.record.err"
ov_events=$(meta "$out/overflow.mprof" source.events)
ov_overflow=$(meta "$out/overflow.mprof" source.overflow)
result "overflow run: kept $ov_events, overflowed $ov_overflow, expected $ov_expected"
check "overflow: kept + overflowed = all spans" test "$((${ov_events:-0} + ${ov_overflow:-0}))" -eq "$ov_expected"
check "overflow: counted in DROPS" grep -q "activity spans overflowed" "$out/overflow.mprof.info.txt"
check "overflow: the program warned on stderr" grep -q "did not fit the buffer" "$out/overflow.record.err"

# ---------------------------------------------------------------------------
say "== marker cost: CUDA-event kernel times, plain vs markers compiled in"
# Three builds of the same code: plain (no markers), markers compiled in
# but MPROF_SOURCE_OUTPUT unset (one branch per marker), recording. No
# CUPTI here, so only the markers differ. Each run 3 times; the lowest mean.
best_timing() { # best_timing KERNEL FILES...
  local kernel=$1 best=""
  shift
  for f in "$@"; do
    local v
    v=$(timing "$f" "$kernel")
    [ -z "$v" ] && continue
    if [ -z "$best" ] || awk -v a="$v" -v b="$best" 'BEGIN { exit !(a < b) }'; then best=$v; fi
  done
  echo "$best"
}
cost_run() { # cost_run OUTPUT COMMAND...: one timed run, its exit checked
  "${@:2}" >"$1" 2>&1
  local rc=$?
  check "cost run $(basename "$1" .txt) exits 0 (exit $rc)" test "$rc" -eq 0
}
for run in 1 2 3; do
  cost_run "$out/cost.gemm.plain.$run.txt" "$bin/gemm" 2048 20
  cost_run "$out/cost.gemm.off.$run.txt" "$bin/gemm_source" 2048 20
  cost_run "$out/cost.gemm.on.$run.txt" env MPROF_SOURCE_OUTPUT="$out/cost.gemm.source" \
    MPROF_SOURCE_CAPACITY=16M "$bin/gemm_source" 2048 20
  cost_run "$out/cost.tf.plain.$run.txt" "$bin/transformer_forward" 1 10
  cost_run "$out/cost.tf.off.$run.txt" "$bin/transformer_source" 1 10
  cost_run "$out/cost.tf.on.$run.txt" env MPROF_SOURCE_OUTPUT="$out/cost.tf.source" \
    MPROF_SOURCE_CAPACITY=16M "$bin/transformer_source" 1 10
done
check "cost runs: gemm_source recording gives RESULT ok" grep -q "RESULT ok" "$out/cost.gemm.on.1.txt"
check "cost runs: transformer_source recording gives RESULT ok" grep -q "RESULT ok" "$out/cost.tf.on.1.txt"
result "marker cost (mean us per launch, best of 3; change vs plain):"
for pair in gemm:sgemm_tiled tf:layernorm_forward tf:add_bias \
  tf:attention_scores_softmax tf:attention_pv tf:bias_residual_add \
  tf:bias_gelu; do
  prog=${pair%%:*}
  kernel=${pair#*:}
  plain=$(best_timing "$kernel" "$out"/cost."$prog".plain.*.txt)
  off=$(best_timing "$kernel" "$out"/cost."$prog".off.*.txt)
  on=$(best_timing "$kernel" "$out"/cost."$prog".on.*.txt)
  result "  $kernel: plain $plain, markers off $off ($(pct "$plain" "$off")), recording $on ($(pct "$plain" "$on"))"
done
rm -f "$out"/cost.*.source

# Under record source the same kernels again, from CUPTI's durations.
say "== kernel durations under mprof record source (CUPTI), for reference"
for name in gemm_source transformer_source; do
  timeout 300 "$mprof" summary --json --all "$out/$name.mprof" >"$out/$name.summary.json" 2>&1
  check "$name: summary --json exits 0 (exit $?)" test "$?" -eq 0
done

# ---------------------------------------------------------------------------
say "== MKPROF export of one gemm launch (the Megakernels viewer's format)"
if "$mprof" mkprof export "$out/gemm_source.mprof" --kernel sgemm_tiled --launch 3 \
  -o "$out/gemm_source.mkprof" >"$out/mkprof.export.txt" 2>&1; then
  tee -a "$log" <"$out/mkprof.export.txt"
  check "mkprof export reads back" "$mprof" mkprof info "$out/gemm_source.mkprof"
  "$mprof" mkprof info "$out/gemm_source.mkprof" --instructions 2 >"$out/gemm_source.mkprof-info.txt" 2>&1
  result "mkprof sample: $(head -n 1 "$out/mkprof.export.txt") ($(stat -c %s "$out/gemm_source.mkprof") bytes)"
else
  say "FAIL  mkprof export"
  tee -a "$log" <"$out/mkprof.export.txt"
  failures=$((failures + 1))
fi
check "mkprof export of attention_scores_softmax" "$mprof" mkprof export \
  "$out/transformer_source.mprof" --kernel attention_scores_softmax --launch 3 -o "$out/attention.mkprof"

say "== a recording for samples/ (gemm_source 1024: 256 blocks x 129 spans per launch)"
mkdir -p "$out/samples"
say "command: mprof record source -o samples/gemm_source.mprof -- gemm_source 1024 2"
"$mprof" record source -q -o "$out/samples/gemm_source.mprof" -- "$bin/gemm_source" 1024 2 \
  >"$out/samples/gemm_source.record.txt" 2>&1
sample_rc=$?
check "sample: record source exits 0 (exit $sample_rc)" test "$sample_rc" -eq 0
sample_expected=$(stated "$out/samples/gemm_source.record.txt" $((256 * 129 * 2)))
sample_events=$(meta "$out/samples/gemm_source.mprof" source.events)
sample_overflow=$(meta "$out/samples/gemm_source.mprof" source.overflow)
check "sample: trace with spans (kept $sample_events + overflowed $sample_overflow = $sample_expected)" \
  test "$((${sample_events:-0} + ${sample_overflow:-0}))" -eq "$sample_expected"
say "command: mprof mkprof export samples/gemm_source.mprof --launch 1 -o samples/gemm_source.mkprof"
check "sample: mkprof export" "$mprof" mkprof export "$out/samples/gemm_source.mprof" --launch 1 \
  -o "$out/samples/gemm_source.mkprof"
check "sample: mkprof export reads back" "$mprof" mkprof info "$out/samples/gemm_source.mkprof"
rm -f "$out/samples/gemm_source.mprof.source"
result "sample: gemm_source.mprof $(stat -c %s "$out/samples/gemm_source.mprof") bytes, .mkprof $(stat -c %s "$out/samples/gemm_source.mkprof" 2>/dev/null) bytes"
# The big .source files are merged into their traces; keep OUTDIR smaller.
rm -f "$out"/gemm_source.mprof.source "$out"/transformer_source.mprof.source "$out"/overflow.mprof.source

say "== $failures checks failed"
result "checks failed: $failures"
[ "$failures" -eq 0 ]
