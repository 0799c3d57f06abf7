#!/bin/bash
# What capture costs on real programs, measured in one run (issue: capture
# cost). Writes every number to OUTDIR/cost.txt and the raw logs beside it;
# docs/validation/H200.md keeps what it printed on the project's H200.
#
# Usage: tests/gpu/capture_cost.sh OUTDIR [BUILD_DIR]
#   BUILD_DIR      a build or install of mprof with the CUPTI producer:
#                  BUILD_DIR/bin/mprof and BUILD_DIR/lib/libmprof-cupti.so
#                  (or lib/mprof/) (default: build)
# Environment:
#   MPROF_BEFORE   another such build to compare with (e.g. an older commit)
#   COST_BIN       folder with small_kernels, empty_kernels and libfloor.so
#                  already built; otherwise they are built here with nvcc/gcc
#   COST_SKIP_NCU  1: skip the ncu run (it takes over a minute)
#   COST_SKIP_TORCH 1: skip the PyTorch workload
#   COST_RECORD_FLAGS  extra `mprof record` options for every recording
#                  (e.g. "--pm off")
#   COST_TIMEOUT   seconds any one run may take (default 150)
#   COST_RUNS      runs of the cuBLAS program per variant, median (default 5)
#   COST_EMPTY_RUNS runs of the empty-launch loop per variant, median
#                  (default 5)
#   COST_SKIP_EMPTY, COST_SKIP_STEADY  1: skip the per-launch or the kernel
#                  slowdown measurement
#   COST_SKIP_LOOP 1: skip the PyTorch in-loop step time (COST_LOOP_RUNS
#                  runs of each variant, default 5; COST_LOOP_STEPS steps,
#                  default 40; the figure is the steady median step)
#
# The targets are enforced, not only printed: every figure goes to
# OUTDIR/cost.figures and tests/gpu/check_cost.py holds it to its target
# (per launch <= 1 us, kernel slowdown <= 1%, record <= 1.2x the floor on
# the cuBLAS program, ncu >= 200x record, PyTorch <= 10% or <= 2 s and
# <= 20 MB, SASS for every sampled function; where CUPTI alone is above a
# target, within 1.2x of the floor measured in the same run). Exit 1 names
# the figure that missed; a run that exits non-zero (a recorder that
# crashes early looks cheap) or leaves no trace is a failure too. Parts
# are left out only when asked (COST_SKIP_*): ncu missing without
# COST_SKIP_NCU=1 is a failure. tests/gpu/selftest.sh capture_cost runs
# this on stand-ins that crash, write nothing or are slow, and expects it
# to fail.
#
# `mprof record` leaves the disassembly of sampled functions to the first
# `mprof summary` (docs/SIDECAR.md): each workload's first summary is timed
# on its own line, sizes and SASS coverage are taken after it, and the
# cuBLAS program is also recorded once with --sass-now (the old behaviour).
#
# Workloads (tests/gpu/cost/): train_step.py (PyTorch bf16 training with
# cuBLAS, cuDNN, flash attention and a Triton kernel), small_kernels.cu (one
# cuBLAS SGEMM + 200 small kernels; --steady for the kernel slowdown),
# empty_kernels.cu (20,000 empty launches), floor.c (the floor: a CUPTI
# subscriber with mprof's activity kinds and PC-sampling settings that keeps
# nothing). Skips (exit 77) without a GPU.
set -uo pipefail
out=${1:?usage: capture_cost.sh OUTDIR [BUILD_DIR]}
build=${2:-build}
mkdir -p "$out" || exit 2
out=$(cd "$out" && pwd)
build=$(cd "$build" 2>/dev/null && pwd) || { echo "capture_cost: no build folder ${2:-build}" >&2; exit 2; }
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh" # say, median
report="$out/cost.txt"
figures="$out/cost.figures"
# What an earlier run left: its report, figures, logs, traces and timings.
rm -f "$out"/*.log "$out"/*.mprof "$out"/*.mprof.pc.json "$out"/sk_*.s "$out"/torch.info.txt "$out/missing" ||
  exit 2
: >"$report"
: >"$figures"
failures=0
# failed WHY: a run or an output that is not there (never call it in $(...)).
failed() {
  say "FAIL  $*"
  failures=$((failures + 1))
}
# figure NAME VALUE: one number for check_cost.py
figure() { echo "$1 $2" >>"$figures"; }

if ! nvidia-smi -L >/dev/null 2>&1; then
  echo "capture_cost: no GPU here (nvidia-smi -L failed); skipping"
  exit 77
fi
mprof="$build/bin/mprof"
# A build tree keeps the producer in lib/, an install tree in lib/mprof/.
if [ ! -x "$mprof" ] || { [ ! -e "$build/lib/libmprof-cupti.so" ] &&
  [ ! -e "$build/lib/mprof/libmprof-cupti.so" ]; }; then
  echo "capture_cost: $mprof or its producer is missing" >&2
  exit 2
fi
before=${MPROF_BEFORE:-}
cuda=${CUDA_HOME:-/usr/local/cuda}
export PATH="$cuda/bin:$PATH"
cupti_lib=$cuda/targets/x86_64-linux/lib
[ -e "$cupti_lib/libcupti.so" ] ||
  cupti_lib=$(dirname "$(find "$cuda"/ -name 'libcupti.so*' 2>/dev/null | head -n 1)")
export LD_LIBRARY_PATH="$cupti_lib:${LD_LIBRARY_PATH:-}"

bin=${COST_BIN:-$out/bin}
mkdir -p "$bin"
if [ ! -x "$bin/small_kernels" ]; then
  nvcc -O2 -arch=sm_90 -o "$bin/small_kernels" "$here/cost/small_kernels.cu" -lcublas || exit 2
fi
if [ ! -x "$bin/empty_kernels" ]; then
  nvcc -O2 -arch=sm_90 -o "$bin/empty_kernels" "$here/cost/empty_kernels.cu" || exit 2
fi
if [ ! -e "$bin/libfloor.so" ]; then
  g++ -O2 -fPIC -c "$here/cost/floor_pm.cpp" -o "$bin/floor_pm.o" -I"$cuda/include" &&
    gcc -O2 -shared -fPIC "$here/cost/floor.c" "$bin/floor_pm.o" -o "$bin/libfloor.so" \
      -I"$cuda/include" -L"$cupti_lib" -lcupti -lpthread -lstdc++ || exit 2
fi
floor="$bin/libfloor.so"

now() { date +%s.%N; }
# coverage FIGURE SIDECAR...: sampled functions and how many have SASS;
# the first sidecar's count of sampled functions without SASS is the
# figure FIGURE (none when that sidecar is missing: check_cost.py fails)
coverage() {
  python3 - "$figures" "$@" <<'PY'
import json, os, sys
figures, figure, paths = sys.argv[1], sys.argv[2], sys.argv[3:]
for n, path in enumerate(paths):
    if not os.path.exists(path):
        continue
    fns = json.load(open(path))["functions"]
    sampled = [f for f in fns if f["pcs"]]
    with_sass = [f for f in sampled if f["sass_state"] == "present"]
    states = {}
    for f in fns:
        states[f["sass_state"]] = states.get(f["sass_state"], 0) + 1
    print(f"{os.path.basename(path)}: {len(fns)} functions {states}, {len(sampled)} sampled, "
          f"{len(with_sass)} of them with SASS; no SASS: "
          + ", ".join(f["name"][:60] + " (" + f["sass_state"] + ")" for f in sampled if f not in with_sass))
    if n == 0:
        with open(figures, "a") as out:
            out.write(f"{figure} {len(sampled) - len(with_sass)}\n")
PY
}
# timed NAME CMD...: run, keep stdout+stderr in NAME.log; the seconds in
# $T. A run that exits non-zero is a failure: its time means nothing.
timed() {
  local name=$1 t0 t1
  shift
  t0=$(now)
  # A hung run (a profiler that deadlocks at exit) must not eat the budget.
  timeout -k 5 "${COST_TIMEOUT:-150}" "$@" >"$out/$name.log" 2>&1
  local rc=$?
  t1=$(now)
  [ $rc -eq 0 ] || failed "$name exited $rc (see $out/$name.log): $(tail -n 2 "$out/$name.log" | tr '\n' ' ')"
  T=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f\n", b - a }')
}
# trace NAME PATH: a recording must have left its trace
trace() { [ -s "$2" ] || failed "$1 left no trace at $2"; }
calc() { awk "BEGIN { printf \"$1\n\", $2 }"; }
# field LOG KEY: the number after KEY in LOG.log. It runs in $(...) and
# pipelines, so a missing one is written down in OUTDIR/missing, which the
# end of the script reads: a counter would be lost there.
field() {
  local v
  v=$(grep -o "$2 [0-9.]*" "$out/$1.log" 2>/dev/null | head -n 1 | awk '{ print $2 }')
  [ -n "$v" ] || echo "$1.log has no '$2'" >>"$out/missing"
  echo "${v:-0}"
}
read -r -a extra <<<"${COST_RECORD_FLAGS:-}"
# The floor samples what the recordings sample: PM counters instead of PC
# samples when they are recorded with --pm on.
floor_env=(CUDA_INJECTION64_PATH="$floor")
floor_kind="PC sampling"
case " ${COST_RECORD_FLAGS:-} " in
*" --pm on "*) floor_env+=(MPROF_PM=on) floor_kind="PM sampling" ;;
esac

say "== machine"
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader | tee -a "$report"
say "date: $(date -u '+%Y-%m-%d %H:%M UTC'), cpus: $(nproc)"
nvdisasm --version 2>/dev/null | tail -n 1 | tee -a "$report"
say "floor: a minimal CUPTI subscriber with $floor_kind, as the recordings"

# ---- 20,000 empty launches: cost per launch ----------------------------------
if [ "${COST_SKIP_EMPTY:-0}" != 1 ]; then
say "== empty_kernels: 20,000 launches (loop time inside the program)"
# Five runs each (single loops vary by +-20% on the H200), interleaved. With
# PM sampling, a second floor also evaluates every sample's counters, as
# the producer does: what the producer adds beyond it is its own.
nruns=${COST_EMPTY_RUNS:-5}
runs=$(seq 1 "$nruns")
for i in $runs; do
  timed "empty_plain_$i" "$bin/empty_kernels"
  timed "empty_floor_$i" env "${floor_env[@]}" "$bin/empty_kernels"
  [ "$floor_kind" = "PM sampling" ] &&
    timed "empty_floor_eval_$i" env "${floor_env[@]}" MPROF_PM_EVALUATE=1 "$bin/empty_kernels"
  timed "empty_record_$i" "$mprof" record "${extra[@]}" -o "$out/empty_$i.mprof" -- "$bin/empty_kernels"
  trace "empty_record_$i" "$out/empty_$i.mprof"
done
loop() { for i in $runs; do field "$1_$i" loop_us; done | median; }
each() { for i in $runs; do field "$1_$i" loop_us; done | tr '\n' ' '; }
lp=$(loop empty_plain)
lf=$(loop empty_floor)
lr=$(loop empty_record)
say "loop us (medians of $nruns): plain $lp, floor $lf, record $lr"
say "each run: plain $(each empty_plain)| floor $(each empty_floor)| record $(each empty_record)"
floor_us=$(calc '%.3f' "($lf - $lp) / 20000")
record_us=$(calc '%.3f' "($lr - $lp) / 20000")
say "per launch added: floor $floor_us us, record $record_us us (target <= 1 us)"
figure per_launch_floor_us "$floor_us"
figure per_launch_record_us "$record_us"
if [ "$floor_kind" = "PM sampling" ]; then
  le=$(loop empty_floor_eval)
  say "floor evaluating every PM sample: loop $le us, per launch added $(calc '%.3f' "($le - $lp) / 20000") us; each run: $(each empty_floor_eval)"
fi
else
  figure skipped per_launch
fi

# ---- cuBLAS program: wall time, floor, record, ncu --------------------------
say "== small_kernels: one cuBLAS SGEMM + 200 small kernels (wall seconds)"
for i in $(seq 1 "${COST_RUNS:-5}"); do
  timed "sk_plain_$i" "$bin/small_kernels"
  echo "$T" >>"$out/sk_plain.s"
  timed "sk_floor_$i" env "${floor_env[@]}" "$bin/small_kernels"
  echo "$T" >>"$out/sk_floor.s"
  timed "sk_record_$i" env MPROF_VERBOSE=1 "$mprof" record "${extra[@]}" -o "$out/sk_$i.mprof" -- "$bin/small_kernels"
  echo "$T" >>"$out/sk_record.s"
  trace "sk_record_$i" "$out/sk_$i.mprof"
done
sp=$(median <"$out/sk_plain.s")
sf=$(median <"$out/sk_floor.s")
sr=$(median <"$out/sk_record.s")
timed sk_record_off "$mprof" record "${extra[@]}" --pc-mode off -o "$out/sk_off.mprof" -- "$bin/small_kernels"
soff=$T
trace sk_record_off "$out/sk_off.mprof"
say "plain $sp s, floor $sf s (+$(calc '%.3f' "$sf - $sp")), record $sr s (+$(calc '%.3f' "$sr - $sp")), record --pc-mode off $soff s"
if [ -n "$before" ]; then
  timed sk_before env MPROF_VERBOSE=1 "$before/bin/mprof" record "${extra[@]}" -o "$out/sk_before.mprof" -- "$bin/small_kernels"
  say "before: record $T s (+$(calc '%.3f' "$T - $sp"))"
fi
timed sk_record_now env MPROF_VERBOSE=1 "$mprof" record "${extra[@]}" --sass-now -o "$out/sk_now.mprof" -- "$bin/small_kernels"
snow=$T
trace sk_record_now "$out/sk_now.mprof"
say "record --sass-now (disassembly before record returns): $snow s (+$(calc '%.3f' "$snow - $sp"))"
say "each run (s): plain $(tr '\n' ' ' <"$out/sk_plain.s")| floor $(tr '\n' ' ' <"$out/sk_floor.s")| record $(tr '\n' ' ' <"$out/sk_record.s")"
added_rec=$(calc '%.3f' "$sr - $sp")
added_floor=$(calc '%.3f' "$sf - $sp")
say "record added / floor added = $(calc '%.2f' "($sr - $sp) / (($sf - $sp) > 0 ? ($sf - $sp) : 0.001)") (target <= 1.2)"
figure sk_record_added_s "$added_rec"
figure sk_floor_added_s "$added_floor"
say "record phases (run 1):"
grep -E 'time:' "$out/sk_record_1.log" | tee -a "$report"
say "record --sass-now phases:"
grep -E 'time:' "$out/sk_record_now.log" | tee -a "$report"
timed sk_summary_1 env MPROF_VERBOSE=1 "$mprof" summary "$out/sk_1.mprof"
s1=$T
timed sk_summary_2 env MPROF_VERBOSE=1 "$mprof" summary "$out/sk_1.mprof"
s2=$T
say "first summary (disassembles what record left): $s1 s; second: $s2 s"
say "record + the first summary's extra: +$(calc '%.3f' "$sr - $sp + $s1 - $s2") s (what a user waits before the SASS is there; --sass-now above is the same in one step)"
grep -E 'time:' "$out/sk_summary_1.log" | tee -a "$report"
say "sizes (after the first summary): trace $(stat -c %s "$out/sk_1.mprof" 2>&1) B, sidecar $(stat -c %s "$out/sk_1.mprof.pc.json" 2>&1) B"
coverage sk_sass_missing "$out/sk_1.mprof.pc.json" "$out/sk_now.mprof.pc.json" "$out/sk_before.mprof.pc.json" | tee -a "$report"
if [ "${COST_SKIP_NCU:-0}" = 1 ]; then
  say "ncu: left out (COST_SKIP_NCU=1)"
  figure skipped ncu
elif ! command -v ncu >/dev/null; then
  failed "ncu is not on PATH (\$CUDA_HOME/bin): the ncu target cannot be checked; COST_SKIP_NCU=1 leaves it out"
else
  COST_TIMEOUT=300 timed sk_ncu ncu --section SourceCounters --section WarpStateStats "$bin/small_kernels"
  sn=$T
  added_ncu=$(calc '%.3f' "$sn - $sp")
  say "ncu --section SourceCounters --section WarpStateStats: $sn s (+$added_ncu)"
  say "ncu added / record added = $(calc '%.1f' "$added_ncu / ($added_rec > 0 ? $added_rec : 0.001)")x (target >= 200x); ncu added / floor added = $(calc '%.1f' "$added_ncu / ($added_floor > 0 ? $added_floor : 0.001)")x; record added / floor added = $(calc '%.2f' "$added_rec / ($added_floor > 0 ? $added_floor : 0.001)")"
  figure ncu_added_s "$added_ncu"
fi

# ---- kernel slowdown under PC sampling --------------------------------------
if [ "${COST_SKIP_STEADY:-0}" != 1 ]; then
say "== kernel slowdown: SGEMM 4096^3 + 20 small kernels, ~1.5 s of GPU time (CUDA events)"
timed steady_plain "$bin/small_kernels" --steady 1500
timed steady_floor env "${floor_env[@]}" "$bin/small_kernels" --steady 1500
timed steady_record "$mprof" record "${extra[@]}" -o "$out/steady.mprof" -- "$bin/small_kernels" --steady 1500
trace steady_record "$out/steady.mprof"
gp=$(field steady_plain steady_gpu_ms)
gf=$(field steady_floor steady_gpu_ms)
gr=$(field steady_record steady_gpu_ms)
floor_pct=$(calc '%+.2f' "100 * ($gf / ($gp > 0 ? $gp : 1) - 1)")
record_pct=$(calc '%+.2f' "100 * ($gr / ($gp > 0 ? $gp : 1) - 1)")
say "GPU ms: plain $gp, floor $gf ($floor_pct%), record $gr ($record_pct%) (target <= 1%)"
figure steady_floor_pct "$floor_pct"
figure steady_record_pct "$record_pct"
else
  figure skipped steady
fi

# ---- PyTorch training -------------------------------------------------------
if [ "${COST_SKIP_TORCH:-0}" != 1 ]; then
  say "== PyTorch: 20 bf16 training steps (cuBLAS, cuDNN, flash attention, Triton)"
  export TRITON_CACHE_DIR="$out/triton-cache"
  timed torch_warm python3 "$here/cost/train_step.py"
  tw=$T
  timed torch_plain python3 "$here/cost/train_step.py"
  tp=$T
  timed torch_floor env "${floor_env[@]}" python3 "$here/cost/train_step.py"
  tf=$T
  timed torch_record env MPROF_VERBOSE=1 "$mprof" record "${extra[@]}" -o "$out/torch.mprof" -- python3 "$here/cost/train_step.py"
  tr=$T
  trace torch_record "$out/torch.mprof"
  say "warm-up (Triton compiles) $tw s; plain $tp s; floor $tf s (+$(calc '%.2f' "$tf - $tp")); record $tr s (+$(calc '%.2f' "$tr - $tp"), $(calc '%.1f' "100 * ($tr / $tp - 1)")%) (target <= 10% or <= 2 s)"
  figure torch_plain_s "$tp"
  figure torch_record_s "$tr"
  grep -E 'RESULT|median_step' "$out/torch_plain.log" | tee -a "$report"
  grep -E 'RESULT|median_step' "$out/torch_record.log" | tee -a "$report"
  if [ -n "$before" ]; then
    timed torch_before env MPROF_VERBOSE=1 "$before/bin/mprof" record "${extra[@]}" -o "$out/torch_before.mprof" -- python3 "$here/cost/train_step.py"
    say "before: record $T s (+$(calc '%.2f' "$T - $tp")); trace $(stat -c %s "$out/torch_before.mprof") B, sidecar $(stat -c %s "$out/torch_before.mprof.pc.json") B"
  fi
  say "record phases:"
  grep -E 'time:|wrote|mprof: .*functions|kernels,' "$out/torch_record.log" | tee -a "$report"
  ts0=$(stat -c %s "$out/torch.mprof" 2>/dev/null || echo 0)
  tj0=$(stat -c %s "$out/torch.mprof.pc.json" 2>/dev/null || echo 0)
  timed torch_summary_1 env MPROF_VERBOSE=1 "$mprof" summary "$out/torch.mprof"
  t1=$T
  timed torch_summary_2 env MPROF_VERBOSE=1 "$mprof" summary "$out/torch.mprof"
  t2=$T
  say "first summary (disassembles what record left): $t1 s; second: $t2 s"
  grep -E 'time:' "$out/torch_summary_1.log" | tee -a "$report"
  ts=$(stat -c %s "$out/torch.mprof" 2>/dev/null || echo 0)
  tj=$(stat -c %s "$out/torch.mprof.pc.json" 2>/dev/null || echo 0)
  [ "$tj" -gt 0 ] || failed "torch_record left no sidecar at $out/torch.mprof.pc.json"
  say "sizes right after record: trace $ts0 B + sidecar $tj0 B"
  torch_mb=$(calc '%.2f' "($ts + $tj) / 1e6")
  say "sizes after the first summary: trace $ts B + sidecar $tj B = $torch_mb MB (target <= 20 MB)"
  figure torch_size_mb "$torch_mb"
  "$mprof" info "$out/torch.mprof" >"$out/torch.info.txt" 2>&1 || failed "mprof info of torch.mprof exited $?"
  grep -E 'cubins|sass' "$out/torch.info.txt" | head -n 12 | tee -a "$report"
  coverage torch_sass_missing "$out/torch.mprof.pc.json" "$out/torch_before.mprof.pc.json" | tee -a "$report"
else
  figure skipped torch
fi
# ---- PyTorch in-loop step time: what a user sees in their it/s --------------
# The loop's steady step time (train_step.py's median_step_ms: Python and
# CUDA start-up and the first steps left out), medians of COST_LOOP_RUNS
# interleaved runs of each variant: plain; the floor and record with the
# same settings; record with a capture window that never opens (the cost
# outside a window). What record's share is made of comes from its own
# accounting (MPROF_VERBOSE=1: activity buffers, PC drains, API calls).
if [ "${COST_SKIP_LOOP:-0}" != 1 ]; then
  lruns=${COST_LOOP_RUNS:-5}
  lsteps=${COST_LOOP_STEPS:-40}
  say "== PyTorch in-loop step time: $lsteps steps, medians of $lruns interleaved runs"
  export TRITON_CACHE_DIR="$out/triton-cache"
  ts=("$here/cost/train_step.py" --steps "$lsteps" --nvtx)
  timed loop_warm python3 "${ts[@]}"
  for i in $(seq 1 "$lruns"); do
    timed "loop_plain_$i" python3 "${ts[@]}"
    timed "loop_floor_$i" env "${floor_env[@]}" python3 "${ts[@]}"
    timed "loop_record_$i" env MPROF_VERBOSE=1 "$mprof" record "${extra[@]}" -q -o "$out/loop_$i.mprof" -- python3 "${ts[@]}"
    trace "loop_record_$i" "$out/loop_$i.mprof"
    timed "loop_outside_$i" "$mprof" record "${extra[@]}" -q -o "$out/loop_outside_$i.mprof" \
      --capture-range nvtx:step --range-skip 1000000 -- python3 "${ts[@]}"
  done
  lmed() { for i in $(seq 1 "$lruns"); do field "loop_$1_$i" median_step_ms; done | median; }
  leach() { for i in $(seq 1 "$lruns"); do field "loop_$1_$i" median_step_ms; done | tr '\n' ' '; }
  # each run's spread of steady steps (10th-90th percentile)
  lspread() {
    for i in $(seq 1 "$lruns"); do
      echo "$(field "loop_$1_$i" p10_step_ms)-$(field "loop_$1_$i" p90_step_ms)"
    done | tr '\n' ' '
  }
  for v in plain floor record outside; do
    say "  $v: median step $(lmed "$v") ms (each run: $(leach "$v"); p10-p90: $(lspread "$v"))"
  done
  lp=$(lmed plain)
  lf=$(lmed floor)
  lr=$(lmed record)
  lo=$(lmed outside)
  pct() { calc '%.2f' "100 * ($1 - $lp) / $lp"; }
  say "in-loop step time added: floor $(pct "$lf")%, record $(pct "$lr")% (target: record <= 1.2x the floor's)"
  say "outside a window (one that never opens): $(pct "$lo")% (target <= 1%)"
  say "record's own time (run 1, MPROF_VERBOSE=1):"
  grep -E 'time:' "$out/loop_record_1.log" | tee -a "$report"
  figure loop_plain_ms "$lp"
  figure loop_floor_ms "$lf"
  figure loop_record_ms "$lr"
  figure loop_outside_ms "$lo"
else
  figure skipped loop
fi

# ---- post-processing phases on the traces just recorded ---------------------
if [ -x "$build/bin/bench_postprocess" ]; then
  say "== record's post-processing phases, nvdisasm included (bench_postprocess)"
  traces=("$out/sk_1.mprof")
  [ -e "$out/torch.mprof" ] && traces+=("$out/torch.mprof")
  "$build/bin/bench_postprocess" "${traces[@]}" 2>&1 | tee -a "$report"
fi

# ---- the targets ------------------------------------------------------------
if [ -s "$out/missing" ]; then
  while read -r line; do failed "$line"; done < <(sort -u "$out/missing")
fi
say "== targets (tests/gpu/check_cost.py $figures)"
python3 "$here/check_cost.py" "$figures" 2>&1 | tee -a "$report"
[ "${PIPESTATUS[0]}" -eq 0 ] || failures=$((failures + 1))
say "== done: $failures failure(s)"
[ "$failures" -eq 0 ]
