#!/bin/bash
# mprof record on programs that fork, run several processes, crash, are
# killed or interrupted, or exit without synchronising. For each case: the
# program's exit status under mprof against its status alone, every trace
# written (one per process), whether it opens, whether it is marked partial,
# and its launch count against what the program printed. Writes
# OUTDIR/faults.md (a table) and keeps traces and logs in OUTDIR. Skips
# (exit 77) without a GPU.
#
# Usage: tests/gpu/faults.sh OUTDIR [BUILD_DIR]
#   FAULTS_CASES="sync abort ..." runs only the cases named.
#   BUILD_DIR  a CMake build of mprof with the CUPTI producer and the CUDA
#              examples (bin/mprof, bin/faults, lib/libmprof-cupti.so;
#              default: build)
set -uo pipefail
out=${1:?usage: faults.sh OUTDIR [BUILD_DIR]}
build=${2:-build}
mkdir -p "$out"
out=$(cd "$out" && pwd)
build=$(cd "$build" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
if [ -z "${FAULTS_NO_GPU_CHECK:-}" ] && ! nvidia-smi -L >/dev/null 2>&1; then
  echo "faults: no GPU here (nvidia-smi -L failed); skipping"
  exit 77
fi
mprof=$build/bin/mprof
faults=$build/bin/faults
export MPROF_CUPTI_LIB=${MPROF_CUPTI_LIB:-$build/lib/libmprof-cupti.so}
for need in "$mprof" "$faults" "$MPROF_CUPTI_LIB"; do
  [ -e "$need" ] || { echo "faults: $need is missing" >&2; exit 2; }
done
table=$out/faults.md
log=$out/faults.log
: >"$log"
failures=0
printf '| case | status alone | status under mprof | traces | partial | launches (trace / program) | notes |\n|---|---|---|---|---|---|---|\n' >"$table"

# summarize NAME: per trace in OUTDIR/NAME, launches and whether partial.
traces_of() {
  local dir=$1 n=0 partial=0 launches="" line
  for t in "$dir"/*.mprof; do
    [ -f "$t" ] || continue
    n=$((n + 1))
    if ! "$mprof" info "$t" >"$t.info" 2>&1; then
      launches+="unreadable "
      failures=$((failures + 1))
      continue
    fi
    grep -q '^partial' "$t.info" && partial=$((partial + 1))
    line=$(sed -n 's/^kernels .* \([0-9]*\) launches.*/\1/p' "$t.info")
    launches+="${line:-0} "
  done
  echo "$n|$partial|${launches% }"
}

# case NAME EXPECT_PARTIAL TIMEOUT CMD...: the command alone, then under
# mprof record; the program's last "launched N"/"steps N" is its count.
want() { [ -z "${FAULTS_CASES:-}" ] || [[ " $FAULTS_CASES " == *" $1 "* ]]; }

run_case() {
  want "$1" || return 0
  local name=$1 want_partial=$2 limit=$3
  shift 3
  local dir=$out/$name
  mkdir -p "$dir"
  (cd "$dir" && timeout -k 5 "$limit" "$@" >"$dir/alone.out" 2>&1)
  local alone=$?
  (cd "$dir" && timeout -k 5 "$limit" "$mprof" record -o "$dir/trace.mprof" -- "$@" >"$dir/record.out" 2>&1)
  local status=$?
  finish_case "$name" "$want_partial" "$alone" "$status"
}

finish_case() {
  local name=$1 want_partial=$2 alone=$3 status=$4 dir=$out/$1
  local info counted note=""
  info=$(traces_of "$dir")
  counted=$(grep -Eo '(launched|steps|batches) [0-9]+' "$dir/record.out" | tail -n 1 | awk '{print $2}')
  [ "$alone" = "$status" ] || { note+="status differs; "; failures=$((failures + 1)); }
  local n=${info%%|*} rest=${info#*|}
  local partial=${rest%%|*} launches=${rest#*|}
  [ "$n" -gt 0 ] || { note+="no trace; "; failures=$((failures + 1)); }
  if [ "$want_partial" = yes ] && [ "$partial" -eq 0 ]; then note+="expected partial; "; failures=$((failures + 1)); fi
  if [ "$want_partial" = no ] && [ "$partial" -ne 0 ]; then note+="unexpected partial; "; failures=$((failures + 1)); fi
  local no_ts
  no_ts=$(cat "$dir"/*.info 2>/dev/null | sed -n 's/^counter    activity records without timestamps: //p' | paste -sd+ | bc 2>/dev/null)
  [ -n "$no_ts" ] && [ "$no_ts" != 0 ] && note+="$no_ts launches without timestamps; "
  note+=$(grep -E 'mprof record: (pid|.*killed)' "$dir/record.out" | head -n 3 | sed 's/mprof record: //' | tr '\n' ';' | sed 's/|/\\|/g')
  printf '| %s | %s | %s | %s | %s | %s / %s | %s |\n' "$name" "$alone" "$status" "$n" "$partial" "$launches" "${counted:-?}" "$note" >>"$table"
  echo "== $name: alone $alone, mprof $status, traces $n, partial $partial, launches $launches / ${counted:-?}" | tee -a "$log"
  cat "$dir/record.out" >>"$log"
}

# kill_case NAME SIGNAL DELAY TARGET CMD...: start under mprof record, send
# SIGNAL after DELAY seconds to TARGET (program: the program's process;
# record: mprof record), wait.
kill_case() {
  want "$1" || return 0
  local name=$1 sig=$2 delay=$3 target=$4
  shift 4
  local dir=$out/$name
  mkdir -p "$dir"
  # The status the program alone gets from the same signal.
  (cd "$dir" && exec "$@" >"$dir/alone.out" 2>&1) &
  local pid=$!
  sleep "$delay"
  kill "-$sig" "$pid"
  wait "$pid"
  local alone=$?
  (cd "$dir" && exec "$mprof" record -o "$dir/trace.mprof" -- "$@" >"$dir/record.out" 2>&1) &
  local record=$!
  sleep "$delay"
  date +%s.%N >"$dir/signal.time"
  if [ "$target" = record ]; then
    kill "-$sig" "$record"
  else
    kill "-$sig" "$(pgrep -P "$record" | head -n 1)"
  fi
  ( sleep 60; kill -9 "$record" 2>/dev/null ) &
  local guard=$!
  wait "$record"
  local status=$?
  kill "$guard" 2>/dev/null
  finish_case "$name" yes "$alone" "$status"
  lost_window "$name"
}

# Seconds of the run missing from the trace: from the end of the last GPU
# work it holds to the moment the signal was sent (wall clock, through the
# trace's clock anchor).
lost_window() {
  local dir=$out/$1 t
  t=$(ls "$dir"/*.mprof 2>/dev/null | head -n 1)
  [ -n "$t" ] && [ -f "$dir/signal.time" ] || return
  local lost
  lost=$(python3 - "$t.info" "$dir/signal.time" <<'PY'
import re, sys
info = open(sys.argv[1]).read()
signal = float(open(sys.argv[2]).read())
anchor = re.search(r"clock.anchor.realtime_ns = (\d+)", info)
end = re.search(r"last GPU work ends ([0-9.]+) s after", info)
if not anchor or not end:
    print("?")
else:
    print(f"{signal - int(anchor.group(1)) / 1e9 - float(end.group(1)):.2f} s")
PY
)
  echo "   lost window: $lost" | tee -a "$log"
  sed -i "\$ s/|\$/ lost: $lost |/" "$table"
}

# ctrlc_case NAME DELAY CMD...: in a terminal, Ctrl-C after DELAY seconds
# (SIGINT to the foreground process group: mprof record and the program).
ctrlc_case() {
  want "$1" || return 0
  local name=$1 delay=$2
  shift 2
  local dir=$out/$name
  mkdir -p "$dir"
  local alone status
  alone=$(cd "$dir" && python3 "$here/pty_ctrlc.py" "$delay" "$dir/alone.out" "" "$@")
  status=$(cd "$dir" && python3 "$here/pty_ctrlc.py" "$delay" "$dir/record.out" "$dir/signal.time" "$mprof" record -o "$dir/trace.mprof" -- "$@")
  finish_case "$name" yes "$alone" "$status"
  lost_window "$name"
}

echo "== machine" | tee -a "$log"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee -a "$log"
date -u | tee -a "$log"

run_case sync no 60 "$faults" sync 200
run_case fork no 60 "$faults" fork 200
run_case fork_first no 60 "$faults" fork-first 100
run_case threads_streams no 60 "$faults" threads 100
run_case graph no 60 "$faults" graph 20
run_case exit_nosync no 60 "$faults" nosync 20
run_case abort yes 60 "$faults" abort 20
run_case segv yes 60 "$faults" segv 20
kill_case sigkill KILL 4 program "$faults" loop 30
kill_case sigterm_record TERM 4 record "$faults" loop 30
ctrlc_case ctrl_c 4 "$faults" loop 30
if python3 -c 'import torch; assert torch.cuda.is_available()' 2>/dev/null; then
  run_case torch_two_ranks no 180 python3 -m torch.distributed.run --nproc_per_node=2 "$here/faults_torch.py" ranks
  run_case torch_dataloader no 120 python3 "$here/faults_torch.py" dataloader
  kill_case torch_sigkill KILL 12 program python3 "$here/faults_torch.py" loop 30
else
  echo "faults: no PyTorch with CUDA; the PyTorch cases are skipped" | tee -a "$log"
fi
echo "== table" | tee -a "$log"
cat "$table" | tee -a "$log"
echo "faults: $failures failed checks" | tee -a "$log"
exit $((failures > 0))
