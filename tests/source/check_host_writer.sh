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
  exit 77
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

# On, with a 10-record buffer: each block of 3 spans reserves 1 then 2
# slots; launch 0 takes slots 0-5, launch 1 slots 6-11 (10 and 11 over),
# launch 2 12-17 (all over): 10 kept, 8 counted.
out=$(LD_LIBRARY_PATH="$tmp" MPROF_SOURCE_OUTPUT="$tmp/out-%p.source" \
  MPROF_SOURCE_CAPACITY=10 MPROF_SOURCE_VERBOSE=1 "$tmp/host_writer" 2>&1) ||
  fail "host_writer (on): $out"
echo "$out" | grep -q "recording 1" || fail "on: $out"
echo "$out" | grep -q "8 spans did not fit the buffer of 10 records" ||
  fail "no overflow warning: $out"
file=
for f in "$tmp"/out-*.source; do [ -e "$f" ] && file=$f; done
[ -n "$file" ] || fail "no out-PID.source written (%p expansion)"
[ ! -e "$file.partial" ] || fail "partial file left behind"
info=$("$mprof" source info "$file" 2>&1) || fail "mprof source info: $info"
for want in "spans      10 in 3 launches; 8 overflowed (buffer 10 records)" \
  "region 0   load                     loader             4 spans, mean 0.600 us" \
  "region 1   fma                      consumer           3 spans" \
  "region 2   store                    storer             3 spans" \
  "kernel 0   tile_kernel                              3 launches" \
  "3 warp spans, 7 block spans"; do
  echo "$info" | grep -q -- "$want" || fail "no '$want' in: $info"
done
rm -f "$tmp"/out-*.source
[ "$failures" -eq 0 ] && echo "ok: the header's writer produces a file libmprof reads"
[ "$failures" -eq 0 ]
