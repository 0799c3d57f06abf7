#!/usr/bin/env python3
"""Check what mprof says about kernels the user did not write.

Usage: check_libraries.py SUMMARY.json PROGRAM_OUTPUT

SUMMARY.json is `mprof summary --json --all` of a recording of
tests/gpu/thrust_cub.cu; PROGRAM_OUTPUT is what the program printed under
mprof (its last line is "own_launches N"). Prints one row per kernel and
exits 1 when:
- fewer than 8 distinct Thrust/CUB kernels are in the trace, or one is
  named by its mangled symbol (not demangled);
- the program's own kernel does not have exactly its N launches;
- a kernel with 1% or more of the GPU time and PC samples has no SASS
  behind its hot instructions;
- a library kernel is told to use fewer registers (its caller cannot).

SPDX-License-Identifier: MIT
"""
import json
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from score_verdicts import LIBRARY, REGISTER_ADVICE  # noqa: E402

THRUST_CUB = re.compile(r"\b(thrust|cub)::")
OWN = "checksum_keys"


def main(argv):
    if len(argv) != 3:
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        return 2
    try:
        with open(argv[1]) as f:
            doc = json.load(f)
        with open(argv[2]) as f:
            own = int(f.read().split("own_launches")[-1].split()[0])
    except (OSError, ValueError, IndexError) as e:
        print(f"check_libraries: cannot read the inputs: {e}", file=sys.stderr)
        return 2
    items = doc["kernels"]["items"]
    bad = []
    print(f"{'share':>6} {'launches':>8} {'samples':>9} {'sass':>4}  "
          f"{'verdict':<18} kernel")
    library = 0
    for k in items:
        hot = (k.get("hot") or {}).get("instructions") or []
        has_sass = any(i.get("sass") for i in hot)
        name = k["name"]
        print(f"{k['share']:6.1%} {k['launches']:8} {k['samples']:9} "
              f"{'yes' if has_sass else 'no':>4}  "
              f"{k['verdict']['dimension'] or 'none':<18} {name[:90]}")
        if THRUST_CUB.search(name):
            library += 1
        if name.startswith("_Z"):
            bad.append(f"not demangled: {name[:80]}")
        if k["share"] >= 0.01 and k["samples"] and not has_sass:
            bad.append(f"no SASS behind the hot instructions of {name[:80]}")
        if ((THRUST_CUB.search(name) or LIBRARY.search(name)) and
                REGISTER_ADVICE.search(k["verdict"]["text"])):
            bad.append(f"register advice on a library kernel: {name[:80]}")
    launches = sum(k["launches"] for k in items if k["short_name"] == OWN)
    print(f"{library} Thrust/CUB kernels; {OWN}: {launches} launches in the "
          f"trace, {own} by the program's count")
    if library < 8:
        bad.append(f"only {library} Thrust/CUB kernels in the trace")
    if launches != own:
        bad.append(f"{OWN}: {launches} launches in the trace, {own} made")
    for b in bad:
        print(f"FAILED: {b}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
