#!/bin/sh
# `mprof summary --by-line` as a user and an agent meet it, on a trace of
# the committed nvcc -lineinfo cubin (tests/data/lines) with samples planted
# by test_lines: the hottest line first with its code, share, stall mix and
# inline chain, lines of two files kept apart, --source-root in both forms,
# a kernel without a line table saying so, well-formed XML and JSON, and
# one-line usage errors.
# usage: test_lines_cli.sh MPROF TMPDIR TEST_LINES SOURCE_DIR JSON_SCHEMA_CHECK
mprof=$1
tmp=${2:-/tmp}/lines-cli.$$
test_lines=$3
src=$4
schema_check=$5
. "$(dirname "$0")/common.sh"

need xmllint libxml2-utils
need python3 python3
data=$src/tests/data/lines
# The line of "// @NAME" in FILE.
marker() { grep -n "// @$2\$\|// @$2 " "$data/$1" | cut -d: -f1; }
square=$(marker lines_math.cuh square)
call=$(marker lines_kernels.cu inline-call)
first=$(marker lines_math.cuh poly-first)

export MPROF_SOURCE_DIR="$src" # where test_lines finds the cubin
"$test_lines" --write-trace "$tmp/t.mprof" || fail "test_lines --write-trace exited $?"
"$test_lines" --write-trace "$tmp/nocode.mprof" --no-cubin || fail "test_lines --write-trace --no-cubin exited $?"

# --- text: the planted hottest line, its code through --source-root -----
expect 0 "" "$mprof" summary "$tmp/t.mprof" --by-line --human --source-root "$data"
out=$tmp/out
head -4 "$out" | grep -q "lines_inline · 80 samples" || fail "no kernel header: $(head -5 "$out")"
grep -m1 '%' "$out" | grep -q "81.2% lines_math.cuh:$square  65 samples · long_scoreboard 92.3% · barrier 7.7%" ||
  fail "the hottest line is not lm_square's: $(grep -m1 '%' "$out")"
grep -q "^ *$square │   return x \* x + 1.0f; // @square" "$out" || fail "the hot line's code is missing: $(cat "$out")"
grep -q "inlined at lines_math.cuh:$first ← lines_kernels.cu:$call" "$out" || fail "no inline chain: $(cat "$out")"
grep -q "12.5% lines_kernels.cu:$call" "$out" || fail "the call line is not second: $(cat "$out")"
grep -q "0006b0 *40" "$out" || fail "the line's sampled instruction is missing: $(cat "$out")"
# OLD=NEW gives the same code; without a root the build path is not there.
expect 0 "│   return x \* x + 1.0f;" "$mprof" summary "$tmp/t.mprof" --by-line --human --source-root "/build/lines=$data"
expect 0 "source not found; --source-root DIR maps build paths" "$mprof" summary "$tmp/t.mprof" --by-line --human
# --hot bounds the lines and counts the rest.
expect 0 "(7 more lines; --hot N shows more)" "$mprof" summary "$tmp/t.mprof" --by-line --human --hot 1
# Another kernel by name; a kernel without code says what to do.
expect 0 "100% lines_kernels.cu:$(marker lines_kernels.cu scale-store)" "$mprof" summary "$tmp/t.mprof" --by-line --human --kernel lines_scale
expect 0 "no line table: build with nvcc -lineinfo" "$mprof" summary "$tmp/nocode.mprof" --by-line --human
expect 0 "code without a source line" "$mprof" summary "$tmp/nocode.mprof" --by-line --human

# --- XML and JSON ---------------------------------------------------------
"$mprof" summary "$tmp/t.mprof" --by-line --source-root "$data" >"$tmp/l.xml" || fail "summary --by-line exited $?"
xmllint --noout "$tmp/l.xml" || fail "--by-line XML is not well-formed"
grep -q "<line rank=\"1\" file=\"/build/lines/lines_math.cuh\" line=\"$square\" function=\"_Z9lm_squaref\" share=\"0.8125\" samples=\"65\"" "$tmp/l.xml" ||
  fail "XML hottest line: $(grep 'rank="1"' "$tmp/l.xml")"
grep -q 'source="disk" code="  return x \* x + 1.0f; // @square"' "$tmp/l.xml" || fail "XML lacks the code"
grep -q "<inlined_at function=\"_Z7lm_polyf\" file=\"/build/lines/lines_math.cuh\" line=\"$first\"/>" "$tmp/l.xml" || fail "XML lacks inlined_at"
"$mprof" summary "$tmp/t.mprof" --by-line --json --all --source-root "$data" >"$tmp/l.json" || fail "summary --by-line --json exited $?"
"$schema_check" "$src/docs/lines.schema.json" "$tmp/l.json" 2>"$tmp/jsonerr" ||
  fail "--by-line JSON does not match docs/lines.schema.json: $(cat "$tmp/jsonerr")"
python3 - "$tmp/l.json" "$square" <<'PY' || fail "--by-line JSON: wrong content"
import json, sys
d = json.load(open(sys.argv[1]))
ks = {k["short_name"]: k for k in d["kernels"]}
assert set(ks) == {"lines_inline", "lines_scale", "nocode"}, ks.keys()
k = ks["lines_inline"]
assert k["lines_from"] == "cubin" and k["samples"] == 80, k
hot = k["hot_lines"][0]
assert hot["file"].endswith("lines_math.cuh") and hot["line"] == int(sys.argv[2]), hot
assert hot["samples"] == 65 and abs(hot["share"] - 0.8125) < 1e-4, hot
assert [i["offset"] for i in hot["instructions"]] == [0x6b0, 0x6c0], hot
assert hot["reasons"][0] == {"name": "long_scoreboard", "samples": 60, "share": 0.9231, "not_issued": False}, hot
assert [f["function"] for f in hot["inlined_at"]] == ["_Z7lm_polyf", "_Z12lines_inlinePfPKfi"], hot
# Lines of the two files are apart, and the shares of the shown lines add up.
assert len({(l["file"], l["line"]) for l in k["hot_lines"]}) == len(k["hot_lines"])
assert abs(sum(l["share"] for l in k["hot_lines"]) - 1.0) < 1e-3
assert ks["nocode"]["lines_from"] == "none" and ks["nocode"]["hot_lines"][0]["line"] == 0
PY

# --- sources embedded in the trace -----------------------------------------
# mprof sass embeds the files the sampled code's line tables name; --no-source
# leaves the trace as it was; a file not found is listed as missing.
cp "$tmp/t.mprof" "$tmp/e.mprof"
"$mprof" sass --no-source "$tmp/e.mprof" >/dev/null 2>"$tmp/err" || fail "sass --no-source exited $?"
grep -q "source file" "$tmp/err" && fail "sass --no-source embedded: $(cat "$tmp/err")"
expect 0 "" "$mprof" info "$tmp/e.mprof"
grep -q "^sources" "$tmp/out" && fail "--no-source left a SOURCES section: $(grep sources "$tmp/out")"
"$mprof" sass "$tmp/e.mprof" >/dev/null 2>"$tmp/err" || fail "sass exited $?"
grep -q "0 source files embedded (0 B, 0 B stored); 2 missing: /build/lines/lines_kernels.cu /build/lines/lines_math.cuh (--source-root DIR maps build paths)" "$tmp/err" ||
  fail "sass does not list the missing files: $(cat "$tmp/err")"
expect 0 "(missing when the trace was recorded: /build/lines/lines_math.cuh)" "$mprof" summary "$tmp/e.mprof" --by-line --human
# With the sources in a checkout elsewhere, then moved away: the trace
# copied alone still shows its code.
# (DIR is searched for the build path's trailing parts: checkout/lines/...)
mkdir -p "$tmp/checkout/lines" "$tmp/alone"
cp "$data/lines_kernels.cu" "$data/lines_math.cuh" "$tmp/checkout/lines/"
"$mprof" sass --source-root "$tmp/checkout" "$tmp/e.mprof" >/dev/null 2>"$tmp/err" || fail "sass --source-root exited $?"
grep -q "2 source files embedded" "$tmp/err" || fail "sass did not embed: $(cat "$tmp/err")"
rm -rf "$tmp/checkout"
cp "$tmp/e.mprof" "$tmp/alone/moved.mprof"
expect 0 "sources    2 files embedded (.*), 0 missing" "$mprof" info "$tmp/alone/moved.mprof"
expect 0 "^ *$square │   return x \* x + 1.0f; // @square" "$mprof" summary "$tmp/alone/moved.mprof" --by-line --human
"$mprof" summary "$tmp/alone/moved.mprof" --by-line >"$tmp/moved.xml" || fail "summary of the moved trace exited $?"
grep -q 'source="embedded" code="  return x \* x + 1.0f; // @square"' "$tmp/moved.xml" ||
  fail "the moved trace's XML lacks the embedded code: $(grep 'rank="1"' "$tmp/moved.xml")"
# A damaged trace is one line and exit 2.
head -c 2000 "$tmp/alone/moved.mprof" >"$tmp/cut.mprof"
expect_one_line 2 "cut.mprof" "$mprof" summary "$tmp/cut.mprof" --by-line

# --- a library kernel (cuBLAS's CUTLASS GEMM in the real sample): no line
# table, said once; its hottest SASS first, not its prologue.
expect 0 "" "$mprof" summary --by-line --human --kernel Kernel2 "$src/samples/transformer_forward.mprof"
[ "$(grep -c "no line table" "$tmp/out")" -eq 1 ] || fail "the library kernel does not say once that it has no line table: $(cat "$tmp/out")"
awk '/code without a source line/ { on = 1; next } on && /^ *[0-9a-f]+ +[0-9,]+  / { gsub(",", "", $2); print $2 }' "$tmp/out" >"$tmp/counts"
[ "$(wc -l <"$tmp/counts")" -eq 8 ] || fail "the library kernel lists $(wc -l <"$tmp/counts") instructions, not 8: $(cat "$tmp/out")"
sort -rn "$tmp/counts" | cmp -s - "$tmp/counts" || fail "the library kernel's instructions are not hottest first: $(cat "$tmp/counts" | tr '\n' ' ')"

# --- the Source tab drawn by view --render ----------------------------------
# moved.mprof carries its code. --hot 2 is the call line in the .cu file,
# so it draws what --line names; --hot 1 what the tab opens on; --find
# marks matches. A build without Cairo says so instead.
"$mprof" view "$tmp/alone/moved.mprof" --tab source --render "$tmp/src.png" >"$tmp/out" 2>&1
if grep -q "unavailable in this build" "$tmp/out"; then
  echo "view --render: not in this build (no Cairo); the Source tab's CLI is not checked"
else
  v() { "$mprof" view "$tmp/alone/moved.mprof" --kernel lines_inline --tab source --size 1000x500 "$@"; }
  expect 0 "wrote $tmp/open.png: Source, 1000x500, kernel lines_inline" v --render "$tmp/open.png"
  expect 0 "wrote $tmp/hot1.png: Source" v --hot 1 --render "$tmp/hot1.png"
  expect 0 "wrote $tmp/hot2.png: Source" v --hot 2 --render "$tmp/hot2.png"
  expect 0 "wrote $tmp/line.png: Source" v --line "lines_kernels.cu:$call" --render "$tmp/line.png"
  expect 0 "wrote $tmp/full.png: Source" v --line "/build/lines/lines_kernels.cu:$call" --render "$tmp/full.png"
  expect 0 "wrote $tmp/find.png: Source" v --hot 2 --find ACC --render "$tmp/find.png"
  cmp -s "$tmp/open.png" "$tmp/hot1.png" || fail "--hot 1 does not draw what the tab opens on"
  cmp -s "$tmp/hot2.png" "$tmp/line.png" || fail "--hot 2 and --line lines_kernels.cu:$call draw different pages"
  cmp -s "$tmp/line.png" "$tmp/full.png" || fail "--line with the whole path draws another page"
  cmp -s "$tmp/hot1.png" "$tmp/hot2.png" && fail "--hot 2 draws the hottest line's page"
  cmp -s "$tmp/hot2.png" "$tmp/find.png" && fail "--find marks nothing"
  # A kernel without a line table: its SASS page; nothing to go to.
  expect 0 "wrote $tmp/nocode.png: Source, .*nocode" "$mprof" view "$tmp/t.mprof" --kernel nocode --tab source --render "$tmp/nocode.png"
  expect 0 "wrote $tmp/nocode1.png: Source" "$mprof" view "$tmp/t.mprof" --kernel nocode --tab source --hot 1 --render "$tmp/nocode1.png"
  cmp -s "$tmp/nocode.png" "$tmp/nocode1.png" || fail "--hot 1 on a kernel without lines is not what its tab opens on"
  expect_one_line 2 "--hot 2: nocode has 1 sampled instruction (see" "$mprof" view "$tmp/t.mprof" --kernel nocode --tab source --hot 2 --render "$tmp/x.png"
  expect_one_line 2 "nocode has no source lines (no line table" "$mprof" view "$tmp/t.mprof" --kernel nocode --tab source --find x --render "$tmp/x.png"
  expect_one_line 2 "--hot 4: lines_inline has 3 sampled lines" v --hot 4 --render "$tmp/x.png"
  expect_one_line 2 "--hot '0' is not a rank" v --hot 0 --render "$tmp/x.png"
  expect_one_line 2 "--hot 'two' is not a rank" v --hot two --render "$tmp/x.png"
  expect_one_line 2 "lines_inline has no file 'nosuch.cu' (its files: /build/lines/lines_math.cuh, /build/lines/lines_kernels.cu)" v --line nosuch.cu:3 --render "$tmp/x.png"
  expect_one_line 2 "the file has no line 99" v --line lines_kernels.cu:99 --render "$tmp/x.png"
  expect_one_line 2 "--line 'lines_kernels.cu:x' is not \[FILE:\]N" v --line lines_kernels.cu:x --render "$tmp/x.png"
  expect_one_line 2 "--line, --hot and --find are for --tab source" "$mprof" view "$tmp/t.mprof" --tab hotspots --find x --render "$tmp/x.png"
  expect_one_line 2 "--line, --hot and --find go with --render" "$mprof" view "$tmp/t.mprof" --tab source --find x
  expect 0 "--hot RANK" "$mprof" view --help
  "$mprof" --complete-spec | grep "^view " | grep -q -- "--line:value --hot:value --find:value" ||
    fail "view's completion lacks --line, --hot, --find"
fi

# --- usage errors ---------------------------------------------------------
expect_one_line 2 "--source-root needs a folder" "$mprof" sass --source-root
expect_one_line 2 "--source-root needs a folder" "$mprof" record --source-root
expect 0 "no-source" "$mprof" record --help
expect 0 "no-source" "$mprof" sass --help
expect_one_line 2 "--source-root goes with --by-line" "$mprof" summary "$tmp/t.mprof" --source-root "$data"
expect_one_line 2 "--source-root needs a folder" "$mprof" summary "$tmp/t.mprof" --by-line --source-root
expect_one_line 2 "--by-line takes --kernel" "$mprof" summary "$tmp/t.mprof" --by-line --by-range
expect_one_line 2 "no kernel matches 'nothing'" "$mprof" summary "$tmp/t.mprof" --by-line --kernel nothing
expect 0 "by-line" "$mprof" summary --help

finish "summary --by-line"
