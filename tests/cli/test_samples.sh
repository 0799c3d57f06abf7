#!/bin/sh
# Golden facts about the real H200 samples in samples/: what `mprof summary`,
# `diff`, `info` and `mkprof` say about them must not drift. The facts were
# checked against the programs' own CUDA-event timings and against ncu
# (docs/validation/H200.md).
# Usage: test_samples.sh MPROF TMPDIR SCHEMA_CHECK DOCS SAMPLES
mprof=$1
tmp=${2:-/tmp}/samples.$$
schema_check=$3
docs=$4
samples=$5
. "$(dirname "$0")/common.sh"
has() { grep -q -- "$2" "$1" || fail "$1 lacks: $2"; }

# samples/ is part of the tree: without it the checkout is broken.
if [ ! -f "$samples/gemm.mprof" ]; then
  echo "FAIL: no samples in $samples" >&2
  exit 1
fi
need xmllint libxml2-utils

for trace in "$samples"/*.mprof; do
  name=$(basename "$trace" .mprof)
  "$mprof" summary "$trace" >"$tmp/$name.xml" 2>"$tmp/$name.err" || fail "summary $name exited $?: $(cat "$tmp/$name.err")"
  xmllint --noout "$tmp/$name.xml" || fail "summary $name: XML not well formed"
  "$mprof" summary --json --all "$trace" >"$tmp/$name.json" || fail "summary --json $name"
  "$schema_check" "$docs/summary.schema.json" "$tmp/$name.json" || fail "summary --json $name: schema"
  NO_COLOR=1 "$mprof" summary --human "$trace" >"$tmp/$name.txt" || fail "summary --human $name"
  "$mprof" diff "$trace" "$trace" --fail-above 1 >"$tmp/$name.diff.xml" || fail "diff $name against itself exited $?"
  "$mprof" info "$trace" >"$tmp/$name.info" || fail "info $name"
done

# gemm: one kernel, issue bound, the hottest instruction ncu also ranks first.
x="$tmp/gemm.xml"
has "$x" 'kernel rank="1" name="sgemm_tiled(int, int, int, float const\*, float const\*, float\*)"'
has "$x" 'launches="20"'
has "$x" '<verdict dimension="compute" state="issue"[^>]*>Issue bound'
has "$x" 'instruction offset="0xc00" share="0.06[0-9]*" samples="[0-9]*" sass="LDS R50, \[R48\]" file="[^"]*gemm.cu" line="95"'
has "$x" 'limiter="registers"'
has "$x" 'sidecar="present"'

# demo: the pointer chase dominates; a one-block grid and memory latency.
x="$tmp/demo.xml"
has "$x" 'kernel rank="1" name="pointer_chase(unsigned int const\*, unsigned int\*, int)"'
has "$x" '<verdict dimension="tail_effect" state="issue"[^>]*>Grid too small: 1 block fills &lt;0.1% of one wave'
has "$x" 'name="saxpy(float, float const\*, float\*, int)"'
has "$x" 'Memory-latency bound'

# transformer_forward: 11 kernels; the cuBLAS kernels have SASS from the
# sidecar although the trace dropped their code.
x="$tmp/transformer_forward.xml"
has "$x" 'kernels matched="11"'
has "$x" 'kernel rank="1" name="attention_scores_softmax(float const\*, float\*, int, int, int, float, int)"'
"$mprof" summary --all --kernel 'xmma_gemm' "$samples/transformer_forward.mprof" >"$tmp/cublas.xml" ||
  fail "summary --kernel xmma_gemm exited $?"
has "$tmp/cublas.xml" 'name="sm80_xmma_gemm_f32f32_f32f32_f32_nn_n_tilesize64x64x8'
has "$tmp/cublas.xml" 'sass="FFMA R7, R48.reuse, R52.reuse, R7"'
has "$tmp/transformer_forward.info" 'cubins.omitted = 3'

# gemm_source: measured spans from 132 SMs, aligned onto the CUPTI clock.
has "$tmp/gemm_source.info" 'SPANS=66048'
has "$tmp/gemm_source.info" 'source.launches_unmatched = 0'
has "$tmp/gemm_source.info" 'source.globaltimer_step_ns = 32'
"$mprof" mkprof info "$samples/gemm_source.mkprof" >"$tmp/mk.txt" || fail "mkprof info"
has "$tmp/mk.txt" '132 processors'

# Two programs share no kernel: diff says so in one line and exits 2,
# unless --allow-disjoint asks for the report anyway.
"$mprof" diff "$samples/gemm.mprof" "$samples/demo.mprof" >"$tmp/dj.out" 2>"$tmp/dj.err"
[ $? -eq 2 ] || fail "a disjoint diff did not exit 2"
[ ! -s "$tmp/dj.out" ] || fail "a refused disjoint diff still wrote a report"
[ "$(wc -l <"$tmp/dj.err")" -eq 1 ] || fail "disjoint diff: $(cat "$tmp/dj.err")"
has "$tmp/dj.err" "no kernel also ran in $samples/gemm.mprof.*--allow-disjoint"
"$mprof" diff --allow-disjoint "$samples/gemm.mprof" "$samples/demo.mprof" >"$tmp/dj.out" 2>"$tmp/dj.err" ||
  fail "diff --allow-disjoint exited $?"
has "$tmp/dj.out" 'change="only_candidate"'

# A damaged sidecar named with --sidecar: every command that reads it
# prints the same line, naming --no-sidecar, and exits 2. The trace's own
# TRACE.pc.json, damaged, is left out instead: each reads the trace without
# it and says so (tests/cli/test_sidecar_damaged.sh).
cp "$samples/gemm.mprof" "$tmp/bad.mprof"
echo "not json" >"$tmp/bad.pc.json"
"$mprof" summary --sidecar "$tmp/bad.pc.json" "$tmp/bad.mprof" >/dev/null 2>"$tmp/bad.summary"
[ $? -eq 2 ] || fail "summary with a damaged --sidecar did not exit 2"
[ "$(wc -l <"$tmp/bad.summary")" -eq 1 ] || fail "summary: $(cat "$tmp/bad.summary")"
has "$tmp/bad.summary" "^mprof: $tmp/bad.pc.json: byte 0: .*mprof sass --rebuild.*--no-sidecar"
for cmd in "export --sidecar $tmp/bad.pc.json $tmp/bad.mprof -o $tmp/bad.json" \
  "view $tmp/bad.mprof --sidecar $tmp/bad.pc.json --render $tmp/bad.png"; do
  # shellcheck disable=SC2086
  "$mprof" $cmd >/dev/null 2>"$tmp/bad.err"
  st=$?
  if [ $st -eq 2 ] && cmp -s "$tmp/bad.err" "$tmp/bad.summary"; then :; else
    # view --render needs Cairo; a build without it says so instead.
    case "$cmd" in view*) grep -q "unavailable in this build" "$tmp/bad.err" && continue ;; esac
    fail "mprof $cmd exited $st with '$(cat "$tmp/bad.err")', not summary's line"
  fi
done
mv "$tmp/bad.pc.json" "$tmp/bad.mprof.pc.json"
for cmd in "summary $tmp/bad.mprof" "diff $tmp/bad.mprof $samples/gemm.mprof" \
  "export $tmp/bad.mprof -o $tmp/bad.json"; do
  # shellcheck disable=SC2086
  "$mprof" $cmd >"$tmp/bad.out" 2>&1 ||
    fail "mprof $cmd exited $? with the trace's own sidecar damaged"
  [ "$(grep -c "$tmp/bad.mprof.pc.json: byte 0: .*--no-sidecar" "$tmp/bad.out")" -eq 1 ] ||
    fail "mprof $cmd does not say once why the sidecar was left out: $(head -c 400 "$tmp/bad.out")"
done

# The NVTX sample (tests/gpu/nvtx_sample.sh), once it is in samples/: GPU
# time per range, the range opened before the first CUDA call kept, the
# domain range, every launch tied to its API call.
if [ -f "$samples/nvtx_step.mprof" ]; then
  "$mprof" summary --by-range --all "$samples/nvtx_step.mprof" >"$tmp/nvtx.xml" ||
    fail "summary --by-range nvtx_step exited $?"
  for name in '"setup"' '"attention"' '"mlp"' '"backward"' '"optimizer"' \
    '"batch" domain="data"'; do
    has "$tmp/nvtx.xml" "<range rank=\"[0-9]*\" name=$name"
  done
  has "$tmp/nvtx.xml" 'in_ranges_launches="[1-9]'
  # The backward kernels come from PyTorch's autograd thread, which opens
  # no range: they count in the main thread's "backward" (55.8% of the
  # kernel time was "outside every range" before), and nothing is left
  # outside.
  has "$tmp/nvtx.xml" 'outside_launches="0" outside_ns="0"'
  has "$tmp/nvtx.xml" 'borrowed_launches="284" borrowed_ns="1935824"'
  has "$tmp/nvtx.xml" 'name="backward" share="0.5592" kernel_ns="1938800" launches="288"'
  has "$tmp/nvtx.xml" 'name="block 0" share="0.0000" kernel_ns="0" .* inclusive_ns="242334" .* depth="1" parent="forward"'
  if grep -q '<note key="ranges">' "$tmp/nvtx.xml"; then fail "nvtx_step: $(grep note "$tmp/nvtx.xml")"; fi
  "$mprof" info "$samples/nvtx_step.mprof" >"$tmp/nvtx.info" || fail "info nvtx_step"
  has "$tmp/nvtx.info" 'capture.started_by = nvtx'
  has "$tmp/nvtx.info" 'API_CALLS=[1-9]'
fi

# bottlenecks: the planted-bottleneck suite recorded with --pm both. The PC
# run alone names ten bottlenecks and says the two streams need counters;
# the pair, opened as one set, names all twelve (tests/gpu/score_verdicts.py
# holds the same table for the GPU run).
if [ -f "$samples/bottlenecks.pm.mprof" ]; then
  # verdict, gain (a share, a bound, "idle", "?", "roof" or "-"), time saved, name
  headline() { grep -Eq "  $2 +(([≥≤]?[0-9.]+%( idle)?)|-|\?|roof) +([≥≤]?[0-9.]+ [mun]?s|-|\?) +$3( |\$)" "$1" || fail "$1: $3 is not headlined '$2'"; }
  pc="$tmp/bottlenecks.txt"
  has "$pc" 'No hardware counters: recorded with --pm off'
  headline "$pc" 'Memory-latency bound' dram_stream
  headline "$pc" 'Memory-latency bound' l2_stream
  set="$tmp/bottlenecks_set.txt"
  NO_COLOR=1 "$mprof" summary --human "$samples/bottlenecks.mprof" "$samples/bottlenecks.pm.mprof" >"$set" ||
    fail "summary --human of the bottlenecks pair"
  grep -q 'No hardware counters' "$set" && fail "$set: the pair has counters"
  has "$set" "! Two runs of \`./bottlenecks\` (\`mprof record --pm both\`): stall reasons come from the PC-sampled run"
  "$mprof" summary --json --all "$samples/bottlenecks.mprof" "$samples/bottlenecks.pm.mprof" >"$tmp/pair.json" ||
    fail "summary --json of the bottlenecks pair"
  "$schema_check" "$docs/summary.schema.json" "$tmp/pair.json" || fail "summary --json of the pair: schema"
  has "$tmp/pair.json" '"key": *"pm_pair"'
  has "$tmp/pair.json" '"roof": *"dram"'
  # two PM-less or unrelated runs are no pair
  "$mprof" summary "$samples/gemm.mprof" "$samples/gemm_pm.mprof" >"$tmp/notpair.xml" ||
    fail "summary of gemm + gemm_pm"
  grep -q pm_pair "$tmp/notpair.xml" && fail "gemm + gemm_pm (two commands) called a --pm both pair"
  for t in "$pc" "$set"; do
    headline "$t" 'Memory-throughput bound' hot_atomics
    headline "$t" 'Synchronisation bound' barrier_heavy
    headline "$t" 'Issue bound' fma_independent
    headline "$t" 'Grid too small' fma_chain_one_warp
    headline "$t" 'Low occupancy' smem_limited
    headline "$t" 'Tail effect' one_block_tail
    headline "$t" 'Shared-memory/MIO bound' bank_conflicts
    headline "$t" 'Instruction-fetch/branch bound' icache_thrash
    headline "$t" 'Launch-bound' tiny_kernel
  done
  headline "$pc" 'Memory-latency bound' pointer_chase
  # one chain per warp and one warp per SM: more chains in flight, held
  # to the DRAM floor (9.1% of the peak), as latency or as the grid
  headline "$set" 'Memory-latency bound' pointer_chase
  # at a measured roof the gain column says so
  grep -Eq '  DRAM-bandwidth bound +roof +\? +dram_stream ' "$set" || fail "$set: dram_stream is not at the DRAM roof"
  grep -Eq '  L2-bandwidth bound +roof +\? +l2_stream ' "$set" || fail "$set: l2_stream is not at the L2 roof"
fi

if [ "$failures" -ne 0 ]; then
  echo "$failures sample checks failed" >&2
  exit 1
fi
echo "all sample checks passed"
