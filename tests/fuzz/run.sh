#!/bin/sh
# Build the reader's libFuzzer target with clang (ASan + UBSan) in BUILD_DIR
# and fuzz for SECONDS, starting from the committed seed corpus.
# Usage: tests/fuzz/run.sh [BUILD_DIR] [SECONDS]
set -eu
root=$(cd "$(dirname "$0")/../.." && pwd)
out=${1:-build-fuzz}
seconds=${2:-60}
# Configure only, for the generated version.h.
cmake -S "$root" -B "$out" -DMPROF_WITH_CUPTI=OFF -DMPROF_WITH_GTK=OFF \
  -DMPROF_BUILD_TESTS=OFF >/dev/null
# shellcheck disable=SC2046
clang -g -O1 -std=c11 -D_GNU_SOURCE -fsanitize=fuzzer,address,undefined \
  -I"$root/libmprof/include" -I"$out/libmprof/include" -I"$root/libmprof/src" \
  $(pkg-config --cflags json-c libelf) \
  "$root/tests/fuzz/fuzz_trace.c" "$root"/libmprof/src/*.c \
  $(pkg-config --libs json-c libelf) -lm -lpthread -o "$out/fuzz_trace"
work="$out/corpus"
mkdir -p "$work"
cp "$root"/tests/fuzz/corpus/* "$work"/
if ! "$out/fuzz_trace" -max_total_time="$seconds" -max_len=65536 "$work" >"$out/fuzz.log" 2>&1; then
  tail -n 60 "$out/fuzz.log"
  echo "fuzz: the reader crashed or leaked; the input is in $out (crash-*)" >&2
  exit 1
fi
tail -n 1 "$out/fuzz.log"
