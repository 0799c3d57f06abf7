#!/bin/bash
# Record the planted-bottleneck suite (tests/gpu/bottlenecks.cu) as the
# sample pair samples/bottlenecks.mprof + samples/bottlenecks.pm.mprof:
# `mprof record --pm both`, the suite's twelve kernels only (--kernel; the
# cuBLAS GEMM's SASS would make the sidecars megabytes), code dropped once
# its SASS is in the sidecars. Prints the scores of the PC run alone and of
# the pair as a set. Skips (exit 77) without a GPU.
#
# Usage: tests/gpu/bottlenecks_sample.sh OUTDIR [BUILD_DIR]
set -uo pipefail
out=${1:?usage: bottlenecks_sample.sh OUTDIR [BUILD_DIR]}
. "$(dirname "$0")/lib.sh"
gpu_setup bottlenecks_sample "$out" "${2:-build}"
build_bottlenecks bottlenecks_sample
suite='pointer_chase|dram_stream|l2_stream|fma_chain_one_warp|fma_independent|bank_conflicts|barrier_heavy|hot_atomics|icache_thrash|smem_limited|one_block_tail|tiny_kernel'
cd "$out" || exit 2
"$mprof" record --drop-code --pm both --kernel "$suite" -o bottlenecks.mprof \
  -- ./bottlenecks || exit 1
"$mprof" summary --json --all bottlenecks.mprof >pc.json &&
  "$mprof" summary --json --all bottlenecks.mprof bottlenecks.pm.mprof >set.json || exit 1
status=0
python3 "$src/tests/gpu/score_verdicts.py" pc.json || status=1
python3 "$src/tests/gpu/score_verdicts.py" --pm set.json || status=1
exit "$status"
