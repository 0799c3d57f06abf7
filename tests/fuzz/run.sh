#!/bin/sh
# Build the libFuzzer targets with clang (ASan + UBSan) in BUILD_DIR and fuzz
# each for SECONDS, starting from its committed seed corpus:
#   fuzz_trace    the .mprof reader          (corpus/)
#   fuzz_sidecar  the TRACE.pc.json reader   (corpus_sidecar/)
#   fuzz_mkprof   the MKPROF1.2 reader       (corpus_mkprof/)
#   fuzz_source   the .source span reader    (corpus_source/)
#   fuzz_render   every tab of the viewer    (corpus_render/)
# Usage: tests/fuzz/run.sh [BUILD_DIR] [SECONDS] [TARGET...]
set -eu
root=$(cd "$(dirname "$0")/../.." && pwd)
out=${1:-build-fuzz}
seconds=${2:-60}
[ $# -ge 2 ] && shift 2 || shift $#
targets=${*:-trace sidecar mkprof source render}
# Configure only, for the generated version.h.
cmake -S "$root" -B "$out" -DMPROF_WITH_CUPTI=OFF -DMPROF_WITH_GTK=OFF \
  -DMPROF_BUILD_TESTS=OFF >/dev/null
for target in $targets; do
  extra= run_flags=
  case $target in
  trace) corpus=corpus; max_len=65536 ;;
  sidecar) corpus=corpus_sidecar; max_len=16384 ;;
  mkprof) corpus=corpus_mkprof; max_len=16384 ;;
  source) corpus=corpus_source; max_len=4096 ;;
  render) corpus=corpus_render; max_len=65536
    # mprof-render over Cairo; a trace of 64 KB must never ask for 256 MB,
    # and any undefined behaviour is a finding.
    extra="-I$root/mprof-render/include $root/mprof-render/*.c
      $(pkg-config --cflags --libs cairo fontconfig) -DMPROF_RENDER_HAVE_FONTCONFIG=1
      -fno-sanitize-recover=undefined"
    run_flags="-malloc_limit_mb=256 -timeout=30" ;;
  *) echo "fuzz: unknown target '$target' (trace, sidecar, mkprof, source, render)" >&2; exit 2 ;;
  esac
  # libmprof demangles through libstdc++ (-lstdc++). The reader checks no
  # checksum (as cmake -DMPROF_FUZZING=ON), so mutations reach its parsers.
  # shellcheck disable=SC2046
  clang -g -O1 -std=c11 -D_GNU_SOURCE -DMPROF_FUZZING_NO_CHECKSUMS -fsanitize=fuzzer,address,undefined \
    -I"$root/libmprof/include" -I"$out/libmprof/include" -I"$root/libmprof/src" \
    $(pkg-config --cflags json-c libelf zlib) \
    "$root/tests/fuzz/fuzz_$target.c" "$root"/libmprof/src/*/*.c $extra \
    $(pkg-config --libs json-c libelf zlib) -lstdc++ -lm -lpthread \
    -o "$out/fuzz_$target"
  work="$out/$corpus"
  mkdir -p "$work"
  cp "$root/tests/fuzz/$corpus"/* "$work"/
  # shellcheck disable=SC2086
  if ! "$out/fuzz_$target" -max_total_time="$seconds" -max_len="$max_len" \
    -artifact_prefix="$out/" $run_flags "$work" >"$out/fuzz_$target.log" 2>&1; then
    tail -n 60 "$out/fuzz_$target.log"
    echo "fuzz: fuzz_$target crashed or leaked; the input is in $out (crash-*)" >&2
    exit 1
  fi
  echo "fuzz_$target: $(tail -n 1 "$out/fuzz_$target.log")"
done
