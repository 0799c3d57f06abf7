#!/bin/bash
# Per-line analysis on the GPU: build tests/gpu/bottlenecks.cu with
# -lineinfo from a copy of its source, record it, and check that each
# planted kernel's hottest line (`mprof summary --by-line`) is the line
# marked `@hot KERNEL` in the source, or a header's line inlined at it
# (atomicAdd in hot_atomics) (tests/gpu/check_lines.py); then move
# the source away, copy the trace alone to another folder, and check that
# the trace still shows those lines' code (embedded by record); and that
# Thrust and CUB code (tests/gpu/thrust_cub.cu) maps to their header lines
# (check_lines.py --headers), its Source tab drawn; and that a Triton
# kernel (tests/gpu/triton_lines.py) maps to its Python line, where Python
# has Triton. Skips (exit 77)
# without a GPU; exit 1 on a wrong line or missing code.
#
# Usage: tests/gpu/source_lines.sh OUTDIR [BUILD_DIR]
# tests/gpu/selftest.sh source_lines checks the checker on the committed
# nvcc fixture (a good summary passes, and so does a header's line whose
# inline chain reaches the planted line; a wrong line, a chain that does
# not reach it, or code not embedded fails).
set -uo pipefail
out=${1:?usage: source_lines.sh OUTDIR [BUILD_DIR]}
build=${2:-build}
. "$(dirname "$0")/lib.sh"
gpu_setup source_lines "$out" "$build"
check="$src/tests/gpu/check_lines.py"
failures=0
rm -rf "$out/src" "$out/src.away" "$out/alone" "$out/lines.mprof"* "$out/lines"*.json
# The source beside the header it includes (../../producers/...), as in
# the checkout; the folder is moved away below.
mkdir -p "$out/src/tests/gpu" "$out/src/producers/cuda/examples" "$out/alone"
cp "$src/tests/gpu/bottlenecks.cu" "$out/src/tests/gpu/" &&
  cp "$src/producers/cuda/examples/example_common.h" "$out/src/producers/cuda/examples/" || exit 2
nvcc=${NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
"$nvcc" -O3 -arch=sm_90 -lineinfo "$out/src/tests/gpu/bottlenecks.cu" -lcublas \
  -o "$out/bottlenecks-lines" || { echo "source_lines: building bottlenecks.cu failed" >&2; exit 2; }
if ! "$mprof" record -o "$out/lines.mprof" -- "$out/bottlenecks-lines" >"$out/record.log" 2>&1; then
  echo "FAIL  record exited non-zero: $(tail -n 3 "$out/record.log")" >&2
  exit 1
fi
[ -s "$out/lines.mprof" ] || { echo "FAIL  record wrote no trace" >&2; exit 1; }
if ! "$mprof" summary "$out/lines.mprof" --by-line --all --json >"$out/lines.json"; then
  echo "FAIL  summary --by-line exited non-zero" >&2
  exit 1
fi
python3 "$check" "$out/lines.json" "$out/src/tests/gpu/bottlenecks.cu" || failures=$((failures + 1))
# The trace alone, its sources gone: the code must come from the trace.
mv "$out/src" "$out/src.away"
cp "$out/lines.mprof" "$out/alone/"
if "$mprof" summary "$out/alone/lines.mprof" --by-line --all --json >"$out/lines-alone.json"; then
  python3 "$check" --embedded "$out/lines-alone.json" "$out/src.away/tests/gpu/bottlenecks.cu" ||
    failures=$((failures + 1))
else
  echo "FAIL  summary --by-line of the trace alone exited non-zero" >&2
  failures=$((failures + 1))
fi
mv "$out/src.away" "$out/src"
# Template code: Thrust and CUB (tests/gpu/thrust_cub.cu, -lineinfo) map to
# CUB's and Thrust's header lines, embedded; the Source tab of that kernel
# draws them.
# lines_of DIR NAME CMD...: record CMD into DIR/NAME.mprof and its
# `summary --by-line --all --json` into DIR/lines.json; a FAIL line and
# status 1 when either fails.
lines_of() {
  local dir=$1 name=$2
  shift 2
  if ! "$mprof" record -o "$dir/$name.mprof" -- "$@" >"$dir/record.log" 2>&1; then
    echo "FAIL  record of $name exited non-zero: $(tail -n 3 "$dir/record.log")" >&2
    return 1
  fi
  "$mprof" summary "$dir/$name.mprof" --by-line --all --json >"$dir/lines.json" ||
    { echo "FAIL  summary --by-line of $name exited non-zero" >&2; return 1; }
}
rm -rf "$out/templates" && mkdir -p "$out/templates"
if ! "$nvcc" -O3 -arch=sm_90 -lineinfo --extended-lambda "$src/tests/gpu/thrust_cub.cu" \
  -o "$out/templates/thrust_cub"; then
  echo "FAIL  building thrust_cub.cu failed" >&2
  failures=$((failures + 1))
elif ! lines_of "$out/templates" thrust_cub "$out/templates/thrust_cub"; then
  failures=$((failures + 1))
else
  python3 "$check" --headers '/(cub|thrust)/' "$out/templates/lines.json" | tee "$out/templates/check.txt"
  [ "${PIPESTATUS[0]}" -eq 0 ] || failures=$((failures + 1))
  kernel=$(sed -n 's/^ok    \([^:]*\): .*/\1/p' "$out/templates/check.txt" | head -1)
  if [ -n "$kernel" ] && ! "$mprof" view "$out/templates/thrust_cub.mprof" --tab source --kernel "$kernel" \
    --render "$out/templates/source.png"; then
    echo "FAIL  view --tab source of $kernel exited non-zero" >&2
    failures=$((failures + 1))
  fi
fi
# Triton: a kernel written in Python maps to its Python lines, embedded
# (tests/gpu/triton_lines.py marks the hot one), where Python has Triton.
py=${PYTHON:-python3}
if "$py" -c 'import torch, triton; assert torch.cuda.is_available()' >/dev/null 2>&1; then
  rm -rf "$out/triton" && mkdir -p "$out/triton"
  cp "$src/tests/gpu/triton_lines.py" "$out/triton/" || exit 2
  if lines_of "$out/triton" triton_lines "$py" "$out/triton/triton_lines.py"; then
    python3 "$check" --embedded "$out/triton/lines.json" "$out/triton/triton_lines.py" ||
      failures=$((failures + 1))
  else
    failures=$((failures + 1))
  fi
else
  echo "SKIP  Triton lines: $py has no torch with CUDA and triton"
fi
[ "$failures" -eq 0 ] || { echo "source_lines: $failures check(s) failed" >&2; exit 1; }
echo "source_lines: every planted line is its kernel's hottest, and the trace alone shows its code"
