#!/bin/bash
# Capture windows on a real GPU, on a program we did not write the loop of
# (PyTorch): `mprof record --capture-range nvtx:step --range-skip 1000
# --range-count 4` holds exactly the launches of those 4 steps; so do
# cudaProfilerApi, --kernel-skip/--kernel-count, --delay/--duration and
# --max-size windows, each checked against what it must hold. Reports
# wall time, trace size and the loop's step time outside the window next to
# a plain run. Skips (exit 77) without a GPU or PyTorch.
#
# Usage: tests/gpu/capture_window.sh OUTDIR [BUILD_DIR]
# Environment: PYTHON (default python3); CAPTURE_STEPS (default 2000, at
# least 1010); CAPTURE_RUN_TIMEOUT (default 90): seconds a run may take
# before it gets SIGABRT (the producer's crash report says where it was).
#
# How a step's launches are known: a reference run records 30 steps
# whole (tests/gpu/capture_loop.py runs the same work in every "step"
# range and launches nothing between them); `summary --by-range` gives the
# step ranges' launches, which must divide evenly: K per step. A window of
# N steps must then hold N*K launches, all inside "step" ranges.
#
# What fails (exit 1): a run that exits non-zero or writes no trace; a
# window holding another launch count, a range outside its steps, or a
# CAPTURE record (mprof info's "window" line) that does not say what was
# asked (the ranges recorded, why it ended); a --duration window of
# another length or opened before its --delay; a --max-size run that did
# not stop or grew past twice the size. Every output of an earlier run is
# removed first. tests/gpu/selftest.sh capture_window runs this on a
# stand-in recorder that writes the wrong launch count, and expects it to
# fail.
set -uo pipefail
out=${1:?usage: capture_window.sh OUTDIR [BUILD_DIR]}
build=${2:-build}
mkdir -p "$out" || exit 2
out=$(cd "$out" && pwd)
build=$(cd "$build" 2>/dev/null && pwd) || { echo "capture_window: no build folder ${2:-build}" >&2; exit 2; }
src=$(cd "$(dirname "$0")/../.." && pwd)
. "$src/tests/gpu/lib.sh" # median
py=${PYTHON:-python3}
steps=${CAPTURE_STEPS:-2000}
log=$out/capture_window.log
: >"$log"
say() { echo "$*" | tee -a "$log"; }

if ! nvidia-smi -L >/dev/null 2>&1; then
  echo "capture_window: no GPU here (nvidia-smi -L failed); skipping the GPU checks"
  exit 77
fi
if ! "$py" -c 'import torch; assert torch.cuda.is_available()' >/dev/null 2>&1; then
  echo "capture_window: $py has no PyTorch with CUDA; skipping (set PYTHON)"
  exit 77
fi
mprof=$build/bin/mprof
if [ ! -x "$mprof" ] || [ ! -e "$build/lib/libmprof-cupti.so" ]; then
  echo "capture_window: $mprof or its CUPTI producer is missing; build with the CUDA toolkit present" >&2
  exit 2
fi
[ "$steps" -ge 1010 ] || { echo "capture_window: CAPTURE_STEPS must be at least 1010" >&2; exit 2; }
loop=$src/tests/gpu/capture_loop.py
for name in ref plain nvtx profiler timed kernels maxsize; do
  rm -f "$out/$name.mprof" "$out/$name.mprof".* "$out/$name.txt" "$out/$name.ranges.json" || exit 2
done

failures=0
failed() { say "FAIL  $*"; failures=$((failures + 1)); }

# run NAME CMD...: run, keep its output in NAME.txt and the log, its wall
# time in $wall (s); returns its exit status.
run() {
  local name=$1 t0 t1 rc
  shift
  say "== $name: $*"
  t0=$(date +%s%N)
  # A run that hangs gets SIGABRT: the producer's crash report then says
  # where the program's thread was.
  timeout -k 5 -s ABRT "${CAPTURE_RUN_TIMEOUT:-90}" "$@" >"$out/$name.txt" 2>&1
  rc=$?
  t1=$(date +%s%N)
  wall=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", (b - a) / 1e9 }')
  cat "$out/$name.txt" >>"$log"
  say "-- $name: exit $rc, $wall s"
  [ "$rc" -eq 0 ] || failed "$name: exit $rc: $(tail -n 3 "$out/$name.txt")"
  return $rc
}

# ranges NAME: NAME.mprof's `summary --by-range --json` into NAME.ranges.json;
# then field NAME EXPR prints a value of it (python expression over `d`).
ranges() {
  "$mprof" summary "$out/$1.mprof" --by-range --all --json >"$out/$1.ranges.json" 2>>"$log" ||
    { failed "$1: summary --by-range failed"; return 1; }
}
field() {
  "$py" - "$out/$1.ranges.json" "$2" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
step = [r for r in d["ranges"]["items"] if r["name"] == "step"]
step = step[0] if step else {"launches": 0, "instances": 0}
print(eval(sys.argv[2], {"d": d, "step": step}))
EOF
}
# window NAME: the "window" line of `mprof info` (the CAPTURE record).
window() { "$mprof" info "$out/$1.mprof" 2>>"$log" | sed -n 's/^window [0-9]* *//p' | head -n 1; }
expect_window() { # expect_window NAME TEXT: the window line says TEXT
  local line
  line=$(window "$1")
  say "   window: ${line:-none}"
  case $line in *"$2"*) ;; *) failed "$1: the window line lacks '$2': ${line:-no window}" ;; esac
}
size_of() { stat -c %s "$1" 2>/dev/null || echo 0; }
ms_outside() { # ms_outside NAME [OUTSIDE|BEFORE|AFTER]
  sed -n "s/^${2:-OUTSIDE} .*ms_per_step=\([0-9.]*\).*/\1/p" "$out/$1.txt" | tail -n 1
}

# 1. A step's launches, from a whole capture of 30 steps.
per_step=0
if run ref "$mprof" record -q -o "$out/ref.mprof" -- "$py" "$loop" --steps 30 &&
  ranges ref; then
  instances=$(field ref 'step["instances"]')
  launches=$(field ref 'step["launches"]')
  if [ "$instances" != 30 ] || [ "$launches" -eq 0 ] || [ $((launches % 30)) -ne 0 ]; then
    failed "ref: 30 steps recorded whole give $launches launches in $instances step ranges, not 30 steps of equal work"
  else
    per_step=$((launches / 30))
    say "   one step launches $per_step kernels ($launches in 30 steps)"
  fi
fi
[ "$per_step" -gt 0 ] || { say "capture_window: no launch count per step; stopping"; exit 1; }

# 2. The loop without mprof.
run plain "$py" "$loop" --steps "$steps" --quiet-window 1000:1004
plain_wall=$wall

# 3. nvtx:step, steps 1001-1004.
if MPROF_VERBOSE=1 run nvtx "$mprof" record -o "$out/nvtx.mprof" --capture-range nvtx:step \
  --range-skip 1000 --range-count 4 -- "$py" "$loop" --steps "$steps" --quiet-window 1000:1004; then
  nvtx_wall=$wall
  if ranges nvtx; then
    total=$(field nvtx 'd["trace"]["launches"]')
    inside=$(field nvtx 'step["launches"]')
    instances=$(field nvtx 'step["instances"]')
    say "   $total launches ($inside in $instances step ranges); want $((4 * per_step)), all in step ranges"
    [ "$total" -eq $((4 * per_step)) ] || failed "nvtx: the trace holds $total launches, not 4 steps x $per_step = $((4 * per_step))"
    # The NVTX ranges stay recorded through an nvtx: window (all 2000
    # here); the launches must lie in step ranges (on the H100 they lay in
    # the 1001st to 1004th).
    [ "$inside" -eq "$total" ] ||
      failed "nvtx: $inside of $total launches in a step range, not all"
  fi
  # What CUPTI refused, if anything, is in the trace's errors.
  "$mprof" info "$out/nvtx.mprof" >"$out/nvtx.info.txt" 2>&1
  grep -i "error\|NOT_COMPATIBLE" "$out/nvtx.info.txt" | head -n 5 | sed 's/^/   /' | tee -a "$log"
  expect_window nvtx "nvtx:step: ranges 1001-1004 recorded"
  expect_window nvtx "ended after --range-count 4"
  grep -q "^mprof: window: nvtx:step: ranges 1001-1004" "$out/nvtx.txt" ||
    failed "nvtx: record's recap does not say which window it recorded"
fi

# 4. cudaProfilerApi: torch.cuda.profiler.start() before step 500, stop()
# after step 509.
if run profiler "$mprof" record -q -o "$out/profiler.mprof" --capture-range cudaProfilerApi \
  -- "$py" "$loop" --steps 600 --profiler 500:510 && ranges profiler; then
  total=$(field profiler 'd["trace"]["launches"]')
  say "   $total launches; want $((10 * per_step))"
  [ "$total" -eq $((10 * per_step)) ] || failed "profiler: the trace holds $total launches, not 10 steps x $per_step"
  expect_window profiler "cudaProfilerApi: ranges 1-1 recorded"
fi

# 5. --delay 3 --duration 1 of a 6 s loop.
if run timed "$mprof" record -q -o "$out/timed.mprof" --delay 3 --duration 1 \
  -- "$py" "$loop" --seconds 6; then
  line=$(window timed)
  say "   window: $line"
  from=$(echo "$line" | sed -n 's/.*from \([0-9.]*\) s to \([0-9.]*\) s.*/\1/p')
  to=$(echo "$line" | sed -n 's/.*from \([0-9.]*\) s to \([0-9.]*\) s.*/\2/p')
  if [ -z "$from" ] || [ -z "$to" ]; then
    failed "timed: the window line has no times: $line"
  else
    awk -v a="$from" -v b="$to" 'BEGIN { exit !(a >= 3 && b - a >= 0.999 && b - a <= 1.3) }' ||
      failed "timed: recorded from $from s to $to s, not 1 s (at most 1.3) from 3 s on"
  fi
  case $line in *"ended when its --duration of 1 s was up"*) ;; *) failed "timed: the window did not end by its --duration: $line" ;; esac
fi

# 6. --kernel-skip 100 --kernel-count 10 of the elementwise kernels.
if run kernels "$mprof" record -q -o "$out/kernels.mprof" --kernel elementwise \
  --kernel-skip 100 --kernel-count 10 -- "$py" "$loop" --steps 200 && ranges kernels; then
  total=$(field kernels 'd["trace"]["launches"]')
  say "   $total launches; want 10"
  [ "$total" -eq 10 ] || failed "kernels: the trace holds $total launches of --kernel elementwise, not 10"
  expect_window kernels "launches 101-110 recorded"
  expect_window kernels "ended after --kernel-count 10"
fi

# 7. --max-size 8M of the whole loop, without code.
# 5 s of steps stream about 2.5 MB a second: the 2M limit is reached at a
# checkpoint (once a second) well before the end.
if run maxsize "$mprof" record -o "$out/maxsize.mprof" --no-sass --max-size 2M \
  -- "$py" "$loop" --seconds 5; then
  size=$(size_of "$out/maxsize.mprof")
  say "   $size bytes"
  expect_window maxsize "stopped by --max-size"
  [ "$size" -le $((4 << 20)) ] || failed "maxsize: the trace is $size bytes, past twice --max-size 2M"
  grep -q "^mprof: window: .*stopped by --max-size" "$out/maxsize.txt" ||
    failed "maxsize: record's recap does not say --max-size stopped it"
fi

# What it cost: wall time, trace size, the loop's step time outside the
# window next to the plain run.
plain_ms=$(ms_outside plain)
nvtx_ms=$(ms_outside nvtx)
say ""
say "run       wall s   trace bytes   ms/step outside the window"
say "$(printf '%-9s %6s   %11s   %s' plain "$plain_wall" - "${plain_ms:-?}")"
say "$(printf '%-9s %6s   %11s   %s' nvtx "${nvtx_wall:-?}" "$(size_of "$out/nvtx.mprof")" "${nvtx_ms:-?}")"
if [ -n "$plain_ms" ] && [ -n "$nvtx_ms" ]; then
  say "$(awk -v a="$plain_ms" -v b="$nvtx_ms" 'BEGIN { printf "outside the window: %+.1f%% step time against the plain run", 100 * (b - a) / a }')"
  for side in BEFORE AFTER; do
    a=$(ms_outside plain $side) b=$(ms_outside nvtx $side)
    [ -n "$a" ] && [ -n "$b" ] &&
      say "$(awk -v s="$side" -v a="$a" -v b="$b" 'BEGIN { printf "  %s the window: %.4f ms against %.4f (%+.1f%%)", tolower(s), b, a, 100 * (b - a) / a }')"
  done
fi
# MPROF_WINDOW_API=kind, the API-call records of the whole kinds from the
# window's first opening: whether it gives each launch its step range too
# (reported, not checked; the default is checked above).
window=(--capture-range nvtx:step --range-skip 1000 --range-count 4)
prog=("$py" "$loop" --steps "$steps" --quiet-window 1000:1004)
MPROF_WINDOW_API=kind run api_kind "$mprof" record -q -o "$out/api_kind.mprof" \
  "${window[@]}" -- "${prog[@]}" &&
  ranges api_kind &&
  say "   MPROF_WINDOW_API=kind: $(field api_kind 'step["launches"]') of $(field api_kind 'd["trace"]["launches"]') launches in $(field api_kind 'step["instances"]') step ranges; before the window $(ms_outside api_kind BEFORE) ms a step, after $(ms_outside api_kind AFTER); $("$mprof" info "$out/api_kind.mprof" 2>/dev/null | grep -o 'capture.records.api_calls.kept = [0-9]*')"

# What capture costs the steps outside a window, by trigger (reported, not
# checked; tests/gpu/capture_cost.sh holds the bf16 training step to its
# target): CAPTURE_COST_ROUNDS (default 3) interleaved rounds of a plain
# run, the nvtx:step window (steps before and after it), the same with
# MPROF_WINDOW_API=kind and without PC sampling, and windows that never open (nvtx: and cudaProfilerApi);
# the median step time of each against the plain runs' median.
rounds=${CAPTURE_COST_ROUNDS:-3}
variants=(plain_again window kind pcoff never_nvtx never_profiler)
declare -A steps_ms
for ((r = 1; r <= rounds; r++)); do
  for v in "${variants[@]}"; do
    name=cost_${v}_$r
    record=("$mprof" record -q -o "$out/$name.mprof")
    case $v in
    plain_again) run $name "${prog[@]}" ;;
    window) run $name "${record[@]}" "${window[@]}" -- "${prog[@]}" ;;
    kind) MPROF_WINDOW_API=kind run $name "${record[@]}" "${window[@]}" -- "${prog[@]}" ;;
    pcoff) run $name "${record[@]}" --pc-mode off "${window[@]}" -- "${prog[@]}" ;;
    never_nvtx) run $name "${record[@]}" --capture-range nvtx:step --range-skip 1000000 -- "${prog[@]}" ;;
    never_profiler) run $name "${record[@]}" --capture-range cudaProfilerApi -- "${prog[@]}" ;;
    esac
    for side in BEFORE AFTER; do
      steps_ms[$v.$side]+="$(ms_outside $name $side) "
    done
    rm -f "$out/$name.mprof" "$out/$name.mprof".*
  done
done
say ""
say "steps outside the window, medians of $rounds interleaved runs (ms a step; against plain)"
for v in "${variants[@]}"; do
  line=$(printf '  %-15s' "$v")
  for side in BEFORE AFTER; do
    a=$(echo "${steps_ms[plain_again.$side]}" | median) b=$(echo "${steps_ms[$v.$side]}" | median)
    [ -n "$a" ] && [ -n "$b" ] &&
      line+=$(awk -v s="$side" -v a="$a" -v b="$b" 'BEGIN { printf "  %s the window %.4f (%+.1f%%)", tolower(s), b, 100 * (b - a) / a }')
  done
  say "$line"
done
# The driver's callbacks alone still open a cudaProfilerApi window.
if MPROF_WINDOW_PROFILER=driver run profiler_driver "$mprof" record -q -o "$out/profiler_driver.mprof" \
  --capture-range cudaProfilerApi -- "$py" "$loop" --steps 600 --profiler 500:510 && ranges profiler_driver; then
  say "   MPROF_WINDOW_PROFILER=driver: $(field profiler_driver 'd["trace"]["launches"]') launches (want $((10 * per_step)))"
fi
if [ "$failures" -gt 0 ]; then
  say "capture_window: $failures check(s) failed (log: $log)"
  exit 1
fi
say "capture_window: every window held what it was asked for"
exit 0
