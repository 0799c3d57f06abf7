#!/bin/sh
# A real full disk: `mprof synth` into a 2 MB tmpfs, where the streamed file
# fits but its finished copy does not (ENOSPC). The capture stays in
# NAME.partial and opens with every launch. Mounting needs a private mount
# namespace (unshare -m, as root or with user namespaces); where that is
# refused the test says so and skips (exit 77).
# Usage: test_full_disk.sh MPROF TMPDIR
mprof=$1
tmp=${2:-/tmp}/full-disk.$$
. "$(dirname "$0")/common.sh"

mnt=$tmp/mnt
mkdir -p "$mnt"
mount_small="mount -t tmpfs -o size=2m tmpfs '$mnt'"
if unshare -m sh -c "$mount_small" 2>"$tmp/why"; then
  how="unshare -m"
elif unshare -rm sh -c "$mount_small" 2>>"$tmp/why"; then
  how="unshare -rm"
else
  echo "SKIP: cannot mount a tmpfs here: $(tr '\n' ' ' <"$tmp/why")"
  exit 77
fi

# Everything inside the namespace that sees the small disk.
$how sh -c "
  $mount_small || exit 90
  '$mprof' synth -o '$mnt/t.mprof' --launches 30000 >'$tmp/synth.out' 2>'$tmp/synth.err'
  echo \$? >'$tmp/synth.status'
  ls -a '$mnt' >'$tmp/ls.out'
  '$mprof' info '$mnt/t.mprof.partial' >'$tmp/info.out' 2>&1
  echo \$? >'$tmp/info.status'
"
[ "$(cat "$tmp/synth.status")" = 1 ] || fail "synth into a full tmpfs exited $(cat "$tmp/synth.status"), expected 1: $(cat "$tmp/synth.err")"
[ "$(wc -l <"$tmp/synth.err")" -eq 1 ] || fail "synth printed more than one line: $(cat "$tmp/synth.err")"
grep -q "$mnt/t.mprof: cannot write the trace: No space left on device; the whole capture (up to its final checkpoint, 1) is kept in $mnt/t.mprof.partial (open it with mprof)" "$tmp/synth.err" ||
  fail "synth's line: $(cat "$tmp/synth.err")"
grep -qx "t.mprof.partial" "$tmp/ls.out" || fail "the streamed file is gone: $(cat "$tmp/ls.out")"
grep -q "finishing" "$tmp/ls.out" && fail "the failed copy was left: $(cat "$tmp/ls.out")"
[ "$(cat "$tmp/info.status")" = 0 ] || fail "the kept file does not open: $(head -c 300 "$tmp/info.out")"
grep -q "LAUNCHES=30000" "$tmp/info.out" || fail "the kept file lacks launches: $(grep sections "$tmp/info.out")"

[ "$failures" -eq 0 ] && echo "full disk: all checks passed"
exit "$failures"
