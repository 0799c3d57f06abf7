#!/usr/bin/env python3
"""`mprof export --format kineto` as Holistic Trace Analysis (HTA) reads it.

HTA is on PyPI only, so CI cannot install it; this test applies the fields
and rules HTA's parser requires, each cited from its source
(github.com/facebookresearch/HolisticTraceAnalysis, hta/), and compares the
schema with a real trace torch.profiler wrote (HTA's
tests/data/ns_resolution_trace/rank-0.Apr_03_18_51_38.1102.pt.trace.json.gz:
its key sets are copied below). The kernel totals must equal `mprof
summary`'s. With MPROF_HTA_DIR naming an HTA checkout (and pandas, numpy,
plotly, networkx, psutil, yaml importable), HTA's TraceAnalysis itself runs
on the export and its kernel totals are checked too.

It also self-tests tests/gpu/compare_kineto.py (the GPU check's
field-by-field comparison): an export compared with itself passes, and a
copy missing each field HTA needs must fail.

Usage: test_export_kineto.py MPROF SAMPLES_DIR COMPARE_PY TMPDIR FIXTURE
(FIXTURE: tests/kineto_fixture, which writes a trace of a repeating launch
pattern with its calls and no NVTX ranges.)
"""
import copy
import json
import os
import re
import shutil
import subprocess
import sys

mprof, samples, compare_py, tmp_root, fixture = sys.argv[1:6]
tmp = os.path.join(tmp_root, "export_kineto.%d" % os.getpid())
os.makedirs(tmp, exist_ok=True)
failures = []


def fail(message):
    failures.append(message)
    print("FAIL: " + message, file=sys.stderr)


def run(*args):
    return subprocess.run([mprof, *args], capture_output=True, text=True)


# What torch.profiler (Kineto) writes, from the real trace named above.
KINETO_TOP = {"schemaVersion", "deviceProperties", "traceEvents",
              "traceName", "displayTimeUnit"}
KINETO_DEVICE = {"id", "name", "totalGlobalMem", "computeMajor",
                 "computeMinor", "maxThreadsPerBlock",
                 "maxThreadsPerMultiprocessor", "regsPerBlock",
                 "regsPerMultiprocessor", "warpSize", "sharedMemPerBlock",
                 "sharedMemPerMultiprocessor", "numSms",
                 "sharedMemPerBlockOptin"}
KINETO_ARGS = {
    "kernel": {"External id", "queued", "device", "context", "stream",
               "correlation", "registers per thread", "shared memory",
               "blocks per SM", "warps per SM", "grid", "block",
               "est. achieved occupancy %"},
    "cuda_runtime": {"External id", "correlation"},  # and "cbid"
    "gpu_memcpy": {"External id", "device", "context", "stream",
                   "correlation", "bytes", "memory bandwidth (GB/s)"},
    "gpu_memset": {"External id", "device", "context", "stream",
                   "correlation", "bytes", "memory bandwidth (GB/s)"},
    "user_annotation": {"External id"},
}
GPU_CATS = ("kernel", "gpu_memcpy", "gpu_memset")
HOST_CATS = ("cuda_runtime", "cuda_driver")


def export(name, *extra):
    out = os.path.join(tmp, name + ".json")
    r = run("export", "--format", "kineto", "-o", out, *extra,
            os.path.join(samples, name + ".mprof"))
    if r.returncode != 0:
        fail("%s: export exited %d: %s" % (name, r.returncode, r.stderr))
        return None, None
    if "Kineto JSON" not in r.stdout:
        fail("%s: no recap naming the format: %r" % (name, r.stdout))
    with open(out, encoding="utf-8") as f:
        text = f.read()
    return text, json.loads(text)


def summary(name):
    r = run("summary", "--json", "--all", os.path.join(samples, name + ".mprof"))
    return json.loads(r.stdout)


def check_schema(name, text, doc):
    """Field and rule checks, each from HTA's parser."""
    missing = KINETO_TOP - set(doc)
    if missing:
        fail("%s: top-level keys missing: %s" % (name, sorted(missing)))
    if doc.get("schemaVersion") != 1:
        fail("%s: schemaVersion %r" % (name, doc.get("schemaVersion")))
    for d in doc.get("deviceProperties", []):
        if set(d) != KINETO_DEVICE:
            fail("%s: deviceProperties keys %s" % (name, sorted(set(d) ^
                                                             KINETO_DEVICE)))
    events = doc["traceEvents"]
    for e in events:
        # hta/common/trace_parser.py: required_cols = {"dur", "cat"}, and
        # rows without them are dropped (dropna subset ["dur", "cat"]).
        if e.get("ph") == "X" and ("dur" not in e or "cat" not in e):
            fail("%s: complete event without dur or cat: %s" % (name, e))
            break
    by_cat = {}
    for e in events:
        if e.get("ph") == "X":
            by_cat.setdefault(e["cat"], []).append(e)
    for cat, keys in KINETO_ARGS.items():
        for e in by_cat.get(cat, []):
            have = set(e["args"])
            # the occupancy is left out when the device limits are unknown
            if cat == "kernel":
                have |= {"est. achieved occupancy %"}
            if have != keys:
                fail("%s: %s args differ from Kineto's: %s" %
                     (name, cat, sorted(have ^ keys)))
                break
    for cat in GPU_CATS:
        for e in by_cat.get(cat, []):
            # hta/common/trace_filter.py _filter_gpu_kernels_with_cuda_sync:
            # GPU events are those with stream >= 0 and correlation >= 0.
            a = e["args"]
            if not (a.get("stream", -1) >= 0 and a.get("correlation", -1) >= 0):
                fail("%s: %s without stream and correlation: %s" %
                     (name, cat, a))
                break
            if e["pid"] != a["device"] or e["tid"] != a["stream"]:
                fail("%s: %s not on pid=device, tid=stream" % (name, cat))
                break
    calls = {}
    for cat in HOST_CATS:
        for e in by_cat.get(cat, []):
            # CPUOperatorFilter (trace_filter.py): stream == -1 is the host;
            # a "stream" arg would make a call look like GPU work.
            if "stream" in e["args"]:
                fail("%s: %s carries a stream arg" % (name, cat))
                break
            calls[e["args"]["correlation"]] = e
    for e in by_cat.get("gpu_memcpy", []):
        # hta/utils/utils.py get_memory_kernel_type: name[:11] "Memcpy HtoD".
        if not re.match(r"Memcpy (HtoD|DtoH|DtoD|HtoH|PtoP|Unknown)", e["name"]):
            fail("%s: copy name %r" % (name, e["name"]))
    for e in by_cat.get("gpu_memset", []):
        if not e["name"].startswith("Memset"):
            fail("%s: memset name %r" % (name, e["name"]))
    # hta/common/trace.py add_iteration: r"ProfilerStep\s*#\s*(\d+)".
    steps = [e for e in by_cat.get("user_annotation", [])
             if e["name"].startswith("ProfilerStep")]
    for s in steps:
        if not re.match(r"ProfilerStep\s*#\s*(\d+)$", s["name"]):
            fail("%s: step name %r" % (name, s["name"]))
    flows = {}
    for e in events:
        if e.get("cat") == "ac2g":
            flows.setdefault(e["id"], []).append(e["ph"])
    for e in (x for c in GPU_CATS for x in by_cat.get(c, [])):
        corr = e["args"]["correlation"]
        if corr in calls and sorted(flows.get(corr, [])) != ["f", "s"]:
            fail("%s: correlation %d has flows %s, not one s and one f" %
                 (name, corr, flows.get(corr)))
            break
    return by_cat, calls, steps


def step_of(steps, ts):
    """add_iteration's rule: the step s with s.ts <= ts < s.ts + s.dur."""
    hit = -1
    for s in steps:
        if s["ts"] <= ts < s["ts"] + s["dur"]:
            hit = int(re.match(r"ProfilerStep#(\d+)", s["name"]).group(1))
    return hit


# ---- nvtx_step.mprof: PyTorch steps under NVTX ranges "step N" ------------
text, doc = export("nvtx_step")
if doc:
    by_cat, calls, steps = check_schema("nvtx_step", text, doc)
    kernels = by_cat.get("kernel", [])
    s = summary("nvtx_step")
    if len(kernels) != s["trace"]["launches"]:
        fail("nvtx_step: %d kernels, summary says %d launches" %
             (len(kernels), s["trace"]["launches"]))
    total_ns = round(sum(e["dur"] for e in kernels) * 1000)
    if total_ns != s["trace"]["kernel_time_ns"]:
        fail("nvtx_step: kernel time %d ns, summary says %d ns" %
             (total_ns, s["trace"]["kernel_time_ns"]))
    per_name = {}
    for e in kernels:
        per_name[e["name"]] = per_name.get(e["name"], 0) + round(e["dur"] * 1000)
    for k in s["kernels"]["items"]:
        if per_name.get(k["name"]) != k["total_ns"]:
            fail("nvtx_step: %s: %s ns exported, summary says %d" %
                 (k["short_name"], per_name.get(k["name"]), k["total_ns"]))
    names = [e["name"] for e in steps]
    if names != ["ProfilerStep#%d" % i for i in range(4)]:
        fail("nvtx_step: steps %s, expected ProfilerStep#0..3 from the NVTX "
             "ranges 'step 0'..'step 3'" % names)
    # The steps 1..3 (after the warm-up step 0) launch the same kernels.
    per_step = {}
    for e in kernels:
        c = calls.get(e["args"]["correlation"])
        it = step_of(steps, c["ts"]) if c else -1
        per_step.setdefault(it, []).append(e["name"])
    counts = [len(per_step.get(i, [])) for i in range(4)]
    if not (counts[1] == counts[2] == counts[3] > 0):
        fail("nvtx_step: kernels per step %s: steps 1-3 differ" % counts)
    if sorted(per_step.get(1, [])) != sorted(per_step.get(2, [])):
        fail("nvtx_step: steps 1 and 2 launch different kernels")
    # hta/common/trace.py _filter_irrelevant_gpu_kernels keeps the kernels
    # whose launching call starts before the last step.
    last = max(e["ts"] for e in steps)
    kept = [e for e in kernels if e["args"]["correlation"] in calls and
            calls[e["args"]["correlation"]]["ts"] < last]
    if not kept or len(kept) == len(kernels):
        fail("nvtx_step: HTA would keep %d of %d kernels" %
             (len(kept), len(kernels)))
    print("nvtx_step: %d kernels, %d ns as summary; steps %s; HTA keeps %d" %
          (len(kernels), total_ns, counts, len(kept)))

    hta = os.environ.get("MPROF_HTA_DIR")
    if hta:
        hta_dir = os.path.join(tmp, "hta")
        os.makedirs(hta_dir, exist_ok=True)
        shutil.copy(os.path.join(tmp, "nvtx_step.json"),
                    os.path.join(hta_dir, "rank-0.json"))
        script = r'''
import logging, os, sys, warnings
warnings.filterwarnings("ignore")
os.environ["HTA_DISABLE_NS_ROUNDING"] = "1"
sys.path.insert(0, sys.argv[1])
logging.disable(logging.WARNING)
from hta.trace_analysis import TraceAnalysis
out = {}
for last in (True, False):
    a = TraceAnalysis(trace_dir=sys.argv[2], include_last_profiler_step=last)
    df = a.t.get_trace(0)
    k = df[df["cat"].eq(a.t.symbol_table.get_sym_id_map()["kernel"])]
    out[str(last)] = [len(k), round(float(k["dur"].sum()) * 1000),
                      sorted(int(i) for i in k["iteration"].unique())]
a.get_temporal_breakdown(visualize=False)
a.get_gpu_kernel_breakdown(visualize=False)
a.get_idle_time_breakdown(visualize=False)
a.get_cuda_kernel_launch_stats(visualize=False)
print("HTA " + __import__("json").dumps(out))
'''
        r = subprocess.run([sys.executable, "-c", script, hta, hta_dir],
                           capture_output=True, text=True)
        m = re.search(r"^HTA (.*)$", r.stdout, re.M)
        if not m:
            fail("HTA did not run: %s" % r.stderr[-2000:])
        else:
            got = json.loads(m.group(1))
            want_all = [len(kernels), total_ns]
            want_kept = [len(kept), round(sum(e["dur"] for e in kept) * 1000)]
            if got["True"][:2] != want_all or got["False"][:2] != want_kept:
                fail("HTA kernel totals %s, expected all %s and kept %s" %
                     (got, want_all, want_kept))
            print("HTA (%s): kernels and totals %s equal mprof's" % (hta, got))
    else:
        print("HTA: MPROF_HTA_DIR unset; its parser's rules were checked "
              "instead")

# ---- gemm.mprof: no calls, so no steps (HTA would drop every kernel) -----
text, doc = export("gemm")
if doc:
    by_cat, calls, steps = check_schema("gemm", text, doc)
    if steps:
        fail("gemm: steps without any API call: %d" % len(steps))

# ---- transformer_forward.mprof: steps from the repeating launches ---------
text, doc = export("transformer_forward")
if doc:
    by_cat, calls, steps = check_schema("transformer_forward", text, doc)
    if calls and len(steps) < 2:
        fail("transformer_forward: %d steps from the launch pattern" %
             len(steps))

# ---- the fixture: steps from the repeating launch pattern -----------------
# A warm-up launch of C, then 6 steps of A B A C (tests/kineto_fixture.c).
pattern_trace = os.path.join(tmp, "pattern.mprof")
r = subprocess.run([fixture, pattern_trace], capture_output=True, text=True)
if r.returncode != 0:
    fail("kineto_fixture: %s" % r.stderr)
else:
    r = run("export", "--format", "kineto", "-o",
            os.path.join(tmp, "pattern.json"), pattern_trace)
    with open(os.path.join(tmp, "pattern.json"), encoding="utf-8") as f:
        text = f.read()
    by_cat, calls, steps = check_schema("pattern", text, json.loads(text))
    per_step = {}
    for e in by_cat.get("kernel", []):
        c = calls.get(e["args"]["correlation"])
        per_step.setdefault(step_of(steps, c["ts"]) if c else -2,
                            []).append(re.sub(r"^_Z7kernel(.)v$|^kernel(.)\(\)$",
                                              r"\1\2", e["name"]))
    got = {k: "".join(v) for k, v in sorted(per_step.items())}
    # The pattern's phase follows the first launch: the warm-up C opens
    # step 0 (C A B A), and the last step takes the trailing C.
    want = {0: "CABA", 1: "CABA", 2: "CABA", 3: "CABA", 4: "CABA",
            5: "CABAC"}
    if len(steps) != 6 or got != want:
        fail("pattern: %d steps; kernels per step %s, expected %s" %
             (len(steps), got, want))
    else:
        print("pattern: 6 steps from A B A C, as expected")

# ---- the fixture with a capture window: its repeats are the steps ----------
# Steps 2 to 5 of the same launches inside "mprof window #1".."#4" ranges
# (what `record --capture-range` writes): ProfilerStep#1..#4 hold them.
window_trace = os.path.join(tmp, "window.mprof")
r = subprocess.run([fixture, window_trace, "--window"], capture_output=True,
                   text=True)
if r.returncode != 0:
    fail("kineto_fixture --window: %s" % r.stderr)
else:
    r = run("export", "--format", "kineto", "-o",
            os.path.join(tmp, "window.json"), window_trace)
    with open(os.path.join(tmp, "window.json"), encoding="utf-8") as f:
        text = f.read()
    by_cat, calls, steps = check_schema("window", text, json.loads(text))
    names = [s["name"] for s in sorted(steps, key=lambda s: s["ts"])]
    per_step = {}
    for e in by_cat.get("kernel", []):
        c = calls.get(e["args"]["correlation"])
        k = step_of(steps, c["ts"]) if c else -2
        if k >= 0:
            per_step[k] = per_step.get(k, 0) + 1
    if names != ["ProfilerStep#%d" % i for i in range(1, 5)] or \
            per_step != {1: 4, 2: 4, 3: 4, 4: 4}:
        fail("window: steps %s with kernels %s, expected ProfilerStep#1..4 "
             "of 4 kernels each from the window's pieces" % (names, per_step))
    else:
        print("window: ProfilerStep#1..4 from the capture window's pieces")

# ---- distributedInfo: a rank, written as HTA's regex finds it -------------
# hta/common/trace_file.py create_rank_to_trace_dict: '"rank":\s+(\d+)'.
ranked = []
for rank in (0, 1):
    path = os.path.join(tmp, "rank%d.mprof" % rank)
    ranked.append(path)
    run("synth", "-o", path, "--launches", "40", "--kernels", "2", "--seed",
        str(rank + 3), "--meta", "pid=%d" % (100 + rank), "--meta",
        "rank=%d" % rank, *(["--meta", "world_size=2"] if rank else []))
for rank, path in enumerate(ranked):
    out = os.path.join(tmp, "rank%d.json" % rank)
    r = run("export", "--format", "kineto", "-o", out, path)
    if r.returncode != 0:
        fail("rank %d: export exited %d: %s" % (rank, r.returncode, r.stderr))
        continue
    with open(out, encoding="utf-8") as f:
        text = f.read()
    m = re.search(r'"rank":\s+(\d+)', text)
    info = json.loads(text).get("distributedInfo", {})
    if not m or int(m.group(1)) != rank or info.get("rank") != rank:
        fail("rank %d: HTA's pattern finds %s; distributedInfo %s" %
             (rank, m and m.group(1), info))
    want = 2 if rank else None  # the world size only where the trace says it
    if info.get("world_size") != want:
        fail("rank %d: world_size %s, expected %s" %
             (rank, info.get("world_size"), want))
# A merged run holds two processes: one Kineto file per rank instead.
merged = os.path.join(tmp, "merged.mprof")
run("merge", "-o", merged, *ranked)
r = run("export", "--format", "kineto", "-o", os.path.join(tmp, "m.json"),
        merged)
if r.returncode != 2 or len(r.stderr.strip().splitlines()) != 1 or \
        "2 processes" not in r.stderr:
    fail("a merged run: exit %d, %r" % (r.returncode, r.stderr))

# ---- bad input: one line, exit status 2 -----------------------------------
two = [os.path.join(samples, "gemm.mprof"), os.path.join(samples, "demo.mprof")]
r = run("export", "--format", "kineto", "-o", os.path.join(tmp, "two.json"),
        *two)
if r.returncode != 2 or len(r.stderr.strip().splitlines()) != 1 or \
        "one file per rank" not in r.stderr:
    fail("a set of two traces: exit %d, %r" % (r.returncode, r.stderr))
if os.path.exists(os.path.join(tmp, "two.json")):
    fail("a refused export left its file")
r = run("export", "--format", "kinetoo", "-o", os.path.join(tmp, "x.json"),
        two[0])
if r.returncode != 2 or "kineto" not in r.stderr:
    fail("--format kinetoo: exit %d, %r" % (r.returncode, r.stderr))

# ---- the GPU check's comparison, on stand-ins -----------------------------
good = os.path.join(tmp, "nvtx_step.json")
if os.path.exists(good):
    def compare(real, ours):
        return subprocess.run([sys.executable, compare_py, real, ours],
                              capture_output=True, text=True)
    r = compare(good, good)
    if r.returncode != 0:
        fail("compare_kineto.py on an export and itself: %s" % r.stderr)
    with open(good, encoding="utf-8") as f:
        base = json.load(f)

    def broken(what, change):
        doc = copy.deepcopy(base)
        change(doc)
        path = os.path.join(tmp, "broken-%s.json" % what)
        with open(path, "w", encoding="utf-8") as f:
            json.dump(doc, f)
        r = compare(good, path)
        if r.returncode != 1 or not r.stderr.strip():
            fail("compare_kineto.py passed a stand-in with %s (exit %d)" %
                 (what, r.returncode))

    def drop_arg(cat, key):
        def change(doc):
            for e in doc["traceEvents"]:
                if e.get("cat") == cat:
                    e["args"].pop(key, None)
        return change
    broken("kernel-correlation", drop_arg("kernel", "correlation"))
    broken("kernel-grid", drop_arg("kernel", "grid"))
    broken("runtime-correlation", drop_arg("cuda_runtime", "correlation"))
    broken("no-steps", lambda d: d.__setitem__("traceEvents", [
        e for e in d["traceEvents"]
        if not e.get("name", "").startswith("ProfilerStep")]))
    broken("no-device-properties", lambda d: d.pop("deviceProperties"))
    broken("no-flows", lambda d: d.__setitem__("traceEvents", [
        e for e in d["traceEvents"] if e.get("cat") != "ac2g"]))
    broken("kernel-cat", lambda d: [e.__setitem__("cat", "Kernel")
                                    for e in d["traceEvents"]
                                    if e.get("cat") == "kernel"])
    broken("lost-kernels", lambda d: d.__setitem__("traceEvents", [
        e for i, e in enumerate(d["traceEvents"])
        if not (e.get("cat") == "kernel" and i % 7 == 0)]))

# ---- tests/gpu/kineto.sh itself, on a stand-in GPU machine ---------------
# nvidia-smi answers, "python" writes the export of nvtx_step.mprof as
# torch.profiler's trace, and the build's mprof "records" nvtx_step.mprof
# and exports it for real: the script must pass; with the export stripped of
# a field HTA needs (STANDIN_BREAK), it must fail and say so.
kineto_sh = os.path.join(os.path.dirname(compare_py), "kineto.sh")
if os.path.exists(good):
    fake = os.path.join(tmp, "standin")
    for d in ("path", "build/bin", "build/lib"):
        os.makedirs(os.path.join(fake, d), exist_ok=True)
    open(os.path.join(fake, "build/lib/libmprof-cupti.so"), "w").close()
    scripts = {
        "path/nvidia-smi": 'echo "GPU 0: stand-in"\n',
        "python": 'case "$1" in -c) exit 0 ;; esac\n'
                  'while [ $# -gt 0 ]; do\n'
                  '  [ "$1" = --torch-trace ] && cp "$STANDIN_REAL" "$2"\n'
                  '  shift\n'
                  'done\nexit 0\n',
        "build/bin/mprof":
            'o=; prev=; for a in "$@"; do [ "$prev" = -o ] && o=$a; prev=$a; done\n'
            'case "$1" in\n'
            '  record) cp "$STANDIN_TRACE" "$o"; exit 0 ;;\n'
            '  export) "$REAL_MPROF" "$@" || exit $?\n'
            '    [ -z "${STANDIN_BREAK:-}" ] && exit 0\n'
            '    exec python3 -c "import json,sys; d=json.load(open(sys.argv[1]))\n'
            'for e in d[\'traceEvents\']:\n'
            '    e.get(\'args\', {}).pop(sys.argv[2], None)\n'
            'json.dump(d, open(sys.argv[1], \'w\'))" "$o" "$STANDIN_BREAK" ;;\n'
            'esac\nexec "$REAL_MPROF" "$@"\n',
    }
    for rel, body in scripts.items():
        path = os.path.join(fake, rel)
        with open(path, "w") as f:
            f.write("#!/bin/sh\n" + body)
        os.chmod(path, 0o755)
    env = dict(os.environ, PATH=os.path.join(fake, "path") + os.pathsep +
               os.environ.get("PATH", ""), PYTHON=os.path.join(fake, "python"),
               STANDIN_REAL=good, REAL_MPROF=os.path.abspath(mprof),
               STANDIN_TRACE=os.path.join(samples, "nvtx_step.mprof"))
    env.pop("MPROF_HTA_DIR", None)
    for broken_field in ("", "correlation", "grid"):
        env["STANDIN_BREAK"] = broken_field
        outdir = os.path.join(fake, "out-" + (broken_field or "good"))
        r = subprocess.run(["bash", kineto_sh, outdir,
                            os.path.join(fake, "build")],
                           capture_output=True, text=True, env=env)
        said = r.stdout + r.stderr
        if not broken_field and r.returncode != 0:
            fail("kineto.sh on a working stand-in: exit %d\n%s" %
                 (r.returncode, said[-1500:]))
        elif broken_field and (r.returncode != 1 or
                               "args missing" not in said or
                               broken_field not in said):
            fail("kineto.sh passed an export without %r: exit %d\n%s" %
                 (broken_field, r.returncode, said[-1500:]))

shutil.rmtree(tmp, ignore_errors=True)
if failures:
    sys.exit("%d failure(s)" % len(failures))
print("Kineto export: every check passed")
