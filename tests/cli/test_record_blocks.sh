#!/bin/sh
# mprof record blocks without a GPU: the CLI's side of it. A stand-in for
# the block producer (any loadable library; the command itself leaves the
# .source file the producer would) shows the trace it builds, the recap and
# the warnings; a missing producer is one line and exit 2.
# Usage: test_record_blocks.sh MPROF TMPDIR TEST_BLOCKS SCHEMA_CHECK DOCS
mprof=$1
tmp=$2/cli-blocks-$$
test_blocks=$3
schema_check=$4
docs=$5
mkdir -p "$tmp"
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
expect() {
  want=$1 pattern=$2
  shift 2
  out=$("$@" 2>&1)
  got=$?
  [ "$got" -eq "$want" ] || fail "$* exited $got, wanted $want: $out"
  [ -z "$pattern" ] || echo "$out" | grep -q -- "$pattern" ||
    fail "$*: no '$pattern' in: $out"
}

"$test_blocks" --write-source "$tmp/fixture.source" || fail "writing the fixture"
printf 'blocks.producer compute-sanitizer\nblocks.overflow 133\nblocks.capacity 1048576\nblocks.device.0.name NVIDIA H200\nblocks.device.0.sm_count 132\nblocks.device.0.warp_size 32\nblocks.kernel.0.registers 40\n' \
  >"$tmp/fixture.source.meta"
stand_in=$(ldd "$(command -v sh)" | awk '/libc\.so/ { print $3 }')
[ -n "$stand_in" ] || stand_in=/lib/x86_64-linux-gnu/libc.so.6

expect 2 "the block producer (libmprof-blocks.so) was not found at \$MPROF_BLOCKS_LIB" \
  env MPROF_BLOCKS_LIB="$tmp/none.so" "$mprof" record blocks -- true
expect 1 "no block file was written to $tmp/none.mprof.source" \
  env MPROF_BLOCKS_LIB="$stand_in" "$mprof" record blocks -o "$tmp/none.mprof" -- true
expect 0 "$tmp/run.mprof: 1 kernel, 3 launches, 398 block spans" \
  env MPROF_BLOCKS_LIB="$stand_in" "$mprof" record blocks -o "$tmp/run.mprof" \
  -- sh -c "cp '$tmp/fixture.source' '$tmp/run.mprof.source' && cp '$tmp/fixture.source.meta' '$tmp/run.mprof.source.meta'"
expect 0 "133 blocks were not recorded because the device buffer of 1048576 slots was full" \
  env MPROF_BLOCKS_LIB="$stand_in" "$mprof" record blocks -o "$tmp/run2.mprof" \
  -- sh -c "cp '$tmp/fixture.source' '$tmp/run2.mprof.source' && cp '$tmp/fixture.source.meta' '$tmp/run2.mprof.source.meta'"
expect 0 "capture.mode = blocks" "$mprof" info "$tmp/run.mprof"
expect 0 "NVIDIA H200" "$mprof" info "$tmp/run.mprof"
expect 0 "Measured over 3 launches of block spans" \
  "$mprof" summary --human --detail --color=never "$tmp/run.mprof"
# --memory: the producer's per-instruction counts become MEMORY_ACCESSES,
# and the kernel's panel shows them, busiest first, with their sector
# efficiency (a coalesced float load 100%, a stride-32 load 12.5%); a
# line that cannot be true is left out with a warning.
cp "$tmp/fixture.source" "$tmp/mem.source"
{
  cat "$tmp/fixture.source.meta"
  echo "blocks.memory 0 0 128 1 4 3192 102144 408576 12768"
  echo "blocks.memory 0 0 144 1 4 3192 102144 408576 102144"
  echo "blocks.memory 0 0 160 2 4 3192 102144 408576 12768"
  echo "blocks.memory 0 0 176 1 4 10 5 40 10"
} >"$tmp/mem.source.meta"
expect 0 "1 memory-access lines of $tmp/memrun.mprof.source.meta could not be read" \
  env MPROF_BLOCKS_LIB="$stand_in" "$mprof" record blocks -o "$tmp/memrun.mprof" \
  -- sh -c "cp '$tmp/mem.source' '$tmp/memrun.mprof.source' && cp '$tmp/mem.source.meta' '$tmp/memrun.mprof.source.meta'"
expect 0 "MEMORY_ACCESSES" "$mprof" info "$tmp/memrun.mprof"
panel=$("$mprof" summary --human --kernel tail_spin --color=never "$tmp/memrun.mprof" 2>&1)
echo "$panel" | grep -q "global memory (counted, every access): 9,576 warp accesses · sector efficiency 30.0%" ||
  fail "no memory totals in: $panel"
echo "$panel" | grep -q "0x00090 load .*12.5% sectors used ·   128.0 B asked / 32.0 sectors per warp · 3,192 warp accesses" ||
  fail "no stride-32 load at 12.5%: $panel"
echo "$panel" | grep -q "0x000a0 store .*100% sectors used" ||
  fail "no coalesced store at 100%: $panel"
# The same for agents: XML and JSON (schema-checked) carry the counts.
xml=$("$mprof" summary --kernel tail_spin "$tmp/memrun.mprof" 2>&1)
echo "$xml" | grep -q '<memory instructions="3" shown="3" omitted="0" warp_accesses="9576" bytes="1225728" sectors="127680" efficiency="0.3000">' ||
  fail "no <memory> totals in: $xml"
echo "$xml" | grep -q '<access offset="0x90" kind="load" access_size="4" warp_accesses="3192" thread_accesses="102144" bytes="408576" sectors="102144" efficiency="0.1250"/>' ||
  fail "no stride-32 <access> in: $xml"
# tests/gpu/blocks.sh's checker finds the known pattern: two loads (100%,
# 12.5%) and a store (100%), each once per warp of every launch.
check_blocks=$(dirname "$test_blocks")/check_blocks
# The fixture's last launch lost 133 blocks to the full buffer: the checker
# must say so and exit 1.
"$check_blocks" "$tmp/memrun.mprof" --memory tail_spin >"$tmp/check.txt" 2>&1
status=$?
[ "$status" -eq 1 ] && grep -q "complete 2, short 1" "$tmp/check.txt" ||
  fail "check_blocks on a launch short of blocks exited $status: $(cat "$tmp/check.txt")"
grep -q "MEMORY tail_spin(unsigned long long, int\*): 3 instructions; loads at 100%: 1, at 12.5%: 1; stores at 100%: 1" "$tmp/check.txt" ||
  fail "check_blocks --memory: $(cat "$tmp/check.txt")"
if [ -n "$schema_check" ]; then
  "$mprof" summary --json --kernel tail_spin "$tmp/memrun.mprof" >"$tmp/mem.json" 2>"$tmp/mem.err" ||
    fail "summary --json with memory counts exited $?: $(cat "$tmp/mem.err")"
  "$schema_check" "$docs/summary.schema.json" "$tmp/mem.json" ||
    fail "summary --json with memory counts does not match the schema"
  grep -q '"memory":{"instructions":3,' "$tmp/mem.json" || fail "no memory in the JSON"
fi
# One trace per process: each process reports the name it took to
# $MPROF_MANIFEST (the producer expands %p, %h and %q{VAR} itself); record
# builds every reported file, here two ranks of "-o run-%q{RANK}.mprof".
two_ranks="for r in 0 1; do cp '$tmp/fixture.source' \"$tmp/rank-\$r.mprof.source\";
  cp '$tmp/fixture.source.meta' \"$tmp/rank-\$r.mprof.source.meta\";
  echo \"start 100\$r 1 $tmp/rank-\$r.mprof.source\" >>\"\$MPROF_MANIFEST\";
  echo \"end 100\$r 0 $tmp/rank-\$r.mprof.source\" >>\"\$MPROF_MANIFEST\"; done"
expect 0 "2 processes recorded" env MPROF_BLOCKS_LIB="$stand_in" "$mprof" \
  record blocks -o "$tmp/rank-%q{RANK}.mprof" -- sh -c "$two_ranks"
for r in 0 1; do
  expect 0 "capture.mode = blocks" "$mprof" info "$tmp/rank-$r.mprof"
done
# A process that started and never finished is named, with its file.
expect 1 "pid 2002 ended without a word" env MPROF_BLOCKS_LIB="$stand_in" \
  "$mprof" record blocks -o "$tmp/lost.mprof" -- sh -c \
  ": >'$tmp/lost.mprof.source.partial';
   echo 'start 2002 1 $tmp/lost.mprof.source' >>\"\$MPROF_MANIFEST\""
# ... and its claim on the name is gone, for the next run.
[ ! -e "$tmp/lost.mprof.source.partial" ] || fail "the lost process's claim is left"
# --memory is for record blocks, and needs the kernel to look at.
expect 2 "--memory needs --kernel REGEX" env MPROF_BLOCKS_LIB="$stand_in" \
  "$mprof" record blocks --memory -- true
expect 2 "use 'mprof record blocks --memory --kernel REGEX -- CMD'" \
  "$mprof" record --memory --kernel k -- true
# The program's own exit status is kept.
expect 3 "" env MPROF_BLOCKS_LIB="$stand_in" "$mprof" record blocks \
  -o "$tmp/run3.mprof" -- sh -c "cp '$tmp/fixture.source' '$tmp/run3.mprof.source'; exit 3"

rm -rf "$tmp"
[ "$failures" -eq 0 ] && echo "record blocks CLI: ok"
[ "$failures" -eq 0 ]
