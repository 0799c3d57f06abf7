#!/bin/sh
# The block producer's patch functions build as a Compute Sanitizer tools
# patch for every architecture the producer ships (no GPU needed).
# Usage: check_blocks_patch.sh NVCC SOURCE_DIR TMPDIR
nvcc=$1
src=$2
tmp=$3
if [ -z "$nvcc" ] || ! command -v "$nvcc" >/dev/null 2>&1; then
  echo "nvcc not found; skipping"
  exit 77
fi
mkdir -p "$tmp"
set -e
"$nvcc" --fatbin --compile-as-tools-patch -Werror all-warnings \
  -gencode arch=compute_75,code=sm_75 -gencode arch=compute_90,code=sm_90 \
  -gencode arch=compute_120,code=compute_120 \
  -o "$tmp/patch.fatbin" "$src/producers/sanitizer/blocks_patch.cu"
size=$(wc -c <"$tmp/patch.fatbin")
[ "$size" -gt 1000 ] || { echo "patch fatbin is only $size bytes"; exit 1; }
echo "patch fatbin: $size bytes"
