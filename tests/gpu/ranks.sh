#!/bin/bash
# mprof ranks on a real multi-process run: torchrun starts 2 ranks of
# tests/gpu/ranks_train.py on one GPU (gloo), each recorded by `mprof record
# -o OUTDIR/run/%q{RANK}.mprof`; rank 1 does extra GPU work (matrix
# products) in step 3. `mprof ranks` must name rank 1 as the first
# straggler (the largest excess), step 3, and a kernel whose time in that
# step is more than twice the median rank's; every rank has its 8 NVTX
# steps. When Python
# has dask and distributed, mprof.ranks() on a LocalCluster must give the
# same JSON as the CLI.
#
# Usage: tests/gpu/ranks.sh OUTDIR [BUILD_DIR]
#   BUILD_DIR  a CMake build of mprof with the CUPTI producer (default: build)
# Environment: PYTHON (default python3); RANKS_TRACES=DIR checks the traces
#   in DIR (0.mprof, 1.mprof) instead of recording them, RANKS_NO_GPU_CHECK=1
#   then runs without a GPU (tests/gpu/selftest.sh ranks does, on synthetic
#   ranks).
#
# Writes OUTDIR/run/ (the traces), OUTDIR/ranks.json, ranks.txt and
# report.txt (every check). Skips (exit 77) without a GPU or without PyTorch
# with CUDA. Exit 1 when a check fails, 2 when something is missing.
set -uo pipefail
out=${1:?usage: ranks.sh OUTDIR [BUILD_DIR]}
. "$(dirname "$0")/lib.sh"
if [ -n "${RANKS_NO_GPU_CHECK:-}" ]; then
  mkdir -p "$out" || exit 2
  out=$(cd "$out" && pwd)
  build=$(cd "${2:-build}" 2>/dev/null && pwd) || { echo "ranks: no build folder ${2:-build}" >&2; exit 2; }
  src=$(cd "$(dirname "$0")/../.." && pwd)
  mprof=$build/bin/mprof
else
  gpu_setup ranks "$out" "${2:-build}"
fi
here=$(cd "$(dirname "$0")" && pwd)
report_setup
python=${PYTHON:-python3}
steps=8 slow_rank=1 slow_step=3

if [ -n "${RANKS_TRACES:-}" ]; then
  run=$(cd "$RANKS_TRACES" && pwd) || exit 2
  say "== the traces in $run"
else
  if ! "$python" -c 'import torch; assert torch.cuda.is_available()' >/dev/null 2>&1; then
    echo "ranks: $python has no PyTorch with CUDA; skipping"
    exit 77
  fi
  run=$out/run
  rm -rf "$run" && mkdir -p "$run" || exit 2
  say "== mprof record -o run/%q{RANK}.mprof -- torchrun --nproc_per_node=2 ranks_train.py"
  timeout 600 "$mprof" record -o "$run/%q{RANK}.mprof" -- \
    "$python" -m torch.distributed.run --standalone --nproc_per_node=2 \
    "$here/ranks_train.py" --steps $steps --slow-rank $slow_rank \
    --slow-step $slow_step >"$out/record.log" 2>&1
  rc=$?
  check "mprof record of torchrun exited 0 (got $rc)" $((rc != 0))
fi
[ -s "$run/0.mprof" ] && [ -s "$run/1.mprof" ]
check "one trace per rank: 0.mprof and 1.mprof" $?

"$mprof" ranks --human --color=never "$run" >"$out/ranks.txt" 2>&1
rc=$?
"$mprof" ranks --json "$run" >"$out/ranks.json" 2>>"$out/ranks.txt"
rc=$((rc | $?))
tee -a "$report" <"$out/ranks.txt"
check "mprof ranks exited 0 (got $rc)" $((rc != 0))
python3 - "$out/ranks.json" $steps $slow_rank $slow_step >"$out/check.log" 2>&1 <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
steps, slow_rank, slow_step = map(int, sys.argv[2:5])
bad = []
for r in d["ranks"]:
    if r["step_source"] != "nvtx" or r["step_count"] != steps:
        bad.append(f"rank {r['rank']}: {r['step_count']} steps from "
                   f"{r['step_source']}, expected {steps} NVTX steps")
s = d["stragglers"]
# The planted straggler must come first (the largest excess); a second
# rank slower than the median in some step by noise on a shared GPU is
# reported, not failed.
if not s or s[0]["rank"] != slow_rank:
    bad.append(f"stragglers {[g['rank'] for g in s]}, expected rank "
               f"{slow_rank} first")
elif s[0]["step"] != slow_step:
    bad.append(f"rank {slow_rank}'s slow step is {s[0]['step']}, expected {slow_step}")
elif not s[0]["kernel"].get("name"):
    bad.append("no kernel named for the straggler")
elif s[0]["kernel"]["kernel_ns"] <= 2 * s[0]["kernel"]["median_kernel_ns"]:
    bad.append(f"{s[0]['kernel']['short_name']}: {s[0]['kernel']['kernel_ns']} ns "
               f"against the median's {s[0]['kernel']['median_kernel_ns']}: "
               "not the extra work")
else:
    print(f"straggler: rank {s[0]['rank']}, step {s[0]['step']}, "
          f"{s[0]['kernel']['short_name']}: {s[0]['summary']}")
    for g in s[1:]:
        print(f"also: rank {g['rank']} in step {g['step']}, "
              f"{100 * g['excess']:.0f}% above the median (noise?)")
for b in bad:
    print(b)
sys.exit(1 if bad else 0)
EOF
rc=$?
tee -a "$report" <"$out/check.log"
check "mprof ranks names rank $slow_rank, step $slow_step and its kernel" $rc

if "$python" -c 'import distributed, pandas, cffi' >/dev/null 2>&1; then
  MPROF_LIBRARY=$build/lib/libmprof.so.0 PYTHONPATH=$src/python \
    timeout 300 "$python" "$here/ranks_dask.py" "$run" "$out/ranks.json" \
    >"$out/python.log" 2>&1
  rc=$?
  check "mprof.ranks() on a LocalCluster gives the CLI's JSON" $rc
  [ "$rc" -eq 0 ] || tail -n 20 "$out/python.log" | tee -a "$report"
else
  say "SKIP  mprof.ranks(): $python has no dask.distributed (python3-distributed)"
fi

say "ranks: $failures failed checks"
[ "$failures" -eq 0 ] || exit 1
exit 0
