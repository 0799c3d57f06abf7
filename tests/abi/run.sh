#!/bin/sh
# The ABI test (docs/ABI.md, "Structs that grow"): the same caller, built
# once against the normal headers, runs against libmprof and against a
# libmprof whose growable structs each end with one more field. Both runs
# must pass their own checks (canaries, guard pages, which library is
# loaded) and print the same values.
# usage: run.sh ABI_CALLER ABI_CALLER_GROWN SAMPLES_DIR TMP_DIR
set -eu
normal=$1
grown=$2
samples=$3
work=$4/abi.$$
rm -rf "$work"
mkdir -p "$work/run"
trap 'rm -rf "$work"' EXIT
# Each program finds its own libmprof through its RUNPATH.
unset LD_LIBRARY_PATH LD_PRELOAD
# The same scratch folder for both runs, so reports that name files agree.
"$normal" normal "$samples" "$work/run" >"$work/normal.txt"
rm -rf "$work/run" && mkdir -p "$work/run"
"$grown" grown "$samples" "$work/run" >"$work/grown.txt"
if ! cmp -s "$work/normal.txt" "$work/grown.txt"; then
  echo "the grown libmprof gave other values than libmprof:" >&2
  diff "$work/normal.txt" "$work/grown.txt" | head -40 >&2
  exit 1
fi
echo "same $(wc -l <"$work/normal.txt") values from libmprof and from one whose growable structs are longer"
