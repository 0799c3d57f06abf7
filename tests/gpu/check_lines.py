#!/usr/bin/env python3
"""Check `mprof summary --by-line --all --json` against planted lines.

usage: check_lines.py [--embedded] SUMMARY_JSON SOURCE
       check_lines.py --headers REGEX SUMMARY_JSON

SOURCE marks each planted line with a comment `@hot KERNEL` (KERNEL the
kernel's short name). For every marked kernel, its hottest line must be
that line of SOURCE (same file name, same number), or a line of another
file (a header the planted line calls into: CUDA's atomicAdd, CUB or
CUTLASS templates) whose inline chain (`inlined_at`) reaches that line of
SOURCE. With --embedded, the line's code must also come from the trace
(source "embedded") and be the text of that line of SOURCE (for a line
of another file: not empty): what a trace copied alone shows.

With --headers, template code (CUB, Thrust, CUTLASS) must map to its
header lines: some kernel must have a sampled line with a number in a file
whose path matches REGEX (e.g. '/(cub|thrust)/'), its code embedded; each
such kernel is listed with its share on those lines and its hottest one.

Prints one line per kernel; exit 0 when all hold, 1 when one does not, 2
for bad input (one line saying what).
"""
import json
import os
import re
import sys


def at(line):
    """FILE:LINE of a hot line or call site, the file's base name only."""
    return f"{os.path.basename(str(line.get('file')))}:{line.get('line')}"


def headers(pattern, summary_path):
    try:
        regex = re.compile(pattern)
        with open(summary_path) as f:
            summary = json.load(f)
    except (OSError, ValueError, re.error) as e:
        print(f"check_lines: {e}", file=sys.stderr)
        return 2
    found = 0
    for k in summary.get("kernels", []) if isinstance(summary, dict) else []:
        if not isinstance(k, dict):
            continue
        lines = [l for l in k.get("hot_lines") or []
                 if isinstance(l, dict) and l.get("line") and l.get("samples")
                 and regex.search(str(l.get("file")))]
        if not lines:
            continue
        share = sum(l.get("share") or 0 for l in lines)
        top = lines[0]
        where = at(top)
        if top.get("source") != "embedded" or not top.get("code"):
            print(f"FAIL  {k.get('short_name')}: {where} has no embedded code "
                  f"('{top.get('source')}')")
            return 1
        print(f"ok    {k.get('short_name')}: {share:.1%} of its samples on "
              f"header lines, the hottest {where}: {top.get('code').strip()!r}")
        found += 1
    if not found:
        print(f"FAIL  no kernel has a sampled line in a file matching '{pattern}'")
        return 1
    return 0


def main(argv):
    if argv and argv[0] == "--headers":
        if len(argv) != 3:
            print("usage: check_lines.py --headers REGEX SUMMARY_JSON", file=sys.stderr)
            return 2
        return headers(argv[1], argv[2])
    embedded = False
    if argv and argv[0] == "--embedded":
        embedded = True
        argv = argv[1:]
    if len(argv) != 2:
        print("usage: check_lines.py [--embedded] SUMMARY_JSON SOURCE", file=sys.stderr)
        return 2
    summary_path, source_path = argv
    try:
        with open(summary_path) as f:
            summary = json.load(f)
        with open(source_path) as f:
            source = f.read().split("\n")
    except (OSError, ValueError) as e:
        print(f"check_lines: {e}", file=sys.stderr)
        return 2
    planted = {}
    for number, text in enumerate(source, 1):
        for name in re.findall(r"@hot\s+([A-Za-z_][A-Za-z0-9_]*)", text):
            planted[name] = number
    if not planted:
        print(f"check_lines: {source_path}: no '@hot KERNEL' markers", file=sys.stderr)
        return 2
    kernels = {}
    for k in summary.get("kernels", []) if isinstance(summary, dict) else []:
        if isinstance(k, dict):
            kernels.setdefault(k.get("short_name"), k)
    base = os.path.basename(source_path)
    failures = 0
    for name, number in sorted(planted.items()):
        k = kernels.get(name)
        hot = (k or {}).get("hot_lines") or []
        if not hot:
            print(f"FAIL  {name}: {'no lines' if k else 'not in the summary'}")
            failures += 1
            continue
        top = hot[0]
        where = at(top)
        share = top.get("share") or 0
        planted_at = f"{base}:{number}"
        # The call sites of inlined code, innermost first.
        chain = [at(c) for c in top.get("inlined_at") or [] if isinstance(c, dict)]
        inlined = where != planted_at and planted_at in chain
        problem = None
        if where != planted_at and not inlined:
            problem = (f"hottest line is {where} ({share:.1%})"
                       + (f", inlined at {', '.join(chain)}" if chain else "")
                       + f", not {planted_at}")
        elif embedded and top.get("source") != "embedded":
            problem = f"code of {where} is '{top.get('source')}', not embedded"
        elif embedded and inlined and not top.get("code"):
            problem = f"code of {where} is empty"
        elif embedded and not inlined and top.get("code") != source[number - 1]:
            problem = f"code of {where} is {top.get('code')!r}, not {source[number - 1]!r}"
        if problem:
            print(f"FAIL  {name}: {problem}")
            failures += 1
        else:
            print(f"ok    {name}: {where} holds {share:.1%} of its samples"
                  + (f", inlined at {planted_at}" if inlined else "")
                  + (" (code embedded)" if embedded else ""))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
