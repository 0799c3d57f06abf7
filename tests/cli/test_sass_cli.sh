#!/bin/sh
# `mprof sass` as a user meets it: output, one-line errors and exit
# statuses (0 ok, 1 failed, 2 bad usage or bad input).
# Usage: test_sass_cli.sh MPROF TMPDIR [FIXTURES]
mprof=$1
tmp=${2:-/tmp}/sass-cli.$$
fixtures=${3:-}
. "$(dirname "$0")/common.sh"

# Without nvdisasm, whatever this machine has.
MPROF_NVDISASM=/nonexistent/nvdisasm
export MPROF_NVDISASM

expect 0 "usage: mprof sass" "$mprof" sass --help
expect 0 "usage: mprof sass" "$mprof" help sass
expect 0 "sass      attach SASS" "$mprof" help
expect_one_line 2 "no trace given" "$mprof" sass
expect_one_line 2 "unknown option '--frob'" "$mprof" sass --frob "$tmp/t.mprof"
expect_one_line 2 "needs a path" "$mprof" sass --nvdisasm
expect_one_line 2 "$tmp/missing.mprof: no such trace" "$mprof" sass "$tmp/missing.mprof"

"$mprof" synth -o "$tmp/t.mprof" --launches 200 --kernels 3 --seed 4 >/dev/null || fail "synth failed"
# No sidecar yet: it is built from the trace.
expect 0 "t.mprof.pc.json: 3 functions, 0 with SASS, 0 with source lines" "$mprof" sass "$tmp/t.mprof"
[ -s "$tmp/t.mprof.pc.json" ] || fail "no sidecar written"
grep -q '"format": "mprof-pc-sidecar"' "$tmp/t.mprof.pc.json" || fail "the sidecar is not one"
expect 0 "no code: not among the trace's cubins or the given files" "$mprof" sass "$tmp/t.mprof"
expect 0 "run 'mprof sass $tmp/t.mprof PROGRAM_OR_LIBRARY...'" "$mprof" sass "$tmp/t.mprof"

# Files that are no binaries, and a damaged sidecar.
echo "hello" >"$tmp/text"
expect_one_line 2 "$tmp/text: not a cubin, fatbin, ELF executable" "$mprof" sass "$tmp/t.mprof" "$tmp/text"
expect_one_line 2 "$tmp/none: cannot open" "$mprof" sass "$tmp/t.mprof" "$tmp/none"
expect_one_line 2 "no .nv_fatbin section" "$mprof" sass "$tmp/t.mprof" "$mprof"
head -c 300 "$tmp/t.mprof.pc.json" >"$tmp/cut" && mv "$tmp/cut" "$tmp/t.mprof.pc.json"
expect_one_line 2 "the file is truncated) (the sidecar is damaged" "$mprof" sass "$tmp/t.mprof"
expect_one_line 2 "mprof sass --rebuild TRACE" "$mprof" sass "$tmp/t.mprof"
expect 0 "3 functions" "$mprof" sass --rebuild "$tmp/t.mprof"
expect_one_line 2 "/nonexistent/nvd: nvdisasm is not there" "$mprof" sass --nvdisasm /nonexistent/nvd "$tmp/t.mprof"
expect_one_line 2 "/nonexistent/cod: cuobjdump is not there" "$mprof" sass --cuobjdump /nonexistent/cod "$tmp/t.mprof"

if [ -n "$fixtures" ]; then
  # Real nvcc output: found, but none of the synthetic kernels is in it.
  expect 0 "the given files hold none of the functions that lack SASS" \
    "$mprof" sass "$tmp/t.mprof" "$fixtures/kernels-app" "$fixtures/kernels.cubin"
  cuobjdump_missing=$tmp/cuobjdump-missing
  printf '#!/bin/sh\nexit 1\n' >"$cuobjdump_missing" && chmod +x "$cuobjdump_missing"
  expect_one_line 2 "compressed cubins were skipped" \
    "$mprof" sass --cuobjdump "$cuobjdump_missing" "$tmp/t.mprof" "$fixtures/kernels-compressed"
else
  skipped "mprof sass on nvcc-built files: nvcc was not found at configure time"
fi

finish "sass CLI"
