#!/bin/sh
# `mprof view --render` on traces the reader accepts but no GPU writes
# (written by tests/test_render_hostile.c --write): a copy of no stream, a
# launch ending near 2^64 ns, a device claiming the most SMs the reader
# takes (MPROF_DEVICE_SM_MAX, 1024). Every tab (and Mega and Density of the kernel without spans, projected)
# exits 0 with its one line and a PNG with something on it, in at most
# 256 MiB of address space; under ASan, whose shadow memory is address
# space, no single allocation may pass 256 MB instead. Before the renderer
# checked them, the first crashed every tab, the second overflowed under
# UBSan, devices claiming 2^28 and 2^32 - 1 SMs asked for 5.2 GB and 80 GB:
# those are now refused in one line (exit 2).
# usage: test_render_hostile.sh MPROF TMPDIR TEST_RENDER_HOSTILE PNG_CHECK ASAN
mprof=$1
tmp=${2:-/tmp}/render-hostile.$$
helper=$3
check=$4
asan=$5
. "$(dirname "$0")/../cli/common.sh"

"$helper" --write "$tmp" || fail "writing the traces"
if [ "$asan" = 1 ]; then
  ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}max_allocation_size_mb=256"
  export ASAN_OPTIONS
fi

# render TRACE TAB [KERNEL]: draws it in bounded memory, checks the line
# and the pixels.
render() {
  name=$(basename "$1" .mprof)-$2${3:+-$3}
  (
    [ "$asan" = 1 ] || ulimit -v 262144
    exec "$mprof" view "$1" --render "$tmp/$name.png" --tab "$2" \
      ${3:+--kernel "$3"} --size 320x200
  ) >"$tmp/out" 2>&1
  status=$?
  [ "$status" -eq 0 ] || fail "$name: exited $status: $(head -c 300 "$tmp/out")"
  [ "$(wc -l <"$tmp/out")" -eq 1 ] && grep -q "^wrote $tmp/$name.png: " "$tmp/out" ||
    fail "$name said: $(head -c 300 "$tmp/out")"
  "$check" "$tmp/$name.png" 320 200 >"$tmp/check" || fail "$name: $(cat "$tmp/check")"
}

for trace in stream-none end-near-max sms-bound; do
  [ -f "$tmp/$trace.mprof" ] || fail "$trace.mprof was not written"
  for tab in trace summary hotspots flame raster mega density activity; do
    render "$tmp/$trace.mprof" $tab
  done
  render "$tmp/$trace.mprof" mega compute
  render "$tmp/$trace.mprof" density compute
done
# The measured span tabs say so; the projected ones too.
grep -q "(projected)" "$tmp/out" || fail "density of compute is not projected: $(cat "$tmp/out")"
expect_one_line 2 "DEVICES at byte [0-9]*: record 0: sm_count 268435456 is above 1024" \
  "$mprof" view "$tmp/sms-2e28.mprof" --render "$tmp/x.png" --tab mega
expect_one_line 2 "DEVICES at byte [0-9]*: record 0: sm_count 4294967295 is above 1024" \
  "$mprof" view "$tmp/sms-max.mprof" --render "$tmp/x.png" --tab density

[ "$failures" -eq 0 ] || { echo "$failures failure(s)" >&2; exit 1; }
echo "every tab of the three traces draws in bounded memory; two refused"
