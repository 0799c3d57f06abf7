#!/usr/bin/env python3
"""Time the cross-rank report on a synthetic job: RANKS ranks of LAUNCHES
launches each (`mprof synth --steps 20`, default 64 x 1,000,000), rank
RANKS/2 + 1 given gemm_tiled four times slower in step 7 with a barrier
stall profile.

    MPROF_LIBRARY=build/lib/libmprof.so.0 PYTHONPATH=python \\
        python3 bench/bench_ranks.py build/bin/mprof [RANKS [LAUNCHES [DIR]]]

Writes the traces to DIR (default a temporary folder; an existing DIR
with the traces is reused), then times `mprof ranks` (1, 2, 4, 8, ...
threads up to one per core) and mprof.ranks() on a LocalCluster of 1, 2
and all (one per core) worker processes, the cluster's start included
(skipped, and said, where Python lacks the package's dependencies). Every run must name
the planted straggler, its step and gemm_tiled, and Dask's JSON must be
the CLI's. docs/PERFORMANCE.md has the figures.
"""

import json
import os
import subprocess
import sys
import tempfile
import time

try:
    import mprof
except ImportError as e:  # a host without cffi/pandas: the CLI alone
    mprof = None
    WHY_NO_PYTHON = str(e)

STEPS = 20
SLOW_STEP = 7


def synth(cli: str, folder: str, ranks: int, launches: int) -> int:
    straggler = ranks // 2 + 1 if ranks > 2 else ranks - 1
    for r in range(ranks):
        path = os.path.join(folder, f"rank{r:04d}.mprof")
        if os.path.exists(path):
            continue
        slow = (["--slowdown", "300", "--slow-kernel", "0", "--slow-step",
                 str(SLOW_STEP), "--slow-scenario", "barrier"]
                if r == straggler else [])
        subprocess.run([cli, "synth", "-o", path + ".tmp", "--launches",
                        str(launches), "--steps", str(STEPS), "--pcs", "8",
                        "--seed", "7", "--timing-seed", str(r + 1),
                        "--meta", f"rank={r}", "--meta",
                        f"world_size={ranks}", *slow],
                       check=True, stdout=subprocess.DEVNULL)
        os.rename(path + ".tmp", path)
    return straggler


def named(report_json: str, straggler: int) -> str:
    d = json.loads(report_json)
    s = d["stragglers"]
    ok = (len(s) == 1 and s[0]["rank"] == straggler and
          s[0]["step"] == SLOW_STEP and
          s[0]["kernel"]["short_name"].startswith("gemm_tiled"))
    if not ok:
        raise SystemExit(f"the report does not name rank {straggler}, step "
                         f"{SLOW_STEP} and gemm_tiled: {s}")
    return f"rank {s[0]['rank']}, step {s[0]['step']}, " \
           f"{s[0]['kernel']['short_name']}"


def run(cli: str, folder: str, ranks: int, launches: int) -> None:
    straggler = synth(cli, folder, ranks, launches)
    cores = os.cpu_count() or 1
    print(f"{ranks} ranks x {launches:,} launches, {STEPS} steps, "
          f"{cores} cores; planted: rank {straggler}, step {SLOW_STEP}, "
          "gemm_tiled")
    cli_json = None
    jobs_list = sorted({1, 2, cores} | {j for j in (4, 8, 16, 32, 64)
                                         if j < cores})
    for jobs in jobs_list:
        t0 = time.perf_counter()
        out = subprocess.run([cli, "ranks", "--json", "-j", str(jobs), folder],
                             check=True, capture_output=True, text=True).stdout
        took = time.perf_counter() - t0
        cli_json = out
        print(f"mprof ranks -j {jobs}: {took:.2f} s ({named(out, straggler)})")
    if mprof is None:
        print(f"mprof.ranks not timed: {WHY_NO_PYTHON}")
        return
    for workers in sorted({1, 2, cores}):
        t0 = time.perf_counter()
        report = mprof.ranks(folder, workers=workers)
        took = time.perf_counter() - t0
        same = "same JSON as the CLI" if report.json == cli_json else \
            "JSON DIFFERS FROM THE CLI"
        print(f"mprof.ranks, LocalCluster of {workers} worker(s): "
              f"{took:.2f} s ({named(report.json, straggler)}; {same})")
        if report.json != cli_json:
            raise SystemExit(1)


def main() -> None:
    cli = sys.argv[1] if len(sys.argv) > 1 else "mprof"
    ranks = int(sys.argv[2]) if len(sys.argv) > 2 else 64
    launches = int(sys.argv[3]) if len(sys.argv) > 3 else 1_000_000
    if len(sys.argv) > 4:
        os.makedirs(sys.argv[4], exist_ok=True)
        run(cli, sys.argv[4], ranks, launches)
    else:
        with tempfile.TemporaryDirectory() as tmp:
            run(cli, tmp, ranks, launches)


if __name__ == "__main__":
    main()
