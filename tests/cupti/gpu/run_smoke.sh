#!/bin/sh
# Build libmprof-cupti.so and the smoke program with the GPU machine's own
# compilers (no CMake, json-c or CMocka needed there), run the program
# plainly and under the injection library in each PC mode, and leave the
# traces in OUTDIR for `mprof info` on any machine; logs go to stdout.
#
# usage: tests/cupti/gpu/run_smoke.sh OUTDIR [CUDA_HOME]   (from the repo root)
set -u
out=${1:?usage: run_smoke.sh OUTDIR [CUDA_HOME]}
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
gcc -std=c11 -O2 -g -fPIC -shared -D_GNU_SOURCE -Wall -Wextra \
    -fvisibility=hidden -Ilibmprof/include -I"$work/include" -Ilibmprof/src \
    -Iproducers/cupti -I"$inc" \
    libmprof/src/format/writer.c libmprof/src/format/crc32c.c libmprof/src/base/error.c \
    libmprof/src/base/status.c libmprof/src/base/map.c producers/cupti/*.c \
    "$work/pmsampling.o" \
    -Wl,--version-script=producers/cupti/exports.map -Wl,--no-undefined \
    -L"$lib" -Wl,-rpath,"$lib" -lcupti -lpthread -ldl -lstdc++ \
    -o "$work/libmprof-cupti.so" || exit 1
readelf -d "$work/libmprof-cupti.so" | grep NEEDED
"$cuda/bin/nvcc" -O2 -lineinfo -arch=sm_90 -I"$inc" \
    tests/cupti/gpu/smoke.cu -o "$work/smoke" || exit 1

inject() {
  name=$1
  shift
  start=$(date +%s%N)
  env CUDA_INJECTION64_PATH="$work/libmprof-cupti.so" \
      NVTX_INJECTION64_PATH="$work/libmprof-cupti.so" \
      MPROF_OUTPUT="$out/$name.mprof" MPROF_VERBOSE=1 "$@" \
      "$work/smoke" > "$work/$name.stdout" 2> "$work/$name.stderr"
  status=$?
  end=$(date +%s%N)
  echo "$name: exit $status, $(( (end - start) / 1000000 )) ms, stdout $(cat "$work/$name.stdout")"
  sed 's/^/    /' "$work/$name.stderr" | tail -n 30
}

"$work/smoke" > "$work/plain.stdout"
echo "plain: exit $?, stdout $(cat "$work/plain.stdout")"
inject continuous
inject serialized MPROF_PC_MODE=serialized
inject off MPROF_PC_MODE=off
inject regex MPROF_KERNEL_REGEX=spin MPROF_NO_SASS=1
for f in continuous serialized off regex; do
  cmp -s "$work/plain.stdout" "$work/$f.stdout" || echo "OUTPUT DIFFERS: $f"
done
rm -rf "$work"
