#!/usr/bin/env python3
"""Check a recorded multi_gpu run per device: for every EVENT_TIMING line
`kernel=NAME@devD`, the trace (`mprof summary --json --all`) must hold
kernel NAME on CUDA device D with the same number of launches, and a mean
duration close to the events' mean. Also prints the PC samples per device.

Usage: compare_multi.py SUMMARY.json PROGRAM_OUTPUT.txt [--tolerance F]
  --tolerance F  allowed |CUPTI mean - event mean| as a fraction of the
                 event mean (default 0.25), or 5 us, whichever is larger:
                 events also time the gaps around each kernel.
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
                     r"mean_us=([\d.]+)", line)
        if m:
            events.append((m.group(1), int(m.group(2)), int(m.group(3)),
                           float(m.group(4))))
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
    for name, device, count, event_mean in events:
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
        allowed = max(tolerance * event_mean, 5.0)
        check(abs(mean_us - event_mean) <= allowed,
              "%s on device %d: mean %.3f us vs events %.3f us (allowed "
              "+/-%.3f)" % (name, device, mean_us, event_mean, allowed))
    # Every kernel the trace holds on a device was timed there, and the
    # same kernel never shows up on a device the program did not use.
    timed = {(n, d) for n, d, _, _ in events}
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
