#!/bin/sh
# SIGTERM and SIGINT at random moments of a process's exit, RUNS times in a
# row, alternating the injection library itself and its translator filled
# with data (stress_exit.c says what one run does and checks). Stops at the
# first failure and says how to repeat the series.
# usage: tests/cupti/stress_exit.sh RUNS [BUILD_DIR] [TMPDIR]
#   STRESS_SEED=N  start the seeds at N (default: the time)
runs=${1:-100}
build=${2:-build}
tmp=${3:-${TMPDIR:-/tmp}}
bin=$build/bin/stress_exit
lib=$build/lib/libmprof-cupti.so
if [ ! -x "$bin" ] || [ ! -f "$lib" ]; then
  echo "stress_exit.sh: build $bin and $lib first (targets stress_exit, mprof-cupti)"
  exit 2
fi
out=$tmp/stress-exit.$$.mprof
first=${STRESS_SEED:-$(date +%s)}
i=0
before=0
after=0
while [ "$i" -lt "$runs" ]; do
  seed=$((first + i))
  if [ $((i % 2)) -eq 0 ]; then
    line=$("$bin" library "$lib" "$out" "$seed")
  else
    line=$("$bin" translator "$out" "$seed")
  fi
  status=$?
  echo "$line"
  if [ "$status" -ne 0 ]; then
    echo "stress_exit.sh: run $((i + 1)) of $runs failed; STRESS_SEED=$first repeats the series"
    exit 1
  fi
  case $line in
    *"killed by signal"*"PATH.partial opens"*) before=$((before + 1)) ;;
    *"killed by signal"*) after=$((after + 1)) ;;
  esac
  i=$((i + 1))
done
echo "stress_exit.sh: $runs runs in a row passed; the signal ended the process during its exit in $((before + after)): $before before the finished trace was in place (PATH.partial opened), $after after; in the others it came too late"
