#!/bin/sh
# The device header compiles with nvcc, warning-free, with the markers on
# (-DMPROF_SOURCE) and off; skips with a message when nvcc is not here.
# Usage: check_nvcc.sh NVCC|"" SOURCE_DIR BUILD_INCLUDE_DIR TMPDIR
nvcc=$1
src=$2
build_include=$3
tmp=$4
if [ -z "$nvcc" ] || ! command -v "$nvcc" >/dev/null 2>&1; then
  echo "nvcc not found: skipping the mprof_source.cuh compile check"
  exit 77
fi
mkdir -p "$tmp"
for mode in on off; do
  define=
  [ "$mode" = on ] && define=-DMPROF_SOURCE
  # shellcheck disable=SC2086
  if ! "$nvcc" -std=c++17 -arch=sm_90 $define \
    -I"$src/producers/source" -I"$src/libmprof/include" -I"$build_include" \
    -Werror all-warnings -Xcompiler -Wall,-Wextra,-Werror \
    -c -o "$tmp/header_check_$mode.o" "$src/tests/source/header_check.cu"; then
    echo "FAIL: mprof_source.cuh does not compile cleanly (markers $mode)"
    exit 1
  fi
  echo "ok: mprof_source.cuh compiles with markers $mode"
done
