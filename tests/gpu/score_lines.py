#!/usr/bin/env python3
"""Per-line sample shares, mprof against ncu's Source page.

usage: score_lines.py [--tvd MAX] [--markdown FILE]
                      KERNEL=NCU_CSV=SUMMARY_JSON=SIDECAR...

NCU_CSV is `ncu --section SourceCounters --page source --print-source sass
--csv` of one launch of KERNEL: its warp samples per SASS instruction
("Warp Stall Sampling (All Samples)"). ncu's command line prints no
metrics beside CUDA source lines (`--print-source cuda` gives the code
alone), so ncu's instructions are grouped by source line with the line
table of the same code: SIDECAR (TRACE.pc.json, completed by `mprof
summary`) lists every instruction of the kernel's function with its file
and line. SUMMARY_JSON is `mprof summary --by-line --all --json` of the
trace: KERNEL's "hot_lines" (file, line, samples). Each side's samples
become shares of its total over (file, line); the total-variation
distance is half the sum of the absolute differences over every line
either side sampled. Prints a table (and writes it as markdown); exit 1
when a kernel is further than MAX (default 0.03), 2 on input it cannot
read.

SPDX-License-Identifier: MIT
"""
import csv
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from compare_ncu import named, ncu_sass_samples  # noqa: E402


def is_kernel(name, demangled, kernel):
    """A sidecar function is KERNEL (by name, as compare_ncu.named())."""
    return kernel in (name, demangled) or str(demangled).startswith(kernel + "(")


def ncu_lines(csv_path, sidecar_path, kernel):
    """{(file, line): ncu's samples} through the sidecar's line table."""
    rows = list(csv.reader(open(csv_path, errors="replace")))
    samples = ncu_sass_samples(rows, csv_path)
    sidecar = json.load(open(sidecar_path))
    files = sidecar.get("files") or []
    found = [f for f in sidecar.get("functions") or []
             if is_kernel(f.get("name"), f.get("demangled"), kernel)]
    if not found:
        raise ValueError(f"{sidecar_path}: no function {kernel}")
    where = {}
    for ins in found[0].get("instructions") or []:
        offset, file_index, line = ins[0], ins[4], ins[5]
        if line and 0 <= file_index < len(files):
            where[offset] = (files[file_index], line)
    lines, unplaced = {}, 0.0
    for offset, (value, _) in samples.items():
        if value <= 0:
            continue
        if offset in where:
            lines[where[offset]] = lines.get(where[offset], 0.0) + value
        else:
            unplaced += value
    return lines, unplaced


def mprof_lines(path, kernel):
    summary = json.load(open(path))
    kernels = summary.get("kernels", [])
    if isinstance(kernels, dict):
        kernels = kernels.get("items", [])
    found = named(kernels, kernel)
    if not found:
        raise ValueError(f"{path}: no kernel {kernel}")
    lines = {}
    for line in found[0].get("hot_lines") or []:
        if line.get("line") and line.get("samples"):
            key = (str(line.get("file")), int(line["line"]))
            lines[key] = lines.get(key, 0.0) + float(line["samples"])
    return lines


def shares(lines):
    total = sum(lines.values())
    return {k: v / total for k, v in lines.items()} if total else {}


def main(argv):
    limit, markdown, cases = 0.03, None, []
    i = 0
    while i < len(argv):
        if argv[i] == "--tvd" and i + 1 < len(argv):
            limit = float(argv[i + 1])
            i += 2
        elif argv[i] == "--markdown" and i + 1 < len(argv):
            markdown = argv[i + 1]
            i += 2
        else:
            cases.append(argv[i])
            i += 1
    if not cases:
        print("usage: score_lines.py [--tvd MAX] [--markdown FILE] "
              "KERNEL=NCU_CSV=SUMMARY_JSON=SIDECAR...", file=sys.stderr)
        return 2
    table = ["| kernel | lines (mprof / ncu) | hottest line, mprof | "
             "hottest line, ncu | distance |", "|---|---|---|---|---|"]
    worst = 0.0
    for case in cases:
        try:
            kernel, csv_path, json_path, sidecar = case.split("=", 3)
            p = shares(mprof_lines(json_path, kernel))
            ncu, unplaced = ncu_lines(csv_path, sidecar, kernel)
            q = shares(ncu)
        except (OSError, ValueError, IndexError, TypeError) as e:
            print(f"score_lines: {e}", file=sys.stderr)
            return 2
        if not p or not q:
            print(f"FAIL  {kernel}: {'mprof' if not p else 'ncu'} has no "
                  "sampled line")
            worst = max(worst, 1.0)
            continue
        keys = set(p) | set(q)
        tvd = 0.5 * sum(abs(p.get(k, 0.0) - q.get(k, 0.0)) for k in keys)
        worst = max(worst, tvd)
        top_p, top_q = max(p, key=p.get), max(q, key=q.get)

        def at(key):
            return f"{os.path.basename(key[0])}:{key[1]}"

        table.append(f"| {kernel} | {len(p)} / {len(q)} | {at(top_p)} "
                     f"({p[top_p]:.1%}) | {at(top_q)} ({q[top_q]:.1%}) | "
                     f"{tvd:.3f} |")
        note = (f" ({unplaced / (unplaced + sum(ncu.values())):.1%} of ncu's "
                "samples on instructions without a line)") if unplaced else ""
        print(("ok    " if tvd <= limit else "FAIL  ") +
              f"{kernel}: total-variation distance {tvd:.3f} (at most "
              f"{limit}){note}")
    print("\n".join(table))
    if markdown:
        with open(markdown, "w") as f:
            f.write("\n".join(table) + "\n")
    return 0 if worst <= limit else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
