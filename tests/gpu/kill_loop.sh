#!/bin/bash
# A PyTorch bf16 training loop with NVTX ranges (kill_loop_train.py), run
# under `mprof record` and killed with SIGKILL at N random moments. Each
# partial trace must open, hold launches, have the code (and with nvdisasm
# the SASS) of every function sampled before the cut, and show the NVTX
# ranges open at the cut, flagged open (kill_loop_check.py). One complete
# run first measures what streaming the used modules costs (the streamed
# file's largest size, META cubins.streamed_bytes, the finished size).
# Writes OUTDIR/kill_loop.md (a table: one row per kill, counts, the
# fraction passing) and keeps every trace and log in OUTDIR; exits 1 when
# any check failed, 0 when all passed, and 77 (skipped) with a line when
# there is no GPU or no PyTorch with CUDA.
#
# Needs only python3 with torch and the built tree (bin/mprof,
# lib/libmprof-cupti.so; build/rtlibs, when there, goes on LD_LIBRARY_PATH).
#
# Usage: tests/gpu/kill_loop.sh OUTDIR [BUILD_DIR]
#   KILL_LOOP_N=50          kills (default 50)
#   KILL_LOOP_MAX_DELAY=10  each kill comes MIN + a uniform 0..MAX s after
#   KILL_LOOP_MIN_DELAY=1.5 the loop's first step (MIN: past the producer's
#                           first checkpoint after that step)
#   KILL_LOOP_SEED=1        the random moments
#   KILL_LOOP_COMPLETE=0    leave out the complete run (for a second batch).
#                           Never run two loops side by side on one GPU: PC
#                           sampling is one process at a time, and a loop
#                           without samples fails
#   KILL_LOOP_DRY_RUN=1     no GPU: kill_loop_standin.py, which streams a
#                           capture through libmprof's writer as the
#                           producer does, stands in for `mprof record`
#                           and the program (its partial file is renamed as
#                           record would); checks the loop, the kills and
#                           the checks themselves. KILL_LOOP_BREAK=code or
#                           =ranges makes the stand-in leave out the module
#                           or the open ranges: every run must then fail
set -uo pipefail
out=${1:?usage: kill_loop.sh OUTDIR [BUILD_DIR]}
build=${2:-build}
mkdir -p "$out" || exit 2
out=$(cd "$out" && pwd)
build=$(cd "$build" 2>/dev/null && pwd) || { echo "kill_loop: no build folder ${2:-build}" >&2; exit 2; }
here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "$here/../.." && pwd)
n=${KILL_LOOP_N:-50}
max_delay=${KILL_LOOP_MAX_DELAY:-10}
min_delay=${KILL_LOOP_MIN_DELAY:-1.5}
seed=${KILL_LOOP_SEED:-1}
dry=${KILL_LOOP_DRY_RUN:-}
mprof=$build/bin/mprof
[ -d "$build/rtlibs" ] && export LD_LIBRARY_PATH="$build/rtlibs:${LD_LIBRARY_PATH:-}"
cuda=${CUDA_HOME:-/usr/local/cuda}
[ -d "$cuda/targets/x86_64-linux/lib" ] &&
  export LD_LIBRARY_PATH="$cuda/targets/x86_64-linux/lib:${LD_LIBRARY_PATH:-}"
export PATH="$cuda/bin:$PATH"

if [ -z "$dry" ]; then
  if ! nvidia-smi -L >/dev/null 2>&1; then
    echo "kill_loop: no GPU here (nvidia-smi -L failed); skipping the GPU checks (KILL_LOOP_DRY_RUN=1 checks the script)"
    exit 77
  fi
  if ! python3 -c 'import torch; assert torch.cuda.is_available()' 2>/dev/null; then
    echo "kill_loop: no PyTorch with CUDA; skipping"
    exit 77
  fi
  for need in "$mprof" "$build/lib/libmprof-cupti.so"; do
    [ -e "$need" ] || { echo "kill_loop: $need is missing; build mprof with the CUDA toolkit present" >&2; exit 2; }
  done
else
  for need in "$mprof" "$build/lib/libmprof.so"; do
    [ -e "$need" ] || { echo "kill_loop: $need is missing" >&2; exit 2; }
  done
fi
sass_flag=
command -v nvdisasm >/dev/null && sass_flag=--sass

table=$out/kill_loop.md
log=$out/kill_loop.log
: >"$log"
say() { echo "$*" | tee -a "$log"; }
say "== kill_loop: $n kills, $min_delay s + 0..$max_delay s after the first step, seed $seed${dry:+, dry run}"
[ -z "$dry" ] && nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee -a "$log"
[ -z "$sass_flag" ] && say "(nvdisasm not found: the code of sampled functions is checked, not their SASS)"

# start DIR [SECONDS]: the program under `mprof record` (or the stand-in)
# in the background, writing DIR/trace.mprof; sets $pid (`mprof record`, or
# the subshell that runs the stand-in).
start() {
  local dir=$1
  if [ -z "$dry" ]; then
    # A crash of the program prints its Python stack (faulthandler) beside
    # the producer's report, so a crash can be told from a kill.
    (cd "$dir" && PYTHONFAULTHANDLER=1 exec "$mprof" record -o "$dir/trace.mprof" -- \
      python3 "$here/kill_loop_train.py" --seconds "${2:-600}" >"$dir/record.out" 2>&1) &
  else
    # Not exec'ed: the subshell stands for `mprof record`, the stand-in is
    # its child, the process killed.
    (cd "$dir" && python3 "$here/kill_loop_standin.py" "$build/lib/libmprof.so" \
      "$src/tests/data/nvdisasm/nvdisasm-kernels.cubin" "$dir/trace.mprof" >"$dir/record.out" 2>&1) 2>/dev/null &
  fi
  pid=$!
}

# The process to kill: the program, `mprof record`'s child (or the
# stand-in, the subshell's).
victim() {
  pgrep -P "$pid" | head -n 1
}

# wait_first_step DIR SECONDS: until the loop printed its first step.
wait_first_step() {
  local i
  for ((i = 0; i < $2 * 10; i++)); do
    grep -q '^step 1$' "$1/record.out" 2>/dev/null && return 0
    kill -0 "$pid" 2>/dev/null || return 1
    sleep 0.1
  done
  return 1
}

# ---- one complete run: what streaming the used modules costs --------------
if [ -z "$dry" ] && [ "${KILL_LOOP_COMPLETE:-1}" != 0 ]; then
  dir=$out/complete
  mkdir -p "$dir"
  t0=$(date +%s.%N)
  export MPROF_VERBOSE=1
  start "$dir" 20
  unset MPROF_VERBOSE
  peak=0
  while kill -0 "$pid" 2>/dev/null; do
    size=$(stat -c %s "$dir/trace.mprof.partial" 2>/dev/null || echo 0)
    [ "$size" -gt "$peak" ] && peak=$size
    sleep 0.2
  done
  wait "$pid"
  status=$?
  t1=$(date +%s.%N)
  "$mprof" info "$dir/trace.mprof" >"$dir/info.txt" 2>&1
  meta() { sed -n "s/^meta       $1 = //p" "$dir/info.txt"; }
  say "complete run: status $status, $(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", b - a }') s;" \
    "streamed file at most $peak bytes; finished trace $(stat -c %s "$dir/trace.mprof" 2>/dev/null) bytes;" \
    "cubins.streamed $(meta cubins.streamed) ($(meta cubins.streamed_bytes) bytes)," \
    "kept $(meta cubins.kept) ($(meta cubins.kept_bytes) bytes) of $(meta cubins.loaded) loaded ($(meta cubins.loaded_bytes) bytes)"
  grep 'mprof-cupti: time' "$dir/record.out" | tee -a "$log"
  if grep -q '^open ' "$dir/info.txt"; then
    say "complete run: FAIL: ranges left open at a normal exit: $(grep '^open ' "$dir/info.txt")"
    complete_failed=1
  fi
fi

# ---- the kills -------------------------------------------------------------
printf '| run | kill after first step (s) | status | opens | partial | launches | sampled functions: with code / with SASS / all | open at the cut | "train" open | twice | trace bytes | CUBINS | ok | why |\n|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n' >"$table"
passed=0
failed=0
checks=()
for ((run = 1; run <= n; run++)); do
  dir=$out/run$run
  rm -rf "$dir"
  mkdir -p "$dir"
  delay=$(awk -v s=$((seed * 100003 + run)) -v lo="$min_delay" -v hi="$max_delay" \
    'BEGIN { srand(s); printf "%.2f", lo + rand() * hi }')
  start "$dir"
  if ! wait_first_step "$dir" 180; then
    kill -9 "$(victim)" "$pid" 2>/dev/null
    { wait "$pid"; } 2>/dev/null
    printf '| %d | %s | - | - | - | - | - | - | - | - | - | - | no | the loop never ran: %s |\n' "$run" "$delay" \
      "$(tail -n 2 "$dir/record.out" | tr '\n|' ' /')" >>"$table"
    failed=$((failed + 1))
    say "run $run: the loop never ran"
    continue
  fi
  sleep "$delay"
  victim_pid=$(victim)
  # A program gone before its kill ended on its own (a crash): a failure
  # of its own, whatever its trace holds.
  died=
  if [ -n "$victim_pid" ]; then
    kill -KILL "$victim_pid"
  else
    died=yes
  fi
  # `mprof record` post-processes the partial trace; 2 minutes at most.
  for ((i = 0; i < 1200; i++)); do
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.1
  done
  kill -9 "$pid" 2>/dev/null
  { wait "$pid"; } 2>/dev/null # no "Killed" line from the shell
  status=$?
  trace=$dir/trace.mprof
  # What `mprof record` does with a killed process's streamed file.
  [ -n "$dry" ] && [ -e "$trace.partial" ] && mv "$trace.partial" "$trace"
  printf '%s\t%s\t%s\n' "$delay" "$status" "$died" >"$dir/kill.tsv"
  # The checks need no GPU: they run while the next run starts.
  (python3 "$here/kill_loop_check.py" "$mprof" "$trace" $sass_flag >"$dir/check.row" 2>&1
    echo $? >"$dir/check.rc") &
  checks+=($!)
  say "run $run: killed $delay s after the first step, status $status${died:+ (it had ended before the kill)}"
  cat "$dir/record.out" >>"$log"
done
[ ${#checks[@]} -gt 0 ] && wait "${checks[@]}"
for ((run = 1; run <= n; run++)); do
  dir=$out/run$run
  [ -e "$dir/kill.tsv" ] || continue
  IFS=$'\t' read -r delay status died <"$dir/kill.tsv"
  verdict=$(cat "$dir/check.rc" 2>/dev/null || echo 1)
  IFS=$'\t' read -r opens partial launches sampled with_code with_sass open_ranges open_names outer_open twice bytes cubins ok why <"$dir/check.row"
  [ "$why" = - ] && why=
  if [ -n "$died" ]; then
    verdict=1
    ok=no
    why="the program ended before the kill (status $status under mprof record)${why:+; $why}"
  fi
  if [ "$verdict" -eq 0 ]; then passed=$((passed + 1)); else failed=$((failed + 1)); fi
  printf '| %d | %s | %s | %s | %s | %s | %s / %s / %s | %s (%s) | %s | %s | %s | %s | %s | %s |\n' \
    "$run" "$delay" "$status" "$opens" "$partial" "$launches" "$with_code" "$with_sass" "$sampled" \
    "$open_ranges" "$open_names" "$outer_open" "$twice" "$bytes" "$cubins" "$ok" "${why//|//}" >>"$table"
  say "run $run: ok $ok${why:+: $why}"
done
total=$((passed + failed))
{
  echo
  echo "passed $passed of $total ($(awk -v p=$passed -v t=$total 'BEGIN { printf "%.0f%%", t ? 100 * p / t : 0 }'))"
} >>"$table"
say "== table"
tee -a "$log" <"$table"
[ "$failed" -eq 0 ] && [ -z "${complete_failed:-}" ]
exit $?
