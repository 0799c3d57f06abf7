#!/bin/sh
# mprof source / mprof mkprof: what a user sees, exit statuses included.
# Usage: test_source_mkprof.sh MPROF TMPDIR TEST_MKPROF TEST_SOURCE
#        [HAVE_RENDER]
mprof=$1
tmp=$2/cli-source-$$
test_mkprof=$3
test_source=$4
have_render=${5:-0}
# shellcheck source=common.sh
. "$(dirname "$0")/common.sh"

"$test_mkprof" --write-trace "$tmp/spans.mprof" || fail "writing the trace"
expect 0 "wrote $tmp/s.mkprof: 108 spans as 18 instructions on 8 processors" \
  "$mprof" mkprof export "$tmp/spans.mprof" -o "$tmp/s.mkprof"
expect 0 "holds      18 instructions, 72 unit bars, 216 events" \
  "$mprof" mkprof info "$tmp/s.mkprof" --instructions 2
expect 0 "params: launch=0 block=0 spans=6 events_dropped=0" \
  "$mprof" mkprof info "$tmp/s.mkprof" --instructions 1
expect 0 "unit 1     Consumer     consumer  events 48..79, bar in slots 12/13 (main)" \
  "$mprof" mkprof info "$tmp/s.mkprof"
expect 0 "wrote $tmp/back.mprof" \
  "$mprof" mkprof import "$tmp/s.mkprof" -o "$tmp/back.mprof"
expect 0 "meta       capture.mode = mkprof" "$mprof" info "$tmp/back.mprof"
expect 0 "wrote" "$mprof" mkprof export "$tmp/spans.mprof" -o "$tmp/k.mkprof" \
  --kernel layernorm
head -c 300 "$tmp/s.mkprof" >"$tmp/cut.mkprof"
expect 2 "^mprof: $tmp/cut.mkprof: at byte " \
  "$mprof" mkprof info "$tmp/cut.mkprof"
expect 2 "no such\|No such" "$mprof" mkprof info "$tmp/missing.mkprof"
expect 2 "unknown subcommand 'bogus'" "$mprof" mkprof bogus
expect 2 "usage: mprof mkprof export" "$mprof" mkprof export "$tmp/spans.mprof"
expect 2 "no activity spans to export (none matches the filter)" \
  "$mprof" mkprof export "$tmp/spans.mprof" -o "$tmp/x.mkprof" --kernel zzz
expect 0 "usage: mprof mkprof info" "$mprof" help mkprof

# summary, info and diff read a MKPROF file as view does: imported, named
# by its own path; a broken one is one line and exit 2.
expect 0 "imported   from MKPROF 1.2" "$mprof" info "$tmp/s.mkprof"
expect 0 "^trace      $tmp/s.mkprof (" "$mprof" info "$tmp/s.mkprof"
expect 0 "<trace path=\"$tmp/s.mkprof\"" "$mprof" summary "$tmp/s.mkprof"
expect 0 "megakernel (MKPROF)" "$mprof" summary --human --color=never \
  "$tmp/s.mkprof"
expect 0 "^mprof diff $tmp/s.mkprof -> $tmp/spans.mprof" \
  "$mprof" diff --human --color=never --allow-disjoint "$tmp/s.mkprof" "$tmp/spans.mprof"
for cmd in info summary; do
  out=$("$mprof" $cmd "$tmp/cut.mkprof" 2>&1)
  [ $? -eq 2 ] || fail "$cmd on a cut MKPROF did not exit 2: $out"
  [ "$(echo "$out" | wc -l)" -eq 1 ] || fail "$cmd on a cut MKPROF: $out"
  echo "$out" | grep -q "^mprof: $tmp/cut.mkprof: at byte " ||
    fail "$cmd on a cut MKPROF: $out"
done

# A megakernel as the Megakernels converter writes it: its summary speaks
# of instruction types, GPUs and SMs, and of nothing the format cannot hold.
"$test_mkprof" --write-megakernels "$tmp/mk.mkprof" || fail "writing the megakernel"
out=$("$mprof" summary --human --color=never --top 2 "$tmp/mk.mkprof" 2>&1)
for want in "768 instructions of 9 types" "Attn Norm" "QKV Rope" \
  "SM tail: SM 15 ends" "the kernel is persistent"; do
  echo "$out" | grep -q -- "$want" || fail "the megakernel's summary lacks '$want': $out"
done
for unwanted in "PC sampl" "unknown" "grid-stride" "mprof sass" "counters"; do
  echo "$out" | grep -q -- "$unwanted" &&
    fail "the megakernel's summary speaks of '$unwanted': $out"
done
# mprof view opens it on Mega, and names its GPUs without the compute
# capability and clock that MKPROF does not hold.
if [ "$have_render" = 1 ]; then
  expect 0 "wrote $tmp/mk.png: Mega, 1600x1000, kernel megakernel (MKPROF) (measured)" \
    "$mprof" view "$tmp/mk.mkprof" --render "$tmp/mk.png"
  expect 0 "wrote $tmp/mk-sum.png: Summary" \
    "$mprof" view "$tmp/mk.mkprof" --tab summary --render "$tmp/mk-sum.png"
fi
expect 0 "^device 1   MKPROF GPU 1 (16 SMs)$" "$mprof" info "$tmp/mk.mkprof"
# import then export gives the file back whole: every name, param, event
# type, controller event and event (9,216 + 1,535), byte for byte.
expect 0 "wrote $tmp/mk.mprof" "$mprof" mkprof import "$tmp/mk.mkprof" -o "$tmp/mk.mprof"
expect 0 "sections .* MKPROF=" "$mprof" info "$tmp/mk.mprof"
expect 0 "whole: 768 instructions on 32 processors, 10751 events" \
  "$mprof" mkprof export "$tmp/mk.mprof" -o "$tmp/mk-back.mkprof"
cmp "$tmp/mk.mkprof" "$tmp/mk-back.mkprof" ||
  fail "import then export changed the .mkprof"
expect 0 "holds      768 instructions, 2304 unit bars, 9216 events (0 errors), 1535 controller events" \
  "$mprof" mkprof info "$tmp/mk-back.mkprof"
out=$("$mprof" info "$tmp/mk.mkprof" 2>&1)
echo "$out" | grep -q "sm_00\|GHz" && fail "info on a .mkprof: $out"

"$test_source" --write-run "$tmp/run.mprof" || fail "writing the run"
expect 0 "spans      32 in 8 launches; 17 overflowed" \
  "$mprof" source info "$tmp/run.mprof.source"
expect 0 "region 1   compute                  consumer          16 spans" \
  "$mprof" source info "$tmp/run.mprof.source"
expect 0 "32 source spans from 8 launches (8 matched: 8 by name and order" \
  "$mprof" source merge "$tmp/run.mprof" -o "$tmp/merged.mprof"
expect 0 "meta       source.alignment_method = name+order" \
  "$mprof" info "$tmp/merged.mprof"
expect 0 "activity spans overflowed" "$mprof" info "$tmp/merged.mprof"
expect 2 "already holds merged source spans" \
  "$mprof" source merge "$tmp/merged.mprof" "$tmp/run.mprof.source"
expect 2 "missing.source" "$mprof" source merge "$tmp/run.mprof" \
  "$tmp/missing.source"
# --offset: nanoseconds up to 2^62 either way, one line past it.
expect 2 "missing.source" "$mprof" source merge "$tmp/run.mprof" \
  "$tmp/missing.source" --offset 4611686018427387904
expect 2 "missing.source" "$mprof" source merge "$tmp/run.mprof" \
  "$tmp/missing.source" --offset -4611686018427387904
for bad in 4611686018427387905 -4611686018427387905 99999999999999999999999; do
  expect_one_line 2 "source: --offset $bad is beyond 2^62 ns" "$mprof" source \
    merge "$tmp/run.mprof" --offset "$bad"
done
for bad in "" 1e30 12ms; do
  expect_one_line 2 "source: --offset takes nanoseconds" "$mprof" source \
    merge "$tmp/run.mprof" --offset "$bad"
done
printf 'MPSRC\0\r\nshort' >"$tmp/short.source"
expect 2 "short.source: at byte 13: header" "$mprof" source info \
  "$tmp/short.source"
expect 2 "expected 'info' or 'merge'" "$mprof" source
expect 0 "record source" "$mprof" help record

rm -rf "$tmp"
[ "$failures" -eq 0 ] && echo "all mprof source/mkprof CLI checks passed"
[ "$failures" -eq 0 ]
