#!/usr/bin/env python3
"""Compare the headline verdicts of two summaries of the same program.

Usage: compare_headlines.py [--min-share S] [--allow N] REFERENCE.json OTHER.json

Both are `mprof summary --json --all` outputs (e.g. a `record --pm both`
pair opened as a set, and one `record --pm alternate` run). For every kernel
(by short name) with at least S of the reference's GPU time (default 0.01)
prints both headline dimensions and whether they agree, and whether OTHER
measured throughput where REFERENCE did. Exits 1 when more than N kernels
(default 0) disagree or are missing from OTHER, or when OTHER has no
measured throughput for a kernel REFERENCE measured; 2 on unreadable input.

SPDX-License-Identifier: MIT
"""
import json
import sys


def load(path):
    try:
        with open(path) as f:
            doc = json.load(f)
        return {k["short_name"]: k for k in doc["kernels"]["items"]}
    except (OSError, ValueError, KeyError, TypeError) as e:
        print(f"compare_headlines: {path}: {e}", file=sys.stderr)
        sys.exit(2)


def measured(k):
    return (k.get("throughput") or {}).get("status") == "measured"


def main(argv):
    min_share, allow, paths = 0.01, 0, []
    i = 0
    while i < len(argv):
        if argv[i] == "--min-share":
            min_share = float(argv[i + 1])
            i += 2
        elif argv[i] == "--allow":
            allow = int(argv[i + 1])
            i += 2
        else:
            paths.append(argv[i])
            i += 1
    if len(paths) != 2:
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        return 2
    ref, other = load(paths[0]), load(paths[1])
    bad = 0
    rows = 0
    print(f"{'kernel':40} {'share':>6}  {'reference':22} {'other':22} result")
    for name, k in sorted(ref.items(), key=lambda kv: -kv[1]["share"]):
        if k["share"] < min_share:
            continue
        rows += 1
        want = k["verdict"]["dimension"]
        o = other.get(name)
        got = o["verdict"]["dimension"] if o else "(missing)"
        result = "same" if o and got == want else "DIFFERENT"
        if o and measured(k) and not measured(o):
            result = "NOT MEASURED"
        if result != "same":
            bad += 1
        print(f"{name[:40]:40} {k['share']:6.1%}  {want:22} {got:22} {result}")
    print(f"{rows - bad}/{rows} kernels with the same headline "
          f"(allowed to differ: {allow})")
    if rows == 0:
        print("compare_headlines: no kernel above the share threshold",
              file=sys.stderr)
        return 1
    return 1 if bad > allow else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
