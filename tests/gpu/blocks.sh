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
# seconds (default 1200); BLOCKS_TORCH=0 skips the PyTorch workload.
#
# docs/validation/H200.md records what it printed on the project's H200.
set -uo pipefail
out=${1:?usage: blocks.sh OUTDIR [BUILD_DIR]}
build=${2:-build}
mkdir -p "$out"
out=$(cd "$out" && pwd)
build=$(cd "$build" && pwd)
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
cuda=${CUDA_HOME:-/usr/local/cuda}
lib="$build/lib/libmprof-blocks.so"
if [ ! -e "$lib" ]; then
  bash "$src/producers/sanitizer/build.sh" "$out/lib" "$cuda" 2>&1 | tee -a "$log" || exit 2
  lib="$out/lib/libmprof-blocks.so"
fi
export MPROF_BLOCKS_LIB="$lib"
probe="$out/blocks_probe"
"$cuda/bin/nvcc" -O2 -arch=native -o "$probe" "$src/tests/gpu/blocks_probe.cu" 2>&1 | tee -a "$log"
pattern="$out/blocks_memory"
"$cuda/bin/nvcc" -O2 -arch=native -o "$pattern" "$src/tests/gpu/blocks_memory.cu" 2>&1 | tee -a "$log"

failures=0
steps_skipped=0
# step NAME SECONDS CMD...: run with a time limit, log its output.
step() {
  local name=$1 secs=$2
  shift 2
  if [ "$SECONDS" -ge "$limit" ]; then
    say "skip  $name (BLOCKS_SECONDS=$limit reached)"
    steps_skipped=$((steps_skipped + 1))
    return 0
  fi
  local t0=$SECONDS
  say "== $name"
  timeout "$secs" "$@" >"$out/$name.txt" 2>&1
  local rc=$?
  cat "$out/$name.txt" >>"$log"
  say "-- $name: exit $rc, $((SECONDS - t0)) s"
  return $rc
}
check() { # check NAME TRACE [check_blocks args]: the per-launch assertions
  local name=$1 trace=$2
  shift 2
  if [ ! -f "$trace" ]; then
    say "FAIL  $name: no trace"
    failures=$((failures + 1))
    return
  fi
  if "$build/bin/check_blocks" "$trace" "$@" >"$out/$name.check" 2>&1; then
    say "ok    $name"
  else
    say "FAIL  $name"
    failures=$((failures + 1))
  fi
  cat "$out/$name.check" >>"$log"
}

say "== machine"
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee -a "$log"
ls -la "$cuda/compute-sanitizer/libsanitizer-public.so" 2>&1 | tee -a "$log"
ldd "$cuda/compute-sanitizer/libsanitizer-public.so" 2>&1 | grep -Ei 'cupti|cuda' | tee -a "$log"

empty=${BLOCKS_EMPTY:-1048576}
# The producer alone, preloaded and injected: block counts and cost.
step plain 60 "$probe" "$empty" 2
step preload 120 env MPROF_BLOCKS_OUTPUT="$out/preload.source" LD_PRELOAD="$lib" MPROF_VERBOSE=1 "$probe" "$empty" 2
"$mprof" source info "$out/preload.source" 2>&1 | head -20 | tee -a "$log"
cat "$out/preload.source.meta" 2>&1 | grep -v '^blocks\.\(device\|kernel\)' | tee -a "$log"
step inject 120 env MPROF_BLOCKS_OUTPUT="$out/inject.source" CUDA_INJECTION64_PATH="$lib" MPROF_VERBOSE=1 "$probe" 4096 1
awk '$1 == "blocks.blocks" { print "inject: " $2 " blocks of 4334" }' "$out/inject.source.meta" | tee -a "$log"
# Beside the CUPTI producer (producers/sanitizer/README.md: not in one
# process on driver 580); logged, not asserted, to see a driver change.
step beside_cupti 60 env MPROF_BLOCKS_OUTPUT="$out/beside.source" LD_PRELOAD="$lib" \
  CUDA_INJECTION64_PATH="$build/lib/libmprof-cupti.so" MPROF_OUTPUT="$out/beside.mprof" "$probe" 4096 1
# mprof record blocks on the probe: counts, and the lone last block.
step record 180 "$mprof" record blocks -o "$out/probe.mprof" -- "$probe" "$empty" 2
# tail_spin's dynamic shared memory, as the probe printed it.
shared=$(awk '$1 == "PROBE" { print $9 }' "$out/record.txt")
check probe "$out/probe.mprof" --tail tail_spin --shared tail_spin "${shared:-0}"
ls -la "$out"/probe.mprof 2>&1 | tee -a "$log"
"$mprof" summary --human --detail --color=never "$out/probe.mprof" 2>&1 | head -80 >"$out/probe.summary"
grep -E 'tail_spin|tail effect|SM tail|SM load' "$out/probe.summary" | tee -a "$log"

# --memory on a kernel with a known pattern: a coalesced float load (100%
# of its sectors used), a stride-32 float load (12.5%), a coalesced store
# (100%), each once per warp of every launch; the other kernel uncounted.
if "$mprof" record blocks --memory -o "$out/nokernel.mprof" -- true >"$out/nokernel.txt" 2>&1; then
  say "FAIL  memory_usage: --memory without --kernel was accepted"
  failures=$((failures + 1))
elif [ $? -eq 2 ] && grep -q -- "--memory needs --kernel" "$out/nokernel.txt"; then
  say "ok    memory_usage"
else
  say "FAIL  memory_usage: $(cat "$out/nokernel.txt")"
  failures=$((failures + 1))
fi
step memory_plain 60 "$pattern" 1024 3
step memory 180 env MPROF_VERBOSE=1 "$mprof" record blocks --memory --kernel memory_pattern \
  -o "$out/memory.mprof" -- "$pattern" 1024 3
check memory "$out/memory.mprof" --memory memory_pattern
"$mprof" summary --human --kernel memory_pattern --color=never "$out/memory.mprof" \
  >"$out/memory.summary" 2>&1
grep -A4 "global memory" "$out/memory.summary" | tee -a "$log"
grep -E "^blocks\.memory_|blocks\.errors|blocks\.error " "$out/memory.mprof.source.meta" 2>&1 | tee -a "$log"
# The counted offsets are the kernel's own: with its SASS attached from
# the executable, the 12.5% and 100% loads are LDGs and the store an STG.
"$mprof" sass "$out/memory.mprof" "$pattern" >"$out/memory.sass.txt" 2>&1
"$mprof" summary --kernel memory_pattern "$out/memory.mprof" >"$out/memory.summary.xml" 2>&1
grep '<access ' "$out/memory.summary.xml" | tee -a "$log"
if grep -q 'efficiency="0.1250" sass="LDG' "$out/memory.summary.xml" &&
  grep -q 'efficiency="1.0000" sass="LDG' "$out/memory.summary.xml" &&
  grep -q 'kind="store".*efficiency="1.0000" sass="STG' "$out/memory.summary.xml"; then
  say "ok    memory_sass"
else
  say "FAIL  memory_sass: the counted offsets are not the kernel's LDG/STG ($out/memory.sass.txt)"
  failures=$((failures + 1))
fi
"$mprof" view "$out/memory.mprof" --tab hotspots --kernel memory_pattern \
  --render "$out/memory-hotspots.png" 2>&1 | tee -a "$log"

# The examples and a framework workload.
step demo 180 "$mprof" record blocks -o "$out/demo.mprof" -- "$build/bin/demo"
check demo "$out/demo.mprof"
step gemm_plain 60 "$build/bin/gemm" 2048 5
step gemm 180 "$mprof" record blocks -o "$out/gemm.mprof" -- "$build/bin/gemm" 2048 5
check gemm "$out/gemm.mprof"
step transformer_plain 60 "$build/bin/transformer_forward" 1 3
step transformer 240 "$mprof" record blocks -o "$out/transformer.mprof" -- "$build/bin/transformer_forward" 1 3
check transformer "$out/transformer.mprof"
if [ "${BLOCKS_TORCH:-1}" != 0 ]; then
  step torch 300 "$mprof" record blocks -o "$out/torch.mprof" -- python3 "$src/tests/gpu/blocks_torch.py" 3
  check torch "$out/torch.mprof"
  step torch_plain 240 python3 "$src/tests/gpu/blocks_torch.py" 3
fi
say "== result: $failures failing checks, $steps_skipped steps skipped, $SECONDS s"
[ "$failures" -eq 0 ]
