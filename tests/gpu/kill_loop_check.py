#!/usr/bin/env python3
"""Checks one trace of a program SIGKILLed under `mprof record`, for
tests/gpu/kill_loop.sh:

- it opens (`mprof info`) and is marked partial;
- it has launches;
- every function with PC samples has its code (its module's CUBINS blob:
  the sidecar TRACE.pc.json does not say "no_cubin"), and with --sass, after
  `mprof sass TRACE` (nvdisasm), its SASS;
- the NVTX ranges open at the cut are there and flagged: the outer range
  (--outer, default "train") is open, the open ranges `mprof info` lists
  are those `summary --by-range` counts as open at the cut, and no range
  is there twice (closed and open: each "step N" is one instance).

Prints one line of tab-separated fields (see FIELDS; "-" when empty) and
exits 0 when every check passed, 1 otherwise (the last field says why).

usage: kill_loop_check.py MPROF TRACE [--sass] [--outer NAME]

SPDX-License-Identifier: MIT
"""
import argparse
import json
import os
import re
import subprocess
import sys

FIELDS = ["opens", "partial", "launches", "sampled", "sampled_with_code",
          "sampled_with_sass", "open_ranges", "open_names", "outer_open",
          "twice", "bytes", "cubins", "ok", "why"]


def run(*args):
    p = subprocess.run(list(args), stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, text=True)
    return p.returncode, p.stdout


def check(mprof, trace, sass, outer):
    r = dict.fromkeys(FIELDS, "")
    why = []
    rc, info = run(mprof, "info", trace)
    r["opens"] = "yes" if rc == 0 else "no"
    if rc != 0:
        r["why"] = "does not open: " + info.strip().splitlines()[-1][:200] \
            if info.strip() else "does not open"
        r["ok"] = "no"
        return r
    r["bytes"] = str(os.path.getsize(trace))
    r["partial"] = "yes" if re.search(r"^partial ", info, re.M) else "no"
    if r["partial"] != "yes":
        why.append("not marked partial")
    m = re.search(r"^kernels +\d+ kernels?, (\d+) launch", info, re.M)
    launches = int(m.group(1)) if m else 0
    r["launches"] = str(launches)
    if not launches:
        why.append("no launches")
    m = re.search(r"^sections .*\bCUBINS=(\d+)", info, re.M)
    r["cubins"] = m.group(1) if m else "0"
    # How `record` kept their code: trimmed to the functions that ran, as a
    # finished capture keeps it (whole only where every function ran).
    m = re.search(r"^code +\d+ modules? \((.*) as loaded\): (\d+) trimmed "
                  r"to the functions that ran, (\d+) whole, \d+ without code; "
                  r"(.*) kept$", info, re.M)
    if m:
        r["cubins"] += (f" ({m.group(2)} trimmed, {m.group(3)} whole; "
                        f"{m.group(4)} of {m.group(1)})")
    m = re.search(r"^open +(\d+) NVTX ranges? still open at the cut, shown "
                  r"ending there:(.*)$", info, re.M)
    info_open = int(m.group(1)) if m else 0
    names = re.findall(r" ([^,]+?) \(thread \d+\)", m.group(2)) if m else []
    r["open_ranges"] = str(info_open)
    r["open_names"] = ";".join(names)

    # Code and SASS of the sampled functions.
    if sass:
        run(mprof, "sass", trace)
    sidecar = trace + ".pc.json"
    if not os.path.exists(sidecar):
        run(mprof, "sass", trace)
    try:
        functions = json.load(open(sidecar))["functions"]
    except (OSError, ValueError, KeyError) as e:
        functions = []
        why.append(f"no sidecar ({e})")
    sampled = [f for f in functions if f.get("pcs")]
    with_code = [f for f in sampled if f.get("sass_state") != "no_cubin"]
    with_sass = [f for f in sampled if f.get("sass_state") == "present"]
    r["sampled"] = str(len(sampled))
    r["sampled_with_code"] = str(len(with_code))
    r["sampled_with_sass"] = str(len(with_sass))
    # No samples would make the code checks pass on nothing: PC sampling is
    # one process per GPU at a time, so a loop run beside another process
    # that holds it gets none (seen on an H100), and so does a broken one.
    if not sampled:
        why.append("no PC-sampled functions, so the code checks check nothing")
    if len(with_code) < len(sampled):
        missing = [f["name"] for f in sampled if f not in with_code]
        why.append(f"{len(missing)} sampled functions without code "
                   f"({missing[0][:80]}...)")
    if sass and len(with_sass) < len(sampled):
        why.append(f"{len(sampled) - len(with_sass)} sampled functions "
                   "without SASS")

    # The ranges open at the cut.
    rc, text = run(mprof, "summary", "--by-range", "--all", "--json", trace)
    try:
        items = json.loads(text)["ranges"]["items"]
    except (ValueError, KeyError, TypeError):
        items = []
        why.append("summary --by-range failed: " + text.strip()[:200])
    open_total = sum(i.get("open_at_cut", 0) for i in items)
    outer_items = [i for i in items if i["name"] == outer]
    outer_open = bool(outer_items) and outer_items[0]["open_at_cut"] == 1 \
        and outer_items[0]["instances"] == 1
    r["outer_open"] = "yes" if outer_open else "no"
    if items and not outer_open:
        why.append(f'"{outer}" is not there once, open')
    twice = [i["name"] for i in items
             if i["name"].startswith("step ") and i["instances"] != 1]
    r["twice"] = str(len(twice))
    if twice:
        why.append(f"ranges there twice: {', '.join(twice[:3])}")
    if items and open_total != info_open:
        why.append(f"info lists {info_open} open ranges, summary counts "
                   f"{open_total}")
    r["ok"] = "no" if why else "yes"
    r["why"] = "; ".join(why)
    return r


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("mprof")
    ap.add_argument("trace")
    ap.add_argument("--sass", action="store_true",
                    help="run `mprof sass` (nvdisasm) and require SASS")
    ap.add_argument("--outer", default="train")
    ap.add_argument("--header", action="store_true",
                    help="print the field names first")
    args = ap.parse_args()
    r = check(args.mprof, args.trace, args.sass, args.outer)
    if args.header:
        print("\t".join(FIELDS))
    # "-" for an empty field: the shell's read merges consecutive tabs.
    print("\t".join(r[f].replace("\t", " ") or "-" for f in FIELDS))
    return 0 if r["ok"] == "yes" else 1


if __name__ == "__main__":
    sys.exit(main())
