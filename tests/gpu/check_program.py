#!/usr/bin/env python3
"""Check what mprof says about a program against what the program says.

Usage: check_program.py SUMMARY.json PROGRAM_OUTPUT [--thrust-cub N]
                        [--max-unsampled SHARE]

SUMMARY.json is `mprof summary --json --all` of a recording; PROGRAM_OUTPUT
is what the program printed under mprof. The program states what it did in
lines of its output:
  launches NAME N          it launched kernel NAME N times from the host
  cluster NAME X           it launched NAME in clusters of X blocks
  device_launches NAME N   other kernels launched NAME N times (reported:
                           whether a trace holds these is CUPTI's choice)
Prints one row per kernel and exits 1 when:
- the program states no launch count (then nothing would be compared);
- a kernel's launches in the trace differ from the program's count, or a
  cluster shape is not in the trace;
- a kernel is named by its mangled symbol (not demangled);
- the trace has no PC samples, or the kernels without samples hold more
  than SHARE (default 0.05) of the GPU time: PC sampling missed kernels
  long enough to be sampled (a kernel's chance of a sample grows with its
  time; only short ones may have none);
- a sampled kernel with 1% or more of the GPU time has no SASS behind its
  hot instructions;
- a library kernel is told to use fewer registers (its caller cannot);
- with --thrust-cub N: fewer than N distinct Thrust/CUB kernels.

SPDX-License-Identifier: MIT
"""
import json
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from score_verdicts import LIBRARY, REGISTER_ADVICE  # noqa: E402

THRUST_CUB = re.compile(r"\b(thrust|cub)::")


def claims(text, word):
    """{NAME: N} from the program's lines "WORD NAME N"."""
    found = {}
    for line in text.splitlines():
        parts = line.split()
        if len(parts) == 3 and parts[0] == word:
            found[parts[1]] = int(parts[2])
    return found


def main(argv):
    args = argv[1:]
    want_library = 0
    max_unsampled = 0.05
    try:
        if "--thrust-cub" in args:
            at = args.index("--thrust-cub")
            want_library = int(args[at + 1])
            del args[at:at + 2]
        if "--max-unsampled" in args:
            at = args.index("--max-unsampled")
            max_unsampled = float(args[at + 1])
            del args[at:at + 2]
    except (IndexError, ValueError):
        args = []
    if len(args) != 2 or any(a.startswith("--") for a in args):
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        return 2
    try:
        with open(args[0]) as f:
            doc = json.load(f)
        with open(args[1]) as f:
            said = f.read()
    except (OSError, ValueError) as e:
        print(f"check_program: cannot read the inputs: {e}", file=sys.stderr)
        return 2
    items = doc["kernels"]["items"]
    bad = []
    print(f"{'share':>6} {'launches':>8} {'samples':>9} {'sass':>4}  "
          f"{'verdict':<18} kernel")
    library = 0
    samples = sum(k["samples"] for k in items)
    unsampled = sum(k["share"] for k in items if not k["samples"])
    for k in items:
        hot = (k.get("hot") or {}).get("instructions") or []
        has_sass = any(i.get("sass") for i in hot)
        name = k["name"]
        print(f"{k['share']:6.1%} {k['launches']:8} {k['samples']:9} "
              f"{'yes' if has_sass else 'no':>4}  "
              f"{k['verdict']['dimension'] or 'none':<18} {name[:90]}")
        library += bool(THRUST_CUB.search(name))
        if name.startswith("_Z"):
            bad.append(f"not demangled: {name[:80]}")
        if k["share"] >= 0.01 and k["samples"] and not has_sass:
            bad.append(f"no SASS behind the hot instructions of {name[:80]}")
        if ((THRUST_CUB.search(name) or LIBRARY.search(name)) and
                REGISTER_ADVICE.search(k["verdict"]["text"])):
            bad.append(f"register advice on a library kernel: {name[:80]}")

    print(f"{samples} PC samples; kernels without samples hold "
          f"{unsampled:.1%} of the GPU time")
    if not samples:
        bad.append("no PC samples in the trace")
    elif unsampled > max_unsampled:
        bad.append(f"kernels without PC samples hold {unsampled:.1%} of the "
                   f"GPU time (at most {max_unsampled:.0%})")

    def of(name):
        return [k for k in items if k["short_name"] == name]

    launches = claims(said, "launches")
    if not launches:
        bad.append("the program states no launch count (no 'launches NAME N' "
                   "line): nothing to compare")
    for name, n in launches.items():
        got = sum(k["launches"] for k in of(name))
        print(f"{name}: {got} launches in the trace, {n} by the program")
        if got != n:
            bad.append(f"{name}: {got} launches in the trace, {n} made")
    for name, x in claims(said, "cluster").items():
        shapes = [s for k in of(name) for s in k["shapes"]["items"]]
        clusters = sorted({s["cluster"][0] for s in shapes})
        print(f"{name}: clusters of {clusters} blocks in the trace, {x} "
              f"launched")
        if clusters != [x]:
            bad.append(f"{name}: cluster sizes {clusters}, {x} launched")
    for name, n in claims(said, "device_launches").items():
        got = sum(k["launches"] for k in of(name))
        print(f"{name}: {got} launches in the trace, {n} launched by kernels "
              f"(not checked)")
    if want_library:
        print(f"{library} Thrust/CUB kernels")
        if library < want_library:
            bad.append(f"only {library} Thrust/CUB kernels in the trace")
    for b in bad:
        print(f"FAILED: {b}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
