#!/usr/bin/env python3
"""Compare mprof's Kineto export with a real Kineto trace, field by field.

Usage: compare_kineto.py REAL.json[.gz] MPROF.json[.gz]

REAL is what torch.profiler wrote for a program; MPROF is `mprof export
--format kineto` of the same program recorded by mprof. Both ran the same
steps (NVTX ranges "step N" under mprof, prof.step() under torch.profiler),
so they must agree on:
  - the top-level keys HTA reads (schemaVersion, deviceProperties,
    traceEvents; distributedInfo's rank when REAL has one) and the keys of
    each deviceProperties entry;
  - the event categories of GPU work and the calls that issued it
    (kernel, gpu_memcpy, gpu_memset, cuda_runtime or cuda_driver, ac2g);
  - the args keys of kernels, copies, memsets and runtime calls (less
    ALLOWED_MISSING, which mprof does not record);
  - ProfilerStep#N spans: at least two, and for every step both have after
    the first, the same number of kernels and the same kernel names,
    each kernel's step being the one around its launching call (HTA's
    rule, hta/common/trace.py add_iteration);
  - a flow (ac2g "s" and "f") for every kernel with a launching call.
Prints each difference and exits 1 when there is any; 2 on bad usage.
"""
import gzip
import json
import re
import sys

# Kineto writes these and mprof's trace does not know them: CUPTI's
# callback id of a runtime call.
ALLOWED_MISSING = {"cuda_runtime": {"cbid"}, "cuda_driver": {"cbid"}}
GPU_CATS = ("kernel", "gpu_memcpy", "gpu_memset")
CALL_CATS = ("cuda_runtime", "cuda_driver")
STEP = re.compile(r"ProfilerStep\s*#\s*(\d+)$")


def load(path):
    try:
        opener = gzip.open if path.endswith(".gz") else open
        with opener(path, "rt", encoding="utf-8") as f:
            return json.load(f)
    except (OSError, ValueError) as e:
        sys.exit("compare_kineto.py: cannot read %s: %s" % (path, e))


class Trace:
    def __init__(self, doc):
        self.doc = doc
        events = doc.get("traceEvents", [])
        self.cats = {}
        for e in events:
            if isinstance(e, dict) and e.get("ph") == "X":
                self.cats.setdefault(e.get("cat"), []).append(e)
        self.flow_cats = {e.get("cat") for e in events
                          if isinstance(e, dict) and e.get("ph") in "sf"}
        self.flows = {}
        for e in events:
            if isinstance(e, dict) and e.get("cat") == "ac2g":
                self.flows.setdefault(e.get("id"), set()).add(e.get("ph"))
        self.calls = {}
        for cat in CALL_CATS:
            for e in self.cats.get(cat, []):
                corr = e.get("args", {}).get("correlation")
                if corr is not None:
                    self.calls[corr] = e
        self.steps = []
        for e in self.cats.get("user_annotation", []):
            m = STEP.match(e.get("name", ""))
            if m:
                self.steps.append((int(m.group(1)), e["ts"], e["dur"]))

    def step_of(self, ts):
        hit = -1
        for number, start, dur in self.steps:
            if start <= ts < start + dur:
                hit = number
        return hit

    def kernels_per_step(self):
        out = {}
        for e in self.cats.get("kernel", []):
            call = self.calls.get(e.get("args", {}).get("correlation"))
            step = self.step_of(call["ts"]) if call else -1
            out.setdefault(step, []).append(e.get("name"))
        return out


def main():
    if len(sys.argv) != 3 or sys.argv[1] in ("-h", "--help"):
        print(__doc__.strip(), file=sys.stderr if len(sys.argv) != 2 else
              sys.stdout)
        sys.exit(0 if len(sys.argv) == 2 else 2)
    real, ours = Trace(load(sys.argv[1])), Trace(load(sys.argv[2]))
    diffs = []

    for key in ("schemaVersion", "deviceProperties", "traceEvents"):
        if key in real.doc and key not in ours.doc:
            diffs.append("top level: no %r" % key)
    if "rank" in real.doc.get("distributedInfo", {}) and \
            "rank" not in ours.doc.get("distributedInfo", {}):
        diffs.append("distributedInfo: no rank")
    real_dev = set(real.doc.get("deviceProperties", [{}])[0] or {})
    for d in ours.doc.get("deviceProperties", []) or [{}]:
        missing = real_dev - set(d)
        if missing:
            diffs.append("deviceProperties: missing %s" % sorted(missing))
            break

    for cat in GPU_CATS + ("user_annotation",):
        if real.cats.get(cat) and not ours.cats.get(cat):
            diffs.append("category %r: %d events in the real trace, none "
                         "in mprof's" % (cat, len(real.cats[cat])))
    if any(real.cats.get(c) for c in CALL_CATS) and \
            not any(ours.cats.get(c) for c in CALL_CATS):
        diffs.append("no cuda_runtime or cuda_driver events")
    if "ac2g" in real.flow_cats and "ac2g" not in ours.flow_cats:
        diffs.append("no ac2g flows")

    for cat in GPU_CATS + CALL_CATS:
        if not real.cats.get(cat) or not ours.cats.get(cat):
            continue
        want = set().union(*(set(e.get("args", {})) for e in real.cats[cat]))
        want -= ALLOWED_MISSING.get(cat, set())
        for e in ours.cats[cat]:
            missing = want - set(e.get("args", {}))
            if cat == "kernel":  # left out where the device is unknown
                missing.discard("est. achieved occupancy %")
            if missing:
                diffs.append("%s %r: args missing %s" %
                             (cat, e.get("name", "")[:60], sorted(missing)))
                break

    if len(ours.steps) < 2:
        diffs.append("%d ProfilerStep spans (HTA needs two or more)" %
                     len(ours.steps))
    rs, os_ = real.kernels_per_step(), ours.kernels_per_step()
    common = sorted(set(n for n, _, _ in real.steps) &
                    set(n for n, _, _ in ours.steps))
    for step in common[1:]:
        a, b = sorted(rs.get(step, [])), sorted(os_.get(step, []))
        if len(a) != len(b):
            diffs.append("ProfilerStep#%d: %d kernels in the real trace, "
                         "%d in mprof's" % (step, len(a), len(b)))
        elif a != b:
            only = sorted(set(a) ^ set(b))
            diffs.append("ProfilerStep#%d: kernel names differ: %s" %
                         (step, [n[:80] for n in only[:4]]))
    if len(common) < 2:
        diffs.append("steps in both traces: %s" % common)

    for e in ours.cats.get("kernel", []):
        corr = e.get("args", {}).get("correlation")
        if corr in ours.calls and ours.flows.get(corr) != {"s", "f"}:
            diffs.append("kernel %r: no ac2g flow from its call" %
                         e.get("name", "")[:60])
            break

    for d in diffs:
        print("DIFF: " + d, file=sys.stderr)
    if diffs:
        sys.exit(1)
    counts = {s: len(os_.get(s, [])) for s in common}
    print("Kineto comparison: schema, categories and args agree; kernels "
          "per step %s" % counts)


if __name__ == "__main__":
    main()
