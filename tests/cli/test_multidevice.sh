#!/bin/sh
# The command line on a trace of two GPUs that run the same kernels: `mprof
# info` and `mprof summary` (XML, JSON) keep each kernel's two devices apart,
# `mprof diff` joins per (name, device) and gates on a slowdown planted on
# device 1 only, `mprof view --render` draws it (when built with the viewer),
# and `mprof record` names the GPU that could not be PC-sampled.
# usage: test_multidevice.sh MPROF TMPDIR JSON_SCHEMA_CHECK DOCS TEST_MULTIDEVICE
mprof=$1
tmp=${2:-/tmp}/multidevice.$$
schema_check=$3
docs=$4
helper=$5
. "$(dirname "$0")/common.sh"

# lines PATTERN FILE: how many lines of FILE match PATTERN.
lines() { grep -c -- "$1" "$2"; }

json() { # json SCHEMA FILE
  "$schema_check" "$docs/$1" "$2" 2>"$tmp/jsonerr" || fail "$2 does not match $1: $(cat "$tmp/jsonerr")"
}

softmax=_Z17attention_softmaxPKfPfiif
# How info prints it: synth demangles, as record does.
softmax_name='attention_softmax(float const\*, float\*, int, int, float)'

"$mprof" synth -o "$tmp/base.mprof" --devices 2 --kernels 4 --launches 8000 --seed 4 >/dev/null ||
  fail "synth --devices 2"
"$mprof" synth -o "$tmp/slow.mprof" --devices 2 --kernels 4 --launches 8000 --seed 4 \
  --slowdown 25 --slow-kernel 2 --slow-device 1 >/dev/null || fail "synth --slow-device 1"

# --- info: each device, and the device of every kernel and counter --------
"$mprof" info "$tmp/base.mprof" >"$tmp/info.txt" || fail "info"
grep -q '^device 0 ' "$tmp/info.txt" || fail "info lacks device 0"
grep -q '^device 1 ' "$tmp/info.txt" || fail "info lacks device 1"
[ "$(lines "launches .* $softmax_name  (device 0)\$" "$tmp/info.txt")" -eq 1 ] ||
  fail "info: $softmax_name on device 0 is not one line: $(cat "$tmp/info.txt")"
[ "$(lines "launches .* $softmax_name  (device 1)\$" "$tmp/info.txt")" -eq 1 ] ||
  fail "info: $softmax_name on device 1 is not one line"
[ "$(lines '^counter    PC samples CUPTI took, non-user kernels'"'"' too (device [01]): [1-9]' "$tmp/info.txt")" -eq 2 ] ||
  fail "info: the PC sample totals do not name their devices: $(grep counter "$tmp/info.txt")"
"$mprof" synth -o "$tmp/one.mprof" --launches 100 >/dev/null || fail "synth of one GPU exited $?"
"$mprof" info "$tmp/one.mprof" >"$tmp/one.txt" || fail "info on one GPU exited $?"
grep -q '(device' "$tmp/one.txt" && fail "info names devices on a one-GPU trace"

# --- summary: one row per kernel and device ------------------------------
"$mprof" summary --all "$tmp/base.mprof" >"$tmp/s.xml" || fail "summary --all"
need xmllint libxml2-utils
xmllint --noout "$tmp/s.xml" || fail "summary XML is not well-formed"
grep -q '<device index="1" id="1"' "$tmp/s.xml" || fail "summary lists no device 1"
[ "$(lines '<kernel rank=' "$tmp/s.xml")" -eq 8 ] || fail "summary has not 8 kernel rows"
for d in 0 1; do
  [ "$(lines "<kernel rank=.* mangled=\"$softmax\" device=\"$d\"" "$tmp/s.xml")" -eq 1 ] ||
    fail "summary XML has not one $softmax row on device $d"
done
"$mprof" summary --json --all "$tmp/base.mprof" >"$tmp/s.json" || fail "summary --json --all"
json summary.schema.json "$tmp/s.json"
grep -o '"mangled":"[^"]*","device":[0-9]*' "$tmp/s.json" | sort >"$tmp/rows.txt"
[ "$(wc -l <"$tmp/rows.txt")" -eq 8 ] || fail "summary JSON has not 8 rows: $(cat "$tmp/rows.txt")"
[ "$(sort -u "$tmp/rows.txt" | wc -l)" -eq 8 ] || fail "summary JSON repeats a (name, device) row"
[ "$(grep -c "\"mangled\":\"$softmax\",\"device\":[01]\$" "$tmp/rows.txt")" -eq 2 ] ||
  fail "summary JSON lacks $softmax on both devices"
expect 0 'matched="2"' "$mprof" summary "$tmp/base.mprof" --kernel "$softmax"

# --- diff: per (name, device); the gate trips on device 1 only -------------
expect 3 "1 kernel slowed by more than 10%" "$mprof" diff "$tmp/base.mprof" "$tmp/slow.mprof" --fail-above 10
"$mprof" diff "$tmp/base.mprof" "$tmp/slow.mprof" --top 20 >"$tmp/d.xml" || fail "diff --top 20 exited $?"
[ "$(lines 'change="slower"' "$tmp/d.xml")" -eq 1 ] || fail "diff: not exactly one kernel slower"
grep -q "mangled=\"$softmax\" device=\"1\" change=\"slower\"" "$tmp/d.xml" ||
  fail "diff: $softmax is not slower on device 1"
grep -q "mangled=\"$softmax\" device=\"0\" change=\"noise\"" "$tmp/d.xml" ||
  fail "diff: $softmax on device 0 is not unchanged"
grep -q '<kernels matched="8"' "$tmp/d.xml" || fail "diff did not match 8 (name, device) pairs"
"$mprof" diff "$tmp/base.mprof" "$tmp/slow.mprof" --json --top 20 >"$tmp/d.json" || fail "diff --json --top 20 exited $?"
json diff.schema.json "$tmp/d.json"
grep -q "\"mangled\":\"$softmax\",\"device\":1,\"change\":\"slower\"" "$tmp/d.json" ||
  fail "diff JSON: $softmax is not slower on device 1"
grep -q "\"mangled\":\"$softmax\",\"device\":0,\"change\":\"noise\"" "$tmp/d.json" ||
  fail "diff JSON: $softmax on device 0 is not noise"
expect 0 "(device 1)" "$mprof" diff "$tmp/base.mprof" "$tmp/slow.mprof" --human
expect 2 "not among the 2 devices" "$mprof" synth -o "$tmp/bad.mprof" --devices 2 --slowdown 10 --slow-device 2
expect 2 "needs a device index" "$mprof" synth -o "$tmp/bad.mprof" --slow-device x

# --- view --render: both devices' bands (pixels: test_multidevice) -----------
"$mprof" view "$tmp/base.mprof" --render "$tmp/t.png" >"$tmp/view.txt" 2>&1
status=$?
if grep -q "unavailable in this build" "$tmp/view.txt"; then
  skipped "mprof view --render is not built here"
elif [ "$status" -ne 0 ]; then
  fail "view --render exited $status: $(cat "$tmp/view.txt")"
else
  [ "$(od -An -c -N4 "$tmp/t.png" | tr -d ' ')" = "211PNG" ] || fail "view --render wrote no PNG"
fi

# --- record: the recap names the GPU that was not sampled -----------------
# A stand-in program leaves a trace where the producer would; the producer
# itself is never loaded (nothing calls CUDA).
"$helper" --write-unsampled "$tmp/unsampled.mprof" || fail "writing the unsampled trace"
cp "$tmp/unsampled.mprof" "$tmp/fake-producer.so"
MPROF_CUPTI_LIB="$tmp/fake-producer.so" "$mprof" record --no-sass -o "$tmp/rec.mprof" -- \
  sh -c 'cp "$0" "$MPROF_OUTPUT"' "$tmp/unsampled.mprof" >"$tmp/rec.txt" 2>&1 ||
  fail "record with a stand-in program: $(cat "$tmp/rec.txt")"
grep -q "PC sampling failed on device 1: CUPTI_ERROR_NOT_SUPPORTED" "$tmp/rec.txt" ||
  fail "record does not name the unsampled device: $(cat "$tmp/rec.txt")"
grep -q "failed on device 0" "$tmp/rec.txt" && fail "record blames device 0"

# --- record: a PM exit that timed out says where, not "could not keep up" --
"$helper" --write-pm-timeout "$tmp/pm_timeout.mprof" || fail "writing the PM trace"
MPROF_CUPTI_LIB="$tmp/fake-producer.so" "$mprof" record --no-sass -o "$tmp/rec_pm.mprof" -- \
  sh -c 'cp "$0" "$MPROF_OUTPUT"' "$tmp/pm_timeout.mprof" >"$tmp/rec_pm.txt" 2>&1 ||
  fail "record with a stand-in PM program: $(cat "$tmp/rec_pm.txt")"
grep -q "3 PM samples every 100000 ns" "$tmp/rec_pm.txt" ||
  fail "record does not count the PM samples: $(cat "$tmp/rec_pm.txt")"
grep -q "PM sampling did not stop within 1012 ms of the program's exit (cuptiPmSamplingStop had not returned): the 3 samples decoded by then are kept" "$tmp/rec_pm.txt" ||
  fail "record does not say where the PM exit stuck: $(cat "$tmp/rec_pm.txt")"
grep -q "could not keep up" "$tmp/rec_pm.txt" && fail "record blames the decode rate for a stuck exit"

# --- record --pm both: CMD twice, PC-sampled then PM-sampled --------------
# The stand-in program notes each run's MPROF_PM and output.
both_cmd='echo "$MPROF_PM $MPROF_OUTPUT" >>"$1"; cp "$0" "$MPROF_OUTPUT"; exit "${2:-0}"'
MPROF_CUPTI_LIB="$tmp/fake-producer.so" "$mprof" record --no-sass --pm both \
  -o "$tmp/both.mprof" -- sh -c "$both_cmd" "$tmp/unsampled.mprof" "$tmp/both-runs.txt" \
  >"$tmp/both.txt" 2>&1 || fail "record --pm both: $(cat "$tmp/both.txt")"
[ "$(cat "$tmp/both-runs.txt")" = "off $tmp/both.mprof
on $tmp/both.pm.mprof" ] || fail "record --pm both did not run PC then PM: $(cat "$tmp/both-runs.txt")"
[ -s "$tmp/both.mprof" ] && [ -s "$tmp/both.pm.mprof" ] || fail "record --pm both left no pair of traces"
grep -q "open the two runs as one for stall reasons and measured throughput: mprof summary $tmp/both.mprof $tmp/both.pm.mprof" \
  "$tmp/both.txt" || fail "record --pm both does not say how to open the pair: $(cat "$tmp/both.txt")"
# A first run that fails is not repeated, and its status is record's.
MPROF_CUPTI_LIB="$tmp/fake-producer.so" "$mprof" record --no-sass --pm both \
  -o "$tmp/both3.mprof" -- sh -c "$both_cmd" "$tmp/unsampled.mprof" "$tmp/both3-runs.txt" 3 \
  >"$tmp/both3.txt" 2>&1
status=$?
[ "$status" -eq 3 ] || fail "record --pm both after a failing run exited $status, not 3"
[ "$(wc -l <"$tmp/both3-runs.txt")" -eq 1 ] || fail "record --pm both ran again after a failing run"
grep -q "the PC-sampled run ended with status 3; the PM-sampled run (--pm both) was not started" \
  "$tmp/both3.txt" || fail "record --pm both does not say why it stopped: $(cat "$tmp/both3.txt")"

finish "multidevice CLI"
