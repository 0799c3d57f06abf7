#!/bin/bash
# Run several GPU checks one after the other, each in its own folder with a
# time limit, within one overall budget, and write one table of what each
# gave: tests/gpu/NAME.sh OUTDIR/NAME BUILD_DIR for every NAME.
#
# Usage: tests/gpu/suite.sh OUTDIR [BUILD_DIR] [NAME...]
#   NAME       a check beside this script (verdicts, blocks, validate, ...);
#              default: every check that needs no extra arguments
#   GPU_SUITE_BUDGET=SECONDS  the whole run's budget (default 3600): a check
#              gets at most what is left, and one that cannot start with
#              at least GPU_SUITE_MIN=30 s left is listed as not run
#   GPU_SUITE_LIMIT=SECONDS   one check's limit (default 900)
#   GPU_SUITE_DIR=DIR         where the checks are (default: beside this)
#
# Writes OUTDIR/suite.md (one row per check: exit status, seconds, the
# check's FAIL lines) and OUTDIR/NAME.log (everything the check printed).
# Exits 0 when every check passed, 1 when one failed, timed out or was not
# run, and 77 (skipped) when every check that ran skipped (no GPU).
set -uo pipefail
out=${1:?usage: suite.sh OUTDIR [BUILD_DIR] [NAME...]}
build=${2:-build}
[ $# -ge 2 ] && shift 2 || shift $#
here=${GPU_SUITE_DIR:-$(cd "$(dirname "$0")" && pwd)}
budget=${GPU_SUITE_BUDGET:-3600}
limit=${GPU_SUITE_LIMIT:-900}
min=${GPU_SUITE_MIN:-30}
mkdir -p "$out" || exit 2
out=$(cd "$out" && pwd)
build=$(cd "$build" 2>/dev/null && pwd) || { echo "suite: no build folder ${2:-build}" >&2; exit 2; }
names=("$@")
if [ ${#names[@]} -eq 0 ]; then
  names=(verdicts programs faults blocks validate validate_source validate_multi
    sets trace_tab nvtx_sample pm_sweep capture_cost capture_window empty_child
    alternate source_lines kineto ranks calibrate sol_ncu lines_ncu)
fi
for name in "${names[@]}"; do
  [ -f "$here/$name.sh" ] || { echo "suite: no check $here/$name.sh" >&2; exit 2; }
done

table=$out/suite.md
start=$(date +%s)
{
  echo "| check | status | seconds | failed checks |"
  echo "|---|---|---|---|"
} >"$table"
passed=0 failed=0 skipped=0
for name in "${names[@]}"; do
  left=$((budget - ($(date +%s) - start)))
  if [ "$left" -lt "$min" ]; then
    echo "| $name | not run | 0 | the budget of $budget s was spent |" >>"$table"
    echo "suite: $name not run (budget spent)"
    failed=$((failed + 1))
    continue
  fi
  this=$limit
  [ "$left" -lt "$this" ] && this=$left
  rm -rf "${out:?}/$name"
  t0=$(date +%s)
  echo "suite: $name (at most $this s)"
  timeout -k 10 "$this" bash "$here/$name.sh" "$out/$name" "$build" >"$out/$name.log" 2>&1
  status=$?
  seconds=$(($(date +%s) - t0))
  why=$(grep -E '^(FAIL|fail)|FAIL:' "$out/$name.log" | head -n 5 | tr '\n|' '; /')
  case $status in
  0) word=passed; passed=$((passed + 1)) ;;
  77) word=skipped; skipped=$((skipped + 1)) ;;
  124 | 137) word="timed out"; failed=$((failed + 1)); why="past $this s${why:+; $why}" ;;
  *) word="failed ($status)"; failed=$((failed + 1))
    [ -n "$why" ] || why=$(tail -n 2 "$out/$name.log" | tr '\n|' '; /') ;;
  esac
  echo "| $name | $word | $seconds | ${why:--} |" >>"$table"
  echo "suite: $name $word in $seconds s"
done
echo >>"$table"
echo "passed $passed, failed $failed, skipped $skipped of ${#names[@]}" >>"$table"
cat "$table"
[ "$failed" -gt 0 ] && exit 1
[ "$passed" -eq 0 ] && [ "$skipped" -gt 0 ] && exit 77
exit 0
