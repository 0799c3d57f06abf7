#!/bin/bash
# mprof on library kernels nobody in the project wrote: build
# tests/gpu/thrust_cub.cu (Thrust and CUB sorts, scans, reductions,
# histograms), run it alone and under `mprof record`, and check that the
# program prints the same results and exit status both ways, that the trace
# names the library kernels demangled, counts the program's own launches
# exactly, has SASS behind every hot kernel and gives library kernels no
# register advice (tests/gpu/check_libraries.py). Skips (exit 0) without a
# GPU; exit 1 when a check fails.
#
# Usage: tests/gpu/libraries.sh OUTDIR [BUILD_DIR]
#   BUILD_DIR  a CMake build of mprof with the CUPTI producer (default: build)
# Environment: NVCC (default: nvcc on PATH, else /usr/local/cuda/bin/nvcc).
# OUTDIR/thrust_cub, when already there, is used as the program.
#
# docs/validation/H200.md records what it printed on the project's GPU.
set -uo pipefail
out=${1:?usage: libraries.sh OUTDIR [BUILD_DIR]}
. "$(dirname "$0")/lib.sh"
gpu_setup libraries "$out" "${2:-build}"

bin="$out/thrust_cub"
if [ ! -x "$bin" ]; then
  nvcc=${NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
  "$nvcc" -O3 -arch=sm_90 -lineinfo --extended-lambda \
    "$src/tests/gpu/thrust_cub.cu" -o "$bin" ||
    { echo "libraries: building thrust_cub.cu failed" >&2; exit 2; }
fi

failures=0
s=$(date +%s%N)
"$bin" >"$out/plain.txt" 2>&1
plain_rc=$?
e=$(date +%s%N)
"$mprof" record -o "$out/thrust_cub.mprof" -- "$bin" >"$out/recorded.txt" \
  2>"$out/record.err"
rec_rc=$?
f=$(date +%s%N)
cat "$out/record.err"
printf 'plain %d ms (exit %d), under mprof record %d ms (exit %d)\n' \
  $(((e - s) / 1000000)) "$plain_rc" $(((f - e) / 1000000)) "$rec_rc" |
  tee "$out/times.txt"
if [ "$plain_rc" -ne 0 ] || [ "$rec_rc" -ne 0 ]; then
  echo "libraries: exit status $plain_rc alone, $rec_rc under mprof" >&2
  failures=$((failures + 1))
fi
if ! diff "$out/plain.txt" "$out/recorded.txt" >"$out/output.diff"; then
  echo "libraries: the program printed other results under mprof:" >&2
  cat "$out/output.diff" >&2
  failures=$((failures + 1))
fi
if "$mprof" summary --json --all "$out/thrust_cub.mprof" >"$out/summary.json" &&
  "$mprof" summary --human --color=never "$out/thrust_cub.mprof" >"$out/summary.txt"; then
  python3 "$src/tests/gpu/check_libraries.py" "$out/summary.json" \
    "$out/recorded.txt" | tee "$out/libraries.txt"
  [ "${PIPESTATUS[0]}" -eq 0 ] || failures=$((failures + 1))
else
  echo "libraries: mprof summary failed" >&2
  failures=$((failures + 1))
fi
[ "$failures" -eq 0 ]
