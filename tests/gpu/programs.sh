#!/bin/bash
# mprof on programs written the way users write them, not the way our
# examples are: tests/gpu/thrust_cub.cu (Thrust and CUB sorts, scans,
# reductions, histograms: library kernels nobody here wrote) and
# tests/gpu/edges.cu (cooperative launch, thread-block clusters, dynamic
# parallelism, managed memory, cudaMallocAsync, an NVRTC kernel). Each is
# built, run alone and under `mprof record`, and checked: the same output
# and exit status both ways, and tests/gpu/check_program.py on the trace
# (launch counts and cluster shapes as the program states them, demangled
# names, SASS behind every hot kernel, no register advice on library
# kernels). Skips (exit 77) without a GPU; exit 1 when a check fails.
#
# Every step's exit status counts (build, the program alone, record,
# summary, the check), and the trace, its sidecar and the summaries are
# removed before recording, so a recorder that writes nothing is never
# checked on an earlier run's trace. tests/gpu/selftest.sh programs runs
# this on stand-ins that write nothing, drop launches, lose the PC samples
# or crash, and expects it to fail.
#
# Usage: tests/gpu/programs.sh OUTDIR [BUILD_DIR]
#   BUILD_DIR  a CMake build of mprof with the CUPTI producer (default: build)
# Environment: NVCC (default: nvcc on PATH, else /usr/local/cuda/bin/nvcc);
#   PROGRAMS="thrust_cub edges" picks the programs. OUTDIR/NAME/NAME, when
#   already there, is used as the program NAME.
#
# docs/validation/ records what it printed on the project's GPUs.
set -uo pipefail
out=${1:?usage: programs.sh OUTDIR [BUILD_DIR]}
. "$(dirname "$0")/lib.sh"
gpu_setup programs "$out" "${2:-build}"
nvcc=${NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
arch=(-O3 -arch=sm_90 -lineinfo)

failures=0
# check NAME CHECK_OPTIONS... -- NVCC_OPTIONS...: build, run, record, check
check() {
  local name=$1 dir="$out/$1" opts=() s e f
  shift
  while [ "$1" != "--" ]; do opts+=("$1"); shift; done
  shift
  mkdir -p "$dir"
  local bin="$dir/$name"
  if [ ! -x "$bin" ]; then
    "$nvcc" "${arch[@]}" "$src/tests/gpu/$name.cu" "$@" -o "$bin" ||
      { echo "FAIL  programs: building $name.cu failed" >&2; failures=$((failures + 1)); return; }
  fi
  echo "== $name"
  rm -f "$dir/$name.mprof" "$dir/$name.mprof.pc.json" "$dir"/summary.* "$dir/check.txt" ||
    { failures=$((failures + 1)); return; }
  s=$(date +%s%N)
  "$bin" >"$dir/plain.txt" 2>&1
  local plain_rc=$?
  e=$(date +%s%N)
  "$mprof" record -o "$dir/$name.mprof" -- "$bin" >"$dir/recorded.txt" \
    2>"$dir/record.err"
  local rec_rc=$?
  f=$(date +%s%N)
  cat "$dir/record.err"
  printf '%s: plain %d ms (exit %d), under mprof record %d ms (exit %d)\n' \
    "$name" $(((e - s) / 1000000)) "$plain_rc" $(((f - e) / 1000000)) \
    "$rec_rc" | tee "$dir/times.txt"
  if [ "$plain_rc" -ne 0 ] || [ "$rec_rc" -ne 0 ]; then
    echo "FAIL  programs: $name exited $plain_rc alone, $rec_rc under mprof" >&2
    failures=$((failures + 1))
  fi
  if ! diff "$dir/plain.txt" "$dir/recorded.txt" >"$dir/output.diff"; then
    echo "FAIL  programs: $name printed other results under mprof:" >&2
    cat "$dir/output.diff" >&2
    failures=$((failures + 1))
  fi
  if "$mprof" summary --json --all "$dir/$name.mprof" >"$dir/summary.json" &&
    "$mprof" summary --human --color=never "$dir/$name.mprof" >"$dir/summary.txt"; then
    python3 "$src/tests/gpu/check_program.py" "$dir/summary.json" \
      "$dir/recorded.txt" "${opts[@]}" | tee "$dir/check.txt"
    [ "${PIPESTATUS[0]}" -eq 0 ] || failures=$((failures + 1))
  else
    echo "FAIL  programs: mprof summary of $name failed" >&2
    failures=$((failures + 1))
  fi
}

for p in ${PROGRAMS:-thrust_cub edges}; do
  case $p in
  thrust_cub) check thrust_cub --thrust-cub 8 -- --extended-lambda ;;
  edges) check edges -- -rdc=true -lcudadevrt -lnvrtc -lcuda ;;
  *) echo "programs: no program '$p' (thrust_cub, edges)" >&2; exit 2 ;;
  esac
done
[ "$failures" -eq 0 ]
