#!/bin/sh
# Heavier checks of libmprof-cupti.so on a GPU, after run_smoke.sh: a long
# continuous run (periodic drains), a cuBLAS program with lazy and eager
# module loading (big modules, omitted cubins), and a deliberate PC
# hardware-buffer overflow (drop counters and the warning). Prints wall
# times plain vs injected; traces go to OUTDIR.
#
# usage: tests/cupti/gpu/run_stress.sh OUTDIR [CUDA_HOME]   (from the repo root)
set -u
out=${1:?usage: run_stress.sh OUTDIR [CUDA_HOME]}
cuda=${2:-/usr/local/cuda}
mkdir -p "$out"
work=$(mktemp -d)
inc=$cuda/targets/x86_64-linux/include
lib=$cuda/targets/x86_64-linux/lib
[ -d "$inc" ] || inc=$cuda/include
[ -d "$lib" ] || lib=$cuda/lib64
mkdir -p "$work/include/mprof"
sed -e 's/@PROJECT_VERSION_MAJOR@/0/' -e 's/@PROJECT_VERSION_MINOR@/1/' \
    -e 's/@PROJECT_VERSION_PATCH@/0/' -e 's/@PROJECT_VERSION@/0.1.0/' \
    libmprof/include/mprof/version.h.in > "$work/include/mprof/version.h"
# PM sampling is C++ (CUPTI's profiler host header is).
g++ -std=c++17 -O2 -g -fPIC -fvisibility=hidden -D_GNU_SOURCE \
    -Ilibmprof/include -I"$work/include" -Iproducers/cupti -I"$inc" \
    -c producers/cupti/pmsampling.cpp -o "$work/pmsampling.o" || exit 1
gcc -std=c11 -O2 -g -fPIC -shared -D_GNU_SOURCE -fvisibility=hidden \
    -Ilibmprof/include -I"$work/include" -Ilibmprof/src -Iproducers/cupti \
    -I"$inc" libmprof/src/format/writer.c libmprof/src/format/crc32c.c libmprof/src/base/error.c \
    libmprof/src/base/status.c libmprof/src/base/map.c producers/cupti/*.c \
    "$work/pmsampling.o" \
    -Wl,--version-script=producers/cupti/exports.map -L"$lib" \
    -Wl,-rpath,"$lib" -lcupti -lpthread -ldl -lstdc++ -o "$work/libmprof-cupti.so" || exit 1
"$cuda/bin/nvcc" -O2 -lineinfo -arch=sm_90 tests/cupti/gpu/smoke.cu -o "$work/smoke" || exit 1
"$cuda/bin/nvcc" -O3 -lineinfo -std=c++17 -arch=sm_90 \
    producers/cuda/examples/transformer_forward.cu -lcublas -o "$work/tf" || exit 1

ms() { echo $(( $(date +%s%N) / 1000000 )); }
plain() {
  t0=$(ms); "$@" > "$work/plain.stdout" 2>&1; s=$?; t1=$(ms)
  echo "plain $*: exit $s, $((t1 - t0)) ms: $(tail -n 1 "$work/plain.stdout")"
}
inject() {
  name=$1; shift
  t0=$(ms)
  env CUDA_INJECTION64_PATH="$work/libmprof-cupti.so" \
      NVTX_INJECTION64_PATH="$work/libmprof-cupti.so" \
      MPROF_OUTPUT="$out/$name.mprof" MPROF_VERBOSE=1 "$@" > "$work/run.stdout" 2> "$work/run.stderr"
  s=$?; t1=$(ms)
  echo "$name: exit $s, $((t1 - t0)) ms: $(tail -n 1 "$work/run.stdout")"
  grep -v '^mprof-cupti: module' "$work/run.stderr" | sed 's/^/    /' | tail -n 8
  echo "    modules loaded: $(grep -c '^mprof-cupti: module' "$work/run.stderr")"
}

plain "$work/smoke" 3000
inject long "$work/smoke" 3000
plain "$work/tf" 2 20
inject cublas "$work/tf" 2 20
inject cublas-eager env CUDA_MODULE_LOADING=EAGER MPROF_NO_SASS=1 "$work/tf" 2 20
inject overflow env MPROF_PC_PERIOD=5 MPROF_PC_HW_BUFFER=16M "$work/smoke" 300
rm -rf "$work"
