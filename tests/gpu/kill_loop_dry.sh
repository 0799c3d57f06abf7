#!/bin/bash
# tests/gpu/kill_loop.sh checked without a GPU (ctest gpu_kill_loop_dry): its
# dry run kills a stand-in that streams a capture as the producer does; it
# must pass, and fail when the stand-in leaves out the module's code or the
# open ranges (so the checks can fail).
# Usage: kill_loop_dry.sh OUTDIR BUILD_DIR
out=${1:?usage: kill_loop_dry.sh OUTDIR BUILD_DIR}
build=${2:?usage: kill_loop_dry.sh OUTDIR BUILD_DIR}
here=$(cd "$(dirname "$0")" && pwd)
failures=0
fail() { echo "FAIL: $*" >&2; failures=$((failures + 1)); }
rm -rf "$out"
# N runs named $1; the stand-in checkpoints every 0.2 s.
loop() {
  KILL_LOOP_DRY_RUN=1 KILL_LOOP_N=$2 KILL_LOOP_MIN_DELAY=0.5 KILL_LOOP_MAX_DELAY=0.5 \
    bash "$here/kill_loop.sh" "$out/$1" "$build" >"$out.$1.log" 2>&1
}
mkdir -p "$out"
loop whole 2 || fail "the dry run failed: $(tail -n 8 "$out.whole.log")"
grep -q '^passed 2 of 2 (100%)' "$out/whole/kill_loop.md" || fail "no 'passed 2 of 2': $(cat "$out/whole/kill_loop.md")"
KILL_LOOP_BREAK=code loop code 1 && fail "a capture without the module's code passed"
grep -q 'sampled functions without code' "$out/code/kill_loop.md" || fail "without code: $(tail -n 3 "$out/code/kill_loop.md")"
KILL_LOOP_BREAK=ranges loop ranges 1 && fail "a capture without open ranges passed"
grep -q '"train" is not there once, open' "$out/ranges/kill_loop.md" || fail "without ranges: $(tail -n 3 "$out/ranges/kill_loop.md")"
KILL_LOOP_BREAK=samples loop samples 1 && fail "a capture without PC samples passed"
grep -q 'no PC-sampled functions' "$out/samples/kill_loop.md" || fail "without samples: $(tail -n 3 "$out/samples/kill_loop.md")"
KILL_LOOP_BREAK=crash loop crash 1 && fail "a program that crashed before its kill passed"
grep -q 'the program ended before the kill' "$out/crash/kill_loop.md" || fail "crash: $(tail -n 3 "$out/crash/kill_loop.md")"
[ "$failures" -eq 0 ] && echo "kill_loop dry run: all checks passed" && rm -rf "$out" "$out".*.log
exit "$failures"
