#!/usr/bin/env python3
"""Compare mprof's per-kernel durations (CUPTI, from `mprof summary --json`)
with the CUDA-event timings the example printed in the same run
(EVENT_TIMING lines). Prints one row per kernel the program timed.
Exits 1 when the program timed no kernel, or a kernel it timed is not in
the trace or has another launch count there (the durations are printed,
not judged). A program that ran untimed warm-up passes says so
("warmup: W untimed ..." and "N timed passes", as transformer_forward
does): the trace then holds count * (N + W) / N launches of each kernel.

Usage: compare_events.py SUMMARY.json PROGRAM_OUTPUT.txt
"""
import json
import re
import sys


def main():
    summary = json.load(open(sys.argv[1]))
    kernels = summary["kernels"]["items"]
    events = {}
    warmup, timed = 0, None
    for line in open(sys.argv[2]):
        m = re.match(r"warmup: (\d+) untimed", line)
        if m:
            warmup = int(m.group(1))
        m = re.search(r"\b(\d+) timed passes", line)
        if m:
            timed = int(m.group(1))
        m = re.match(r"EVENT_TIMING kernel=(\S+) launches=(\d+) mean_us=([\d.]+)", line)
        if m:
            events[m.group(1)] = (int(m.group(2)), float(m.group(3)))
    failures = 0
    if warmup and not timed:
        print("FAILED: the program ran %d warm-up passes but did not say how many it timed" % warmup)
        return 1
    if not events:
        print("FAILED: the program printed no EVENT_TIMING line")
        return 1
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
            print("FAILED: %s: timed by the program, not in the trace" % name)
            failures += 1
            continue
        k = rows[0]
        mean_us = k["mean_ns"] / 1000.0
        print("%-28s %8d %10.3f us %8d %10.3f us %+7.2f%%" % (
            name, k["launches"], mean_us, count, event_mean,
            100.0 * (mean_us - event_mean) / event_mean))
        expected = count
        if warmup and timed:
            expected = count + count * warmup // timed
        if k["launches"] != expected:
            print("FAILED: %s: %d launches in the trace, %d timed%s" % (
                name, k["launches"], count,
                " + %d untimed warm-up" % (expected - count) if expected != count else ""))
            failures += 1
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
