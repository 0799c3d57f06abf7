#!/bin/bash
# A kernel's PM samples counter by counter, as CUPTI gave them, to see which
# part of a quantity goes wrong when its % of peak leaves the scale: the
# count, the unit's elapsed cycles, its clock or the peak. Each kernel of
# the planted-bottleneck suite (tests/gpu/bottlenecks.cu) named is recorded
# alone with `mprof record --pm on --pm-counters COUNTERS` and exported
# with `mprof export --format sqlite`; the samples inside its runs are
# printed as a table (every Nth row) with each counter's median over the
# first and the last third of the run beside each other.
#
# Usage: tests/gpu/pm_raw.sh OUTDIR [BUILD_DIR]
# Environment: PM_RAW_KERNELS (default "dram_stream l2_stream
#   icache_thrash"); PM_RAW_SETS (space-separated TAG=COUNTERS, each a comma
#   list that fits one pass, at most 12; default: "plain", L2 sectors as a
#   count, per slice and as % of peak, L2 and SM clocks and cycles, L2 and
#   DRAM bytes a second; and "triage", L2 sectors in all and from L1/TEX
#   beside the TriageCompute counters of `--pm-counters sol`).
# Writes OUTDIR/pm_raw_K.TAG.txt per kernel and set (the table) and keeps
# its trace and database. Fails (exit 1) when a recording or export fails or holds no
# sample in the kernel's runs; skips (exit 77) without a GPU.
set -uo pipefail
out=${1:?usage: pm_raw.sh OUTDIR [BUILD_DIR]}
. "$(dirname "$0")/lib.sh"
gpu_setup pm_raw "$out" "${2:-build}"
build_bottlenecks pm_raw
read -r -a kernels <<<"${PM_RAW_KERNELS:-dram_stream l2_stream icache_thrash}"
pct=avg.pct_of_peak_sustained_elapsed
plain=lts__t_sectors.sum,lts__t_sectors.max,lts__t_sectors.$pct,lts__t_sectors.sum.peak_sustained,lts__cycles_elapsed.avg,lts__cycles_elapsed.max,lts__cycles_elapsed.min,lts__cycles_elapsed.avg.per_second,gpc__cycles_elapsed.avg.per_second,lts__t_bytes.sum.per_second,dram__bytes.sum.per_second
triage=lts__t_sectors.sum,lts__t_sectors_srcunit_tex.sum,lts__cycles_elapsed.avg,lts__t_sectors.$pct,lts__t_sectors_srcunit_tex.$pct,lts__cycles_elapsed.avg.per_second,TPC.TriageCompute.sm__cycles_active.$pct,SM_A.TriageCompute.l1tex__throughput.$pct,TriageCompute.sm__throughput.$pct
read -r -a sets <<<"${PM_RAW_SETS:-plain=$plain triage=$triage}"
failures=0
for set in "${sets[@]}"; do
  tag=${set%%=*}
  counters=${set#*=}
  for k in "${kernels[@]}"; do
    base="$out/raw_$k.$tag"
    rm -f "$base.mprof" "$base.sqlite" "$out/pm_raw_$k.$tag.txt"
    if ! "$mprof" record --pm on --pc-mode off --drop-code --no-sass \
      --pm-counters "$counters" -o "$base.mprof" -- "$bin" "$k" >"$base.record.txt" 2>&1 ||
      ! "$mprof" export -q --format sqlite -o "$base.sqlite" "$base.mprof" >>"$base.record.txt" 2>&1; then
      echo "FAIL  $k ($tag): $(tail -n 3 "$base.record.txt")" >&2
      failures=$((failures + 1))
      continue
    fi
    "$mprof" info "$base.mprof" >"$base.info.txt" 2>&1
    python3 - "$base.sqlite" "$k" >"$out/pm_raw_$k.$tag.txt" <<'PY'
import sqlite3, statistics, sys
db, kernel = sys.argv[1], sys.argv[2]
c = sqlite3.connect(db)
runs = c.execute(
    "SELECT k.start, k.end FROM CUPTI_ACTIVITY_KIND_KERNEL k JOIN StringIds s "
    "ON k.shortName = s.id WHERE s.value = ? ORDER BY k.start",
    (kernel,)).fetchall()
names = dict(c.execute("SELECT id, name FROM MPROF_PM_METRICS"))
rows = {}
for start, end, metric, value in c.execute(
        "SELECT start, end, metricId, value FROM MPROF_PM_SAMPLES"):
    if any(s <= start and end <= e for s, e in runs):
        rows.setdefault((start, end), {})[names[metric]] = value
print(f"{kernel}: {len(runs)} runs, "
      f"{sum(e - s for s, e in runs) / 1e6:.3f} ms; "
      f"{len(rows)} samples wholly inside them")
if not rows:
    sys.exit(1)
order = sorted(rows)
cols = list(dict.fromkeys(names.values()))
t0 = order[0][0]
print("t_ms\t" + "\t".join(cols))
step = max(1, len(order) // 40)
for key in order[::step]:
    print(f"{(key[0] - t0) / 1e6:.3f}\t" + "\t".join(
        f"{rows[key].get(n, float('nan')):.6g}" for n in cols))
third = max(1, len(order) // 3)
print("\nmedian over the first third, the last third:")
for n in cols:
    first = [rows[k][n] for k in order[:third] if n in rows[k]]
    last = [rows[k][n] for k in order[-third:] if n in rows[k]]
    if first and last:
        print(f"  {n}: {statistics.median(first):.6g}  "
              f"{statistics.median(last):.6g}")
PY
    status=$?
    cat "$out/pm_raw_$k.$tag.txt"
    if [ "$status" -ne 0 ]; then
      echo "FAIL  $k ($tag): no PM sample inside its runs" >&2
      failures=$((failures + 1))
    fi
  done
done
echo "pm_raw: $failures failed kernels"
[ "$failures" -eq 0 ]
