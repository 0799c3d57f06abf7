#!/bin/bash
# mprof's estimated gains against what the fixes deliver: build
# tests/gpu/calibrate.cu (the planted kernels of bottlenecks.cu, each with a
# fixed twin doing the same work, and kernels with two planted problems),
# record the originals with `mprof record --pm both`, time originals and
# twins with CUDA events (best of 5, outside the recorder), and score each
# headline's estimated gain (`mprof summary --json`) against the measured
# gain, 1 - t_fixed / t_original (tests/gpu/score_calibrate.py). Skips
# (exit 77) without a GPU. Exit 1 on a gain more than 10 points off, or a
# wrong headline (for two problems: not the one whose fix gains more).
#
# Usage: tests/gpu/calibrate.sh OUTDIR [BUILD_DIR]
#   BUILD_DIR  a CMake build of mprof with the CUPTI producer (default: build)
# Environment: CALIBRATE_PM=0 records without --pm both (the PC-sampled run
#   alone: gains without counters); CALIBRATE_CASES="a b" only those cases.
# Writes OUTDIR/calibrate.md (the table, for docs/validation/) and
# OUTDIR/calibrate.json (the rows, machine-readable); the traces and the
# summaries beside them. tests/gpu/selftest.sh calibrate runs this on
# stand-ins.
set -uo pipefail
out=${1:?usage: calibrate.sh OUTDIR [BUILD_DIR]}
. "$(dirname "$0")/lib.sh"
gpu_setup calibrate "$out" "${2:-build}"
build_suite calibrate calibrate
read -r -a chosen <<<"${CALIBRATE_CASES:-}"
pm=(--pm both)
[ "${CALIBRATE_PM:-1}" = 0 ] && pm=()

"$bin" list >"$out/cases.txt" || { echo "FAIL  calibrate list exited $?" >&2; exit 1; }
if [ ${#chosen[@]} -gt 0 ]; then
  grep -E "^($(IFS='|'; echo "${chosen[*]}"))( |\$)" "$out/cases.txt" >"$out/cases.chosen" &&
    mv "$out/cases.chosen" "$out/cases.txt" || { echo "FAIL  no such case: ${chosen[*]}" >&2; exit 2; }
fi
# The traces are removed first: a recorder that writes nothing is never
# scored on an earlier run's.
rm -f "$out"/calibrate.mprof "$out"/calibrate.pm.mprof "$out"/calibrate*.pc.json \
  "$out"/set.json "$out"/times.txt "$out"/calibrate.md "$out"/calibrate.json
"$mprof" record --drop-code "${pm[@]}" -o "$out/calibrate.mprof" -- "$bin" record "${chosen[@]}" \
  >"$out/record.txt" 2>"$out/record.err"
status=$?
cat "$out/record.err"
[ "$status" -eq 0 ] || { echo "FAIL  mprof record of calibrate exited $status" >&2; exit 1; }
traces=("$out/calibrate.mprof")
[ ${#pm[@]} -gt 0 ] && traces+=("$out/calibrate.pm.mprof")
# what each recording kept (PM samples, overflows, restarts), to read
for t in "${traces[@]}"; do "$mprof" info "$t" >"${t%.mprof}.info.txt" 2>&1; done
"$mprof" summary --json --all "${traces[@]}" >"$out/set.json" &&
  "$mprof" summary --human --color=never --all "${traces[@]}" >"$out/summary.txt" ||
  { echo "FAIL  mprof summary of the calibration traces failed" >&2; exit 1; }
# Timed alone, not under the recorder: the gains are the program's.
"$bin" time "${chosen[@]}" >"$out/times.txt" ||
  { echo "FAIL  calibrate time exited $?: $(tail -n 3 "$out/times.txt")" >&2; exit 1; }
device=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -n 1)
python3 "$src/tests/gpu/score_calibrate.py" "$out/cases.txt" "$out/times.txt" "$out/set.json" \
  --markdown "$out/calibrate.md" --json "$out/calibrate.json" --device "${device:-GPU}"
