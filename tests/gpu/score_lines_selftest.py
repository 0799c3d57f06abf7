#!/usr/bin/env python3
"""Check tests/gpu/score_lines.py without a GPU: on a recorded trace
(samples/bottlenecks.mprof: its `summary --by-line` JSON and its
sidecar), ncu's Source page is stood in for by the trace's own samples
per instruction, written as ncu writes the page (the program's output
first, then "Address","Source",...,"Warp Stall Sampling (All Samples)").
The same samples must score distance 0 and pass; each sample moved to the
next instruction of another line must score past 0.03 and fail; a CSV
that is not the Source page must exit 2.

usage: score_lines_selftest.py MPROF TRACE TMPDIR

SPDX-License-Identifier: MIT
"""
import csv
import json
import os
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
KERNEL = "dram_stream"


def standin_csv(path, sidecar, shift):
    reasons = sidecar["stall_reasons"]
    func = next(f for f in sidecar["functions"]
                if str(f.get("demangled")).startswith(KERNEL + "("))
    ins = func["instructions"]
    offsets = [i[0] for i in ins]

    def moved(offset):
        # the next instruction on another line (else the previous one)
        k = offsets.index(offset)
        later = [j for j in range(k + 1, len(ins)) if ins[j][5] != ins[k][5]]
        earlier = [j for j in range(k - 1, -1, -1) if ins[j][5] != ins[k][5]]
        return offsets[(later or earlier or [k])[0]]

    with open(path, "w", newline="") as f:
        f.write("==PROF== Connected to process 1 (bottlenecks)\n")
        w = csv.writer(f, quoting=csv.QUOTE_ALL)
        w.writerow(["Address", "Source", "Warp Stall Sampling (All Samples)"])
        for offset, counts in func["pcs"]:
            n = sum(v for r, v in counts.items()
                    if not reasons[int(r)].endswith("_not_issued"))
            at = moved(offset) if shift else offset
            w.writerow([hex(0x7F4A00 + at), "SASS", str(n)])


def score(case):
    return subprocess.run([sys.executable, os.path.join(HERE, "score_lines.py"),
                           case], capture_output=True, text=True)


def main(argv):
    if len(argv) != 4:
        print(__doc__.strip().splitlines()[-3], file=sys.stderr)
        return 2
    mprof, trace, tmp = argv[1:]
    os.makedirs(tmp, exist_ok=True)
    copy = os.path.join(tmp, "bottlenecks.mprof")
    shutil.copy(trace, copy)
    shutil.copy(trace + ".pc.json", copy + ".pc.json")
    lines = os.path.join(tmp, "lines.json")
    with open(lines, "w") as f:
        subprocess.run([mprof, "summary", "--by-line", "--all", "--json", copy],
                       stdout=f, check=True)
    sidecar_path = copy + ".pc.json"  # completed by the summary
    sidecar = json.load(open(sidecar_path))
    failures = 0
    for name, shift, want in (("same", 0, 0), ("moved", 1, 1)):
        csv_path = os.path.join(tmp, f"ncu_{name}.csv")
        standin_csv(csv_path, sidecar, shift)
        r = score(f"{KERNEL}={csv_path}={lines}={sidecar_path}")
        ok = r.returncode == want and (
            "distance 0.000" in r.stdout if want == 0 else "FAIL" in r.stdout)
        said = r.stdout.splitlines()[0] if r.stdout else r.stderr.strip()
        print(("ok    " if ok else "FAIL  ") + f"{name}: exit {r.returncode}: "
              + said)
        failures += not ok
    bad = os.path.join(tmp, "ncu_bad.csv")
    with open(bad, "w") as f:
        f.write('"File Name","bottlenecks.cu"\n"Line No","Source"\n"1","/*"\n')
    r = score(f"{KERNEL}={bad}={lines}={sidecar_path}")
    ok = r.returncode == 2 and "no 'Address' row" in r.stderr
    print(("ok    " if ok else "FAIL  ") + f"not the Source page: exit "
          f"{r.returncode}: {r.stderr.strip()}")
    failures += not ok
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
