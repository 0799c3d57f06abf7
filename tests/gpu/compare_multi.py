#!/usr/bin/env python3
"""Check a recorded multi_gpu run per device: for every EVENT_TIMING line
`kernel=NAME@devD`, the trace (`mprof summary --json --all`) must hold
kernel NAME on CUDA device D with the same number of launches, and a mean
duration the events allow. Also prints the PC samples per device.

Events bracket a kernel: their time also holds the gaps around it (the
launch reaching the GPU late on a loaded host, another worker's kernel in
between), so the kernel's mean can only be shorter than the events' mean
(by 5% and 2 us of clock granularity at most longer), and no shorter than
(1 - F) times the shortest bracket (min_us, or the mean when the program
printed no minimum).

Usage: compare_multi.py SUMMARY.json PROGRAM_OUTPUT.txt [--tolerance F]
  --tolerance F  (default 0.25) how much shorter than the shortest
                 bracket the kernel's mean may be
Exit status: 0 when every check holds, 1 otherwise.
"""
import json
import re
import sys


def base_name(kernel):
    """The identifier of a C++ kernel: "saxpy" of "saxpy(float, ...)" or of
    "_Z5saxpyfPKfPfi" when the trace kept the mangled name only."""
    m = re.match(r"_Z(\d+)", kernel["name"])
    if m:
        start = m.end()
        return kernel["name"][start:start + int(m.group(1))]
    return kernel["name"].split("(")[0]


def main():
    args = sys.argv[1:]
    tolerance = 0.25
    if "--tolerance" in args:
        i = args.index("--tolerance")
        tolerance = float(args[i + 1])
        del args[i:i + 2]
    summary = json.load(open(args[0]))
    items = summary["kernels"]["items"]
    devices = sorted(d["id"] for d in summary["devices"])
    events = []
    program_devices = None
    for line in open(args[1]):
        m = re.match(r"EVENT_TIMING kernel=(\S+)@dev(\d+) launches=(\d+) "
                     r"mean_us=([\d.]+)(?: min_us=([\d.]+))?", line)
        if m:
            events.append((m.group(1), int(m.group(2)), int(m.group(3)),
                           float(m.group(4)),
                           float(m.group(5) or m.group(4))))
        m = re.match(r"MULTI_GPU devices=(\d+)", line)
        if m:
            program_devices = int(m.group(1))

    failures = 0

    def check(ok, text):
        nonlocal failures
        print("%-5s %s" % ("ok" if ok else "FAIL", text))
        if not ok:
            failures += 1

    check(program_devices is not None, "the program printed its MULTI_GPU line")
    check(len(devices) == program_devices,
          "the trace has %d devices %s; the program used %s" %
          (len(devices), devices, program_devices))
    check(len(events) > 0, "the program printed EVENT_TIMING lines")
    print("%-18s %4s %9s %9s %12s %12s %8s" %
          ("kernel", "dev", "launches", "events", "CUPTI mean", "event mean",
           "diff"))
    for name, device, count, event_mean, event_min in events:
        rows = [k for k in items
                if k["device"] == device and base_name(k) == name]
        if len(rows) != 1:
            check(False, "%s on device %d: %d rows in the trace" %
                  (name, device, len(rows)))
            continue
        k = rows[0]
        mean_us = k["mean_ns"] / 1000.0
        print("%-18s %4d %9d %9d %9.3f us %9.3f us %+7.2f%%" %
              (name, device, k["launches"], count, mean_us, event_mean,
               100.0 * (mean_us - event_mean) / event_mean))
        check(k["launches"] == count,
              "%s on device %d: %d launches in the trace, %d timed" %
              (name, device, k["launches"], count))
        high = event_mean * 1.05 + 2.0
        low = max(0.0, (1.0 - tolerance) * event_min - 2.0)
        check(low <= mean_us <= high,
              "%s on device %d: mean %.3f us, events mean %.3f us, shortest "
              "%.3f us (allowed %.3f to %.3f us)" %
              (name, device, mean_us, event_mean, event_min, low, high))
    # Every kernel the trace holds on a device was timed there, and the
    # same kernel never shows up on a device the program did not use.
    timed = {(n, d) for n, d, _, _, _ in events}
    for k in items:
        if (base_name(k), k["device"]) not in timed:
            check(False, "the trace has %s on device %s, which the program "
                  "did not time" % (k["name"], k["device"]))
    samples = {d: 0 for d in devices}
    for k in items:
        if k["device"] in samples:
            samples[k["device"]] += k["samples"]
    for d in devices:
        print("PC_SAMPLES device=%d samples=%d" % (d, samples[d]))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
