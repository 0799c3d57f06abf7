#!/bin/sh
# summary and diff of the recorded samples, compared with tests/golden/, and
# what must hold in any summary, checked on every sample.
#
# The snapshots: the text and XML outputs byte for byte; the JSON outputs
# pretty-printed (json_pretty: one member per line, numbers as written), so
# that a change reads as a diff of the fields that moved. A change in what
# users read shows here; when the change is meant, regenerate with
# MPROF_GOLDEN_UPDATE=1 and commit the files with the reason.
#
# The facts: `summary --json --all` of each sample through summary_check
# (min <= median <= max per kernel, shares adding up to 100%, the kernel and
# launch counts of `mprof info`, ...): a snapshot only says that nothing
# changed, these say that it is right.
#
# A megakernel: a .mkprof as the Megakernels project's converter writes one
# (TEST_MKPROF --write-megakernels), summarised by instruction type, GPU and
# SM, with no note or advice that does not apply to it.
#
# usage: test_golden.sh MPROF_BIN SOURCE_DIR JSON_PRETTY SUMMARY_CHECK
#        TEST_MKPROF
set -u
mprof=$1
cd "$2" || exit 1
json_pretty=$3
summary_check=$4
test_mkprof=$5
golden=tests/golden
status=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

compare() { # NAME FILE: FILE must equal golden/NAME (or becomes it)
  if [ "${MPROF_GOLDEN_UPDATE:-}" = 1 ]; then
    cp "$2" "$golden/$1"
  elif ! diff -u "$golden/$1" "$2" >"$tmp/diff"; then
    echo "FAIL: $1 differs from $golden/$1:" >&2
    head -40 "$tmp/diff" >&2
    status=1
  fi
}

check() { # NAME ARGS...: the output of `mprof ARGS` must equal golden/NAME
  name=$1
  shift
  "$mprof" "$@" >"$tmp/out" 2>&1
  compare "$name" "$tmp/out"
}

check_json() { # NAME ARGS...: `mprof ARGS`, pretty-printed, as golden/NAME
  name=$1
  shift
  if ! "$mprof" "$@" >"$tmp/raw.json"; then
    echo "FAIL: mprof $* exited with $?" >&2
    status=1
    return
  fi
  if ! "$json_pretty" <"$tmp/raw.json" >"$tmp/out"; then
    echo "FAIL: mprof $* wrote no valid JSON" >&2
    status=1
    return
  fi
  compare "$name" "$tmp/out"
}

for s in demo gemm gemm_source multi_gpu transformer_forward; do
  check "$s.summary.txt" summary --human --detail --color=never "samples/$s.mprof"
done
check transformer_forward.brief.txt summary --human --color=never \
  samples/transformer_forward.mprof
check multi_gpu.brief.txt summary --human --color=never samples/multi_gpu.mprof
# Every kernel's short name, told apart from the others' (the foreach and
# elementwise kernels differ only in their template arguments).
check nvtx_step.all.txt summary --human --all --color=never \
  samples/nvtx_step.mprof
# GPU time per NVTX range, inclusive and exclusive, as a tree; with
# --kernel, each range's kernels.
check nvtx_step.ranges.txt summary --by-range --human --all --color=never \
  samples/nvtx_step.mprof
check nvtx_step.ranges-kernels.txt summary --by-range --human --all \
  --color=never --kernel 'multi_tensor|layer_norm' samples/nvtx_step.mprof
check gemm.summary.xml summary "samples/gemm.mprof"
check_json demo.summary.json summary --json "samples/demo.mprof"
check gemm_pm.summary.xml summary "samples/gemm_pm.mprof"
check_json gemm_pm.summary.json summary --json "samples/gemm_pm.mprof"
check gemm-gemm_source.diff.txt diff --human --color=never --allow-disjoint \
  samples/gemm.mprof samples/gemm_source.mprof
check demo-multi_gpu.diff.xml diff samples/demo.mprof samples/multi_gpu.mprof

# The megakernel, written where only its name shows in the output.
"$test_mkprof" --write-megakernels "$tmp/megakernels.mkprof" ||
  { echo "FAIL: writing the megakernels fixture" >&2; status=1; }
check_mk() { # NAME ARGS...: as check, on the megakernel, its folder left out
  name=$1
  shift
  "$mprof" "$@" "$tmp/megakernels.mkprof" 2>&1 | sed "s|$tmp/||g" >"$tmp/mk.out"
  compare "$name" "$tmp/mk.out"
}
check_mk megakernels.brief.txt summary --human --color=never
check_mk megakernels.summary.txt summary --human --color=never --all --detail
check_mk megakernels.summary.xml summary
"$mprof" summary --json --all "$tmp/megakernels.mkprof" >"$tmp/mk.json" &&
  "$summary_check" "$tmp/mk.json" 2 2 ||
  { echo "FAIL: the megakernel's summary does not hold up (above)" >&2; status=1; }

# The facts, on every sample: the summary against `mprof info`'s counts.
for s in demo gemm gemm_source multi_gpu transformer_forward gemm_pm \
  bottlenecks bottlenecks.pm nvtx_step; do
  counts=$("$mprof" info "samples/$s.mprof" |
    sed -n 's/^kernels  *\([0-9]*\) kernels*, \([0-9]*\) launch.*/\1 \2/p')
  if [ -z "$counts" ]; then
    echo "FAIL: mprof info samples/$s.mprof gives no kernel and launch counts" >&2
    status=1
    continue
  fi
  if ! "$mprof" summary --json --all "samples/$s.mprof" >"$tmp/$s.json"; then
    echo "FAIL: mprof summary --json --all samples/$s.mprof failed" >&2
    status=1
    continue
  fi
  # shellcheck disable=SC2086
  if ! "$summary_check" "$tmp/$s.json" $counts; then
    echo "FAIL: the summary of samples/$s.mprof does not hold up (above)" >&2
    status=1
  fi
done
# One count per thing: the PC samples `info`, `summary` and `sass --rebuild`
# give for a trace are one number (each sample once, not again under its
# X_not_issued twin; CUPTI's own total, with non-user kernels, is a counter
# named as such); `info` gives the file's format version as `--version`
# spells the one mprof writes.
writes=$("$mprof" --version | sed -n 's/.*trace format \([0-9]*\.[0-9]*\).*/\1/p')
for s in demo gemm gemm_source multi_gpu transformer_forward nvtx_step \
  bottlenecks; do
  "$mprof" info "samples/$s.mprof" >"$tmp/info.txt"
  info=$(sed -n 's/^samples  *\([0-9,]*\) PC samples .*/\1/p' "$tmp/info.txt")
  summary=$("$mprof" summary --human --color=never "samples/$s.mprof" |
    sed -n '1s/.* · \([0-9,]*\) PC samples$/\1/p')
  cp "samples/$s.mprof" "$tmp/$s.mprof"
  sass=$("$mprof" sass --rebuild --no-source --no-disassembly "$tmp/$s.mprof" |
    sed -n '1s/.* with source lines, \([0-9,]*\) PC samples$/\1/p')
  if [ -z "$info" ] || [ "$info" != "$summary" ] || [ "$info" != "$sass" ]; then
    echo "FAIL: samples/$s.mprof: PC samples: info '$info', summary" \
      "'$summary', sass --rebuild '$sass'" >&2
    status=1
  fi
  header=$(od -An -tu2 -j8 -N4 "samples/$s.mprof" | awk '{print $1 "." $2}')
  line=$(sed -n 1p "$tmp/info.txt")
  case "$line" in
  *"format $header; this mprof writes $writes)" | *"format $writes)") ;;
  *)
    echo "FAIL: samples/$s.mprof is format $header, mprof writes $writes;" \
      "info says: $line" >&2
    status=1
    ;;
  esac
done
# ... and what they say, as a user reads it.
{
  "$mprof" info samples/transformer_forward.mprof |
    grep -E '^(samples|counter    PC)'
  "$mprof" summary --human --color=never samples/transformer_forward.mprof |
    sed -n 1p
  cp samples/transformer_forward.mprof "$tmp/transformer_forward.mprof"
  (cd "$tmp" && "$mprof" sass --rebuild --no-source --no-disassembly \
    transformer_forward.mprof | sed -n 1p)
} >"$tmp/counts.txt"
compare transformer_forward.counts.txt "$tmp/counts.txt"

[ $status -eq 0 ] && echo "golden: summary and diff output unchanged, and sound"
exit $status
