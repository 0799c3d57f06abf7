#!/bin/bash
# mprof's verdicts on planted bottlenecks: build tests/gpu/bottlenecks.cu,
# record it, and score every kernel's headline verdict against the expected
# one (tests/gpu/score_verdicts.py holds the table); when PyTorch is there,
# also record a bf16 training step and check that its library kernels get no
# register advice. Skips (exit 77) without a GPU. Exit 1 on a wrong verdict.
#
# Usage: tests/gpu/verdicts.sh OUTDIR [BUILD_DIR] [-- RECORD_OPTIONS...]
#   BUILD_DIR       a CMake build of mprof with the CUPTI producer
#                   (default: build)
#   RECORD_OPTIONS  extra `mprof record` options
# Environment: VERDICTS_PM=0 records without --pm both (no PM-sampled run,
#   no set score); VERDICTS_TORCH=0 leaves the PyTorch check out. Without
#   PyTorch with CUDA (and VERDICTS_TORCH unset) that check cannot run: the
#   script then ends with exit 77 (skipped) if nothing failed.
# What fails: a step that exits non-zero (the program alone, record,
# summary), a wrong or missing verdict; of the PC + PM set, a kernel whose
# verdict needs counters without measured throughput, or a set without
# counters; of the PyTorch step, register advice on a library kernel or no
# library kernel at all. The traces are removed before they are recorded,
# so a recorder that writes nothing is never scored on an earlier run's.
# tests/gpu/selftest.sh verdicts runs this on stand-ins and expects that.
#
# docs/validation/H200.md records what it printed on the project's H200.
set -uo pipefail
out=${1:?usage: verdicts.sh OUTDIR [BUILD_DIR] [-- RECORD_OPTIONS...]}
shift
build=build
if [ $# -gt 0 ] && [ "$1" != "--" ]; then build=$1; shift; fi
[ "${1:-}" = "--" ] && shift
. "$(dirname "$0")/lib.sh"
gpu_setup verdicts "$out" "$build"
build_bottlenecks verdicts

# PM sampling cannot run beside PC sampling (docs/validation/H200.md):
# `record --pm both` runs the program twice, PC-sampled into NAME.mprof and
# PM-sampled into NAME.pm.mprof; opened as one set, the summary has both the
# stall reasons and the measured throughput. Each run is scored alone (PC)
# and as the set.
pm=()
[ "${VERDICTS_PM:-1}" != 0 ] && pm=(--pm both)
failures=0
# record NAME CMD...: record CMD into $out/NAME.mprof (and NAME.pm.mprof)
record() {
  local name=$1
  shift
  rm -f "$out/$name".mprof "$out/$name".pm.mprof "$out/$name".*pc.json "$out/$name".*summary.* ||
    return 1
  "$mprof" record --drop-code "${pm[@]}" "${extra[@]}" -o "$out/$name.mprof" -- "$@" \
    >"$out/$name.record.txt" 2>"$out/$name.record.err"
  local rc=$?
  cat "$out/$name.record.err"
  [ "$rc" -eq 0 ] || echo "FAIL  mprof record of $name exited $rc" >&2
  return $rc
}
# score NAME WHAT suite|library: summarize and score NAME.mprof, and with
# --pm both also the set NAME.mprof + NAME.pm.mprof (the suite's set with
# score_verdicts.py --pm: counters required)
score() {
  local name=$1 what=$2 how=$3 set opts
  for set in pc pm; do
    local traces=("$out/$name.mprof") tag=$name
    opts=()
    [ "$how" = library ] && opts=(--library)
    if [ $set = pm ]; then
      [ ${#pm[@]} -gt 0 ] || continue
      traces+=("$out/$name.pm.mprof") tag=${name}_set
      [ "$how" = suite ] && opts=(--pm)
      echo "== $what: PC-sampled run + PM-sampled run, opened as one set"
    else
      echo "== $what: PC-sampled run"
    fi
    if ! "$mprof" summary --json --all "${traces[@]}" >"$out/$tag.summary.json" ||
      ! "$mprof" summary --human --color=never --all "${traces[@]}" >"$out/$tag.summary.txt"; then
      echo "FAIL  mprof summary of $tag failed" >&2
      failures=$((failures + 1))
      continue
    fi
    python3 "$src/tests/gpu/score_verdicts.py" "${opts[@]}" "$out/$tag.summary.json" |
      tee "$out/$tag.score.txt"
    [ "${PIPESTATUS[0]}" -eq 0 ] || failures=$((failures + 1))
  done
}
extra=("$@")

if ! "$bin" >"$out/bottlenecks.plain.txt" 2>&1; then
  echo "FAIL  $bin exited $? on its own: $(tail -n 3 "$out/bottlenecks.plain.txt")" >&2
  failures=$((failures + 1))
fi
record bottlenecks "$bin" || failures=$((failures + 1))
score bottlenecks "planted bottlenecks" suite

skipped=0
if [ "${VERDICTS_TORCH:-1}" = 0 ]; then
  echo "verdicts: VERDICTS_TORCH=0: the library check is left out"
elif python3 -c 'import torch; assert torch.cuda.is_available()' 2>/dev/null; then
  record torch_step python3 "$src/tests/gpu/torch_step.py" 10 || failures=$((failures + 1))
  score torch_step "PyTorch bf16 step (library kernels)" library
else
  echo "verdicts: SKIP the library check: no PyTorch with CUDA here (VERDICTS_TORCH=0 leaves it out)"
  skipped=1
fi
echo "verdicts: $failures failed checks"
[ "$failures" -eq 0 ] || exit 1
[ "$skipped" -eq 0 ] || exit 77
exit 0
