#!/bin/sh
# Build the block producer by hand where the CUDA toolkit has
# compute-sanitizer (what CMake does when it finds the headers at configure
# time): libmprof-blocks.so and mprof-blocks-patch.fatbin into OUTDIR.
#
# Usage: producers/sanitizer/build.sh OUTDIR [CUDA_HOME]
# MPROF_SANITIZER_ROOT: the folder with include/sanitizer.h and
# libsanitizer-public.so (default CUDA_HOME/compute-sanitizer).
set -eu
out=${1:?usage: build.sh OUTDIR [CUDA_HOME]}
cuda=${2:-${CUDA_HOME:-/usr/local/cuda}}
san=${MPROF_SANITIZER_ROOT:-$cuda/compute-sanitizer}
here=$(cd "$(dirname "$0")" && pwd)
if [ ! -f "$san/include/sanitizer.h" ] || [ ! -f "$san/libsanitizer-public.so" ]; then
  echo "build.sh: $san has no include/sanitizer.h or libsanitizer-public.so;" \
    "install the CUDA toolkit's compute-sanitizer" >&2
  exit 2
fi
mkdir -p "$out"
arch=""
for a in 75 80 86 89 90 100 120; do
  arch="$arch -gencode arch=compute_$a,code=sm_$a"
done
arch="$arch -gencode arch=compute_120,code=compute_120"
# shellcheck disable=SC2086
"$cuda/bin/nvcc" --fatbin --compile-as-tools-patch $arch \
  -o "$out/mprof-blocks-patch.fatbin" "$here/blocks_patch.cu"
build() {
  ${CC:-gcc} -std=c11 -O2 -Wall -Wextra -fPIC -shared -fvisibility=hidden \
    -I"$here" -I"$here/../cupti" -I"$san/include" -I"$cuda/include" "$@" \
    -o "$out/libmprof-blocks.so" "$here/blocks.c" "$here/blocks_file.c" \
    "$here/../cupti/config.c" \
    -L"$san" -Wl,-rpath,"$san" -lsanitizer-public \
    -L"$cuda/lib64" -L"$cuda/lib64/stubs" -lcuda -lpthread -ldl -Wl,--no-undefined
}
# MPROF_BLOCKS_DIAGNOSE=1: with MPROF_VERBOSE=1 the tool also prints where
# the patch landed and whether the first launches' functions were loaded.
if [ "${MPROF_BLOCKS_DIAGNOSE:-0}" = 1 ]; then
  build -DMPROF_BLOCKS_DIAGNOSE || build
else
  build
fi
echo "build.sh: built $out/libmprof-blocks.so and $out/mprof-blocks-patch.fatbin"
