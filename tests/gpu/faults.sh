#!/bin/bash
# mprof record on programs that fork, run several processes, crash, are
# killed or interrupted, or exit without synchronising. For each case: the
# program's exit status under mprof against its status alone, every trace
# written (one per process), whether it opens, whether it is marked partial,
# and its launch count against what the program printed. Writes
# OUTDIR/faults.md (a table) and keeps traces and logs in OUTDIR. Skips
# (exit 77) without a GPU, and ends with 77 when the PyTorch cases could
# not run (no PyTorch with CUDA); exit 1 when a check fails.
#
# What must hold, per case (a "failed check" otherwise):
# - the exit status under mprof is the status alone;
# - at least one trace, and every trace opens (`mprof info`);
# - partial exactly when the program crashed or was killed;
# - launches, summed over the case's traces, against the program's count
#   (its last "launched N" per process, summed):
#     exact   runs that end by themselves (crashes after a synchronise
#             included): equal;
#     killed  runs killed in a launch loop that prints after every batch of
#             100: at least FAULTS_KILLED_SHARE (default 0.5) of the count
#             (the trace holds what the GPU finished before the last
#             checkpoint; the issue's bar, under 1 s lost of a 4 s loop,
#             keeps 75%) and at most one batch more (launched after the
#             last line);
#     steps   PyTorch: at least one launch per step or batch printed, and a
#             trace with launches for every process that printed a count;
# - killed and interrupted runs: at most FAULTS_MAX_LOST_S (default 1) s
#   between the end of the last GPU work in the trace and the signal.
#
# Usage: tests/gpu/faults.sh OUTDIR [BUILD_DIR]
#   FAULTS_CASES="sync abort ..." runs only the cases named.
#   FAULTS_KILL_DELAY=S signals the killed cases after S seconds (default:
#              each case's own, 4 s or 12 s).
#   BUILD_DIR  a CMake build of mprof with the CUPTI producer and the CUDA
#              examples (bin/mprof, bin/faults, lib/libmprof-cupti.so;
#              default: build)
# Each case's folder in OUTDIR is emptied before the case runs, so a trace
# left by an earlier run is never counted. tests/gpu/selftest.sh faults runs
# this on stand-ins that write nothing, drop launches, crash or lose the
# last seconds, and expects it to fail.
set -uo pipefail
out=${1:?usage: faults.sh OUTDIR [BUILD_DIR]}
build=${2:-build}
mkdir -p "$out" || exit 2
out=$(cd "$out" && pwd)
build=$(cd "$build" 2>/dev/null && pwd) || { echo "faults: no build folder ${2:-build}" >&2; exit 2; }
here=$(cd "$(dirname "$0")" && pwd)
if ! nvidia-smi -L >/dev/null 2>&1; then
  echo "faults: no GPU here (nvidia-smi -L failed); skipping"
  exit 77
fi
mprof=$build/bin/mprof
faults=$build/bin/faults
export MPROF_CUPTI_LIB=${MPROF_CUPTI_LIB:-$build/lib/libmprof-cupti.so}
for need in "$mprof" "$faults" "$MPROF_CUPTI_LIB"; do
  [ -e "$need" ] || { echo "faults: $need is missing" >&2; exit 2; }
done
killed_share=${FAULTS_KILLED_SHARE:-0.5}
max_lost=${FAULTS_MAX_LOST_S:-1}
table=$out/faults.md
log=$out/faults.log
: >"$log"
failures=0
printf '| case | status alone | status under mprof | traces | partial | launches (trace / program) | notes |\n|---|---|---|---|---|---|---|\n' >"$table"

# failed WHY: one failed check of the current case (in this shell: never
# call it from a $(...) subshell, whose counts are lost).
failed() {
  note+="$1; "
  failures=$((failures + 1))
  echo "FAIL  $case_name: $1" | tee -a "$log"
}

# traces_of DIR: per trace in DIR, whether it opens, is partial and its
# launches; sets n_traces, n_partial, n_with_launches, launches_each,
# launches_total.
traces_of() {
  local t count
  n_traces=0 n_partial=0 n_with_launches=0 launches_each="" launches_total=0
  for t in "$1"/*.mprof; do
    [ -f "$t" ] || continue
    n_traces=$((n_traces + 1))
    if ! "$mprof" info "$t" >"$t.info" 2>&1; then
      launches_each+="unreadable "
      failed "$(basename "$t") does not open: $(head -n 1 "$t.info")"
      continue
    fi
    grep -q '^partial' "$t.info" && n_partial=$((n_partial + 1))
    count=$(sed -n 's/^kernels .* \([0-9][0-9]*\) launch.*/\1/p' "$t.info")
    count=${count:-0}
    launches_each+="$count "
    launches_total=$((launches_total + count))
    [ "$count" -eq 0 ] || n_with_launches=$((n_with_launches + 1))
  done
  launches_each=${launches_each% }
}

# program_count FILE: "TOTAL PROCESSES" from the program's output: the last
# "launched N" (or "steps N", "batches N", "step N") of each process (the
# words before it tell processes apart: "child", "rank 1 pid 42"), summed.
program_count() {
  awk '{
    for (i = 1; i < NF; i++)
      if ($i ~ /^(launched|steps|batches|step)$/ && $(i + 1) ~ /^[0-9]+$/) {
        key = ""
        for (j = 1; j < i; j++) key = key " " $j
        last[key] = $(i + 1)
        break
      }
  } END { t = 0; n = 0; for (k in last) { t += last[k]; n++ } if (n) print t, n }' "$1"
}

want() { [ -z "${FAULTS_CASES:-}" ] || [[ " $FAULTS_CASES " == *" $1 "* ]]; }

# fresh NAME: an empty folder for the case (nothing of an earlier run).
fresh() {
  rm -rf "${out:?}/$1" && mkdir -p "$out/$1" || { echo "faults: cannot empty $out/$1" >&2; exit 2; }
}

# run_case NAME EXPECT_PARTIAL COUNT_RULE TIMEOUT CMD...: the command
# alone, then under mprof record.
run_case() {
  want "$1" || return 0
  local name=$1 want_partial=$2 rule=$3 limit=$4
  shift 4
  local dir=$out/$name
  fresh "$name"
  (cd "$dir" && timeout -k 5 "$limit" "$@" >"$dir/alone.out" 2>&1)
  local alone=$?
  (cd "$dir" && timeout -k 5 "$limit" "$mprof" record -o "$dir/trace.mprof" -- "$@" >"$dir/record.out" 2>&1)
  local status=$?
  finish_case "$name" "$want_partial" "$rule" "$alone" "$status"
}

finish_case() {
  local name=$1 want_partial=$2 rule=$3 alone=$4 status=$5 dir=$out/$1
  local counted procs low high
  case_name=$name note=""
  traces_of "$dir"
  read -r counted procs <<<"$(program_count "$dir/record.out")"
  [ "$alone" = "$status" ] || failed "exit status $status under mprof, $alone alone"
  [ "$n_traces" -gt 0 ] || failed "no trace"
  if [ "$want_partial" = yes ] && [ "$n_partial" -eq 0 ]; then failed "expected partial"; fi
  if [ "$want_partial" = no ] && [ "$n_partial" -ne 0 ]; then failed "unexpected partial"; fi
  if [ -z "${counted:-}" ]; then
    failed "the program printed no count"
  elif [ "$n_traces" -gt 0 ]; then
    case $rule in
    exact)
      [ "$launches_total" -eq "$counted" ] ||
        failed "$launches_total launches in the trace, $counted launched"
      ;;
    killed)
      low=$(awk -v c="$counted" -v s="$killed_share" 'BEGIN { printf "%d", c * s }')
      high=$((counted + 100))
      [ "$launches_total" -ge "$low" ] && [ "$launches_total" -le "$high" ] ||
        failed "$launches_total launches in the trace, $counted launched (killed: $low to $high accepted)"
      ;;
    steps)
      [ "$launches_total" -ge "$counted" ] ||
        failed "$launches_total launches in the trace for $counted steps"
      [ "$n_with_launches" -ge "$procs" ] ||
        failed "$n_with_launches traces with launches for $procs processes that ran steps"
      ;;
    esac
  fi
  local no_ts
  no_ts=$(cat "$dir"/*.info 2>/dev/null | sed -n 's/^counter    activity records without timestamps: //p' | paste -sd+ | bc 2>/dev/null)
  [ -n "$no_ts" ] && [ "$no_ts" != 0 ] && note+="$no_ts launches without timestamps; "
  note+=$(grep -E 'mprof record: (pid|.*killed)' "$dir/record.out" | head -n 3 | sed 's/mprof record: //' | tr '\n' ';' | sed 's/|/\\|/g')
  printf '| %s | %s | %s | %s | %s | %s / %s | %s |\n' "$name" "$alone" "$status" "$n_traces" "$n_partial" "$launches_each" "${counted:-?}" "$note" >>"$table"
  echo "== $name: alone $alone, mprof $status, traces $n_traces, partial $n_partial, launches $launches_each / ${counted:-?}" | tee -a "$log"
  cat "$dir/record.out" >>"$log"
}

# kill_case NAME SIGNAL DELAY TARGET COUNT_RULE CMD...: start under mprof
# record, send SIGNAL after DELAY seconds to TARGET (program: the
# program's process; record: mprof record), wait.
kill_case() {
  want "$1" || return 0
  local name=$1 sig=$2 delay=${FAULTS_KILL_DELAY:-$3} target=$4 rule=$5
  shift 5
  local dir=$out/$name
  fresh "$name"
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
  # A guard in its own session, so that ending it ends its sleep too.
  setsid sh -c 'sleep 60; kill -9 "$1"' sh "$record" >/dev/null 2>&1 &
  local guard=$!
  wait "$record"
  local status=$?
  kill -- "-$guard" 2>/dev/null
  finish_case "$name" yes "$rule" "$alone" "$status"
  lost_window "$name"
}

# Seconds of the run missing from the trace: from the end of the last GPU
# work it holds to the moment the signal was sent (wall clock, through the
# trace's clock anchor). More than FAULTS_MAX_LOST_S fails.
lost_window() {
  local dir=$out/$1 t lost
  t=$(ls "$dir"/*.mprof 2>/dev/null | head -n 1)
  [ -n "$t" ] && [ -f "$t.info" ] && [ -f "$dir/signal.time" ] || return
  lost=$(awk -v signal="$(cat "$dir/signal.time")" '
    /clock.anchor.realtime_ns = / { anchor = $NF }
    /last GPU work ends [0-9.]+ s after/ {
      for (i = 1; i < NF; i++) if ($i == "ends") end = $(i + 1)
    }
    END {
      if (anchor == "" || end == "") print "?"
      else printf "%.2f\n", signal - anchor / 1e9 - end
    }' "$t.info")
  echo "   lost window: $lost s" | tee -a "$log"
  sed -i "\$ s/|\$/ lost: $lost s |/" "$table"
  case_name=$1
  if [ "$lost" = "?" ]; then
    failed "no clock anchor or end of GPU work in $(basename "$t"): the lost window is unknown"
  elif awk -v l="$lost" -v m="$max_lost" 'BEGIN { exit !(l > m) }'; then
    failed "$lost s lost between the last GPU work in the trace and the signal (at most $max_lost s)"
  fi
}

# ctrlc_case NAME DELAY CMD...: in a terminal, Ctrl-C after DELAY seconds
# (SIGINT to the foreground process group: mprof record and the program).
ctrlc_case() {
  want "$1" || return 0
  local name=$1 delay=${FAULTS_KILL_DELAY:-$2}
  shift 2
  local dir=$out/$name
  fresh "$name"
  local alone status
  alone=$(cd "$dir" && python3 "$here/pty_ctrlc.py" "$delay" "$dir/alone.out" "" "$@")
  status=$(cd "$dir" && python3 "$here/pty_ctrlc.py" "$delay" "$dir/record.out" "$dir/signal.time" "$mprof" record -o "$dir/trace.mprof" -- "$@")
  finish_case "$name" yes killed "$alone" "$status"
  lost_window "$name"
}

echo "== machine" | tee -a "$log"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee -a "$log"
date -u | tee -a "$log"

run_case sync no exact 60 "$faults" sync 200
run_case fork no exact 60 "$faults" fork 200
run_case fork_first no exact 60 "$faults" fork-first 100
run_case threads_streams no exact 60 "$faults" threads 100
run_case graph no exact 60 "$faults" graph 20
run_case exit_nosync no exact 60 "$faults" nosync 20
run_case abort yes exact 60 "$faults" abort 20
run_case segv yes exact 60 "$faults" segv 20
kill_case sigkill KILL 4 program killed "$faults" loop 30
kill_case sigterm_record TERM 4 record killed "$faults" loop 30
ctrlc_case ctrl_c 4 "$faults" loop 30
torch_cases="torch_two_ranks torch_dataloader torch_sigkill"
torch_wanted=0
for c in $torch_cases; do want "$c" && torch_wanted=1; done
if [ "$torch_wanted" = 0 ]; then
  :
elif python3 -c 'import torch; assert torch.cuda.is_available()' 2>/dev/null; then
  run_case torch_two_ranks no steps 180 python3 -m torch.distributed.run --nproc_per_node=2 "$here/faults_torch.py" ranks
  run_case torch_dataloader no steps 120 python3 "$here/faults_torch.py" dataloader
  kill_case torch_sigkill KILL 12 program steps python3 "$here/faults_torch.py" loop 30
else
  # Asked for by name, they must run; else they are skipped, and said so.
  for c in $torch_cases; do
    if [ -n "${FAULTS_CASES:-}" ] && want "$c"; then
      case_name=$c note=""
      failed "asked for, but there is no PyTorch with CUDA here"
    fi
  done
  echo "faults: SKIP the PyTorch cases: no PyTorch with CUDA here (FAULTS_CASES can leave them out)" | tee -a "$log"
  torch_skipped=1
fi
echo "== table" | tee -a "$log"
cat "$table" | tee -a "$log"
echo "faults: $failures failed checks" | tee -a "$log"
[ "$failures" -eq 0 ] || exit 1
# Cases that could not run make the run skipped (77), not passed.
[ "${torch_skipped:-0}" = 0 ] || exit 77
exit 0
