#!/bin/bash
# mprof's per-line sample shares against Nsight Compute's Source page: for
# each kernel of the planted suite (tests/gpu/bottlenecks.cu, built with
# -lineinfo), `mprof record` of the kernel alone, `mprof summary --by-line
# --all --json`, and `ncu --section SourceCounters --page source
# --print-source sass --csv` on one launch of the same binary (ncu's
# command line prints no metrics beside CUDA lines, so its instructions are
# grouped by line with the code's line table, from the trace's sidecar);
# then tests/gpu/score_lines.py sets each line's share of the kernel's warp
# samples beside ncu's and takes the total-variation distance (half the
# sum of the absolute differences): at most 0.03 per kernel. Skips (exit
# 77) without a GPU or without ncu.
#
# Usage: tests/gpu/lines_ncu.sh OUTDIR [BUILD_DIR]
# Environment: NCU (default: ncu on PATH, else /usr/local/cuda/bin/ncu);
#   LINES_KERNELS (default: pointer_chase dram_stream l2_stream barrier_heavy
#   bank_conflicts); LINES_TVD (default 0.03).
# Writes OUTDIR/lines_ncu.md (the table, for docs/validation/) and keeps
# ncu's CSV of each kernel (ncu_K.csv) beside mprof's summary (lines_K.json).
set -uo pipefail
out=${1:?usage: lines_ncu.sh OUTDIR [BUILD_DIR]}
. "$(dirname "$0")/lib.sh"
gpu_setup lines_ncu "$out" "${2:-build}"
need_ncu lines_ncu
build_bottlenecks lines_ncu
read -r -a kernels <<<"${LINES_KERNELS:-pointer_chase dram_stream l2_stream barrier_heavy bank_conflicts}"
failures=0
cases=()
for k in "${kernels[@]}"; do
  rm -f "$out/lines_$k.mprof"* "$out/lines_$k.json" "$out/ncu_$k.csv"
  if ! "$mprof" record -q -o "$out/lines_$k.mprof" -- "$bin" "$k" >"$out/lines_$k.record.txt" 2>&1 ||
    ! "$mprof" summary --by-line --all --json "$out/lines_$k.mprof" >"$out/lines_$k.json"; then
    echo "FAIL  mprof record or summary of $k: $(tail -n 3 "$out/lines_$k.record.txt")" >&2
    failures=$((failures + 1))
    continue
  fi
  if ! timeout 300 "$ncu" --clock-control none --section SourceCounters --page source \
    --print-source sass --csv -k "regex:^$k\$" -c 1 "$bin" "$k" \
    >"$out/ncu_$k.csv" 2>"$out/ncu_$k.err"; then
    echo "FAIL  ncu on $k: $(tail -n 3 "$out/ncu_$k.err")" >&2
    failures=$((failures + 1))
    continue
  fi
  cases+=("$k=$out/ncu_$k.csv=$out/lines_$k.json=$out/lines_$k.mprof.pc.json")
done
[ ${#cases[@]} -gt 0 ] || { echo "FAIL  nothing to compare" >&2; exit 1; }
python3 "$src/tests/gpu/score_lines.py" --tvd "${LINES_TVD:-0.03}" \
  --markdown "$out/lines_ncu.md" "${cases[@]}" || failures=$((failures + 1))
echo "lines_ncu: $failures failed steps or checks"
[ "$failures" -eq 0 ]
