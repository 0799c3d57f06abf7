#!/bin/bash
# mprof on every visible GPU: record the multi_gpu example, check per device
# that the trace holds each kernel with the launch count and (roughly) the
# duration the program timed with CUDA events, and that every device got PC
# samples; write the verdicts to OUTDIR/results.txt. Works with one GPU
# (it says how many devices it saw) and skips (exit 77) without nvidia-smi.
#
# Usage: tests/gpu/validate_multi.sh OUTDIR [BUILD_DIR]
#   BUILD_DIR  a CMake build of mprof with the CUPTI producer and the CUDA
#              examples, multi_gpu included (default: build)
#
# Runs, each plainly and under `mprof record`:
#   all        multi_gpu with one worker per visible GPU (peer copies where
#              the GPUs allow them)
#   workers2   multi_gpu --workers 2: two workers exchange halos even on one
#              GPU (two host threads, two streams on each GPU they share)
#   staged     multi_gpu --host-staged, only with two or more GPUs
set -uo pipefail
out=${1:?usage: validate_multi.sh OUTDIR [BUILD_DIR]}
build=${2:-build}
mkdir -p "$out" || exit 2
out=$(cd "$out" && pwd)
src=$(cd "$(dirname "$0")/../.." && pwd)
results="$out/results.txt"
: >"$results" || exit 2
: >"$out/checks.log" || exit 2

say() { echo "$*" | tee -a "$results"; }

if ! nvidia-smi -L >/dev/null 2>&1; then
  echo "validate_multi: no GPU here (nvidia-smi -L failed); skipping the GPU checks" |
    tee -a "$results"
  exit 77
fi
build=$(cd "$build" && pwd) || exit 2
mprof="$build/bin/mprof"
program="$build/bin/multi_gpu"
for need in "$mprof" "$program" "$build/lib/libmprof-cupti.so"; do
  if [ ! -e "$need" ]; then
    say "validate_multi: $need is missing; build with the CUDA toolkit present"
    exit 2
  fi
done

failures=0
check() { # check DESCRIPTION COMMAND...
  if "${@:2}" >>"$out/checks.log" 2>&1; then say "ok    $1"; else say "FAIL  $1"; failures=$((failures + 1)); fi
}

say "== machine"
nvidia-smi --query-gpu=index,name,pci.bus_id,driver_version --format=csv,noheader | tee -a "$results"
smi_gpus=$(nvidia-smi -L | grep -c '^GPU ')
say "nvidia-smi sees $smi_gpus GPU(s); CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES-<unset>}"
if [ "$smi_gpus" -ge 2 ]; then
  nvidia-smi topo -m >"$out/topology.txt" 2>&1 && say "topology: $out/topology.txt"
fi
grep -E 'RmProfilingAdminOnly' /proc/driver/nvidia/params 2>/dev/null | tee -a "$results"

# run_case NAME TOLERANCE ARGS...: plain, then under mprof record, then the
# checks (TOLERANCE: see compare_multi.py).
run_case() {
  local name=$1 tolerance=$2 st
  shift 2
  say "== $name: multi_gpu $*"
  # Nothing an earlier run left may be checked as this run's.
  rm -f "$out/$name".*
  "$program" "$@" >"$out/$name.plain.txt" 2>&1
  local plain_rc=$?
  check "$name: plain run exits 0" test "$plain_rc" -eq 0
  check "$name: plain run RESULT ok" grep -q "^RESULT ok" "$out/$name.plain.txt"
  grep -E '^(MULTI_GPU|EXCHANGE)' "$out/$name.plain.txt" | tee -a "$results"

  "$mprof" record -o "$out/$name.mprof" -- "$program" "$@" \
    >"$out/$name.record.txt" 2>"$out/$name.record.err"
  local rc=$?
  cat "$out/$name.record.err" >>"$results"
  check "$name: record exits 0" test "$rc" -eq 0
  check "$name: program output unchanged (RESULT ok)" grep -q "^RESULT ok" "$out/$name.record.txt"
  "$mprof" info "$out/$name.mprof" >"$out/$name.info.txt" 2>&1
  st=$?
  check "$name: trace is valid (mprof info exit $st)" test "$st" -eq 0
  check "$name: sidecar written" test -s "$out/$name.mprof.pc.json"
  "$mprof" summary --json --all "$out/$name.mprof" >"$out/$name.summary.json" 2>"$out/$name.summary.err"
  st=$?
  check "$name: summary --json exit $st" test "$st" -eq 0
  "$mprof" summary --human --all "$out/$name.mprof" >"$out/$name.summary.txt" 2>&1
  st=$?
  check "$name: summary --human exit $st" test "$st" -eq 0

  local devices
  devices=$(sed -n 's/^MULTI_GPU devices=\([0-9]*\).*/\1/p' "$out/$name.record.txt")
  say "$name: the program used ${devices:-?} device(s); the trace has $(grep -c '^device ' "$out/$name.info.txt") device record(s)"
  grep -E '^(sections|counter)' "$out/$name.info.txt" | sed "s/^/$name: /" | tee -a "$results"

  say "$name: per device, mprof (CUPTI) against the program's CUDA events"
  python3 "$src/tests/gpu/compare_multi.py" "$out/$name.summary.json" \
    "$out/$name.record.txt" --tolerance "$tolerance" >"$out/$name.compare.txt" 2>&1
  local compare_rc=$?
  tee -a "$results" <"$out/$name.compare.txt"
  check "$name: per-device launch counts and durations match the events" test "$compare_rc" -eq 0

  # PC samples on every device, unless the driver forbids sampling.
  local pc_error
  pc_error=$(sed -n 's/^meta       pc.error = //p' "$out/$name.info.txt")
  if [ "$pc_error" = insufficient_privileges ]; then
    say "$name: PC sampling not permitted on this machine; not checking samples"
    return
  fi
  [ -n "$pc_error" ] && say "$name: pc.error = $pc_error"
  grep '^meta       pc.device\.' "$out/$name.info.txt" | sed "s/^meta       /$name: /" | tee -a "$results"
  local d
  for d in $(sed -n 's/^PC_SAMPLES device=\([0-9]*\) .*/\1/p' "$out/$name.compare.txt"); do
    check "$name: device $d has PC samples" \
      grep -Eq "^PC_SAMPLES device=$d samples=[1-9]" "$out/$name.compare.txt"
  done
}

run_case all 0.25
# Workers sharing a GPU run their kernels side by side: an event pair then
# also times waiting for the other stream's blocks, so only counts are tight.
run_case workers2 1.0 --workers 2
gpus=$(sed -n 's/^MULTI_GPU devices=\([0-9]*\).*/\1/p' "$out/all.plain.txt")
if [ "${gpus:-1}" -ge 2 ]; then
  run_case staged 0.25 --host-staged
  check "staged: every cross-device copy staged through the host" \
    grep -q "exchange=host-staged" "$out/staged.plain.txt"
else
  say "== staged: skipped (one GPU: no cross-device copies to stage)"
fi

say "== devices seen: ${gpus:-?} (nvidia-smi: $smi_gpus)"
say "== $failures checks failed"
[ "$failures" -eq 0 ]
