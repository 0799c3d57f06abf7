#!/bin/bash
# mprof on a real GPU: record every example, check the traces against the
# programs' own CUDA-event timings, measure capture overhead, and keep the
# traces and logs in OUTDIR. Skips (exit 77) when there is no GPU.
#
# Usage: tests/gpu/validate.sh OUTDIR [BUILD_DIR]
#   BUILD_DIR  a CMake build of mprof with the CUPTI producer and the CUDA
#              examples (default: build)
# Environment: NCU (default: ncu on PATH, else CUDA_HOME/bin/ncu);
#   VALIDATE_NCU=0 leaves the comparison with ncu out (without ncu it
#   fails otherwise).
#
# Any GPU owner can run it; docs/validation/H200.md records what it printed
# on the project's H200.
set -uo pipefail
out=${1:?usage: validate.sh OUTDIR [BUILD_DIR]}
build=${2:-build}
mkdir -p "$out" || exit 2
out=$(cd "$out" && pwd)
build=$(cd "$build" && pwd) || exit 2
src=$(cd "$(dirname "$0")/../.." && pwd)
log="$out/validate.log"
: >"$log" || exit 2

say() { echo "$*" | tee -a "$log"; }
now() { date +%s.%N; }
elapsed() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3f", b - a }'; }

if ! nvidia-smi -L >/dev/null 2>&1; then
  echo "validate: no GPU here (nvidia-smi -L failed); skipping the GPU checks"
  exit 77
fi

mprof="$build/bin/mprof"
bin="$build/bin"
for need in "$mprof" "$bin/demo" "$bin/gemm" "$bin/transformer_forward" \
  "$build/lib/libmprof-cupti.so"; do
  if [ ! -e "$need" ]; then
    echo "validate: $need is missing; build with the CUDA toolkit present" >&2
    exit 2
  fi
done

say "== machine"
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,memory.total --format=csv,noheader | tee -a "$log"
grep -E 'RmProfilingAdminOnly' /proc/driver/nvidia/params 2>/dev/null | tee -a "$log"
command -v nvdisasm >/dev/null && nvdisasm --version | tail -n 1 | tee -a "$log"
say "== mprof doctor"
"$mprof" doctor 2>&1 | tee -a "$log"

failures=0
check() { # check DESCRIPTION COMMAND...
  if "${@:2}" >>"$log" 2>&1; then say "ok    $1"; else say "FAIL  $1"; failures=$((failures + 1)); fi
}

# Record each example; keep the program's own output for the event timings.
# record_example NAME [--drop-code] -- ARGS...
record_example() {
  local name=$1
  shift
  local flags=()
  while [ "$1" != "--" ]; do flags+=("$1"); shift; done
  shift
  local t0 t1 t2 st
  # Nothing an earlier run left may be checked as this run's.
  rm -f "$out/$name".*
  t0=$(now)
  "$bin/$name" "$@" >"$out/$name.plain.txt" 2>&1
  st=$?
  t1=$(now)
  check "$name: plain run exits 0 (got $st)" test "$st" -eq 0
  say "command: mprof record ${flags[*]} -o $name.mprof -- $name $*"
  "$mprof" record "${flags[@]}" -o "$out/$name.mprof" -- "$bin/$name" "$@" \
    >"$out/$name.record.txt" 2>"$out/$name.record.err"
  local rc=$?
  t2=$(now)
  say "$name: plain $(elapsed "$t0" "$t1") s, under record $(elapsed "$t1" "$t2") s, exit $rc"
  cat "$out/$name.record.err" | tee -a "$log"
  check "$name: record exits 0" test "$rc" -eq 0
  check "$name: program output unchanged (RESULT ok)" grep -q "RESULT ok" "$out/$name.record.txt"
  "$mprof" info "$out/$name.mprof" >"$out/$name.info.txt" 2>&1
  st=$?
  check "$name: trace is valid (mprof info exit $st)" test "$st" -eq 0
  check "$name: sidecar written" test -s "$out/$name.mprof.pc.json"
  "$mprof" summary "$out/$name.mprof" >"$out/$name.summary.xml" 2>&1
  st=$?
  check "$name: summary (XML) exit $st" test "$st" -eq 0
  "$mprof" summary --human "$out/$name.mprof" >"$out/$name.summary.txt" 2>&1
  st=$?
  check "$name: summary --human exit $st" test "$st" -eq 0
  "$mprof" summary --json --all "$out/$name.mprof" >"$out/$name.summary.json" 2>&1
  st=$?
  check "$name: summary --json exit $st" test "$st" -eq 0
  say "$name: kernel durations, mprof (CUPTI) against the program's CUDA events"
  python3 "$src/tests/gpu/compare_events.py" "$out/$name.summary.json" \
    "$out/$name.record.txt" >"$out/$name.events.txt" 2>&1
  st=$?
  tee -a "$log" <"$out/$name.events.txt"
  check "$name: every kernel the program timed is in the trace with its launch count" test "$st" -eq 0
}

say "== record the examples (continuous PC sampling, default period)"
record_example demo --
record_example gemm -- 2048 20
# cuBLAS's module is ~14 MB: keep its SASS in the sidecar, not its code.
record_example transformer_forward --drop-code -- 1 10

say "== serialized PC sampling (per-launch attribution) on demo"
rm -f "$out"/demo_serialized.*
"$mprof" record --pc-mode serialized -o "$out/demo_serialized.mprof" -- "$bin/demo" \
  >"$out/demo_serialized.record.txt" 2>&1
st=$?
check "demo serialized: record exits 0 (got $st)" test "$st" -eq 0
check "demo serialized: trace is valid" "$mprof" info "$out/demo_serialized.mprof"

say "== capture overhead on a workload of at least one second (gemm --seconds 2)"
for mode in plain off continuous; do
  t0=$(now)
  if [ "$mode" = plain ]; then
    "$bin/gemm" 2048 20 --seconds 2 >"$out/overhead.$mode.txt" 2>&1
  else
    "$mprof" record -q --pc-mode "$mode" -o "$out/overhead.$mode.mprof" -- \
      "$bin/gemm" 2048 20 --seconds 2 >"$out/overhead.$mode.txt" 2>&1
  fi
  st=$?
  t1=$(now)
  check "overhead $mode: exit $st" test "$st" -eq 0
  launches=$(grep -o 'kernel=sgemm_tiled launches=[0-9]*' "$out/overhead.$mode.txt" | head -n 1)
  say "overhead $mode: wall $(elapsed "$t0" "$t1") s ($launches)"
done
rm -f "$out"/overhead.*.mprof "$out"/overhead.*.pc.json

say "== period sweep on transformer_forward: samples and drops"
for period in 10 12 14 16; do
  rm -f "$out/tf_p$period".*
  "$mprof" record -q --pc-period "$period" -o "$out/tf_p$period.mprof" -- \
    "$bin/transformer_forward" 1 10 >/dev/null 2>"$out/tf_p$period.err"
  st=$?
  check "period $period: record exits 0 (got $st)" test "$st" -eq 0
  "$mprof" info "$out/tf_p$period.mprof" 2>&1 | grep -E '^counter' | sed "s/^/period $period: /" | tee -a "$log"
  cat "$out/tf_p$period.err" >>"$log"
done
rm -f "$out"/tf_p*.mprof "$out"/tf_p*.pc.json

say "== real nvdisasm output for the parser's fixtures"
fx="$out/fixtures"
mkdir -p "$fx"
if command -v nvdisasm >/dev/null && command -v nvcc >/dev/null; then
  nvcc -cubin -arch=sm_90 -lineinfo -o "$fx/nvdisasm-kernels.cubin" "$src/tests/data/sass_kernels.cu" >>"$log" 2>&1
  nvdisasm --version >"$fx/nvdisasm-version.txt" 2>&1
  nvdisasm -c -g "$fx/nvdisasm-kernels.cubin" >"$fx/nvdisasm-kernels.txt" 2>&1
  readelf -sW "$fx/nvdisasm-kernels.cubin" | grep FUNC >"$fx/symbols.txt"
  for sym in $(awk '{print $1}' "$fx/symbols.txt" | tr -d ':'); do
    nvdisasm -c -g -fun "$sym" "$fx/nvdisasm-kernels.cubin" >"$fx/nvdisasm-fun$sym.txt" 2>&1
    nvdisasm -c -g -hex -fun "$sym" "$fx/nvdisasm-kernels.cubin" >"$fx/nvdisasm-fun$sym-hex.txt" 2>&1
    nvdisasm -c -gi -fun "$sym" "$fx/nvdisasm-kernels.cubin" >"$fx/nvdisasm-fun$sym-gi.txt" 2>&1
  done
  say "fixtures: $(ls "$fx" | wc -l) files from $(tail -n 1 "$fx/nvdisasm-version.txt")"
fi

# ncu on the same program: its hottest SASS of sgemm_tiled against mprof's
# for the same kernel (compare_ncu.py finds it by name). Without ncu this
# is a failure, unless VALIDATE_NCU=0 leaves it out.
ncu=${NCU:-$(command -v ncu || echo "${CUDA_HOME:-/usr/local/cuda}/bin/ncu")}
if [ "${VALIDATE_NCU:-1}" = 0 ]; then
  say "== ncu: left out (VALIDATE_NCU=0)"
elif [ ! -x "$ncu" ]; then
  say "FAIL  ncu not found ($ncu): the hot SASS is not compared with ncu; VALIDATE_NCU=0 leaves it out"
  failures=$((failures + 1))
else
  say "== ncu on the same gemm run, for reference (capture cost and hot SASS)"
  t0=$(now)
  timeout 300 "$ncu" --clock-control none --section SourceCounters --page source \
    --print-source sass --csv -k sgemm_tiled -c 1 "$bin/gemm" 2048 20 \
    >"$out/gemm.ncu.csv" 2>"$out/gemm.ncu.err"
  ncu_rc=$?
  t1=$(now)
  say "ncu: wall $(elapsed "$t0" "$t1") s for one profiled sgemm_tiled launch, exit $ncu_rc"
  check "ncu profiled sgemm_tiled (gemm.ncu.err)" test "$ncu_rc" -eq 0
  t0=$(now)
  "$mprof" record -q -o "$out/gemm_again.mprof" -- "$bin/gemm" 2048 20 >/dev/null 2>&1
  t1=$(now)
  say "mprof record: wall $(elapsed "$t0" "$t1") s for all 20+ launches"
  check "gemm: summary --json --hot 6" sh -c '"$1" summary --json --all --hot 6 "$2" >"$3"' \
    sh "$mprof" "$out/gemm.mprof" "$out/gemm.hot.json"
  check "gemm: the 6 hottest SASS instructions of sgemm_tiled agree with ncu" \
    python3 "$src/tests/gpu/compare_ncu.py" --kernel sgemm_tiled "$out/gemm.ncu.csv" "$out/gemm.hot.json" 6
  python3 "$src/tests/gpu/compare_ncu.py" --kernel sgemm_tiled "$out/gemm.ncu.csv" "$out/gemm.hot.json" 6 | tee -a "$log"
  rm -f "$out"/gemm_again.mprof*
fi

say "== $failures checks failed"
[ "$failures" -eq 0 ]
