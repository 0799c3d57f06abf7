#!/bin/sh
# A damaged sidecar degrades, it does not refuse: a trace whose own
# TRACE.pc.json is cut short opens without it (its timeline and samples,
# no SASS), with one note that says why, in summary, --by-line, export,
# diff and the viewer (drawn by `view --render`). A damaged sidecar asked
# for by name (--sidecar) is refused, and the error names --no-sidecar.
# `sass --rebuild` on a trace recorded with --drop-code says why it can
# give no SASS, and does not throw away the sidecar that holds it.
# Usage: test_sidecar_damaged.sh MPROF TMPDIR SAMPLES
mprof=$1
tmp=${2:-/tmp}/sidecar-damaged.$$
samples=$3
. "$(dirname "$0")/common.sh"

MPROF_NVDISASM=/nonexistent/nvdisasm
export MPROF_NVDISASM

cp "$samples/gemm.mprof" "$tmp/g.mprof" || fail "cannot copy the sample"
head -c 3000 "$samples/gemm.mprof.pc.json" >"$tmp/g.mprof.pc.json"
why="g.mprof.pc.json: byte 3000: the JSON ends before it is complete"

# summary: exit 0, the sample counts of the trace itself, one note.
cd "$tmp" || exit 1
expect 0 "239,930 PC samples" "$mprof" summary --human --color=never g.mprof
[ "$(grep -c 'Sidecar left out' "$tmp/out")" -eq 1 ] ||
  fail "summary does not say once that the sidecar was left out: $(cat "$tmp/out")"
grep -q "^! Sidecar left out, the trace read without it .*$why.*--no-sidecar" "$tmp/out" ||
  fail "summary's note does not name the damage and --no-sidecar: $(cat "$tmp/out")"
grep -q "No sidecar" "$tmp/out" && fail "summary also says there is no sidecar"
"$mprof" summary --json g.mprof >"$tmp/s.json" 2>"$tmp/err" ||
  fail "summary --json exited $?"
grep -q '"key": *"no_sidecar"' "$tmp/s.json" || fail "summary --json has no no_sidecar note"
[ ! -s "$tmp/err" ] || fail "summary --json wrote to stderr: $(cat "$tmp/err")"
# The same trace without the sidecar, by choice: the plain note.
expect 0 "No sidecar (" "$mprof" summary --human --color=never --no-sidecar g.mprof

# Outputs without notes say it once on stderr.
"$mprof" export --format perfetto -o "$tmp/g.pftrace" g.mprof >"$tmp/out" 2>"$tmp/err" ||
  fail "export exited $?: $(cat "$tmp/err")"
[ "$(grep -c "^mprof: note: sidecar left out, the trace read without it: $why" "$tmp/err")" -eq 1 ] ||
  fail "export does not note the damaged sidecar once: $(cat "$tmp/err")"
[ -s "$tmp/g.pftrace" ] || fail "export wrote nothing"
expect 0 "sidecar left out" "$mprof" summary --by-line --human g.mprof
expect 0 "sidecar left out" "$mprof" diff --human --color=never g.mprof "$samples/gemm.mprof"

# Named by --sidecar: refused in one line that names --no-sidecar.
expect_one_line 2 "$why.*read the trace without it: --no-sidecar" \
  "$mprof" summary --sidecar g.mprof.pc.json g.mprof
expect_one_line 2 "read the trace without it: --no-sidecar" \
  "$mprof" export --format chrome --sidecar g.mprof.pc.json -o "$tmp/x.json" g.mprof

# The viewer: the trace opens, its Summary says why (the SVG keeps text).
out=$("$mprof" view g.mprof --size 1200x2400 --render "$tmp/g.svg" 2>&1)
status=$?
if echo "$out" | grep -q "renderer"; then
  skipped "view --render: this build has no renderer"
else
  [ "$status" -eq 0 ] || fail "view --render exited $status: $out"
  echo "$out" | grep -q "^wrote $tmp/g.svg: Summary" || fail "view --render said: $out"
  grep -q '>Sidecar left out, the trace read without it' "$tmp/g.svg" ||
    fail "the viewer's Summary does not say the sidecar was left out"
  out=$("$mprof" view g.mprof --sidecar g.mprof.pc.json --render "$tmp/h.svg" 2>&1)
  [ $? -eq 2 ] || fail "view --sidecar DAMAGED did not exit 2: $out"
  echo "$out" | grep -q -- "--no-sidecar" || fail "view --sidecar DAMAGED: $out"
fi

# sass --rebuild of a trace recorded with --drop-code: its SASS is in the
# sidecar alone, so rebuilding would lose it; without the sidecar, each
# function says its code was dropped.
cp "$samples/transformer_forward.mprof" "$tmp/t.mprof"
cp "$samples/transformer_forward.mprof.pc.json" "$tmp/t.mprof.pc.json"
expect_one_line 2 "t.mprof keeps no code (recorded with --drop-code): its SASS is only in t.mprof.pc.json" \
  "$mprof" sass --rebuild --no-source t.mprof
cmp -s "$samples/transformer_forward.mprof.pc.json" "$tmp/t.mprof.pc.json" ||
  fail "sass --rebuild changed the sidecar it refused to replace"
rm "$tmp/t.mprof.pc.json"
expect 0 "t.mprof was recorded with --drop-code: its code went once its SASS was in the sidecar" \
  "$mprof" sass --rebuild --no-source t.mprof
[ "$(grep -c 'no code: the trace dropped it (recorded with --drop-code)' "$tmp/out")" -eq 11 ] ||
  fail "sass --rebuild does not say of each of the 11 functions that its code was dropped: $(cat "$tmp/out")"
# A trace that keeps its code says nothing of --drop-code.
cp "$samples/gemm.mprof" "$tmp/k.mprof"
expect 0 "1 functions" "$mprof" sass --rebuild --no-source k.mprof
grep -q "drop-code" "$tmp/out" && fail "sass --rebuild of a trace with code speaks of --drop-code"

finish "damaged sidecar"
