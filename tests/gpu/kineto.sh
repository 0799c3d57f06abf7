#!/bin/bash
# mprof's Kineto export against a real Kineto trace of the same PyTorch
# steps: tests/gpu/kineto_step.py runs once under torch.profiler (which
# writes torch.json, a real Kineto trace) and once under `mprof record`
# (exported with --format kineto to mprof.json); tests/gpu/compare_kineto.py
# compares the two field by field: top-level keys and deviceProperties,
# event categories, the args keys of kernels, copies, memsets and runtime
# calls, ProfilerStep spans, kernel counts and names per step, flows. With
# MPROF_HTA_DIR naming a Holistic Trace Analysis checkout, HTA also runs on
# mprof.json and its kernel total must equal `mprof summary`'s.
#
# Usage: tests/gpu/kineto.sh OUTDIR [BUILD_DIR]
#   BUILD_DIR  a CMake build of mprof with the CUPTI producer (default: build)
# Environment: PYTHON (default python3), KINETO_STEPS (default 5),
#   MPROF_HTA_DIR (optional).
#
# Writes OUTDIR/torch.json, OUTDIR/step.mprof, OUTDIR/mprof.json and
# OUTDIR/report.txt (every check). Skips (exit 77) without a GPU or without
# PyTorch. Exit 1 when a check fails, 2 when something is missing.
set -uo pipefail
out=${1:?usage: kineto.sh OUTDIR [BUILD_DIR]}
. "$(dirname "$0")/lib.sh"
gpu_setup kineto "$out" "${2:-build}"
here=$(cd "$(dirname "$0")" && pwd)
report_setup

python=${PYTHON:-python3}
if ! "$python" -c 'import torch' >/dev/null 2>&1; then
  echo "kineto: $python has no PyTorch; skipping"
  exit 77
fi
steps=${KINETO_STEPS:-5}
rm -f "$out/torch.json" "$out/step.mprof" "$out/step.mprof.pc.json" "$out/mprof.json"

say "== torch.profiler: kineto_step.py --steps $steps --torch-trace torch.json"
timeout 300 "$python" "$here/kineto_step.py" --steps "$steps" \
  --torch-trace "$out/torch.json" >"$out/torch.log" 2>&1
rc=$?
check "torch.profiler run exited 0 (got $rc)" $((rc != 0))
[ -s "$out/torch.json" ]
check "torch.profiler wrote torch.json" $?

say "== mprof record -o step.mprof -- kineto_step.py --steps $steps"
timeout 300 "$mprof" record -o "$out/step.mprof" -- \
  "$python" "$here/kineto_step.py" --steps "$steps" >"$out/record.log" 2>&1
rc=$?
check "mprof record exited 0 (got $rc)" $((rc != 0))
"$mprof" export --format kineto -o "$out/mprof.json" "$out/step.mprof" \
  >"$out/export.log" 2>&1
rc=$?
check "mprof export --format kineto exited 0 (got $rc)" $((rc != 0))

if [ -s "$out/torch.json" ] && [ -s "$out/mprof.json" ]; then
  say "== compare_kineto.py torch.json mprof.json"
  python3 "$here/compare_kineto.py" "$out/torch.json" "$out/mprof.json" \
    >"$out/compare.log" 2>&1
  rc=$?
  tee -a "$report" <"$out/compare.log"
  check "the export matches torch.profiler's trace field by field" $((rc != 0))
fi

if [ -n "${MPROF_HTA_DIR:-}" ] && [ -s "$out/mprof.json" ]; then
  say "== HTA from $MPROF_HTA_DIR"
  mkdir -p "$out/hta" && cp "$out/mprof.json" "$out/hta/rank-0.json"
  want=$("$mprof" summary --json "$out/step.mprof" |
    python3 -c 'import json,sys; print(json.load(sys.stdin)["trace"]["kernel_time_ns"])')
  got=$(HTA_DISABLE_NS_ROUNDING=1 "$python" - "$MPROF_HTA_DIR" "$out/hta" <<'EOF' 2>"$out/hta.log"
import logging, sys, warnings
warnings.filterwarnings("ignore")
logging.disable(logging.WARNING)
sys.path.insert(0, sys.argv[1])
from hta.trace_analysis import TraceAnalysis
a = TraceAnalysis(trace_dir=sys.argv[2], include_last_profiler_step=True)
df = a.t.get_trace(0)
k = df[df["cat"].eq(a.t.symbol_table.get_sym_id_map()["kernel"])]
a.get_temporal_breakdown(visualize=False)
a.get_gpu_kernel_breakdown(visualize=False)
a.get_idle_time_breakdown(visualize=False)
a.get_cuda_kernel_launch_stats(visualize=False)
print(round(float(k["dur"].sum()) * 1000))
EOF
  )
  say "HTA kernel time $got ns; mprof summary $want ns"
  [ -n "$got" ] && [ "$got" = "$want" ]
  check "HTA's kernel total equals mprof summary's" $?
fi

say "== $failures failure(s)"
[ "$failures" -eq 0 ] || exit 1
exit 0
