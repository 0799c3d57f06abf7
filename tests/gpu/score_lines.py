#!/usr/bin/env python3
"""Per-line sample shares, mprof against ncu's Source page.

usage: score_lines.py [--tvd MAX] [--markdown FILE] KERNEL=NCU_CSV=SUMMARY_JSON...

NCU_CSV is `ncu --section SourceCounters --page source --print-source cuda
--csv` of one launch of KERNEL: rows of source lines (a line-number column
"#" or "Line", the code in "Source") with a "Warp Stall Sampling (All
Samples)" column, a file's rows after a row naming the file. SUMMARY_JSON
is `mprof summary --by-line --all --json` of a trace of the same program:
KERNEL's "hot_lines" (file, line, samples). Each side's samples become
shares of its total over (file name, line); the total-variation distance
is half the sum of the absolute differences over every line either side
sampled. Prints a table (and writes it as markdown); exit 1 when a kernel
is further than MAX (default 0.03), 2 on input it cannot read (with the
first rows of the CSV, so that a change in ncu's layout is seen).

SPDX-License-Identifier: MIT
"""
import csv
import json
import os
import re
import sys

SAMPLES = "Warp Stall Sampling (All Samples)"


def ncu_lines(path):
    """{(file base name, line): samples} from ncu's CSV."""
    rows = list(csv.reader(open(path, errors="replace")))
    lines, head, current = {}, None, ""
    for row in rows:
        cells = [c.strip() for c in row]
        named = next((re.sub(r"^(File Path|File|Source File)\s*:?\s*", "", c)
                      for c in cells if re.match(r"^(File Path|File|Source File)\s*:", c)), None)
        if named:
            current = os.path.basename(named)
            continue
        if SAMPLES in cells:
            head = cells
            continue
        if not head or len(cells) != len(head):
            continue
        try:
            col = head.index(SAMPLES)
            at = next(i for i, h in enumerate(head) if h in ("#", "Line", "# Line", "Line Number"))
            number = int(cells[at])
            value = float(cells[col] or 0)
        except (StopIteration, ValueError):
            continue
        if value > 0:
            key = (current, number)
            lines[key] = lines.get(key, 0.0) + value
    if head is None:
        raise ValueError(f"{path}: no '{SAMPLES}' column; its first rows: "
                         + " | ".join(",".join(r) for r in rows[:4]))
    return lines


def mprof_lines(path, kernel):
    summary = json.load(open(path))
    kernels = summary.get("kernels", [])
    if isinstance(kernels, dict):
        kernels = kernels.get("items", [])
    found = [k for k in kernels if k.get("short_name") == kernel
             or str(k.get("name", "")).startswith(kernel + "(")]
    if not found:
        raise ValueError(f"{path}: no kernel {kernel}")
    lines = {}
    for line in found[0].get("hot_lines") or []:
        if line.get("line") and line.get("samples"):
            key = (os.path.basename(str(line.get("file"))), int(line["line"]))
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
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        return 2
    table = ["| kernel | lines (mprof / ncu) | hottest line, mprof | hottest line, ncu | distance |",
             "|---|---|---|---|---|"]
    worst = 0.0
    for case in cases:
        try:
            kernel, csv_path, json_path = case.split("=", 2)
            p = shares(mprof_lines(json_path, kernel))
            q = shares(ncu_lines(csv_path))
        except (OSError, ValueError) as e:
            print(f"score_lines: {e}", file=sys.stderr)
            return 2
        if not p or not q:
            print(f"FAIL  {kernel}: {'mprof' if not p else 'ncu'} has no sampled line")
            worst = max(worst, 1.0)
            continue
        # ncu may name no file (one file): match on the line alone then.
        if all(f == "" for f, _ in q):
            main_file = max(p, key=p.get)[0]
            q = {(main_file, n): v for (_, n), v in q.items()}
        keys = set(p) | set(q)
        tvd = 0.5 * sum(abs(p.get(k, 0.0) - q.get(k, 0.0)) for k in keys)
        worst = max(worst, tvd)
        top_p = max(p, key=p.get)
        top_q = max(q, key=q.get)
        row = (f"| {kernel} | {len(p)} / {len(q)} | {top_p[0]}:{top_p[1]} "
               f"({p[top_p]:.1%}) | {top_q[0]}:{top_q[1]} ({q[top_q]:.1%}) | "
               f"{tvd:.3f} |")
        table.append(row)
        print(("ok    " if tvd <= limit else "FAIL  ") +
              f"{kernel}: total-variation distance {tvd:.3f} (at most {limit})")
    print("\n".join(table))
    if markdown:
        with open(markdown, "w") as f:
            f.write("\n".join(table) + "\n")
    return 0 if worst <= limit else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
