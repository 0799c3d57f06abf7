#!/usr/bin/env python3
"""Set mprof's hottest SASS instructions beside ncu's for the same kernel.

ncu's Source page (`ncu -k NAME --section SourceCounters --page source
--print-source sass --csv`) gives warp-stall samples per SASS address of the
one kernel it profiled; mprof gives sample shares per function offset
(`mprof summary --json`) for every kernel. Offsets are addresses minus the
function's first address. The kernel compared on mprof's side is the one
ncu profiled, found by name: the one whose demangled name is NAME or starts
with "NAME(", whose short name is NAME, or whose mangled name is NAME.

Usage: compare_ncu.py --kernel NAME NCU.csv SUMMARY.json [N]
Exit status 1 when the N (default 5) hottest instructions differ as a set,
when no kernel or more than one is named NAME in the summary, or when
either side has fewer than N sampled instructions; 2 on bad input.

SPDX-License-Identifier: MIT
"""
import csv
import json
import sys


def usage():
    print(next(l for l in __doc__.splitlines() if l.startswith("Usage:")),
          file=sys.stderr)
    return 2


def named(kernels, name):
    """The summary's kernels that are the kernel ncu profiled as NAME."""
    return [k for k in kernels
            if k["name"] == name or k["name"].startswith(name + "(")
            or k.get("short_name") == name or k.get("mangled") == name]


SAMPLES = "Warp Stall Sampling (All Samples)"


def ncu_sass_samples(rows, path):
    """{offset in the function: (warp samples, SASS text)} from the CSV
    rows of ncu's Source page with --print-source sass (the program's own
    output may come first); ValueError when the rows are not that page."""
    head = next((i for i, r in enumerate(rows) if r and r[0] == "Address"),
                None)
    if head is None:
        raise ValueError(f"{path} has no 'Address' row: not ncu's Source "
                         "page as CSV")
    names = rows[head]
    if SAMPLES not in names:
        raise ValueError(f"{path} has no '{SAMPLES}' column")
    col = names.index(SAMPLES)
    data = [r for r in rows[head + 1:] if len(r) == len(names)]
    if not data:
        return {}
    base = min(int(r[0], 16) for r in data)
    return {int(r[0], 16) - base: (float(r[col] or 0), r[1].strip())
            for r in data}


def main(argv):
    args = argv[1:]
    if len(args) < 2 or args[0] != "--kernel":
        return usage()
    name = args[1]
    args = args[2:]
    if len(args) not in (2, 3):
        return usage()
    try:
        top = int(args[2]) if len(args) > 2 else 5
        rows = list(csv.reader(open(args[0], errors="replace")))
        summary = json.load(open(args[1]))
    except (OSError, ValueError) as e:
        print(f"compare_ncu: cannot read the inputs: {e}", file=sys.stderr)
        return 2
    try:
        samples = ncu_sass_samples(rows, args[0])
    except ValueError as e:
        print(f"compare_ncu: {e}", file=sys.stderr)
        return 2
    if not samples:
        print(f"FAILED: {args[0]} has no instructions", file=sys.stderr)
        return 1
    total = sum(v for v, _ in samples.values())
    if total <= 0:
        print(f"FAILED: ncu sampled no warp stalls in {args[0]}")
        return 1
    ncu = {o: (v / total, text) for o, (v, text) in samples.items()}

    found = named(summary["kernels"]["items"], name)
    if len(found) != 1:
        print(f"FAILED: {len(found)} kernels in {args[1]} are named {name} "
              f"(ncu profiled one): "
              + ", ".join(k["name"][:60] for k in found))
        return 1
    kernel = found[0]
    hot = (kernel.get("hot") or {}).get("instructions") or []
    mprof = {int(str(h["offset"]), 0): h for h in hot}
    mprof_top = sorted(mprof, key=lambda o: -mprof[o]["share"])[:top]
    ncu_top = [o for o in sorted(ncu, key=lambda o: -ncu[o][0])
               if ncu[o][0] > 0][:top]
    print(f"kernel: {kernel['name'][:100]}")
    print("%-8s %-28s %8s %8s" % ("offset", "SASS (ncu)", "mprof", "ncu"))
    for offset in ncu_top:
        share = mprof[offset]["share"] * 100 if offset in mprof else float("nan")
        print("0x%-6x %-28s %7.2f%% %7.2f%%" % (offset, ncu[offset][1][:28], share, ncu[offset][0] * 100))
    if len(ncu_top) < top or len(mprof_top) < top:
        print(f"FAILED: {len(ncu_top)} instructions sampled by ncu, "
              f"{len(mprof_top)} hot in mprof; {top} are compared")
        return 1
    same = set(ncu_top) == set(mprof_top)
    print("the %d hottest instructions %s" % (top, "agree" if same else "DIFFER"))
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
