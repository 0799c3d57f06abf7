#!/usr/bin/env python3
"""Compare mprof's PM-sampled speed of light with ncu's SpeedOfLight section.

Usage: score_sol.py [--markdown FILE] [--tolerance POINTS]
                    [--quantities dram,l2_sectors,l2,l1tex,sm,issue,tensor,
                                  compute] [--report] CASE...
  CASE  NAME=NCU.csv=SUMMARY.json[=KERNEL]: ncu's details page as CSV
        (`ncu --import R.ncu-rep --csv --page details`) of one profiled
        launch, and `mprof summary --json --all` of `record --pm on` runs
        (runs with other counters summarised as one set give each number
        from the run that read it in scale); the summary's kernel is KERNEL
        (its short name, or its name before the parameter list), else NAME,
        else, when NAME is `dominant`, the kernel with the most GPU time.

Each number of mprof's speed-of-light line is set beside the ncu quantity it
stands for (docs/DIAGNOSIS.md, "Speed of light"): SpeedOfLight's own, or
the same metric asked of ncu with --metrics where SpeedOfLight shows none:

  DRAM        dram              DRAM Throughput
  L2 sectors  l2                lts__t_sectors.avg.pct_of_peak_sustained_elapsed
  L2          l2_throughput     L2 Cache Throughput (only when mprof
                                sampled it: PM sampling cannot on GH100)
  L1/shared   l1tex             L1/TEX Cache Throughput
  SMs         sm_active         sm__cycles_active.avg.pct_of_peak_sustained_
                                elapsed (else SM Active Cycles / Elapsed Cycles)
  issue       issue             sm__inst_executed.avg.pct_of_peak_sustained_elapsed
  tensor      tensor            sm__pipe_tensor_cycles_active.avg.pct_of_peak_
                                sustained_elapsed
  compute     sm_throughput     Compute (SM) Throughput less the ADU and CBU
                                pipes: the largest other row of its breakdown
                                (NCU.details.txt beside NCU.csv, `ncu --import
                                R --print-details all`), else the whole figure

and must be within 5 points (--tolerance); --quantities scores only those
named (default: all). ncu's Memory Throughput is listed beside the largest
of mprof's memory numbers, not scored: mprof has no such number. A quantity
ncu did not report is listed, not scored. A number mprof did not sample is
listed as "not sampled" and fails: the check asks for all of them. Exit 1
when one is off, 2 on bad input. --report lists the same table and the
numbers that are off ("off: ..."), and exits 0: a comparison, not a check.

SPDX-License-Identifier: MIT
"""
import csv
import json
import sys


def fail_input(text):
    print("score_sol: " + text, file=sys.stderr)
    sys.exit(2)


def ncu_metrics(path):
    """{metric name: value} of the first profiled launch in ncu's CSV."""
    try:
        rows = list(csv.reader(open(path)))
    except OSError as e:
        fail_input("cannot read %s: %s" % (path, e))
    head = next((i for i, r in enumerate(rows) if "Metric Name" in r), None)
    if head is None:
        fail_input("%s has no 'Metric Name' column: not ncu's details page "
                   "as CSV" % path)
    cols = rows[head]
    name, value, ident = (cols.index("Metric Name"), cols.index("Metric Value"),
                          cols.index("ID") if "ID" in cols else None)
    kernel = cols.index("Kernel Name") if "Kernel Name" in cols else None
    out, first = {}, None
    for r in rows[head + 1:]:
        if len(r) <= max(name, value):
            continue
        if ident is not None:
            if first is None:
                first = r[ident]
            elif r[ident] != first:
                break
        try:
            out[r[name]] = float(r[value].replace(",", ""))
        except ValueError:
            continue
        if kernel is not None:
            out["__kernel__"] = r[kernel]
    if not out:
        fail_input("%s holds no profiled launch" % path)
    return out


def compute_breakdown(csv_path):
    """{row: value} of the Compute Throughput Breakdown in the text of
    `ncu --import R --print-details all` beside CSV_PATH (same name,
    .details.txt), or {} when there is none."""
    path = csv_path[:-4] + ".details.txt" if csv_path.endswith(".csv") \
        else None
    try:
        text = open(path).read().splitlines() if path else []
    except OSError:
        return {}
    rows, inside = {}, False
    for line in text:
        if "Table Name" in line:
            inside = "Compute Throughput Breakdown" in line
            continue
        if not inside:
            continue
        parts = line.split()
        if len(parts) >= 3 and parts[0] == "SM:" and parts[-2] == "%":
            try:
                rows[" ".join(parts[1:-2])] = float(parts[-1].replace(",", ""))
            except ValueError:
                pass
    return rows


def mprof_kernel(path, name, kernel):
    try:
        items = json.load(open(path))["kernels"]["items"]
    except (OSError, ValueError, KeyError) as e:
        fail_input("%s is no summary: %s" % (path, e))
    want = kernel or name
    if want == "dominant":
        return max(items, key=lambda k: k["total_ns"]) if items else None
    for k in items:
        if k["short_name"] == want or k["name"].split("(")[0] == want:
            return k
    return None


def main(argv):
    md, tol, cases, report = None, 5.0, [], False
    wanted = {"dram", "l2", "l2_sectors", "l1tex", "sm", "issue", "tensor",
              "compute"}
    i = 1
    while i < len(argv):
        if argv[i] == "--report":
            report = True
            i += 1
            continue
        if argv[i] in ("--markdown", "--tolerance", "--quantities") and \
                i + 1 < len(argv):
            if argv[i] == "--markdown":
                md = argv[i + 1]
            elif argv[i] == "--quantities":
                asked = set(argv[i + 1].split(","))
                if not asked <= wanted:
                    fail_input("--quantities takes %s, not %s"
                               % (",".join(sorted(wanted)),
                                  ",".join(sorted(asked - wanted))))
                wanted = asked
            else:
                tol = float(argv[i + 1])
            i += 2
            continue
        cases.append(argv[i])
        i += 1
    if not cases:
        fail_input("usage: score_sol.py [--markdown FILE] [--tolerance N] "
                   "[--quantities Q,...] [--report] CASE...")
    lines = ["| kernel | quantity | mprof | ncu | result |",
             "|---|---|---|---|---|"]
    failures = []
    for case in cases:
        parts = case.split("=")
        if len(parts) not in (3, 4):
            fail_input("a case is NAME=NCU.csv=SUMMARY.json[=KERNEL]: %s"
                       % case)
        name, csv_path, summary = parts[:3]
        n = ncu_metrics(csv_path)
        k = mprof_kernel(summary, name, parts[3] if len(parts) == 4 else None)
        if k is None:
            failures.append("%s: not in %s" % (name, summary))
            continue
        t = k.get("throughput") or {}
        if t.get("status") != "measured":
            failures.append("%s: mprof did not measure it (%s)"
                            % (name, t.get("status", "no PM samples")))
            continue

        def pct(key):
            v = t.get(key)
            return None if v is None else 100.0 * v

        def most(*keys):
            vals = [pct(x) for x in keys if pct(x) is not None]
            return max(vals) if vals else None

        sm = n.get("sm__cycles_active.avg.pct_of_peak_sustained_elapsed")
        if sm is None and n.get("Elapsed Cycles") and "SM Active Cycles" in n:
            sm = 100.0 * n["SM Active Cycles"] / n["Elapsed Cycles"]
        compute = pct("sm_throughput")
        if compute is None:
            compute = most("issue", "fma", "alu", "tensor")
        ncu_compute, compute_what = n.get("Compute (SM) Throughput"), "compute"
        rows = compute_breakdown(csv_path)
        if rows:
            rest = [v for k, v in rows.items()
                    if not k.startswith(("Inst Executed Pipe Adu",
                                         "Inst Executed Pipe Cbu"))]
            if rest and max(rest) < max(rows.values()):
                ncu_compute = max(rest)
                compute_what = "compute (ncu's less ADU/CBU)"
        elapsed = ".avg.pct_of_peak_sustained_elapsed"
        pairs = [
            ("DRAM", pct("dram"), n.get("DRAM Throughput"), "dram"),
            ("L2 sectors", pct("l2"), n.get("lts__t_sectors" + elapsed),
             "l2_sectors"),
            ("L2", pct("l2_throughput"), n.get("L2 Cache Throughput"),
             "l2" if pct("l2_throughput") is not None else None),
            ("L1/shared", pct("l1tex"), n.get("L1/TEX Cache Throughput"),
             "l1tex"),
            ("SMs active", pct("sm_active"), sm, "sm"),
            ("issue", pct("issue"), n.get("sm__inst_executed" + elapsed),
             "issue"),
            ("tensor", pct("tensor"),
             n.get("sm__pipe_tensor_cycles_active" + elapsed), "tensor"),
            ("memory (not mprof's)", most("dram", "l2", "l1tex"),
             n.get("Memory Throughput"), None),
            (compute_what, compute, ncu_compute, "compute"),
        ]
        pairs = [(what, mine, theirs, key in wanted)
                 for what, mine, theirs, key in pairs]
        for what, mine, theirs, scored in pairs:
            if theirs is None:
                result = "ncu has none"
            elif mine is None:
                result = "not sampled" if scored else "-"
                if scored:
                    failures.append("%s: mprof sampled no %s" % (name, what))
            elif not scored:
                result = "not scored"
            elif abs(mine - theirs) <= tol:
                result = "pass"
            else:
                result = "FAIL"
                failures.append("%s: %s %.1f%% in mprof, %.1f%% in ncu"
                                % (name, what, mine, theirs))
            lines.append("| %s | %s | %s | %s | %s |" % (
                name, what, "-" if mine is None else "%.1f%%" % mine,
                "-" if theirs is None else "%.1f%%" % theirs, result))
    text = "\n".join(lines)
    print(text)
    mark = "off: " if report else "FAILED: "
    for f in failures:
        print(mark + f)
    if md:
        with open(md, "w") as out:
            out.write("## Speed of light against ncu\n\n`tests/gpu/sol_ncu.sh`: "
                      "`mprof record --pm on` and `ncu --section SpeedOfLight` "
                      "on the same binary, one after the other; within %g "
                      "points.\n\n%s\n" % (tol, text))
            if failures:
                out.write("\n" + "\n".join("- " + mark + f for f in failures)
                          + "\n")
    return 1 if failures and not report else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
