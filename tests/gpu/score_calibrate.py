#!/usr/bin/env python3
"""Score mprof's estimated gains against the measured gains of real fixes.

Usage: score_calibrate.py CASES TIMES SUMMARY.json [--markdown FILE]
                          [--json FILE] [--device NAME]

CASES    `calibrate list`: one case a line, the recorded kernel's name and the
         dimension each of its fixes is for (none: a kernel at a roof)
TIMES    `calibrate time`: "TIME CASE VARIANT MS" lines, VARIANT `original` or
         a fix's dimension (best of 5 CUDA-event timings)
SUMMARY  `mprof summary --json --all` of the recorded originals (the PC +
         PM set of `record --pm both`)

For every fix: estimated gain = the summary's gain of the dimension it fixes
(docs/DIAGNOSIS.md, "Reading the gains"), measured gain = 1 - t_fixed /
t_original. A fix passes when the estimate is within 10 points of the
measured gain; a bound passes when the measured gain is on its side of it
(less 10 points); "?" (unknown) is listed, not scored. Only fixes of the
headline's dimension are gated (the gain people read); the others are
listed for the record (a fix also counts for a headline whose advice it is:
SAME_FIX). Every case's headline must be the expected one: for
a kernel with two planted problems, the dimension whose fix measured the
larger gain.

Prints the table, writes it as markdown (for docs/validation/) and as JSON,
and exits 1 on a failed check, 2 on bad input.

SPDX-License-Identifier: MIT
"""
import json
import sys

TOLERANCE = 0.10

# case -> headline dimensions accepted (one planted problem); cases with two
# fixes are judged by their measurements instead
EXPECTED = {
    # one warp per SM: more chains in flight, told as latency or a small grid
    "pointer_chase": {"memory_latency", "tail_effect"},
    # random 4-byte loads over the whole GPU: DRAM's random-access roof,
    # which latency hiding cannot move
    "pointer_chase_wide": {"memory_throughput"},
    "dram_stream": {"memory_throughput"},
    "fma_chain_one_warp": {"tail_effect", "compute"},
    "fma_independent": {"compute"},
    "bank_conflicts": {"shared_memory"},
    "barrier_heavy": {"synchronisation"},
    "hot_atomics": {"memory_throughput"},
    "icache_thrash": {"instruction_fetch"},
    "smem_limited": {"occupancy"},
    "one_block_tail": {"tail_effect"},
    "tiny_kernel": {"launch_overhead"},
}
ROOFS = {"pointer_chase_wide", "dram_stream", "fma_independent"}
# case -> headline dimensions whose advice is the case's one fix too: more
# chains in flight is both "overlap more loads" and "a bigger grid"; more
# warps for the one-warp FMA chain is both "more warps" and "a bigger grid"
SAME_FIX = {
    "pointer_chase": {"memory_latency"},
    "fma_chain_one_warp": {"compute"},
}


def fail_input(text):
    print("score_calibrate: " + text, file=sys.stderr)
    sys.exit(2)


def read_cases(path):
    cases = []
    for line in open(path):
        words = line.split()
        if words:
            cases.append((words[0], words[1:]))
    if not cases:
        fail_input("%s lists no case (is it `calibrate list`'s output?)" % path)
    return cases


def read_times(path):
    times = {}
    for line in open(path):
        words = line.split()
        if len(words) == 4 and words[0] == "TIME":
            try:
                times[(words[1], words[2])] = float(words[3])
            except ValueError:
                fail_input("%s: not a time: %s" % (path, line.strip()))
    return times


def kernel_of(doc, name):
    """The summary's kernel named NAME (its short name or its name before
    the parameter list); None when it is not there."""
    for k in doc["kernels"]["items"]:
        if k["short_name"] == name or k["name"].split("(")[0] == name:
            return k
    return None


def gain_text(gain, bound):
    if bound == "unknown" or gain is None:
        return "?"
    mark = {"at_least": "≥", "at_most": "≤"}.get(bound, "")
    return "%s%.1f%%" % (mark, 100 * gain)


def judge(gain, bound, measured):
    """'pass', 'FAIL' or 'not estimated'."""
    if bound == "unknown" or gain is None:
        return "not estimated"
    if bound == "at_least":
        return "pass" if measured >= gain - TOLERANCE else "FAIL"
    if bound == "at_most":
        return "pass" if measured <= gain + TOLERANCE else "FAIL"
    return "pass" if abs(gain - measured) <= TOLERANCE else "FAIL"


def main(argv):
    args, opts = [], {}
    i = 1
    while i < len(argv):
        if argv[i] in ("--markdown", "--json", "--device"):
            if i + 1 >= len(argv):
                fail_input("%s needs a value" % argv[i])
            opts[argv[i]] = argv[i + 1]
            i += 2
        else:
            args.append(argv[i])
            i += 1
    if len(args) != 3:
        fail_input("usage: score_calibrate.py CASES TIMES SUMMARY.json "
                   "[--markdown FILE] [--json FILE] [--device NAME]")
    cases = read_cases(args[0])
    times = read_times(args[1])
    try:
        doc = json.load(open(args[2]))
    except (OSError, ValueError) as e:
        fail_input("%s is no summary: %s" % (args[2], e))
    failures = []
    rows = []
    heads = []
    for name, fixes in cases:
        k = kernel_of(doc, name)
        if k is None:
            failures.append("%s: not in the summary" % name)
            heads.append((name, "MISSING", "", "FAIL"))
            continue
        verdict = k["verdict"]
        head = verdict.get("dimension") or "none"
        roof = verdict.get("roof")
        t0 = times.get((name, "original"))
        measured = {}
        for dim in fixes:
            t1 = times.get((name, dim))
            if t0 is None or t1 is None or t0 <= 0:
                failures.append("%s: no timing of the original or of its %s "
                                "fix" % (name, dim))
                continue
            measured[dim] = 1.0 - t1 / t0
        # the right headline
        if len(fixes) >= 2 and len(measured) == len(fixes):
            want = {max(measured, key=measured.get)}
            why = "larger measured gain"
        else:
            want = EXPECTED.get(name)
            why = "planted"
        if want is None:
            failures.append("%s: no expected headline (add it to EXPECTED)" % name)
            heads.append((name, head, "?", "FAIL"))
        else:
            ok = head in want and (name not in ROOFS or roof is not None)
            if not ok:
                failures.append("%s: headline %s%s, expected %s (%s)"
                                % (name, head, " (roof %s)" % roof if roof else "",
                                   " or ".join(sorted(want)), why))
            heads.append((name, head + (" (roof %s)" % roof if roof else ""),
                          " or ".join(sorted(want)), "pass" if ok else "FAIL"))
        for dim in fixes:
            if dim not in measured:
                continue
            gated = not roof and (dim == head or (
                len(fixes) == 1 and head in SAME_FIX.get(name, set())))
            # a gated fix is judged by the gain the headline states
            d = k["dimensions"].get(head if gated else dim)
            if d is None:
                failures.append("%s: the summary has no dimension %s" % (name, dim))
                continue
            gain, bound = d.get("gain"), d.get("gain_bound", "estimate")
            result = judge(gain, bound, measured[dim])
            if result == "FAIL" and gated:
                failures.append("%s: the %s fix gains %.1f%%, estimated %s"
                                % (name, dim, 100 * measured[dim],
                                   gain_text(gain, bound)))
            rows.append({
                "case": name, "fix": dim, "headline": gated,
                "state": d.get("state"), "estimated": gain, "bound": bound,
                "measured": round(measured[dim], 4),
                "t_original_ms": t0, "t_fixed_ms": times[(name, dim)],
                "result": result if gated else {"pass": "within", "FAIL": "outside"}.get(result, result) + " (not the headline)",
            })
    # the table
    header = ("| case | fix for | headline? | estimated | measured | "
              "t original | t fixed | result |")
    lines = [header, "|---|---|---|---|---|---|---|---|"]
    for r in rows:
        lines.append("| %s | %s | %s | %s | %.1f%% | %.3f ms | %.3f ms | %s |" % (
            r["case"], r["fix"], "yes" if r["headline"] else "no",
            gain_text(r["estimated"], r["bound"]), 100 * r["measured"],
            r["t_original_ms"], r["t_fixed_ms"], r["result"]))
    head_lines = ["| case | headline | expected | result |", "|---|---|---|---|"]
    for name, head, want, result in heads:
        head_lines.append("| %s | %s | %s | %s |" % (name, head, want, result))
    gated = [r for r in rows if r["headline"]]
    within = sum(1 for r in gated if r["result"] == "pass")
    summary = ("%d of %d headline gains within %d points (or on the right side "
               "of their bound); %d of %d headlines right"
               % (within, len(gated), round(100 * TOLERANCE),
                  sum(1 for h in heads if h[3] == "pass"), len(heads)))
    text = "\n".join(lines + [""] + head_lines + ["", summary])
    print(text)
    for f in failures:
        print("FAILED: " + f)
    device = opts.get("--device", "")
    if "--markdown" in opts:
        with open(opts["--markdown"], "w") as out:
            out.write("## Estimated gains against real fixes%s\n\n"
                      % (" (" + device + ")" if device else ""))
            out.write("`tests/gpu/calibrate.sh`: each case's original recorded "
                      "with `mprof record --pm both`, original and fixed twin "
                      "timed with CUDA events (best of 5); measured gain = "
                      "1 - t_fixed / t_original.\n\n")
            out.write(text + "\n")
            if failures:
                out.write("\n" + "\n".join("- FAILED: " + f for f in failures) + "\n")
    if "--json" in opts:
        with open(opts["--json"], "w") as out:
            json.dump({"device": device, "tolerance": TOLERANCE, "rows": rows,
                       "headlines": [{"case": h[0], "headline": h[1],
                                      "expected": h[2], "result": h[3]}
                                     for h in heads],
                       "failures": failures}, out, indent=1)
            out.write("\n")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
