#!/bin/sh
# summary and diff of the recorded samples, compared byte for byte with
# tests/golden/. A change in what users read shows here as a diff; when the
# change is meant, regenerate with MPROF_GOLDEN_UPDATE=1 and commit the
# files with the reason.
#
# usage: test_golden.sh MPROF_BIN SOURCE_DIR
set -u
mprof=$1
cd "$2" || exit 1
golden=tests/golden
status=0

check() { # NAME ARGS...: the output of `mprof ARGS` must equal golden/NAME
  name=$1
  shift
  out=$("$mprof" "$@" 2>&1)
  if [ "${MPROF_GOLDEN_UPDATE:-}" = 1 ]; then
    printf '%s\n' "$out" >"$golden/$name"
    return
  fi
  if ! printf '%s\n' "$out" | diff -u "$golden/$name" - >/dev/null; then
    echo "FAIL: mprof $* differs from $golden/$name:" >&2
    printf '%s\n' "$out" | diff -u "$golden/$name" - | head -40 >&2
    status=1
  fi
}

for s in demo gemm gemm_source multi_gpu transformer_forward; do
  check "$s.summary.txt" summary --human --detail --color=never "samples/$s.mprof"
done
check transformer_forward.brief.txt summary --human --color=never \
  samples/transformer_forward.mprof
check multi_gpu.brief.txt summary --human --color=never samples/multi_gpu.mprof
check gemm.summary.xml summary "samples/gemm.mprof"
check demo.summary.json summary --json "samples/demo.mprof"
check gemm_pm.summary.xml summary "samples/gemm_pm.mprof"
check gemm_pm.summary.json summary --json "samples/gemm_pm.mprof"
check gemm-gemm_source.diff.txt diff --human --color=never --allow-disjoint \
  samples/gemm.mprof samples/gemm_source.mprof
check demo-multi_gpu.diff.xml diff samples/demo.mprof samples/multi_gpu.mprof
[ $status -eq 0 ] && echo "golden: summary and diff output unchanged"
exit $status
