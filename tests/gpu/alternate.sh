#!/bin/bash
# One run, both signals: `mprof record --pm alternate` on the GPU.
#
# 1. The canary (tests/gpu/alternate_canary.cu): CUPTI alone, PC and PM
#    sampling taking turns in one process (pc pm pc pm, then pm pc pm).
#    A driver change that breaks alternation fails here first.
# 2. The planted-bottleneck suite in a loop (BOTTLENECKS_REPEAT=4, each
#    repeat between cudaProfilerStart/Stop), recorded once with
#    --capture-range cudaProfilerApi --range-count 4 --pm alternate: its
#    verdicts are scored as a --pm both pair's are (score_verdicts.py --pm),
#    and its headlines compared with a --pm both pair of the suite.
# 3. A PyTorch loop (tests/gpu/capture_loop.py), steps 21-28 recorded with
#    --capture-range nvtx:step --pm alternate, against a --pm both pair of
#    the same window: the same headline for every kernel above 2% of GPU
#    time (one may differ: PyTorch's small kernels sit near thresholds).
# Every run's switch cost (record's recap, META alternate.*) and the step
# time of PC and PM turns go to OUTDIR/alternate.txt.
#
# Usage: tests/gpu/alternate.sh OUTDIR [BUILD_DIR]
# Skips (exit 77) without a GPU; part 3 is skipped without PyTorch.
set -uo pipefail
. "$(dirname "$0")/lib.sh"
gpu_setup alternate "${1:?usage: alternate.sh OUTDIR [BUILD_DIR]}" "${2:-build}"
log=$out/alternate.txt
: >"$log"
say() { echo "$*" | tee -a "$log"; }
failures=0
failed() { say "FAIL  $*"; failures=$((failures + 1)); }
rm -f "$out"/*.mprof "$out"/*.mprof.pc.json "$out"/*.json "$out"/*.log
cuda=${CUDA_HOME:-/usr/local/cuda}
nvcc=${NVCC:-$(command -v nvcc || echo "$cuda/bin/nvcc")}
cupti_inc=("-I$cuda/extras/CUPTI/include" "-I$cuda/targets/x86_64-linux/include")
cupti_lib=("-L$cuda/extras/CUPTI/lib64" "-L$cuda/targets/x86_64-linux/lib")

say "== 1. the canary: CUPTI alone, PC and PM sampling taking turns"
if "$nvcc" -O2 -arch=sm_90 "${cupti_inc[@]}" "$src/tests/gpu/alternate_canary.cu" \
  "${cupti_lib[@]}" -lcupti -lcuda -o "$out/alternate_canary" >"$out/canary_build.log" 2>&1; then
  for order in "pc pm pc pm" "pm pc pm"; do
    # shellcheck disable=SC2086
    "$out/alternate_canary" $order 2>&1 | tee -a "$log"
    [ "${PIPESTATUS[0]}" -eq 0 ] || failed "canary ($order)"
  done
else
  failed "building alternate_canary.cu: $(tail -n 3 "$out/canary_build.log")"
fi

# recap NAME: the alternation line of record's recap
recap() { grep -E "alternating|warning" "$out/$1.log" | tee -a "$log"; }

say "== 2. the planted suite, 4 repeats: --pm alternate against a --pm both pair"
build_bottlenecks alternate
if BOTTLENECKS_REPEAT=4 "$mprof" record -o "$out/suite_alt.mprof" \
  --capture-range cudaProfilerApi --range-count 4 --pm alternate -- "$bin" \
  >"$out/suite_alt.log" 2>&1; then
  recap suite_alt
  grep -E "^[a-z_]+ +[0-9.]+ ms|repeat" "$out/suite_alt.log" >>"$log"
  "$mprof" summary --json --all "$out/suite_alt.mprof" >"$out/suite_alt.json" 2>>"$log" ||
    failed "summary of the alternated suite"
  python3 "$src/tests/gpu/score_verdicts.py" --pm "$out/suite_alt.json" | tee -a "$log"
  [ "${PIPESTATUS[0]}" -eq 0 ] || failed "verdicts of the alternated suite"
else
  failed "record --pm alternate of the suite: $(tail -n 3 "$out/suite_alt.log")"
fi
if "$mprof" record -o "$out/suite_pair.mprof" --pm both -- "$bin" >"$out/suite_pair.log" 2>&1; then
  "$mprof" summary --json --all "$out/suite_pair.mprof" "$out/suite_pair.pm.mprof" \
    >"$out/suite_pair.json" 2>>"$log" || failed "summary of the suite's pair"
  if [ -s "$out/suite_alt.json" ]; then
    python3 "$src/tests/gpu/compare_headlines.py" --min-share 0 \
      "$out/suite_pair.json" "$out/suite_alt.json" | tee -a "$log"
    [ "${PIPESTATUS[0]}" -eq 0 ] || failed "suite: headlines of the alternated run differ from the pair's"
  fi
else
  failed "record --pm both of the suite: $(tail -n 3 "$out/suite_pair.log")"
fi

say "== 3. PyTorch loop: steps 21-28, --pm alternate against a --pm both pair"
py=${PYTHON:-python3}
if "$py" -c 'import torch; assert torch.cuda.is_available()' >/dev/null 2>&1; then
  loop=("$py" "$src/tests/gpu/capture_loop.py" --steps 40 --warmup 3)
  window=(--capture-range nvtx:step --range-skip 20 --range-count 8)
  if "$mprof" record -o "$out/torch_alt.mprof" "${window[@]}" --pm alternate -- "${loop[@]}" \
    >"$out/torch_alt.log" 2>&1; then
    recap torch_alt
    "$mprof" summary --json --all "$out/torch_alt.mprof" >"$out/torch_alt.json" 2>>"$log" ||
      failed "summary of the alternated PyTorch loop"
    "$mprof" summary --human "$out/torch_alt.mprof" 2>&1 | head -n 30 >>"$log"
  else
    failed "record --pm alternate of the PyTorch loop: $(tail -n 3 "$out/torch_alt.log")"
  fi
  if "$mprof" record -o "$out/torch_pair.mprof" "${window[@]}" --pm both -- "${loop[@]}" \
    >"$out/torch_pair.log" 2>&1; then
    "$mprof" summary --json --all "$out/torch_pair.mprof" "$out/torch_pair.pm.mprof" \
      >"$out/torch_pair.json" 2>>"$log" || failed "summary of the PyTorch pair"
    if [ -s "$out/torch_alt.json" ]; then
      python3 "$src/tests/gpu/compare_headlines.py" --min-share 0.02 --allow 1 \
        "$out/torch_pair.json" "$out/torch_alt.json" | tee -a "$log"
      [ "${PIPESTATUS[0]}" -eq 0 ] || failed "PyTorch: headlines of the alternated run differ from the pair's"
    fi
  else
    failed "record --pm both of the PyTorch loop: $(tail -n 3 "$out/torch_pair.log")"
  fi
  # The switch's cost as the loop felt it: step times of the PC and PM
  # turns (steps 21-24 and 25-28) from the trace's step ranges.
  if [ -s "$out/torch_alt.mprof" ]; then
    "$mprof" export --format sqlite -o "$out/torch_alt.sqlite" "$out/torch_alt.mprof" >/dev/null 2>&1 &&
      python3 - "$out/torch_alt.sqlite" <<'PY' | tee -a "$log"
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
rows = db.execute(
    "SELECT e.start, e.end FROM NVTX_EVENTS e LEFT JOIN StringIds s ON e.textId = s.id "
    "WHERE COALESCE(e.text, s.value) = 'step' AND e.end IS NOT NULL "
    "ORDER BY e.start").fetchall()
steps = [(b - a) / 1e6 for a, b in rows]
half = len(steps) // 2
print("step ms, PC turn:", " ".join(f"{s:.2f}" for s in steps[:half]))
print("step ms, PM turn:", " ".join(f"{s:.2f}" for s in steps[half:]))
PY
  fi
else
  say "(skipped: $py has no PyTorch with CUDA)"
fi

if [ "$failures" -ne 0 ]; then
  say "alternate: $failures check(s) failed"
  exit 1
fi
say "alternate: every check passed"
