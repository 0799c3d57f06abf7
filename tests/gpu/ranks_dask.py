#!/usr/bin/env python3
"""tests/gpu/ranks.sh's Python check: mprof.ranks() on a LocalCluster of
two workers over the traces in RUN must give the JSON of `mprof ranks
--json RUN` (in CLI_JSON). Exit 0 when it does.

usage: ranks_dask.py RUN CLI_JSON

SPDX-License-Identifier: MIT
"""
import sys

import mprof


def main() -> int:
    report = mprof.ranks(sys.argv[1], workers=2)
    with open(sys.argv[2]) as f:
        cli = f.read()
    if report.json != cli:
        print("mprof.ranks() and mprof ranks --json differ")
        return 1
    print(report.text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
