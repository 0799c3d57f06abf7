#!/bin/bash
# Runs of several processes opened as one, on a real GPU: the multi-process
# cases of faults.sh (fork, two torch ranks, a DataLoader with workers) and
# a `record blocks` + `record` pair of one command. For each set: summary of
# the set counts every trace's launches, --by-process splits each kernel
# into rows that add up to its aggregated row, diff of the set against
# itself is all noise, and view --render draws its Trace tab. For the pair:
# one gemm row with PC samples (from the CUPTI run) and a measured SM tail
# (from the blocks), Mega drawn as measured. Writes OUTDIR/sets.md and keeps
# every trace, summary and PNG in OUTDIR. Skips (exit 77) without a GPU.
#
# Usage: tests/gpu/sets.sh OUTDIR [BUILD_DIR]
#   BUILD_DIR  a CMake build with the CUPTI producer and the CUDA examples
#              (default: build)
# Environment: SETS_FAULTS=DIR uses the traces of an earlier
#   `tests/gpu/faults.sh DIR` instead of recording them again;
#   SETS_NO_GPU_CHECK=1 runs the set checks on such traces without a GPU;
#   SETS_PAIR=0 leaves the block/CUPTI pair out; SETS_CASES="fork ..."
#   runs only the set cases named (default: fork fork_first torch_two_ranks
#   torch_dataloader).
# What fails (exit 1): faults.sh failing, a set case with no trace, fork_first
# or torch_two_ranks without two traces (fork and torch_dataloader leave
# one: their children use no CUDA), a step that exits non-zero, counts of
# the set that differ from its traces'. Without PyTorch with CUDA the torch
# cases cannot run: the script then ends with exit 77 (skipped) if nothing
# failed. tests/gpu/selftest.sh sets runs this on stand-ins.
set -uo pipefail
out=${1:?usage: sets.sh OUTDIR [BUILD_DIR]}
build=${2:-build}
mkdir -p "$out" || exit 2
out=$(cd "$out" && pwd)
build=$(cd "$build" && pwd) || exit 2
here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "$here/../.." && pwd)
if [ -z "${SETS_NO_GPU_CHECK:-}" ] && ! nvidia-smi -L >/dev/null 2>&1; then
  echo "sets: no GPU here (nvidia-smi -L failed); skipping the GPU checks"
  exit 77
fi
mprof=$build/bin/mprof
[ -x "$mprof" ] || { echo "sets: $mprof is missing" >&2; exit 2; }
table=$out/sets.md
log=$out/sets.log
: >"$log" || exit 2
failures=0
say() { echo "$*" | tee -a "$log"; }
bad() { say "FAIL: $*"; failures=$((failures + 1)); }

# The multi-process traces: faults.sh's fork, torch ranks and DataLoader.
# Nothing an earlier run left may be checked as this run's.
rm -rf "$out/pair" "$out"/*.json "$out"/*.txt "$out"/*.png "$out"/*.info "$out"/*.view "$table" || exit 2
cases=${SETS_CASES:-fork fork_first torch_two_ranks torch_dataloader}
torch_skipped=0
if [[ " $cases " == *" torch_"* ]] && [ -z "${SETS_FAULTS:-}" ] &&
  ! python3 -c 'import torch; assert torch.cuda.is_available()' 2>/dev/null; then
  if [ -n "${SETS_CASES:-}" ]; then
    bad "the torch cases were asked for, but there is no PyTorch with CUDA here"
  else
    say "sets: SKIP torch_two_ranks and torch_dataloader: no PyTorch with CUDA here"
    torch_skipped=1
  fi
  cases=$(echo "$cases" | tr ' ' '\n' | grep -v '^torch_' | tr '\n' ' ')
fi
faults=${SETS_FAULTS:-$out/faults}
if [ -z "${SETS_FAULTS:-}" ]; then
  rm -rf "$faults" || exit 2
  FAULTS_CASES=$cases bash "$here/faults.sh" "$faults" "$build" >>"$log" 2>&1
  status=$?
  [ "$status" -eq 0 ] || bad "faults.sh ($cases) exited $status (its output: sets.log)"
fi

# json_get FILE EXPR: a value of the summary JSON, by a Python expression on s.
json_get() {
  python3 -c "import json,sys; s=json.load(open(sys.argv[1])); print($2)" "$1"
}

printf '| set | traces | launches (set / sum of traces) | kernels (set / by process) | top kernel launches (set / sum by process) | diff vs itself | Trace PNG |\n|---|---|---|---|---|---|---|\n' >"$table"
for case in $cases; do
  dir=$faults/$case
  n=$(ls "$dir"/*.mprof 2>/dev/null | wc -l)
  if [ "$n" -eq 0 ]; then
    bad "$case: no trace in $dir"
    continue
  fi
  if [ "$n" -lt 2 ]; then
    case $case in
    fork_first | torch_two_ranks) bad "$case: $n trace in $dir, not a set of one per process" ;;
    *) say "== $case: $n trace in $dir (its children use no CUDA); not a set" ;;
    esac
    continue
  fi
  say "== $case: $n traces"
  "$mprof" info "$dir" >"$out/$case.info" 2>&1 || bad "$case: info of the set failed"
  sum=0
  for t in "$dir"/*.mprof; do
    "$mprof" info "$t" >"$out/$case.one.info" 2>&1 || bad "$case: info of $(basename "$t") exited $?"
    l=$(sed -n 's/^kernels .* \([0-9]*\) launch.*/\1/p' "$out/$case.one.info")
    sum=$((sum + ${l:-0}))
  done
  "$mprof" summary --json --all "$dir" >"$out/$case.json" 2>>"$log" || bad "$case: summary of the set failed"
  "$mprof" summary --json --all --by-process "$dir" >"$out/$case.split.json" 2>>"$log" ||
    bad "$case: summary --by-process failed"
  "$mprof" summary --human --all "$dir" >"$out/$case.txt" 2>&1 || bad "$case: summary --human exited $?"
  "$mprof" summary --human --all --by-process "$dir" >"$out/$case.split.txt" 2>&1 ||
    bad "$case: summary --human --by-process exited $?"
  launches=$(json_get "$out/$case.json" 's["trace"]["launches"]')
  kernels=$(json_get "$out/$case.json" 's["trace"]["kernels"]')
  split=$(json_get "$out/$case.split.json" 's["trace"]["kernels"]')
  [ "$launches" = "$sum" ] || bad "$case: the set has $launches launches, its traces $sum"
  # The top kernel's row against its rows by process (same name and device).
  top=$(json_get "$out/$case.json" 's["kernels"]["items"][0]["mangled"] if s["kernels"]["items"] else ""')
  top_n=$(json_get "$out/$case.json" 's["kernels"]["items"][0]["launches"] if s["kernels"]["items"] else 0')
  by=$(json_get "$out/$case.split.json" "sum(k['launches'] for k in s['kernels']['items'] if k['mangled']=='$top')" 2>/dev/null)
  [ -n "$top" ] && [ "$top_n" = "$by" ] || bad "$case: $top has $top_n launches in the set, $by by process"
  [ "$split" -ge "$kernels" ] || bad "$case: --by-process has fewer rows ($split) than the set ($kernels)"
  "$mprof" diff "$dir" "$dir" --json >"$out/$case.diff.json" 2>>"$log"
  dstatus=$?
  [ "$dstatus" = 0 ] || bad "$case: diff of the set against itself exited $dstatus"
  "$mprof" view "$dir" --tab trace --render "$out/$case.trace.png" >>"$log" 2>&1 ||
    bad "$case: view --render of the set failed"
  printf '| %s | %s | %s / %s | %s / %s | %s / %s | exit %s | %s |\n' "$case" "$n" \
    "$launches" "$sum" "$kernels" "$split" "$top_n" "$by" "$dstatus" \
    "$([ -s "$out/$case.trace.png" ] && echo "$case.trace.png" || echo none)" >>"$table"
done

# A block trace and a CUPTI trace of two runs of one command.
gemm=$build/bin/gemm
if [ -n "${SETS_NO_GPU_CHECK:-}" ] || [ "${SETS_PAIR:-1}" = 0 ]; then
  say "sets: no GPU check or SETS_PAIR=0 asked; the block/CUPTI pair is left out"
elif [ -x "$gemm" ]; then
  lib=$build/lib/libmprof-blocks.so
  if [ ! -e "$lib" ]; then
    bash "$src/producers/sanitizer/build.sh" "$out/lib" "${CUDA_HOME:-/usr/local/cuda}" >>"$log" 2>&1
    lib=$out/lib/libmprof-blocks.so
  fi
  pair=$out/pair
  mkdir -p "$pair"
  MPROF_BLOCKS_LIB=$lib "$mprof" record blocks -o "$pair/blocks.mprof" -- "$gemm" >>"$log" 2>&1 ||
    bad "pair: record blocks of gemm failed"
  "$mprof" record -o "$pair/trace.mprof" -- "$gemm" >>"$log" 2>&1 || bad "pair: record of gemm failed"
  "$mprof" summary --json --all "$pair" >"$out/pair.json" 2>>"$log" || bad "pair: summary failed"
  "$mprof" summary --human --kernel gemm "$pair" >"$out/pair.txt" 2>&1
  row=$(json_get "$out/pair.json" "[k for k in s['kernels']['items'] if 'gemm' in k['name']][0]" 2>/dev/null)
  samples=$(json_get "$out/pair.json" "[k for k in s['kernels']['items'] if 'gemm' in k['name']][0]['samples']" 2>/dev/null)
  processes=$(json_get "$out/pair.json" "[k for k in s['kernels']['items'] if 'gemm' in k['name']][0].get('processes')" 2>/dev/null)
  tail=$(json_get "$out/pair.json" "[k['dimensions']['sm_tail']['state'] for k in s['kernels']['items'] if 'gemm' in k['name']][0]" 2>/dev/null)
  [ -n "$row" ] || bad "pair: no gemm kernel in the pair's summary"
  [ "${processes:-0}" = 2 ] || bad "pair: the gemm row holds ${processes:-no} processes, not both runs"
  [ "${samples:-0}" -gt 0 ] || bad "pair: the gemm row has no PC samples"
  [ -n "$tail" ] && [ "$tail" != unknown ] || bad "pair: the gemm row's SM tail is '${tail:-absent}', not measured"
  "$mprof" view "$pair" --tab mega --kernel gemm --render "$out/pair.mega.png" >"$out/pair.view" 2>&1 ||
    bad "pair: view --render failed"
  grep -q "(measured)" "$out/pair.view" || bad "pair: Mega is not measured: $(cat "$out/pair.view")"
  printf '\n| pair | gemm processes | PC samples | SM tail | Mega |\n|---|---|---|---|---|\n| blocks.mprof + trace.mprof | %s | %s | %s | %s |\n' \
    "${processes:-?}" "${samples:-?}" "${tail:-?}" "$(cat "$out/pair.view")" >>"$table"
else
  say "sets: $gemm is missing; the block/CUPTI pair is skipped"
fi

cat "$table" | tee -a "$log"
say "sets: $failures failed checks"
[ "$failures" -eq 0 ] || exit 1
# Cases that could not run make the run skipped (77), not passed.
[ "$torch_skipped" = 0 ] || exit 77
exit 0
