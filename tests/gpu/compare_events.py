#!/usr/bin/env python3
"""Compare mprof's per-kernel durations (CUPTI, from `mprof summary --json`)
with the CUDA-event timings the example printed in the same run
(EVENT_TIMING lines). Prints one row per kernel the program timed.

Usage: compare_events.py SUMMARY.json PROGRAM_OUTPUT.txt
"""
import json
import re
import sys


def main():
    summary = json.load(open(sys.argv[1]))
    kernels = summary["kernels"]["items"]
    events = {}
    for line in open(sys.argv[2]):
        m = re.match(r"EVENT_TIMING kernel=(\S+) launches=(\d+) mean_us=([\d.]+)", line)
        if m:
            events[m.group(1)] = (int(m.group(2)), float(m.group(3)))
    print("%-28s %8s %12s %8s %12s %8s" % ("kernel", "launches", "CUPTI mean", "events", "event mean", "diff"))
    for name, (count, event_mean) in events.items():
        if name.startswith("cublas:"):
            continue
        # The examples' kernels are C++ functions: "name(" starts the
        # demangled name, "_Z<len>name" the mangled one.
        mangled = "_Z%d%s" % (len(name), name)
        rows = [k for k in kernels
                if k["name"].startswith(name + "(") or k["mangled"].startswith(mangled)]
        if not rows:
            print("%-28s not in the trace" % name)
            continue
        k = rows[0]
        mean_us = k["mean_ns"] / 1000.0
        print("%-28s %8d %10.3f us %8d %10.3f us %+7.2f%%" % (
            name, k["launches"], mean_us, count, event_mean,
            100.0 * (mean_us - event_mean) / event_mean))


if __name__ == "__main__":
    main()
