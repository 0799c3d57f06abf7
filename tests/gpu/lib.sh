# Sourced by the GPU checks (the planted-bottleneck suite's and others:
# each script that starts with `. lib.sh`).
#
# gpu_setup NAME OUTDIR BUILD_DIR: makes OUTDIR; sets $out, $build (both
# absolute), $src (the checkout) and $mprof; exits 77 (skipped) with a line when there
# is no GPU, 2 when BUILD_DIR lacks mprof or its CUPTI producer.
gpu_setup() {
  mkdir -p "$2" || exit 2
  out=$(cd "$2" && pwd)
  build=$(cd "$3" 2>/dev/null && pwd) || { echo "$1: no build folder $3" >&2; exit 2; }
  src=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
  if ! nvidia-smi -L >/dev/null 2>&1; then
    echo "$1: no GPU here (nvidia-smi -L failed); skipping the GPU checks"
    exit 77
  fi
  mprof="$build/bin/mprof"
  if [ ! -x "$mprof" ] || [ ! -e "$build/lib/libmprof-cupti.so" ]; then
    echo "$1: $mprof or its CUPTI producer is missing; build with the CUDA toolkit present" >&2
    exit 2
  fi
}

# need_ncu NAME: sets $ncu (NCU, else ncu on PATH, else
# $CUDA_HOME/bin/ncu); exits 77 (skipped) with a line when there is none.
need_ncu() {
  ncu=${NCU:-$(command -v ncu || echo "${CUDA_HOME:-/usr/local/cuda}/bin/ncu")}
  if [ ! -x "$ncu" ]; then
    echo "$1: no ncu here ($ncu); skipping (NCU names it)"
    exit 77
  fi
}

# build_suite NAME PROGRAM: $out/PROGRAM from tests/gpu/PROGRAM.cu (unless
# already there); sets $bin.
build_suite() {
  local nvcc=${NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
  bin="$out/$2"
  [ -x "$bin" ] && return 0
  "$nvcc" -O3 -arch=sm_90 -lineinfo "$src/tests/gpu/$2.cu" -lcublas \
    -o "$bin" || { echo "$1: building $2.cu failed" >&2; exit 2; }
}

# build_bottlenecks NAME: $out/bottlenecks from tests/gpu/bottlenecks.cu
# (unless already there); sets $bin.
build_bottlenecks() { build_suite "$1" bottlenecks; }

# median: the median of the numbers on standard input (one or several a
# line); nothing for none.
median() {
  tr -s ' \t' '\n' | grep . | sort -g |
    awk '{ v[NR] = $1 } END { if (NR) print v[int((NR + 1) / 2)] }'
}

# report_setup: OUTDIR/report.txt emptied; say TEXT (to it and the
# screen), check TEXT STATUS (ok, or FAIL counted in $failures).
report_setup() {
  report="$out/report.txt"
  : >"$report" || exit 2
  failures=0
}
say() { echo "$*" | tee -a "$report"; }
check() { # check TEXT RESULT(0 ok)
  if [ "$2" -eq 0 ]; then say "ok    $1"; else
    say "FAIL  $1"
    failures=$((failures + 1))
  fi
}
