#!/bin/sh
# mprof_source.cuh's host side, on a machine without a GPU: build
# host_writer.cu against a stand-in CUDA runtime (fake_cudart.c), let it
# write a .source file, read it back with `mprof source info`. Skips
# without nvcc.
# Usage: check_host_writer.sh NVCC|"" CC SOURCE_DIR TMPDIR MPROF
nvcc=$1
cc=$2
src=$3
tmp=$4
mprof=$5
if [ -z "$nvcc" ] || ! command -v "$nvcc" >/dev/null 2>&1; then
  echo "nvcc not found: skipping the mprof_source.cuh host writer check"
  exit 0
fi
mkdir -p "$tmp"
cat >"$tmp/fake.map" <<'MAP'
libcudart.so.13 { global: *; };
MAP
"$cc" -shared -fPIC -o "$tmp/libcudart.so.13" -Wl,-soname,libcudart.so.13 \
  -Wl,--version-script,"$tmp/fake.map" "$src/tests/source/fake_cudart.c" || exit 1
"$nvcc" -std=c++17 -arch=sm_90 -DMPROF_SOURCE -cudart=shared \
  -I"$src/producers/source" -Xcompiler -Wall,-Wextra -o "$tmp/host_writer" \
  "$src/tests/source/host_writer.cu" || exit 1
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

# Off: no MPROF_SOURCE_OUTPUT, nothing written.
rm -f "$tmp/out.source"
out=$(env -u MPROF_SOURCE_OUTPUT LD_LIBRARY_PATH="$tmp" "$tmp/host_writer" 2>&1) ||
  fail "host_writer (off): $out"
echo "$out" | grep -q "recording 0" || fail "off: $out"

# On, with a 40-record buffer: launch 0 fills slots 0-2 and 16-18,
# launch 1 slots 32-34 and 48-50 (over), launch 2 all over: 9 kept, 9 lost.
out=$(LD_LIBRARY_PATH="$tmp" MPROF_SOURCE_OUTPUT="$tmp/out-%p.source" \
  MPROF_SOURCE_CAPACITY=40 MPROF_SOURCE_VERBOSE=1 "$tmp/host_writer" 2>&1) ||
  fail "host_writer (on): $out"
echo "$out" | grep -q "recording 1" || fail "on: $out"
echo "$out" | grep -q "9 spans did not fit the buffer of 40 records" ||
  fail "no overflow warning: $out"
file=$(ls "$tmp"/out-*.source 2>/dev/null | head -n 1)
[ -n "$file" ] || fail "no out-PID.source written (%p expansion)"
[ ! -e "$file.partial" ] || fail "partial file left behind"
info=$("$mprof" source info "$file" 2>&1) || fail "mprof source info: $info"
for want in "spans      9 in 3 launches; 9 overflowed (buffer 40 records)" \
  "region 0   load                     loader             3 spans, mean 0.600 us" \
  "region 2   store                    storer             3 spans" \
  "kernel 0   tile_kernel                              3 launches" \
  "3 warp spans, 6 block spans"; do
  echo "$info" | grep -q -- "$want" || fail "no '$want' in: $info"
done
rm -f "$tmp"/out-*.source
[ "$failures" -eq 0 ] && echo "ok: the header's writer produces a file libmprof reads"
[ "$failures" -eq 0 ]
