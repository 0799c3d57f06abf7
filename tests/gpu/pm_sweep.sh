#!/bin/bash
# PM sampling at several intervals: what each keeps and what it costs.
# For every interval, the planted-bottleneck suite (tests/gpu/bottlenecks.cu)
# is recorded with --pm on and opened as a set with one PC-sampled run of
# it (the verdicts scored by score_verdicts.py, the DRAM and L2 stream
# kernels' samples and throughput printed), and the PyTorch training loop
# of tests/gpu/cost/train_step.py is recorded (wall time and median step
# against a plain run). The producer's own account (samples, overflows,
# decode and set-up time) comes from the trace's META. Skips (exit 77)
# without a GPU.
#
# What fails (exit 1): a step that exits non-zero (record, summary,
# score_verdicts.py --pm: strict at the default 100us; at shorter intervals
# a kernel may go unmeasured only when the summary notes the PM buffer's
# overflow), a PM-sampled run without PM samples, an exit run
# that hit the producer's exit timeout (META pm.error = exit_timeout). The
# traces are removed before they are recorded, so a recorder that writes
# nothing is never read for an earlier run's. tests/gpu/selftest.sh pm_sweep
# runs this on stand-ins and expects that.
#
# Usage: tests/gpu/pm_sweep.sh OUTDIR [BUILD_DIR]
# Environment: PM_INTERVALS (default "10us 20us 50us 100us"); PM_TORCH=0
#   skips the PyTorch loop. Last, the suite is recorded four times with
#   --pm on (twice with --pc-mode off) to check that each ends with the
#   program (no exit timeout).
#
# docs/validation/H200.md records what it printed on the project's H200.
set -uo pipefail
out=${1:?usage: pm_sweep.sh OUTDIR [BUILD_DIR]}
. "$(dirname "$0")/lib.sh"
gpu_setup pm_sweep "$out" "${2:-build}"
build_bottlenecks pm_sweep
report="$out/pm_sweep.txt"
: >"$report" || exit 2
say() { echo "$*" | tee -a "$report"; }
failures=0
bad() { say "FAIL  $*"; failures=$((failures + 1)); }
now() { date +%s.%N; }
since() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.2f", b - a }'; }
meta() { "$mprof" info "$1" 2>/dev/null | awk -v k="$2" '$1 == "meta" && $2 == k { sub(/^[^=]*= /, ""); print }'; }
# stream_row SUMMARY.json: samples and DRAM/L2 % of the two stream kernels
stream_row() {
  python3 - "$1" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
kernels = doc["kernels"]["items"]
out = []
for want in ("dram_stream", "l2_stream"):
    for k in kernels:
        if k["name"].startswith(want):
            t = k["throughput"]
            out.append(f"{want}: {t['status']}, {t['samples']} samples, "
                       f"dram {t['dram']}, l2 {t['l2']}")
            break
print("; ".join(out))
PY
}

say "== machine"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee -a "$report"
say "date: $(date -u '+%Y-%m-%d %H:%M UTC'), cpus: $(nproc)"

rm -f "$out"/*.mprof "$out"/*.pc.json "$out"/set_*.json "$out"/set_*.score || exit 2
"$mprof" record --drop-code -o "$out/pc.mprof" -- "$bin" >"$out/pc.record.txt" 2>&1 ||
  { echo "FAIL  pm_sweep: the PC-sampled run exited $? ($out/pc.record.txt)" >&2; exit 1; }
"$mprof" info "$out/pc.mprof" >/dev/null 2>&1 ||
  { echo "FAIL  pm_sweep: the PC-sampled run left no trace that opens" >&2; exit 1; }

torch=0
if [ "${PM_TORCH:-1}" != 0 ] &&
  python3 -c 'import torch; assert torch.cuda.is_available()' 2>/dev/null; then
  torch=1
  export TRITON_CACHE_DIR="$out/triton-cache"
  python3 "$src/tests/gpu/cost/train_step.py" >"$out/torch_warm.txt" 2>&1
  t0=$(now)
  python3 "$src/tests/gpu/cost/train_step.py" >"$out/torch_plain.txt" 2>&1
  tp=$(since "$t0")
  say "PyTorch plain: $tp s, $(grep -o 'median_step_ms [0-9.]*' "$out/torch_plain.txt")"
fi

for iv in ${PM_INTERVALS:-10us 20us 50us 100us}; do
  say "== --pm-interval $iv"
  tr="$out/pm_$iv.mprof"
  t0=$(now)
  timeout -k 5 120 "$mprof" record --drop-code --pm on --pm-interval "$iv" -o "$tr" -- "$bin" \
    >"$out/pm_$iv.record.txt" 2>&1
  rc=$?
  say "bottlenecks: exit $rc, $(since "$t0") s"
  [ "$rc" -eq 0 ] || bad "$iv: mprof record --pm on exited $rc"
  n=$(meta "$tr" pm.device.0.samples)
  [ "${n:-0}" -gt 0 ] 2>/dev/null || bad "$iv: no PM samples in pm_$iv.mprof (pm.device.0.samples '${n:-}')"
  for k in samples decodes decode_us decode_data_us evaluate_us reset_us restarts \
    setup_us setup_host_us setup_enable_us setup_image_us counter_data_bytes; do
    printf '%s=%s ' "$k" "$(meta "$tr" "pm.device.0.$k")"
  done | tee -a "$report"
  echo | tee -a "$report"
  grep -E "overflowed|PM samples" "$out/pm_$iv.record.txt" | tee -a "$report"
  "$mprof" summary --json --all "$out/pc.mprof" "$tr" >"$out/set_$iv.json" 2>"$out/set_$iv.err" ||
    bad "$iv: mprof summary of the PC + PM set exited $? ($(head -c 300 "$out/set_$iv.err"))"
  stream_row "$out/set_$iv.json" | tee -a "$report"
  # At the default interval every verdict must be right; a shorter one may
  # lose samples when the decode falls behind, as long as the summary says
  # so (its pm_overflow note): a kernel left unmeasured without that note,
  # or a wrong verdict, still fails.
  lost=--allow-lost
  [ "$iv" = 100us ] && lost=
  python3 "$src/tests/gpu/score_verdicts.py" --pm $lost "$out/set_$iv.json" >"$out/set_$iv.score" 2>&1 ||
    bad "$iv: score_verdicts.py --pm $lost of the set exited $?"
  tail -n 1 "$out/set_$iv.score" | tee -a "$report"
  grep -E "dram_stream|l2_stream" "$out/set_$iv.score" | tee -a "$report"
  if [ "$torch" = 1 ]; then
    t0=$(now)
    timeout -k 5 120 "$mprof" record --drop-code --pm on --pm-interval "$iv" \
      -o "$out/torch_$iv.mprof" -- python3 "$src/tests/gpu/cost/train_step.py" \
      >"$out/torch_$iv.txt" 2>&1
    rc=$?
    [ "$rc" -eq 0 ] || bad "$iv: mprof record --pm on of the PyTorch loop exited $rc"
    say "PyTorch: exit $rc, $(since "$t0") s, $(grep -o 'median_step_ms [0-9.]*' "$out/torch_$iv.txt"), samples $(meta "$out/torch_$iv.mprof" pm.device.0.samples), decode_us $(meta "$out/torch_$iv.mprof" pm.device.0.decode_us), setup_us $(meta "$out/torch_$iv.mprof" pm.device.0.setup_us)"
    grep -E "overflowed" "$out/torch_$iv.txt" | tee -a "$report"
  fi
done
# The exit: a PM-sampled recording ends with the program (no exit
# timeout: META pm.error, and pm.exit_phase/pm.exit_wait_ms say where and
# how long), whether --pm on or --pc-mode off turned PC sampling off.
say "== exit (--pm on, twice each way)"
for how in "" "--pc-mode off" "" "--pc-mode off"; do
  t0=$(now)
  rm -f "$out/exit.mprof" "$out/exit.mprof.pc.json"
  # shellcheck disable=SC2086
  timeout -k 5 60 "$mprof" record --drop-code --pm on $how -o "$out/exit.mprof" -- "$bin" \
    >"$out/exit.record.txt" 2>&1
  rc=$?
  err=$(meta "$out/exit.mprof" pm.error)
  n=$(meta "$out/exit.mprof" pm.device.0.samples)
  say "${how:-default}: exit $rc, $(since "$t0") s, samples ${n:-none}, pm.error ${err:-none}${err:+ in $(meta "$out/exit.mprof" pm.exit_phase) after $(meta "$out/exit.mprof" pm.exit_wait_ms) ms}"
  [ "$rc" -eq 0 ] || bad "exit ${how:-default}: mprof record --pm on exited $rc"
  [ "${n:-0}" -gt 0 ] 2>/dev/null || bad "exit ${how:-default}: no PM samples"
  [ "$err" != exit_timeout ] || bad "exit ${how:-default}: the producer hit its exit timeout"
done
say "== done: $failures failure(s)"
[ "$failures" -eq 0 ]
