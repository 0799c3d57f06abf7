#!/bin/bash
# mprof's verdicts on planted bottlenecks: build tests/gpu/bottlenecks.cu,
# record it, and score every kernel's headline verdict against the expected
# one (tests/gpu/score_verdicts.py holds the table); when PyTorch is there,
# also record a bf16 training step and check that its library kernels get no
# register advice. Skips (exit 0) without a GPU. Exit 1 on a wrong verdict.
#
# Usage: tests/gpu/verdicts.sh OUTDIR [BUILD_DIR] [-- RECORD_OPTIONS...]
#   BUILD_DIR       a CMake build of mprof with the CUPTI producer
#                   (default: build)
#   RECORD_OPTIONS  extra `mprof record` options
# Environment: VERDICTS_PM=0 skips the second, PM-sampled run and the set
#   score; VERDICTS_TORCH=0 skips the PyTorch check.
#
# docs/validation/H200.md records what it printed on the project's H200.
set -uo pipefail
out=${1:?usage: verdicts.sh OUTDIR [BUILD_DIR] [-- RECORD_OPTIONS...]}
shift
build=build
if [ $# -gt 0 ] && [ "$1" != "--" ]; then build=$1; shift; fi
[ "${1:-}" = "--" ] && shift
mkdir -p "$out"
out=$(cd "$out" && pwd)
build=$(cd "$build" && pwd)
src=$(cd "$(dirname "$0")/../.." && pwd)

if ! nvidia-smi -L >/dev/null 2>&1; then
  echo "verdicts: no GPU here (nvidia-smi -L failed); skipping the GPU checks"
  exit 0
fi
mprof="$build/bin/mprof"
if [ ! -x "$mprof" ] || [ ! -e "$build/lib/libmprof-cupti.so" ]; then
  echo "verdicts: $mprof or its CUPTI producer is missing; build with the CUDA toolkit present" >&2
  exit 2
fi
nvcc=${NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
bin="$out/bottlenecks"
if [ ! -x "$bin" ]; then
  "$nvcc" -O3 -arch=sm_90 -lineinfo "$src/tests/gpu/bottlenecks.cu" -lcublas \
    -o "$bin" || { echo "verdicts: building bottlenecks.cu failed" >&2; exit 2; }
fi

failures=0
"$bin" >"$out/bottlenecks.plain.txt" 2>&1
"$mprof" record --drop-code "$@" -o "$out/bottlenecks.mprof" -- "$bin" \
  >"$out/bottlenecks.record.txt" 2>"$out/bottlenecks.record.err"
cat "$out/bottlenecks.record.err"
"$mprof" summary --json --all "$out/bottlenecks.mprof" >"$out/bottlenecks.summary.json" &&
  "$mprof" summary --human --color=never --all "$out/bottlenecks.mprof" >"$out/bottlenecks.summary.txt" ||
  { echo "verdicts: summary failed" >&2; exit 1; }
python3 "$src/tests/gpu/score_verdicts.py" "$out/bottlenecks.summary.json" |
  tee "$out/bottlenecks.score.txt"
[ "${PIPESTATUS[0]}" -eq 0 ] || failures=$((failures + 1))

# PM sampling cannot run beside PC sampling (docs/validation/H200.md): a
# second run of the same program with --pm on, opened with the first as one
# set, gives the summary both the stall reasons and the measured throughput.
if [ "${VERDICTS_PM:-1}" != 0 ]; then
  "$mprof" record --drop-code --pm on "$@" -o "$out/bottlenecks_pm.mprof" -- "$bin" \
    >"$out/bottlenecks_pm.record.txt" 2>"$out/bottlenecks_pm.record.err"
  cat "$out/bottlenecks_pm.record.err"
  "$mprof" summary --json --all "$out/bottlenecks.mprof" "$out/bottlenecks_pm.mprof" \
    >"$out/bottlenecks_set.summary.json" &&
    "$mprof" summary --human --color=never --all "$out/bottlenecks.mprof" \
      "$out/bottlenecks_pm.mprof" >"$out/bottlenecks_set.summary.txt" ||
    { echo "verdicts: summary of the PC + PM set failed" >&2; exit 1; }
  echo "== PC-sampled run + PM-sampled run, opened as one set"
  python3 "$src/tests/gpu/score_verdicts.py" "$out/bottlenecks_set.summary.json" |
    tee "$out/bottlenecks_set.score.txt"
  [ "${PIPESTATUS[0]}" -eq 0 ] || failures=$((failures + 1))
fi

if [ "${VERDICTS_TORCH:-1}" != 0 ] &&
  python3 -c 'import torch; assert torch.cuda.is_available()' 2>/dev/null; then
  "$mprof" record --drop-code "$@" -o "$out/torch_step.mprof" -- \
    python3 "$src/tests/gpu/torch_step.py" 10 >"$out/torch_step.record.txt" \
    2>"$out/torch_step.record.err"
  "$mprof" summary --json --all "$out/torch_step.mprof" >"$out/torch_step.summary.json" &&
    python3 "$src/tests/gpu/score_verdicts.py" --library "$out/torch_step.summary.json" |
    tee "$out/torch_step.score.txt"
  [ "${PIPESTATUS[0]}" -eq 0 ] || failures=$((failures + 1))
else
  echo "verdicts: no PyTorch with CUDA here; the library check is skipped"
fi
[ "$failures" -eq 0 ]
