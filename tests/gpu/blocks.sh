#!/bin/bash
# The block producer on a real GPU: how it loads (and whether it can sit
# beside the CUPTI producer), that every launch of the examples, a probe with a deliberate tail and a
# PyTorch/Triton training loop gets exactly one span per block inside its
# CUPTI interval, and what it costs. Skips (exit 77) without a GPU.
#
# Usage: tests/gpu/blocks.sh OUTDIR [BUILD_DIR]
#   BUILD_DIR  a CMake build of mprof with the CUPTI producer, the CUDA
#              examples and tests (default: build). When it has no
#              libmprof-blocks.so, producers/sanitizer/build.sh builds one
#              into OUTDIR/lib with this machine's toolkit.
# Environment: BLOCKS_SECONDS stops starting new steps after that many
# seconds (default 1200; the steps left out make the script end with exit
# 77, skipped, when nothing failed); BLOCKS_PARTS picks parts (default
# "producer probe memory examples torch"); BLOCKS_TORCH=0 leaves the
# PyTorch workload out.
#
# What fails: a step that exits non-zero (the probe alone, the producer
# preloaded or injected, every `record blocks`, summary, sass, view); a
# preloaded run whose .source does not open; an injected run whose block
# count differs from the blocks the probe launched; a trace that does not
# hold as many launches as the probe launched, or a launch short of its
# blocks, with a duplicate block or a span outside it (check_blocks);
# --memory counts unlike the pattern. Every output of an earlier run is
# removed first, so a step that writes nothing is never checked on old
# files. tests/gpu/selftest.sh blocks runs this on stand-ins that write
# nothing, drop blocks and launches, write garbage or crash, and expects
# it to fail.
#
# docs/validation/H200.md records what it printed on the project's H200.
set -uo pipefail
out=${1:?usage: blocks.sh OUTDIR [BUILD_DIR]}
build=${2:-build}
mkdir -p "$out" || exit 2
out=$(cd "$out" && pwd)
build=$(cd "$build" 2>/dev/null && pwd) || { echo "blocks: no build folder ${2:-build}" >&2; exit 2; }
src=$(cd "$(dirname "$0")/../.." && pwd)
log="$out/blocks.log"
: >"$log"
limit=${BLOCKS_SECONDS:-1200}
say() { echo "$*" | tee -a "$log"; }

if ! nvidia-smi -L >/dev/null 2>&1; then
  echo "blocks: no GPU here (nvidia-smi -L failed); skipping the GPU checks"
  exit 77
fi
mprof="$build/bin/mprof"
for need in "$mprof" "$build/bin/check_blocks" "$build/lib/libmprof-cupti.so"; do
  if [ ! -e "$need" ]; then
    echo "blocks: $need is missing; build with the CUDA toolkit present" >&2
    exit 2
  fi
done
# mprof itself must start here (a build copied from another machine may
# lack a library it links, e.g. Cairo for `view --render`).
for tool in "$mprof" "$build/bin/check_blocks"; do
  if ! err=$("$tool" --version 2>&1 >/dev/null) && [ -n "$err" ] &&
    echo "$err" | grep -q "error while loading shared libraries"; then
    echo "blocks: $tool cannot start here: $err; install the library, put" \
      "it on LD_LIBRARY_PATH, or build with -DMPROF_WITH_RENDER=OFF" \
      "-DMPROF_WITH_GTK=OFF" | tee -a "$log" >&2
    exit 2
  fi
done
parts=" ${BLOCKS_PARTS:-producer probe memory examples torch} "
[ "${BLOCKS_TORCH:-1}" != 0 ] || parts=${parts/ torch / }
part() { [[ "$parts" == *" $1 "* ]]; }

# What an earlier run left: every step's output and trace.
steps="plain preload inject beside_cupti record nokernel memory_plain memory demo
  gemm_plain gemm transformer_plain transformer torch torch_plain"
for name in $steps probe beside; do
  rm -f "$out/$name.txt" "$out/$name.check" "$out/$name.mprof" "$out/$name.mprof".* \
    "$out/$name.source" "$out/$name.source".* "$out/$name".summary* "$out/$name".sass.txt ||
    exit 2
done
rm -f "$out/memory-hotspots.png" "$out/blocks_probe" "$out/blocks_memory" || exit 2

cuda=${CUDA_HOME:-/usr/local/cuda}
lib="$build/lib/libmprof-blocks.so"
if [ ! -e "$lib" ]; then
  bash "$src/producers/sanitizer/build.sh" "$out/lib" "$cuda" 2>&1 | tee -a "$log" || exit 2
  lib="$out/lib/libmprof-blocks.so"
fi
export MPROF_BLOCKS_LIB="$lib"
probe="$out/blocks_probe"
"$cuda/bin/nvcc" -O2 -arch=native -o "$probe" "$src/tests/gpu/blocks_probe.cu" 2>&1 | tee -a "$log" ||
  { echo "blocks: building blocks_probe.cu failed" >&2; exit 2; }
pattern="$out/blocks_memory"
"$cuda/bin/nvcc" -O2 -arch=native -o "$pattern" "$src/tests/gpu/blocks_memory.cu" 2>&1 | tee -a "$log" ||
  { echo "blocks: building blocks_memory.cu failed" >&2; exit 2; }

failures=0
steps_skipped=0
failed() {
  say "FAIL  $*"
  failures=$((failures + 1))
}
# try NAME SECONDS CMD...: run with a time limit, log its output; returns
# its exit status (1 when BLOCKS_SECONDS is reached: skipped).
try() {
  local name=$1 secs=$2
  shift 2
  if [ "$SECONDS" -ge "$limit" ]; then
    say "skip  $name (BLOCKS_SECONDS=$limit reached)"
    steps_skipped=$((steps_skipped + 1)) last_skipped=1
    return 1
  fi
  last_skipped=0
  local t0=$SECONDS
  say "== $name"
  timeout "$secs" "$@" >"$out/$name.txt" 2>&1
  local rc=$?
  cat "$out/$name.txt" >>"$log"
  say "-- $name: exit $rc, $((SECONDS - t0)) s"
  return $rc
}
# step NAME SECONDS CMD...: the same, and a non-zero exit is a failure.
step() {
  local skipped=$steps_skipped rc
  try "$@"
  rc=$?
  [ "$rc" -eq 0 ] || [ "$steps_skipped" -ne "$skipped" ] || failed "$1: exit $rc"
  return $rc
}
# ran: the last step ran (was not left out for BLOCKS_SECONDS); what
# checks its result runs only then.
last_skipped=0
ran() { [ "$last_skipped" = 0 ]; }
# run WHAT CMD...: a command whose output goes to the log; non-zero fails.
run() {
  local what=$1 rc
  shift
  "$@" 2>&1 | tee -a "$log"
  rc=${PIPESTATUS[0]}
  [ "$rc" -eq 0 ] || failed "$what: exit $rc"
  return "$rc"
}
check() { # check NAME TRACE [check_blocks args]: the per-launch assertions
  local name=$1 trace=$2
  shift 2
  if [ ! -f "$trace" ]; then
    failed "$name: no trace"
    return
  fi
  if "$build/bin/check_blocks" "$trace" "$@" >"$out/$name.check" 2>&1; then
    say "ok    $name"
  else
    failed "$name: $(grep -E '^(TOTAL|LAUNCHES:|SHARED|TAIL:|MEMORY:|ALIGNMENT)' "$out/$name.check" | tr '\n' ';')"
  fi
  cat "$out/$name.check" >>"$log"
}
# launched FILE: the probe's launches (EVENT_TIMING lines) and their blocks
launched() { awk '$1 == "EVENT_TIMING" { n++; b += $3 } END { print n + 0, b + 0 }' "$1"; }

say "== machine"
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee -a "$log"
ls -la "$cuda/compute-sanitizer/libsanitizer-public.so" 2>&1 | tee -a "$log"
ldd "$cuda/compute-sanitizer/libsanitizer-public.so" 2>&1 | grep -Ei 'cupti|cuda' | tee -a "$log"

empty=${BLOCKS_EMPTY:-1048576}
if part producer; then
  # The producer alone, preloaded and injected: block counts and cost.
  step plain 60 "$probe" "$empty" 2
  if step preload 120 env MPROF_BLOCKS_OUTPUT="$out/preload.source" LD_PRELOAD="$lib" MPROF_VERBOSE=1 "$probe" "$empty" 2; then
    "$mprof" source info "$out/preload.source" >"$out/preload.source.txt" 2>&1 ||
      failed "preload: the producer's $out/preload.source does not open: $(head -n 2 "$out/preload.source.txt")"
    head -20 "$out/preload.source.txt" | tee -a "$log"
    grep -v '^blocks\.\(device\|kernel\)' "$out/preload.source.meta" 2>&1 | tee -a "$log"
  fi
  if step inject 120 env MPROF_BLOCKS_OUTPUT="$out/inject.source" CUDA_INJECTION64_PATH="$lib" MPROF_VERBOSE=1 "$probe" 4096 1; then
    read -r _ want <<<"$(launched "$out/inject.txt")"
    got=$(awk '$1 == "blocks.blocks" { print $2 }' "$out/inject.source.meta" 2>/dev/null)
    say "inject: ${got:-no} blocks of $want"
    [ "${got:-x}" = "$want" ] && [ "$want" -gt 0 ] ||
      failed "inject: the producer counted ${got:-no} blocks, the probe launched $want"
  fi
  # Beside the CUPTI producer (producers/sanitizer/README.md: not in one
  # process on driver 580); logged, not asserted, to see a driver change.
  try beside_cupti 60 env MPROF_BLOCKS_OUTPUT="$out/beside.source" LD_PRELOAD="$lib" \
    CUDA_INJECTION64_PATH="$build/lib/libmprof-cupti.so" MPROF_OUTPUT="$out/beside.mprof" "$probe" 4096 1
fi

if part probe; then
  # mprof record blocks on the probe: counts, and the lone last block.
  step record 180 "$mprof" record blocks -o "$out/probe.mprof" -- "$probe" "$empty" 2
  if ran; then
    # tail_spin's dynamic shared memory and the launches, as the probe
    # printed them.
    shared=$(awk '$1 == "PROBE" { print $9 }' "$out/record.txt")
    read -r launches _ <<<"$(launched "$out/record.txt")"
    if [ -z "$shared" ] || [ "$launches" -eq 0 ]; then
      failed "probe: the probe printed no PROBE line or no EVENT_TIMING lines"
    else
      check probe "$out/probe.mprof" --tail tail_spin --shared tail_spin "$shared" --launches "$launches"
    fi
    ls -la "$out"/probe.mprof 2>&1 | tee -a "$log"
    if "$mprof" summary --human --detail --color=never "$out/probe.mprof" >"$out/probe.summary" 2>&1; then
      grep -E 'tail_spin|tail effect|SM tail|SM load' "$out/probe.summary" | tee -a "$log"
    else
      failed "probe: summary exited $?: $(head -n 2 "$out/probe.summary")"
    fi
  fi
fi

if part memory; then
  # --memory on a kernel with a known pattern: a coalesced float load (100%
  # of its sectors used), a stride-32 float load (12.5%), a coalesced store
  # (100%), each once per warp of every launch; the other kernel uncounted.
  "$mprof" record blocks --memory -o "$out/nokernel.mprof" -- true >"$out/nokernel.txt" 2>&1
  rc=$?
  if [ "$rc" -eq 2 ] && grep -q -- "--memory needs --kernel" "$out/nokernel.txt"; then
    say "ok    memory_usage"
  else
    failed "memory_usage: --memory without --kernel exited $rc: $(cat "$out/nokernel.txt")"
  fi
  step memory_plain 60 "$pattern" 1024 3
  step memory 180 env MPROF_VERBOSE=1 "$mprof" record blocks --memory --kernel memory_pattern \
    -o "$out/memory.mprof" -- "$pattern" 1024 3
fi
if part memory && ran; then
  check memory "$out/memory.mprof" --memory memory_pattern
  "$mprof" summary --human --kernel memory_pattern --color=never "$out/memory.mprof" \
    >"$out/memory.summary" 2>&1 || failed "memory: summary --human exited $?"
  grep -A4 "global memory" "$out/memory.summary" | tee -a "$log"
  grep -E "^blocks\.memory_|blocks\.errors|blocks\.error " "$out/memory.mprof.source.meta" 2>&1 | tee -a "$log"
  # The counted offsets are the kernel's own: with its SASS attached from
  # the executable, the 12.5% and 100% loads are LDGs and the store an STG.
  "$mprof" sass "$out/memory.mprof" "$pattern" >"$out/memory.sass.txt" 2>&1 ||
    failed "memory: mprof sass exited $?: $(tail -n 2 "$out/memory.sass.txt")"
  "$mprof" summary --kernel memory_pattern "$out/memory.mprof" >"$out/memory.summary.xml" 2>&1 ||
    failed "memory: summary exited $?"
  grep '<access ' "$out/memory.summary.xml" | tee -a "$log"
  if grep -q 'efficiency="0.1250" sass="LDG' "$out/memory.summary.xml" &&
    grep -q 'efficiency="1.0000" sass="LDG' "$out/memory.summary.xml" &&
    grep -q 'kind="store".*efficiency="1.0000" sass="STG' "$out/memory.summary.xml"; then
    say "ok    memory_sass"
  else
    failed "memory_sass: the counted offsets are not the kernel's LDG/STG ($out/memory.sass.txt)"
  fi
  run "memory: view --render" "$mprof" view "$out/memory.mprof" --tab hotspots --kernel memory_pattern \
    --render "$out/memory-hotspots.png"
fi

if part examples; then
  # The examples and a framework workload.
  step demo 180 "$mprof" record blocks -o "$out/demo.mprof" -- "$build/bin/demo"
  ran && check demo "$out/demo.mprof"
  step gemm_plain 60 "$build/bin/gemm" 2048 5
  step gemm 180 "$mprof" record blocks -o "$out/gemm.mprof" -- "$build/bin/gemm" 2048 5
  ran && check gemm "$out/gemm.mprof"
  step transformer_plain 60 "$build/bin/transformer_forward" 1 3
  step transformer 240 "$mprof" record blocks -o "$out/transformer.mprof" -- "$build/bin/transformer_forward" 1 3
  ran && check transformer "$out/transformer.mprof"
fi
if part torch; then
  step torch 300 "$mprof" record blocks -o "$out/torch.mprof" -- python3 "$src/tests/gpu/blocks_torch.py" 3
  ran && check torch "$out/torch.mprof"
  step torch_plain 240 python3 "$src/tests/gpu/blocks_torch.py" 3
fi
say "== result: $failures failing checks, $steps_skipped steps skipped, $SECONDS s"
[ "$failures" -eq 0 ] || exit 1
[ "$steps_skipped" -eq 0 ] || exit 77
exit 0
