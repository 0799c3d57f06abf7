#!/bin/bash
# `mprof record` of a program whose workers start CUDA and do nothing on
# the GPU (tests/gpu/empty_child.cu: one makes a context, one counts the
# devices, as torch.compile's workers do): under the real producer their
# traces hold no kernel, copy or memset, so record removes them and names
# each in one line; the program's own trace stays with its launch, under
# the name asked for (the idle worker, which started CUDA first, had
# taken it, and the program wrote NAME.PID). A
# worker recorded alone keeps its trace, which the account calls empty.
# (Record's rule itself is tested without a GPU: cli_record_processes.)
#
# Usage: tests/gpu/empty_child.sh OUTDIR [BUILD_DIR]
#   BUILD_DIR  a CMake build of mprof with the CUPTI producer (default: build)
# Writes OUTDIR/report.txt. Skips (exit 77) without a GPU; exit 1 when a
# check fails, 2 when something is missing.
set -uo pipefail
out=${1:?usage: empty_child.sh OUTDIR [BUILD_DIR]}
. "$(dirname "$0")/lib.sh"
gpu_setup empty_child "$out" "${2:-build}"
report="$out/report.txt"
: >"$report" || exit 2
say() { echo "$*" | tee -a "$report"; }
failures=0
check() { # check TEXT RESULT(0 ok)
  if [ "$2" -eq 0 ]; then say "ok    $1"; else
    say "FAIL  $1"
    failures=$((failures + 1))
  fi
}

nvcc=${NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
"$nvcc" -O2 -arch=sm_90 "$src/tests/gpu/empty_child.cu" -o "$out/empty_child" ||
  { echo "empty_child: building empty_child.cu failed" >&2; exit 2; }
rm -rf "$out/run" "$out/alone" && mkdir -p "$out/run" "$out/alone" || exit 2

"$mprof" record -o "$out/run/trace.mprof" -- "$out/empty_child" >"$out/run.log" 2>&1
check "record of the program exits 0 ($?)" $?
cat "$out/run.log"
grep -q "EMPTY_CHILD workers=2 launches=1" "$out/run.log"
check "the program ran its two workers and its launch" $?
grep -q "^mprof record: 3 processes recorded" "$out/run.log"
check "record saw 3 processes" $?
[ "$(grep -c "ran no CUDA work (no kernel, copy or memset): its empty trace .* was removed" "$out/run.log")" -eq 2 ]
check "record names both idle workers as empty and removed" $?
grep -q "capture.disabled\|cannot attach to CUPTI" "$out/run.log"
[ $? -ne 0 ]
check "the producer attached to CUPTI in every process" $?
traces=$(ls "$out/run" | grep -c '\.mprof$')
[ "$traces" -eq 1 ]
check "one trace is left ($traces)" $?
left=$(ls "$out"/run/*.mprof 2>/dev/null | head -1)
[ "$left" = "$out/run/trace.mprof" ]
check "the trace left has the name asked for (${left##*/})" $?
"$mprof" info "$left" >"$out/info.txt" 2>&1
grep -q "^kernels    1 kernel, 1 launch, " "$out/info.txt"
check "the trace left is the program's, with its one launch" $?

"$mprof" record -o "$out/alone/trace.mprof" -- "$out/empty_child" idle >"$out/alone.log" 2>&1
check "record of an idle worker alone exits 0" $?
cat "$out/alone.log"
grep -q "ran no CUDA work: $out/alone/trace.mprof holds no kernel, copy or memset" "$out/alone.log"
check "record calls the idle worker's trace empty" $?
[ -f "$out/alone/trace.mprof" ]
check "and keeps it" $?

[ "$failures" -eq 0 ] || { say "$failures check(s) failed"; exit 1; }
say "empty_child: every check passed"
