#!/bin/bash
# mprof's PM-sampled speed of light against Nsight Compute's SpeedOfLight
# section, on the planted-bottleneck suite (tests/gpu/bottlenecks.cu) and a
# cuBLAS bf16 GEMM (its cublas_gemm_bf16 case): `mprof record --pm on
# --pm-counters sol` (ncu's speed of light but the L2's sectors, which
# CUPTI evaluates wrong beside TriageCompute counters) and a plain `--pm
# on` (the default counters, L2 sectors among them), then `ncu --section
# SpeedOfLight` with ncu's own reading of the quantities mprof shows beside
# it (L2 sectors, issue, tensor pipe, SMs active) on one launch of each
# kernel of the same binary (clocks not locked, as mprof runs them; its
# breakdown tables in OUTDIR/ncu_K.details.txt), and tests/gpu/score_sol.py
# sets each number beside ncu's, within 5 points, from `mprof summary` of
# the two runs as one set (each counter from the run that read it in
# scale). The default run alone is listed beside ncu in
# OUTDIR/sol_ncu_default.md, not scored. Skips (exit 77) without a GPU
# or ncu.
#
# Usage: tests/gpu/sol_ncu.sh OUTDIR [BUILD_DIR]
# Environment: NCU (default: ncu on PATH, else /usr/local/cuda/bin/ncu);
#   SOL_KERNELS (default: the suite's kernels, cublas_gemm_bf16 last);
#   SOL_COUNTERS (default: sol): the --pm-counters of the scored run, to
#   check another set of counters against ncu.
# Writes OUTDIR/sol_ncu.md (the table, for docs/validation/), and before
# recording prints which of the candidate metrics PM sampling offers on
# this chip (ncu --query-metrics-collection pmsampling).
set -uo pipefail
out=${1:?usage: sol_ncu.sh OUTDIR [BUILD_DIR]}
. "$(dirname "$0")/lib.sh"
gpu_setup sol_ncu "$out" "${2:-build}"
need_ncu sol_ncu
build_bottlenecks sol_ncu
read -r -a kernels <<<"${SOL_KERNELS:-pointer_chase dram_stream l2_stream fma_chain_one_warp fma_independent bank_conflicts barrier_heavy hot_atomics icache_thrash smem_limited one_block_tail cublas_gemm_bf16}"
suffix=avg.pct_of_peak_sustained_elapsed
# ncu's own reading of the quantities mprof shows that SpeedOfLight does
# not (score_sol.py sets each beside the same metric)
ncu_metrics=lts__t_sectors.$suffix,sm__inst_executed.$suffix,sm__pipe_tensor_cycles_active.$suffix,sm__cycles_active.$suffix

echo "== PM-sampling metrics this chip offers among the candidates"
"$ncu" --query-metrics-collection pmsampling --chip gh100 >"$out/pm_metrics_all.txt" 2>&1
grep -E "lts__throughput|lts__t_sectors|l1tex__throughput|sm__throughput|sm__cycles_active" \
  "$out/pm_metrics_all.txt" | head -n 20 | tee "$out/pm_metrics.txt"

# pm_run K TAG ARGS...: `mprof record --pm on ARGS` of kernel K alone into
# OUTDIR/sol_K[TAG].mprof, its summary as .json and its META as .info.txt;
# 1 when the recording failed, 2 when its summary did (no .json then).
pm_run() {
  local k=$1 base="$out/sol_$1$2"
  shift 2
  rm -f "$base.mprof" "$base.json"
  "$mprof" record --pm on --pc-mode off --drop-code "$@" -o "$base.mprof" \
    -- "$bin" "$k" >"$base.record.txt" 2>&1 || return 1
  "$mprof" summary --json --all "$base.mprof" >"$base.json" 2>>"$base.record.txt" ||
    { rm -f "$base.json"; return 2; }
  "$mprof" info "$base.mprof" >"$base.info.txt" 2>&1
  return 0
}

failures=0
cases=()
defaults=()
for k in "${kernels[@]}"; do
  rm -f "$out/ncu_$k.ncu-rep" "$out/ncu_$k.csv"
  # mprof: PM-sampled with the speed-of-light counters
  pm_run "$k" "" --pm-counters "${SOL_COUNTERS:-sol}"
  case $? in
  1)
    echo "FAIL  mprof record of $k: $(tail -n 3 "$out/sol_$k.record.txt")" >&2
    failures=$((failures + 1))
    continue
    ;;
  2)
    echo "FAIL  mprof summary of $k: $(tail -n 3 "$out/sol_$k.record.txt")" >&2
    failures=$((failures + 1))
    continue
    ;;
  esac
  summaries="$out/sol_$k.json"
  # and with the default counters, what a plain `--pm on` shows (listed
  # beside ncu in OUTDIR/sol_ncu_default.md, not scored)
  pm_run "$k" .default --no-sass
  # ncu: one launch of it (the GEMM's: the first launch of a cuBLAS kernel)
  filter=(-k "regex:^$k\$")
  name=$k
  if [ "$k" = cublas_gemm_bf16 ]; then
    filter=(-k "regex:nvjet|gemm|xmma|cutlass")
    name=dominant
  fi
  if ! "$ncu" --section SpeedOfLight --metrics "$ncu_metrics" --clock-control none "${filter[@]}" -c 1 -f \
    -o "$out/ncu_$k" "$bin" "$k" >"$out/ncu_$k.txt" 2>&1 ||
    ! "$ncu" --import "$out/ncu_$k.ncu-rep" --csv --page details >"$out/ncu_$k.csv" 2>>"$out/ncu_$k.txt"; then
    echo "FAIL  ncu on $k: $(tail -n 3 "$out/ncu_$k.txt")" >&2
    failures=$((failures + 1))
    continue
  fi
  # the breakdown behind ncu's compute and memory throughput, to read
  "$ncu" --import "$out/ncu_$k.ncu-rep" --print-details all >"$out/ncu_$k.details.txt" 2>&1
  if [ -s "$out/sol_$k.default.json" ]; then
    # the two runs as one set, as a user summarises them
    if "$mprof" summary --json --all "$out/sol_$k.mprof" "$out/sol_$k.default.mprof" \
      >"$out/sol_$k.pair.json" 2>>"$out/sol_$k.record.txt"; then
      summaries="$out/sol_$k.pair.json"
    else
      echo "FAIL  mprof summary of $k's two runs: $(tail -n 3 "$out/sol_$k.record.txt")" >&2
      failures=$((failures + 1))
    fi
    defaults+=("$name=$out/ncu_$k.csv=$out/sol_$k.default.json")
  fi
  cases+=("$name=$out/ncu_$k.csv=$summaries")
done
[ ${#cases[@]} -gt 0 ] || { echo "FAIL  nothing to compare" >&2; exit 1; }
python3 "$src/tests/gpu/score_sol.py" --markdown "$out/sol_ncu.md" "${cases[@]}" ||
  failures=$((failures + 1))
if [ ${#defaults[@]} -gt 0 ]; then
  echo "== the default counters (not scored)"
  python3 "$src/tests/gpu/score_sol.py" --markdown "$out/sol_ncu_default.md" \
    --quantities dram,l2_sectors,sm,issue,tensor --report "${defaults[@]}"
fi
echo "sol_ncu: $failures failed steps or checks"
[ "$failures" -eq 0 ]
