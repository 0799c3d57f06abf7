#!/bin/sh
# `mprof summary` and `mprof diff` as a user and an agent meet them: planted
# verdicts, well-formed XML (xmllint), JSON that matches docs/*.schema.json,
# colour rules, one-line errors with exit 2, and the diff gate's exit 3.
# usage: test_summary.sh MPROF TMPDIR JSON_SCHEMA_CHECK DOCS
mprof=$1
tmp=${2:-/tmp}/summary.$$
schema_check=$3
docs=$4
. "$(dirname "$0")/common.sh"

need xmllint libxml2-utils
need script bsdutils
# xml FILE: well formed.
xml() {
  xmllint --noout "$1" 2>"$tmp/xmlerr" || fail "$1 is not well-formed XML: $(head -3 "$tmp/xmlerr")"
}

json() { # json SCHEMA FILE
  "$schema_check" "$docs/$1" "$2" 2>"$tmp/jsonerr" || fail "$2 does not match $1: $(cat "$tmp/jsonerr")"
}

# --- planted bottlenecks, one scenario at a time -------------------------
for pair in memory-latency:memory_latency compute:compute barrier:synchronisation \
            occupancy:occupancy tail:tail_effect launch-gaps:launch_overhead; do
  scenario=${pair%%:*}
  dimension=${pair#*:}
  "$mprof" synth -o "$tmp/$scenario.mprof" --scenario "$scenario" --launches 5000 --seed 5 >/dev/null ||
    fail "synth --scenario $scenario"
  "$mprof" summary "$tmp/$scenario.mprof" --all >"$tmp/$scenario.xml" || fail "summary $scenario"
  xml "$tmp/$scenario.xml"
  verdicts=$(grep -c "<verdict dimension=\"$dimension\" state=\"issue\"[^>]*>" "$tmp/$scenario.xml")
  [ "$verdicts" -eq 8 ] || fail "$scenario: $verdicts of 8 kernels have the verdict $dimension"
done

# --- XML (default): bounded, documented root, notes ----------------------
"$mprof" synth -o "$tmp/t.mprof" --kernels 20 --launches 20000 --seed 9 >/dev/null || fail "synth exited $?"
expect 0 "<mprof-summary schema=\"1\"" "$mprof" summary "$tmp/t.mprof"
cp "$tmp/out" "$tmp/t.xml"
xml "$tmp/t.xml"
grep -q '<kernels matched="20" shown="5" omitted="15"' "$tmp/t.xml" || fail "default summary is not bounded to 5 kernels"
size=$(wc -c <"$tmp/t.xml")
[ "$size" -lt 32768 ] || fail "default summary is $size bytes"
grep -q '<note key="no_sidecar">.*mprof record.*mprof sass' "$tmp/t.xml" || fail "no sidecar note"
grep -q '<headline kernel=' "$tmp/t.xml" || fail "no headline"
expect 0 'shown="2"' "$mprof" summary "$tmp/t.mprof" --top 2 --hot 1
expect 0 '<kernels matched="20" shown="20" omitted="0"' "$mprof" summary "$tmp/t.mprof" --all
expect 0 '<hot-instructions sampled_pcs="24" shown="1" omitted="23">' "$mprof" summary "$tmp/t.mprof" --hot 1

# --- JSON against the schema ---------------------------------------------
"$mprof" summary "$tmp/t.mprof" --json >"$tmp/t.json" || fail "summary --json"
json summary.schema.json "$tmp/t.json"
"$mprof" summary "$tmp/t.mprof" --json --all --hot 10 >"$tmp/all.json" || fail "summary --json --all"
json summary.schema.json "$tmp/all.json"
# The checker refuses what the schema refuses (a test that cannot fail is a defect).
sed 's/"kind":"mprof-summary"/"kind":"nope"/' "$tmp/t.json" >"$tmp/bad.json"
"$schema_check" "$docs/summary.schema.json" "$tmp/bad.json" 2>/dev/null && fail "the schema check accepted a bad document"

# --- kernel filter --------------------------------------------------------
expect 0 'matched="1"' "$mprof" summary "$tmp/t.mprof" --kernel _Z9saxpy_fwdfPKfPfi
expect 0 'matched="3"' "$mprof" summary "$tmp/t.mprof" --kernel 'gemm|saxpy'
expect_one_line 2 "no kernel matches 'nothing_here'" "$mprof" summary "$tmp/t.mprof" --kernel nothing_here
expect_one_line 2 "not a kernel name nor a valid regular expression\|neither a kernel name nor a valid regular expression" "$mprof" summary "$tmp/t.mprof" --kernel '(['

# --- people: colour only on a terminal, never with NO_COLOR --------------
esc=$(printf '\033')
"$mprof" summary "$tmp/t.mprof" --human >"$tmp/h.txt" || fail "summary --human"
grep -q "$esc" "$tmp/h.txt" && fail "--human to a pipe has colour escapes"
# --human: one line per kernel, the name last and short; panels on request.
lines=$(grep -c '^ *[0-9.]*% ' "$tmp/h.txt")
[ "$lines" -eq 20 ] || fail "--human shows $lines kernel lines, expected the 20 kernels: $(cat "$tmp/h.txt")"
grep -q '^ *[0-9.]*% .*Memory-latency bound  *[≥≤]\{0,1\}[0-9.]*%  *[≥≤]\{0,1\}[0-9.]* [mun]*s  saxpy_fwd$' "$tmp/h.txt" ||
  fail "--human lacks share, verdict, gain, time saved and short name: $(cat "$tmp/h.txt")"
grep -q "^gain: what fixing the verdict could save of the kernel's own time; saved: that for the program" "$tmp/h.txt" ||
  fail "--human does not say what gain and saved mean: $(cat "$tmp/h.txt")"

# --- gains people can act on: time saved, ranked by it ------------------
# saved = the kernel's time x its in-kernel gain, or the idle gap time for a
# stream (idle) gain; a minor verdict never carries a large gain.
"$mprof" summary "$tmp/t.mprof" --json --all >"$tmp/all.json" || fail "summary --json --all"
"$mprof" summary "$tmp/t.mprof" --json --all --sort saved >"$tmp/saved.json" || fail "summary --sort saved"
json summary.schema.json "$tmp/saved.json"
python3 - "$tmp/all.json" "$tmp/saved.json" <<'PY' || fail "saved_ns or --sort saved is wrong"
import json, math, sys
by_time = json.load(open(sys.argv[1]))["kernels"]["items"]
by_saved = json.load(open(sys.argv[2]))["kernels"]["items"]
bad = []
for k in by_time:
    v = k["verdict"]
    if v.get("gain") is None:
        continue
    if v["gain_of"] == "kernel":
        want = k["total_ns"] * v["gain"]
        if abs(v["saved_ns"] - want) > max(2, 1e-3 * want):
            bad.append("%s: saved_ns %s, total_ns x gain %s" % (k["name"], v["saved_ns"], want))
    if v["state"] == "minor" and v["gain"] >= 0.25:
        bad.append("%s: minor with a gain of %s" % (k["name"], v["gain"]))
def saved(k):
    s = k["verdict"].get("saved_ns")
    return -1 if s is None else s
keys = [saved(k) for k in by_saved]
if keys != sorted(keys, reverse=True):
    bad.append("--sort saved order: %s" % keys)
if sorted(k["name"] for k in by_saved) != sorted(k["name"] for k in by_time):
    bad.append("--sort saved lost kernels")
if [saved(k) for k in by_time] == keys:
    bad.append("the planted trace ranks alike by time and by saving: the sort is not tested")
print("\n".join(bad))
sys.exit(1 if bad else 0)
PY
"$mprof" summary "$tmp/launch-gaps.mprof" --human --all >"$tmp/gaps.txt" || fail "summary --human of launch gaps"
grep -Eq 'Launch-bound +≥[0-9.]+% idle +≥[0-9.]+ [mun]?s ' "$tmp/gaps.txt" ||
  fail "an idle-gap gain is not marked as stream time: $(cat "$tmp/gaps.txt")"
grep -q '"idle": the stream.s idle gaps around the kernel, stream time, not kernel time' "$tmp/gaps.txt" ||
  fail "--human does not say what an idle gain is: $(cat "$tmp/gaps.txt")"
expect 0 'gain_of="stream"' "$mprof" summary "$tmp/launch-gaps.mprof"
expect_one_line 2 "--sort takes time or saved" "$mprof" summary "$tmp/t.mprof" --sort bogus
expect_one_line 2 "--sort goes with the kernel summary" "$mprof" summary "$tmp/t.mprof" --sort saved --by-range
grep -q 'gemm_tiled<64, 64, 8>$' "$tmp/h.txt" || fail "--human lacks the short template name"
grep -q '(float' "$tmp/h.txt" && fail "--human prints parameter lists"
grep -q '▶' "$tmp/h.txt" && fail "--human brief prints the panel"
expect 0 'void gemm_tiled<64, 64, 8>(float const\*' "$mprof" summary "$tmp/t.mprof" --human --full-names
"$mprof" summary "$tmp/t.mprof" --human --top 2 >"$tmp/h2.txt" || fail "summary --human --top 2"
[ "$(grep -c '▶' "$tmp/h2.txt")" -eq 2 ] || fail "--human --top 2 is not two panels"
expect 0 '▶' "$mprof" summary "$tmp/t.mprof" --human --kernel saxpy_fwd
expect 0 '▶' "$mprof" summary "$tmp/t.mprof" --human --detail
expect 0 'short_name="gemm_tiled&lt;64, 64, 8&gt;"' "$mprof" summary "$tmp/t.mprof" --all
"$mprof" summary "$tmp/t.mprof" --human --color=always >"$tmp/c.txt" || fail "summary --color=always exited $?"
grep -q "$esc" "$tmp/c.txt" || fail "--color=always has no colour"
NO_COLOR=1 script -qec "$mprof summary $tmp/t.mprof --human" /dev/null >"$tmp/nc.txt" 2>&1 ||
  fail "summary --human on a terminal with NO_COLOR exited $?: $(cat "$tmp/nc.txt")"
grep -q "$esc\[1;31m\|$esc\[32m" "$tmp/nc.txt" && fail "NO_COLOR on a terminal still colours"
script -qec "$mprof summary $tmp/t.mprof --human" /dev/null >"$tmp/tty.txt" 2>&1 ||
  fail "summary --human on a terminal exited $?: $(cat "$tmp/tty.txt")"
grep -q "$esc" "$tmp/tty.txt" || fail "--human on a terminal has no colour"

# --- with a sidecar: SASS and lines; a broken sidecar is bad input --------
"$mprof" synth -o "$tmp/sc.mprof" --sidecar --scenario barrier --launches 3000 >/dev/null || fail "synth --sidecar exited $?"
[ -f "$tmp/sc.mprof.pc.json" ] || fail "synth --sidecar wrote no sidecar"
expect 0 'sass="BAR.SYNC' "$mprof" summary "$tmp/sc.mprof"
grep -q 'file="synth_kernels.cu"' "$tmp/out" || fail "no source lines from the sidecar"
grep -q 'no_sidecar' "$tmp/out" && fail "no_sidecar note with a sidecar"
cp "$tmp/out" "$tmp/sc.xml"
xml "$tmp/sc.xml"
"$mprof" summary "$tmp/sc.mprof" --json >"$tmp/sc.json" || fail "summary --json with a sidecar exited $?"
json summary.schema.json "$tmp/sc.json"
cp "$tmp/sc.mprof.pc.json" "$tmp/keep.pc.json"
echo '{"broken": ' >"$tmp/sc.mprof.pc.json"
expect 0 '<note key="no_sidecar">Sidecar left out, the trace read without it .*sc.mprof.pc.json' "$mprof" summary "$tmp/sc.mprof"
expect_one_line 2 "sc.mprof.pc.json: .*--no-sidecar" "$mprof" summary "$tmp/sc.mprof" --sidecar "$tmp/sc.mprof.pc.json"
expect 0 'no_sidecar' "$mprof" summary "$tmp/sc.mprof" --no-sidecar
expect 0 'sass="BAR.SYNC' "$mprof" summary "$tmp/sc.mprof" --sidecar "$tmp/keep.pc.json"

# --- bad input and usage: one line, exit 2 --------------------------------
expect_one_line 2 "no trace given" "$mprof" summary
expect_one_line 2 "t.mprof is given twice" "$mprof" summary "$tmp/t.mprof" "$tmp/t.mprof"
expect_one_line 2 "unknown option '--frob'" "$mprof" summary "$tmp/t.mprof" --frob
expect_one_line 2 "needs a positive number" "$mprof" summary "$tmp/t.mprof" --top 0
# Digits only: strtoull would read " -1" as 2^64 - 1; past 2^64 - 1 too.
for bad in " -1" "+5" " 5" 18446744073709551616 1e30; do
  expect_one_line 2 "needs a positive number" "$mprof" summary "$tmp/t.mprof" --top "$bad"
done
expect 0 "<mprof" "$mprof" summary "$tmp/t.mprof" --top 18446744073709551615
expect_one_line 2 "needs a positive number" "$mprof" summary "$tmp/t.mprof" --hot x
expect_one_line 2 "$tmp/missing.mprof: cannot open" "$mprof" summary "$tmp/missing.mprof"
head -c 1000 "$tmp/t.mprof" >"$tmp/cut.mprof"
expect_one_line 2 "$tmp/cut.mprof: header at byte 32" "$mprof" summary "$tmp/cut.mprof"
echo "<xml>not a trace</xml>" >"$tmp/text.mprof"
expect_one_line 2 "$tmp/text.mprof" "$mprof" summary "$tmp/text.mprof"
expect_one_line 2 "cut.mprof: header at byte 32.*; leave it out of the set" "$mprof" summary "$tmp"
expect_one_line 2 "contradict" "$mprof" summary "$tmp/t.mprof" --no-sidecar --sidecar x
expect_one_line 2 "$tmp/nope.pc.json" "$mprof" summary "$tmp/t.mprof" --sidecar "$tmp/nope.pc.json"
expect_one_line 2 "--by-range takes --top N, --all, --kernel" "$mprof" summary "$tmp/t.mprof" --by-range --detail
# --by-range on a trace without ranges: one line saying why, well-formed XML.
expect 0 '<note key="ranges">the trace has no NVTX ranges' "$mprof" summary "$tmp/t.mprof" --by-range
"$mprof" summary "$tmp/t.mprof" --by-range >"$tmp/ranges.xml" || fail "summary --by-range exited $?"
xml "$tmp/ranges.xml"
expect 0 '^! the trace has no NVTX ranges' "$mprof" summary "$tmp/t.mprof" --by-range --human
expect 0 '"note":"the trace has no NVTX ranges' "$mprof" summary "$tmp/t.mprof" --by-range --json
expect 0 "by-range" "$mprof" summary --help
expect 0 "usage: mprof summary TRACE" "$mprof" summary --help
expect 0 "usage: mprof diff BASE CAND" "$mprof" help diff

# --- diff -------------------------------------------------------------------
"$mprof" synth -o "$tmp/base.mprof" --seed 3 >/dev/null || fail "synth base exited $?"
"$mprof" synth -o "$tmp/slow.mprof" --seed 3 --slowdown 20 --slow-kernel 2 >/dev/null || fail "synth slow exited $?"
"$mprof" synth -o "$tmp/rerun.mprof" --seed 3 --timing-seed 8 >/dev/null || fail "synth rerun exited $?"
# A planted 20% slowdown is reported and trips --fail-above 10 (exit 3).
expect 3 'change="slower"' "$mprof" diff "$tmp/base.mprof" "$tmp/slow.mprof" --fail-above 10
grep -q 'tripped="true" kernels="1"' "$tmp/out" || fail "gate not reported as tripped"
grep -q 'mean_change="0.2000"' "$tmp/out" || fail "20% slowdown not measured as 0.2000"
grep -q "mprof diff: 1 kernel slowed by more than 10% per launch" "$tmp/out" || fail "gate message"
# Without a gate the same diff succeeds; above the change it holds.
expect 0 'slower="1"' "$mprof" diff "$tmp/base.mprof" "$tmp/slow.mprof"
cp "$tmp/out" "$tmp/d.xml"
xml "$tmp/d.xml"
expect 0 'tripped="false"' "$mprof" diff "$tmp/base.mprof" "$tmp/slow.mprof" --fail-above 25
# Identical traces and a re-run of the same program do not trip it.
expect 0 'slower="0" faster="0" noise="8"' "$mprof" diff "$tmp/base.mprof" "$tmp/base.mprof" --fail-above 10
expect 0 'slower="0" faster="0" noise="8"' "$mprof" diff "$tmp/base.mprof" "$tmp/rerun.mprof" --fail-above 1
"$mprof" diff "$tmp/base.mprof" "$tmp/slow.mprof" --json --fail-above 10 >"$tmp/d.json" 2>/dev/null
[ $? -eq 3 ] || fail "diff --json with a tripped gate did not exit 3"
json diff.schema.json "$tmp/d.json"
"$mprof" diff "$tmp/base.mprof" "$tmp/rerun.mprof" --json --all >"$tmp/d2.json" || fail "diff --json --all"
json diff.schema.json "$tmp/d2.json"
expect 3 'TRIPPED' "$mprof" diff "$tmp/base.mprof" "$tmp/slow.mprof" --human --fail-above 10
expect 0 'matched="1"' "$mprof" diff "$tmp/base.mprof" "$tmp/slow.mprof" --kernel attention
expect_one_line 2 "no candidate trace given" "$mprof" diff "$tmp/base.mprof"
expect_one_line 2 "no traces given" "$mprof" diff
expect_one_line 2 "expected exactly two traces" "$mprof" diff "$tmp/base.mprof" "$tmp/base.mprof" "$tmp/base.mprof"
expect_one_line 2 "needs a percentage" "$mprof" diff "$tmp/base.mprof" "$tmp/slow.mprof" --fail-above ten
expect_one_line 2 "needs a percentage" "$mprof" diff "$tmp/base.mprof" "$tmp/slow.mprof" --fail-above -5
expect_one_line 2 "$tmp/cut.mprof" "$mprof" diff "$tmp/base.mprof" "$tmp/cut.mprof"
expect_one_line 2 "no kernel of either trace matches" "$mprof" diff "$tmp/base.mprof" "$tmp/slow.mprof" --kernel zzz

if [ "$failures" -ne 0 ]; then
  echo "$failures summary/diff CLI checks failed" >&2
  exit 1
fi
echo "all summary/diff CLI checks passed"
