#!/usr/bin/env python3
"""Score mprof's headline verdicts on the planted-bottleneck suite.

Usage: score_verdicts.py SUMMARY.json            (mprof summary --json --all
                                                  of a bottlenecks trace)
       score_verdicts.py --pm SUMMARY.json       (the same of the PC-sampled
                                                  and PM-sampled runs of
                                                  `record --pm both`, as a set)
       score_verdicts.py --pm --allow-lost SUMMARY.json
                                                 (as --pm, but a kernel left
                                                  unmeasured passes when the
                                                  summary says PM samples
                                                  were lost: pm_overflow)
       score_verdicts.py --library SUMMARY.json  (any trace: library kernels
                                                  must get no register advice)

Prints one row per kernel (expected, got, result) and exits 1 when a verdict
is wrong or a kernel is missing. Of a PC-sampled run alone, kernels whose
verdict needs hardware counters are reported as "needs counters" (not
failed) when the trace has none. With --pm the set must have counters: no
"no_counters" note, and measured throughput for every kernel whose verdict
needs them; a PM-sampled run that produced no counters fails. With
--library at least one library kernel must be in the trace: a trace with
none checks nothing.

SPDX-License-Identifier: MIT
"""
import json
import re
import sys

# kernel name prefix -> (accepted headline dimensions, needs PM counters)
EXPECTED = [
    # one dependent chain per warp, one warp per SM (<<<SMs, 32>>>): with
    # counters the memory system is seen idle (DRAM ~9%), so more chains in
    # flight is the fix, told as memory latency or as a grid too small
    ("pointer_chase", {"memory_latency", "tail_effect"}, False),
    ("dram_stream", {"memory_throughput"}, True),
    ("l2_stream", {"memory_throughput"}, True),
    # one dependent chain on one warp per SM: more parallel work is the fix,
    # told either as a grid too small or as dependency-bound
    ("fma_chain_one_warp", {"tail_effect", "compute"}, False),
    ("fma_independent", {"compute"}, False),
    ("bank_conflicts", {"shared_memory"}, False),
    ("barrier_heavy", {"synchronisation"}, False),
    ("hot_atomics", {"memory_throughput"}, False),
    ("icache_thrash", {"instruction_fetch"}, False),
    ("smem_limited", {"occupancy"}, False),
    ("one_block_tail", {"tail_effect"}, False),
    ("tiny_kernel", {"launch_overhead"}, False),
]

# Advice a library kernel's caller cannot act on.
REGISTER_ADVICE = re.compile(r"fewer registers|maxrregcount|__launch_bounds__")
LIBRARY = re.compile(r"nvjet|xmma|cublas|cudnn|cutlass|triton|at::native|"
                     r"flash|fmha|gemm", re.I)


def kernels(doc):
    return doc["kernels"]["items"]


def has_counters(doc):
    return not any(n.get("key") == "no_counters" for n in doc.get("notes", []))


def measured(k):
    return (k.get("throughput") or {}).get("status") == "measured"


def score_library(doc):
    bad, seen = 0, 0
    for k in kernels(doc):
        if not LIBRARY.search(k["name"]):
            continue
        seen += 1
        text = k["verdict"]["text"]
        ok = not REGISTER_ADVICE.search(text)
        bad += not ok
        print(f"{'ok ' if ok else 'BAD'}  {k['name'][:70]}: {text[:100]}")
    print(f"{seen - bad} of {seen} library kernels without register advice")
    if not seen:
        print("FAILED: no library kernel in the trace (nothing was checked)")
        bad += 1
    return bad


def lost_note(doc):
    return next((n["text"] for n in doc.get("notes", [])
                 if n.get("key") == "pm_overflow"), None)


def score_suite(doc, pm=False, allow_lost=False):
    counters = has_counters(doc)
    lost = lost_note(doc) if allow_lost else None
    rows, wrong, unmeasured = [], 0, 0
    for prefix, accepted, needs in EXPECTED:
        k = next((k for k in kernels(doc) if k["name"].startswith(prefix)),
                 None)
        if k is None:
            rows.append((prefix, "/".join(sorted(accepted)), "missing",
                         "MISSING"))
            wrong += 1
            continue
        got = k["verdict"]["dimension"] or "none"
        if pm and needs and not measured(k) and lost:
            result = "lost (pm_overflow)"
            unmeasured += 1
        elif pm and needs and not measured(k):
            result = "NO COUNTERS"
            wrong += 1
        elif got in accepted:
            result = "ok"
        elif needs and not counters and not pm:
            result = "needs counters"
            unmeasured += 1
        else:
            result = "WRONG"
            wrong += 1
        rows.append((prefix, "/".join(sorted(accepted)), got, result))
    lib = [k for k in kernels(doc) if LIBRARY.search(k["name"])]
    for k in lib:
        text = k["verdict"]["text"]
        result = "WRONG" if REGISTER_ADVICE.search(text) else "ok"
        wrong += result != "ok"
        rows.append((k["name"][:40], "no register advice",
                     k["verdict"]["dimension"] or "none", result))
    print(f"{'kernel':<42} {'expected':<26} {'got':<20} result")
    for r in rows:
        print(f"{r[0]:<42} {r[1]:<26} {r[2]:<20} {r[3]}")
    right = len(rows) - wrong - unmeasured
    print(f"{right} of {len(rows)} right, {wrong} wrong, {unmeasured} "
          f"{'lost to a PM overflow' if lost else 'need counters'} (trace "
          f"{'has' if counters else 'has no'} PM samples)")
    if lost:
        print(f"the summary says: {lost}")
    if pm and not counters:
        print("FAILED: the PC + PM set has no counters (a 'no_counters' "
              "note): the PM-sampled run measured nothing")
        wrong += 1
    return wrong


def main(argv):
    library = "--library" in argv
    pm = "--pm" in argv
    allow_lost = "--allow-lost" in argv
    unknown = [a for a in argv[1:] if a.startswith("--")
               and a not in ("--library", "--pm", "--allow-lost")]
    paths = [a for a in argv[1:] if not a.startswith("--")]
    if (len(paths) != 1 or unknown or (library and pm)
            or (allow_lost and not pm)):
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        return 2
    try:
        with open(paths[0]) as f:
            doc = json.load(f)
    except (OSError, ValueError) as e:
        print(f"score_verdicts: cannot read {paths[0]}: {e}", file=sys.stderr)
        return 2
    bad = score_library(doc) if library else score_suite(doc, pm, allow_lost)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
