#!/usr/bin/env python3
"""Set mprof's hottest SASS instructions beside ncu's for the same kernel.

ncu's Source page (`ncu --section SourceCounters --page source
--print-source sass --csv`) gives warp-stall samples per SASS address; mprof
gives sample shares per function offset (`mprof summary --json`). Offsets
are addresses minus the function's first address.

Usage: compare_ncu.py NCU.csv SUMMARY.json [N]
Exit status 1 when the N hottest instructions differ as a set.
"""
import csv
import json
import sys


def main():
    top = int(sys.argv[3]) if len(sys.argv) > 3 else 5
    rows = list(csv.reader(open(sys.argv[1])))
    head = next(i for i, r in enumerate(rows) if r and r[0] == "Address")
    names = rows[head]
    data = [r for r in rows[head + 1:] if len(r) == len(names)]
    col = names.index("Warp Stall Sampling (All Samples)")
    base = min(int(r[0], 16) for r in data)
    total = sum(float(r[col] or 0) for r in data)
    ncu = {int(r[0], 16) - base: (float(r[col] or 0) / total, r[1].strip()) for r in data}
    summary = json.load(open(sys.argv[2]))
    hot = summary["kernels"]["items"][0]["hot"]["instructions"]
    mprof = {int(str(h["offset"]), 0): h for h in hot}
    ncu_top = sorted(ncu, key=lambda o: -ncu[o][0])[:top]
    print("%-8s %-28s %8s %8s" % ("offset", "SASS (ncu)", "mprof", "ncu"))
    for offset in ncu_top:
        share = mprof[offset]["share"] * 100 if offset in mprof else float("nan")
        print("0x%-6x %-28s %7.2f%% %7.2f%%" % (offset, ncu[offset][1][:28], share, ncu[offset][0] * 100))
    same = set(ncu_top) == set(list(mprof)[:top])
    print("the %d hottest instructions %s" % (top, "agree" if same else "DIFFER"))
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
