#!/usr/bin/env python3
"""`mprof export --format sqlite` as an nsys user meets it: every committed
sample exported, then queried with the SQL of docs/EXPORT.md, whose answers
must equal what `mprof summary --json`, `summary --by-range --json` and
`mprof info` say of the same trace.

Usage: test_export_sqlite.py MPROF SAMPLES_DIR DOCS_DIR TMPDIR [HAVE_SQLITE]
(HAVE_SQLITE OFF: the build has no libsqlite3, and the export must say so
in one line with exit status 2.)
"""
import json
import os
import re
import shutil
import sqlite3
import subprocess
import sys

mprof, samples, docs, tmp_root = sys.argv[1:5]
tmp = os.path.join(tmp_root, "export_sqlite.%d" % os.getpid())
os.makedirs(tmp, exist_ok=True)
failures = []

if len(sys.argv) > 5 and sys.argv[5] in ("OFF", "0", "FALSE"):
    r = subprocess.run([mprof, "export", "--format", "sqlite", "-o",
                        os.path.join(tmp, "x.sqlite"),
                        os.path.join(samples, "gemm.mprof")],
                       capture_output=True, text=True)
    ok = (r.returncode == 2 and len(r.stderr.splitlines()) == 1 and
          "built without SQLite" in r.stderr and "libsqlite3-dev" in r.stderr
          and not os.path.exists(os.path.join(tmp, "x.sqlite")))
    shutil.rmtree(tmp, ignore_errors=True)
    if not ok:
        sys.exit("FAIL: without SQLite, export said %r (exit %d)" %
                 (r.stderr, r.returncode))
    print("SQLite export: this build has none, and says so")
    sys.exit(0)


def fail(message):
    failures.append(message)
    print("FAIL: " + message, file=sys.stderr)


def run(*args):
    return subprocess.run([mprof, *args], capture_output=True, text=True)


def doc_query(title):
    """The ```sql block of docs/EXPORT.md that starts with '-- TITLE'."""
    with open(os.path.join(docs, "EXPORT.md"), encoding="utf-8") as f:
        text = f.read()
    m = re.search(r"```sql\n-- " + re.escape(title) + r"\n(.*?)```", text,
                  re.S)
    if not m:
        sys.exit("docs/EXPORT.md has no SQL block '-- %s'" % title)
    return m.group(1)


TOP_KERNELS = doc_query("top kernels by total time")
PER_RANGE = doc_query("GPU time per NVTX range")


def info_sections(path):
    out = run("info", path).stdout
    m = re.search(r"^sections\s+(.*)$", out, re.M)
    return dict(kv.split("=") for kv in m.group(1).split()) if m else {}


def check_sample(name):
    trace = os.path.join(samples, name)
    db_path = os.path.join(tmp, name + ".sqlite")
    r = run("export", "--format", "sqlite", "-o", db_path, trace)
    if r.returncode != 0:
        fail("%s: export exited %d: %s" % (name, r.returncode, r.stderr))
        return
    if not re.search(r"wrote .*: \d+ rows", r.stdout):
        fail("%s: no recap: %r" % (name, r.stdout))
    summary = json.loads(run("summary", "--json", "--all", trace).stdout)
    sections = {k: int(v) for k, v in info_sections(trace).items()}
    db = sqlite3.connect(db_path)
    q = lambda sql: db.execute(sql).fetchall()

    # The trace's totals.
    launches, kernel_ns = q("SELECT COUNT(*), COALESCE(SUM(end - start), 0) "
                            "FROM CUPTI_ACTIVITY_KIND_KERNEL")[0]
    t = summary["trace"]
    if (launches, kernel_ns) != (t["launches"], t["kernel_time_ns"]):
        fail("%s: %d launches, %d ns in SQLite; summary says %d, %d" %
             (name, launches, kernel_ns, t["launches"], t["kernel_time_ns"]))
    (kernels,), = q("SELECT COUNT(*) FROM MPROF_KERNELS")
    if kernels != t["kernels"]:
        fail("%s: %d MPROF_KERNELS rows, summary counts %d kernels" %
             (name, kernels, t["kernels"]))
    (samples_total,), = q(
        "SELECT COALESCE(SUM(p.samples), 0) FROM MPROF_PC_SAMPLES AS p "
        "JOIN MPROF_STALL_REASONS AS r ON r.id = p.reasonId "
        "WHERE r.notIssued = 0")
    if samples_total != t.get("samples", 0):
        fail("%s: %d PC samples in SQLite, summary counts %d" %
             (name, samples_total, t.get("samples", 0)))
    (memops,), = q("SELECT (SELECT COUNT(*) FROM CUPTI_ACTIVITY_KIND_MEMCPY) "
                   "+ (SELECT COUNT(*) FROM CUPTI_ACTIVITY_KIND_MEMSET)")
    if memops != sections.get("MEMOPS", 0):
        fail("%s: %d copies and memsets, info counts %d" %
             (name, memops, sections.get("MEMOPS", 0)))
    (ranges,), = q("SELECT COUNT(*) FROM NVTX_EVENTS "
                   "WHERE eventType IN (59, 60)")
    if ranges != sections.get("RANGES", 0):
        fail("%s: %d NVTX ranges, info counts %d" %
             (name, ranges, sections.get("RANGES", 0)))
    (calls,), = q("SELECT COUNT(*) FROM CUPTI_ACTIVITY_KIND_RUNTIME")
    if calls != sections.get("API_CALLS", 0):
        fail("%s: %d API calls, info counts %d" %
             (name, calls, sections.get("API_CALLS", 0)))
    (dangling,), = q("SELECT COUNT(*) FROM CUPTI_ACTIVITY_KIND_KERNEL AS k "
                     "LEFT JOIN StringIds AS s ON s.id = k.demangledName "
                     "WHERE s.id IS NULL")
    if dangling:
        fail("%s: %d kernel rows name no string" % (name, dangling))
    bad_keys = q("PRAGMA foreign_key_check")
    if bad_keys:
        fail("%s: foreign keys broken: %r" % (name, bad_keys[:3]))

    # nsys stats' cuda_gpu_kern_sum, from the docs: per kernel name, as
    # summary lists them (summed over devices, which summary splits).
    want = {}
    for k in summary["kernels"]["items"]:
        n, c = want.get(k["name"], (0, 0))
        want[k["name"]] = (n + k["launches"], c + k["total_ns"])
    rows = q(TOP_KERNELS)
    got = {row[6]: (row[2], row[1]) for row in rows}
    if got != want:
        diff = [(k, got.get(k), want.get(k)) for k in set(got) | set(want)
                if got.get(k) != want.get(k)]
        fail("%s: top-kernels query disagrees with summary on %d kernels, "
             "e.g. %r" % (name, len(diff), diff[:2]))
    if rows and summary.get("headline") and \
            rows[0][6] != summary["headline"]["kernel"] and \
            len(summary["devices"]) == 1:
        fail("%s: the top kernel is %r, summary's headline %r" %
             (name, rows[0][6], summary["headline"]["kernel"]))
    if rows and abs(sum(r[0] for r in rows) - 100.0) > 0.1 * len(rows):
        fail("%s: Time (%%) adds up to %.1f" % (name, sum(r[0] for r in rows)))

    # GPU time per NVTX range, against summary --by-range.
    by_range = json.loads(run("summary", "--by-range", "--json", "--all",
                              trace).stdout)
    want = {(i["name"], i["domain"]): (i["launches"], i["kernel_ns"])
            for i in by_range.get("ranges", {}).get("items", [])
            if i["launches"]}
    got = {(r[0], r[1]): (r[2], r[3]) for r in q(PER_RANGE)}
    if got != want:
        fail("%s: per-range query %r, summary --by-range %r" %
             (name, sorted(got.items())[:3], sorted(want.items())[:3]))
    return got


checked_ranges = 0
names = sorted(f for f in os.listdir(samples) if f.endswith(".mprof"))
if len(names) < 5:
    fail("only %d samples in %s" % (len(names), samples))
for name in names:
    got = check_sample(name)
    checked_ranges += len(got or {})
if checked_ranges < 5:
    fail("the per-range query was checked on %d ranges only" % checked_ranges)

# --kernel keeps one kernel's launches; errors are one line, exit status 2.
gemm = os.path.join(samples, "gemm.mprof")
one = os.path.join(tmp, "one.sqlite")
r = run("export", "--format", "sqlite", "-k", "gemm", "-o", one, gemm)
if r.returncode != 0:
    fail("export -k gemm exited %d: %s" % (r.returncode, r.stderr))
else:
    db = sqlite3.connect(one)
    names_left = db.execute("SELECT DISTINCT s.value FROM "
                            "CUPTI_ACTIVITY_KIND_KERNEL AS k JOIN StringIds "
                            "AS s ON s.id = k.shortName").fetchall()
    if not names_left or any("gemm" not in n for n, in names_left):
        fail("export -k gemm kept %r" % names_left)
# A run of several traces is one database: a process and a trace row
# each, kernels and launches of both, one row per GPU ordinal.
demo = os.path.join(samples, "demo.mprof")
both = os.path.join(tmp, "both.sqlite")
r = run("export", "--format", "sqlite", "-q", "-o", both, demo, gemm)
if r.returncode != 0:
    fail("export of a set exited %d: %s" % (r.returncode, r.stderr))
else:
    db = sqlite3.connect(both)
    want = [json.loads(run("summary", "--json", p).stdout)["trace"]
            for p in (demo, gemm)]
    got = db.execute("SELECT (SELECT COUNT(*) FROM MPROF_TRACES), "
                     "(SELECT COUNT(DISTINCT globalPid) FROM PROCESSES), "
                     "(SELECT COUNT(*) FROM CUPTI_ACTIVITY_KIND_KERNEL), "
                     "(SELECT COUNT(*) FROM MPROF_KERNELS), "
                     "(SELECT COUNT(*) - COUNT(DISTINCT id) FROM "
                     "TARGET_INFO_GPU)").fetchone()
    expected = (2, 2, sum(w["launches"] for w in want),
                sum(w["kernels"] for w in want), 0)
    if got != expected:
        fail("the set's database holds %r, expected %r" % (got, expected))
    per_trace = db.execute(
        "SELECT t.path, COUNT(*) FROM CUPTI_ACTIVITY_KIND_KERNEL AS k "
        "JOIN MPROF_KERNELS AS m ON m.id = k.mprofKernelId "
        "JOIN MPROF_TRACES AS t ON t.id = m.traceId GROUP BY t.id "
        "ORDER BY t.id").fetchall()
    if [n for _, n in per_trace] != [w["launches"] for w in want]:
        fail("launches per trace %r" % per_trace)

# Exporting again replaces the file with a complete one.
r = run("export", "--format", "sqlite", "-q", "-o", one, gemm)
if r.returncode != 0 or r.stdout:
    fail("a second export over the file: %d %r" % (r.returncode, r.stdout))
else:
    db = sqlite3.connect(one)
    (n,), = db.execute("SELECT COUNT(*) FROM MPROF_KERNELS").fetchall()
    if n != json.loads(run("summary", "--json", gemm).stdout)["trace"]["kernels"]:
        fail("the replaced file holds %d kernels" % n)
for args, pattern in [
    (["export", "--format", "sqlite", "-o", os.path.join(tmp, "x.sqlite"),
      os.path.join(tmp, "missing.mprof")], "cannot open"),
    (["export", "--format", "sqlite", "-o",
      os.path.join(tmp, "no-such-dir", "x.sqlite"), gemm], "cannot create"),
]:
    r = run(*args)
    if r.returncode != 2 and r.returncode != 1:
        fail("%s exited %d" % (args, r.returncode))
    if len(r.stderr.splitlines()) != 1 or pattern not in r.stderr:
        fail("%s: stderr %r lacks '%s' on one line" % (args, r.stderr, pattern))
if os.path.exists(os.path.join(tmp, "x.sqlite")):
    fail("a failed export left a file")
leftovers = [f for f in os.listdir(tmp) if f.endswith(".partial")]
if leftovers:
    fail("partial files left: %r" % leftovers)

shutil.rmtree(tmp, ignore_errors=True)
if failures:
    print("%d failure(s)" % len(failures), file=sys.stderr)
    sys.exit(1)
print("SQLite export: all checks passed on %d samples" % len(names))
