#!/usr/bin/env python3
"""Time the Python package's DataFrames on a synthetic trace.

    MPROF_LIBRARY=build/lib/libmprof.so.0 PYTHONPATH=python \\
        python3 bench/bench_python.py build/bin/mprof [LAUNCHES]

Writes a trace of LAUNCHES launches (default 1,000,000) and one with
about as many activity spans with `mprof synth`, then times mprof.open()
and each frame on a freshly opened trace (kernels() includes building the
join, diagnosis() the diagnosis), best of three, and the peak RSS. docs/PERFORMANCE.md has the figures.
"""

import os
import resource
import subprocess
import sys
import tempfile
import time

import mprof


def best(fn, runs=3):
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t0)
    return min(times), out


def main() -> None:
    cli = sys.argv[1] if len(sys.argv) > 1 else "mprof"
    launches = int(sys.argv[2]) if len(sys.argv) > 2 else 1_000_000
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "bench.mprof")
        subprocess.run([cli, "synth", "-o", path, "--launches",
                        str(launches), "--kernels", "32", "--streams", "8"],
                       check=True, stdout=subprocess.DEVNULL)
        spans = os.path.join(tmp, "spans.mprof")
        subprocess.run([cli, "synth", "-o", spans, "--launches", "1000",
                        "--spans", str(launches)], check=True,
                       stdout=subprocess.DEVNULL)
        size = os.path.getsize(path)
        print(f"trace: {launches:,} launches, {size / 1e6:.1f} MB")
        t, trace = best(lambda: mprof.open(path))
        trace.close()
        print(f"{'mprof.open':<16} {t * 1e3:8.1f} ms")
        for name, path in [("kernels", path), ("launches", path),
                           ("copies", path), ("pc_samples", path),
                           ("diagnosis", path), ("spans", spans)]:
            # kernels() includes the join, diagnosis() the diagnosis: both
            # are built once per trace, so time a fresh trace for those.
            def frame(name=name, path=path):
                fresh = mprof.open(path)
                t0 = time.perf_counter()
                df = getattr(fresh, name)()
                dt = time.perf_counter() - t0
                fresh.close()
                return dt, df
            runs = [frame() for _ in range(3)]
            dt = min(r[0] for r in runs)
            rows = len(runs[0][1])
            print(f"{name + '()':<16} {dt * 1e3:8.1f} ms  {rows:>9,} rows")
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"peak RSS {rss:.0f} MiB")


if __name__ == "__main__":
    main()
