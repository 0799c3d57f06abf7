#!/bin/bash
# Record the planted-bottleneck suite (tests/gpu/bottlenecks.cu) as the
# sample pair samples/bottlenecks.sol.mprof + samples/bottlenecks.default.mprof:
# `mprof record --pm on` once with `--pm-counters sol` and once with the
# default counters, PC sampling off, no SASS and no code kept. Prints the
# speed of light of the two as one set (`mprof summary SOL DEFAULT`), and
# fails unless every measured kernel has in it DRAM, the L2's sectors,
# L1/TEX and SMs active, and the set has the pm_runs note and no
# pm_l2_left_out one. Skips (exit 77) without a GPU.
#
# Usage: tests/gpu/sol_sample.sh OUTDIR [BUILD_DIR]
set -uo pipefail
out=${1:?usage: sol_sample.sh OUTDIR [BUILD_DIR]}
. "$(dirname "$0")/lib.sh"
gpu_setup sol_sample "$out" "${2:-build}"
build_bottlenecks sol_sample
cd "$out" || exit 2
for set in sol default; do
  "$mprof" record --pc-mode off --pm on --pm-counters "$set" --no-sass --drop-code \
    -o "bottlenecks.$set.mprof" -- ./bottlenecks || exit 1
done
"$mprof" summary --json --all bottlenecks.sol.mprof bottlenecks.default.mprof >set.json &&
  "$mprof" summary --human bottlenecks.sol.mprof bottlenecks.default.mprof | tee set.txt || exit 1
python3 - set.json <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
bad = []
for k in d["kernels"]["items"]:
    t = k.get("throughput") or {}
    line = ", ".join("%s %.1f%%" % (q, 100 * t[q]) for q in
                     ("dram", "l2", "l1tex", "sm_active", "issue", "tensor")
                     if t.get(q) is not None)
    print("%-20s %s" % (k["short_name"], line))
    missing = [q for q in ("dram", "l2", "l1tex", "sm_active")
               if t.get(q) is None]
    if t.get("status") == "measured" and missing:
        bad.append("%s: no %s" % (k["short_name"], ", ".join(missing)))
notes = [n["key"] for n in d.get("notes", [])]
if "pm_l2_left_out" in notes:
    bad.append("the set has the pm_l2_left_out note")
if "pm_runs" not in notes:
    bad.append("the set lacks the pm_runs note (two PM runs of one command)")
for b in bad:
    print("FAIL  " + b)
sys.exit(1 if bad else 0)
PY
