#!/bin/bash
# The Trace tab on real recordings: record the gemm example with PM
# sampling on (PC sampling off: the two did not run together on the H200)
# and the demo example (copies of several kinds), then run the Trace-tab
# checks of test_render_trace over them as if they were samples (the view
# fits the GPU activity and marks the process start, copies are labelled
# with kind, size and bandwidth, NVTX rows when the trace has ranges, a
# counter row per sampled counter under its GPU) and draw the Trace tab
# to PNG: whole, and with its first 5 ms selected.
#
# Usage: tests/gpu/trace_tab.sh OUTDIR [BUILD_DIR]
#   BUILD_DIR  a CMake build of mprof with the CUPTI producer (default: build)
# Environment: TRACE_TAB_EXTRA="a.mprof b.mprof" adds traces recorded
#   elsewhere. The PyTorch NVTX sample (nvtx_step.mprof) is recorded here
#   with tests/gpu/nvtx_sample.sh unless one is named there.
#
# Writes OUTDIR/samples/*.mprof (the recordings), OUTDIR/*.png and
# OUTDIR/report.txt. Skips (exit 77) without a GPU. Exit 1 when a check
# fails, 2 when something is missing. Each recording is bounded (120 s).
set -uo pipefail
out=${1:?usage: trace_tab.sh OUTDIR [BUILD_DIR]}
build=${2:-build}
mkdir -p "$out/samples" || exit 2
out=$(cd "$out" && pwd)
build=$(cd "$build" && pwd) || exit 2
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

if ! nvidia-smi -L >/dev/null 2>&1; then
  echo "trace_tab: no GPU here (nvidia-smi -L failed); skipping"
  exit 77
fi
mprof="$build/bin/mprof"
checks="$build/bin/test_render_trace"
for f in "$mprof" "$build/bin/gemm" "$build/bin/demo" "$checks"; do
  if [ ! -x "$f" ]; then
    echo "trace_tab: $f is missing; build with the CUDA toolkit and Cairo present" >&2
    exit 2
  fi
done

say "== machine"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee -a "$report"
say "date: $(date -u '+%Y-%m-%d %H:%M UTC')"

say "== recordings"
# Nothing an earlier run left may be checked as this run's.
rm -rf "$out/samples" "$out"/*.png "$out"/*.info "$out"/record-*.log "$out/checks.log" &&
  mkdir -p "$out/samples" || exit 2
# record NAME LOG ARGS...: `mprof record ARGS`; it must exit 0 and leave a
# trace that opens.
record() {
  local name=$1 log=$2 status
  shift 2
  timeout 120 "$mprof" record -o "$out/samples/$name.mprof" "$@" >"$out/$log" 2>&1
  status=$?
  check "record $name: exit $status (log: $log)" "$status"
  "$mprof" info "$out/samples/$name.mprof" >"$out/$name.info" 2>&1
  status=$?
  check "record $name left a trace that opens (mprof info: exit $status)" "$status"
}
record gemm_pm record-gemm.log --pc-mode off --pm on -- "$build/bin/gemm"
record demo record-demo.log -- "$build/bin/demo"
# The PyTorch NVTX check reads samples/nvtx_step.mprof: without one in
# TRACE_TAB_EXTRA it is recorded here by nvtx_sample.sh (PyTorch needed).
extras=${TRACE_TAB_EXTRA:-}
case " $extras " in
*/nvtx_step.mprof\ *) ;;
*)
  NVTX_SKIP_COST=1 timeout 300 bash "$(dirname "$0")/nvtx_sample.sh" "$out/nvtx" "$build" \
    >"$out/record-nvtx.log" 2>&1
  status=$?
  check "record nvtx_step with nvtx_sample.sh: exit $status (log: record-nvtx.log)" "$status"
  extras="$extras $out/nvtx/nvtx_step.mprof"
  ;;
esac
for extra in $extras; do
  cp "$extra" "$out/samples/" || exit 2
  if [ -e "$extra.pc.json" ]; then cp "$extra.pc.json" "$out/samples/" || exit 2; fi
done
# gemm says how many launches it made; the trace must hold them all.
made=$(sed -n 's/^gemm: \([0-9]*\) launches in .*/\1/p' "$out/record-gemm.log")
kept=$(sed -n 's/^kernels .* \([0-9]*\) launch.*/\1/p' "$out/gemm_pm.info")
[ -n "$made" ] && [ "$made" = "${kept:-}" ]
check "gemm_pm.mprof: ${kept:-no} launches in the trace, ${made:-an unstated number} made" $?
pm=$(sed -n 's/.*PM_SAMPLES=\([0-9]*\).*/\1/p' "$out/gemm_pm.info")
say "gemm_pm.mprof: ${pm:-0} PM samples"
[ "${pm:-0}" -gt 0 ]
check "the PM recording holds PM samples (else see pm.error in mprof info)" $?

say "== the Trace tab's checks over the recordings"
MPROF_SOURCE_DIR="$out" MPROF_TEST_TMP="$out" "$checks" \
  >"$out/checks.log" 2>&1
check "test_render_trace over OUTDIR/samples (log: checks.log)" $?
grep -E '^\[ +(OK|SKIPPED|FAILED) +\]' "$out/checks.log" | tee -a "$report"
grep -Eq '^\[ +OK +\]' "$out/checks.log"
check "test_render_trace ran its checks (an OK line in checks.log)" $?

say "== pictures"
for t in "$out"/samples/*.mprof; do
  name=$(basename "$t" .mprof)
  "$mprof" view "$t" --tab trace --size 1600x700 \
    --render "$out/$name-trace.png" >>"$report" 2>&1
  check "$name: the whole Trace tab ($name-trace.png)" $?
  "$mprof" view "$t" --tab trace --size 1600x700 --select 0ms:5ms \
    --render "$out/$name-select.png" >>"$report" 2>&1
  check "$name: the first 5 ms selected ($name-select.png)" $?
done

say "== $failures failure(s)"
[ "$failures" -eq 0 ]
