#!/bin/bash
# Self-tests of the GPU checks, without a GPU: each GPU script is run as its
# owner runs it (tests/gpu/X.sh OUTDIR BUILD_DIR) on a stand-in build whose
# recorder, producer and programs are stand-ins (tests/gpu/selftest/): once
# on a working stand-in, where it must pass, and once per broken result
# (a recorder that writes nothing or crashes, a producer that drops
# launches, ...), where it must fail and say why. A GPU check that passes
# on a broken capture proves nothing.
#
# Usage: tests/gpu/selftest.sh CHECK BUILD_DIR TMPDIR
#   CHECK      faults, verdicts, calibrate, sol_ncu, programs, blocks, capture_cost, compare_ncu
#              trace_tab, nvtx_sample, validate_multi, pm_sweep, sets,
#              validate, validate_source, suite, capture_window,
#              source_lines, ranks or empty_child
#   BUILD_DIR  this machine's build (its bin/mprof does the analysis)
# SELFTEST_KEEP=1 keeps TMPDIR/gpu-selftest-CHECK (the runs' logs) after a
# pass too. The check's GPU script is found beside this one; SELFTEST_GPU
# names another folder of them (to run an older version against the
# stand-ins).
set -uo pipefail
check=${1:?usage: selftest.sh CHECK BUILD_DIR TMPDIR}
real_build=$(cd "${2:?}" && pwd) || exit 2
tmp=${3:?}/gpu-selftest-$check
gpu=$(cd "$(dirname "$0")" && pwd)
standins=$gpu/selftest
[ -z "${SELFTEST_GPU:-}" ] || gpu=$(cd "$SELFTEST_GPU" && pwd) || exit 2
src=$(cd "$gpu/../.." && pwd)
rm -rf "$tmp" && mkdir -p "$tmp" || exit 2
tmp=$(cd "$tmp" && pwd)
failures=0
fail() { echo "FAIL: $*" >&2; failures=$((failures + 1)); }

# The stand-in build: the stand-in recorder as bin/mprof, stand-in
# programs, a producer library that is only a file (the block producer's
# stand-in is libc: `record blocks` preloads it), the real check_blocks.
fake=$tmp/build
mkdir -p "$fake/bin" "$fake/lib" "$tmp/path" "$tmp/cuda/bin" "$tmp/traces"
ln -s "$standins/standin-mprof" "$fake/bin/mprof"
for p in faults demo gemm transformer_forward multi_gpu gemm_source transformer_source; do
  printf '#!/bin/sh\nexec "%s/standin-program" %s "$@"\n' "$standins" "$p" >"$fake/bin/$p"
  chmod +x "$fake/bin/$p"
done
ln -s "$real_build/bin/check_blocks" "$fake/bin/check_blocks"
: >"$fake/lib/libmprof-cupti.so"
libc=$(ldd "$(command -v sh)" | awk '/libc\.so/ { print $3 }')
ln -s "${libc:-/lib/x86_64-linux-gnu/libc.so.6}" "$fake/lib/libmprof-blocks.so"
ln -s "$standins/nvidia-smi" "$tmp/path/nvidia-smi"
ln -s "$standins/nvcc" "$tmp/path/nvcc"
ln -s "$standins/nvcc" "$tmp/cuda/bin/nvcc"
export PATH="$tmp/path:$PATH" CUDA_HOME="$tmp/cuda" NVCC="$standins/nvcc"
export PYTHONDONTWRITEBYTECODE=1
export STANDIN_MPROF="$real_build/bin/mprof" STANDIN_TRACES="$tmp/traces" \
  STANDIN_SAMPLES="$src/samples" STANDIN_TEST_SOURCE="$real_build/bin/test_source"
mprof=$real_build/bin/mprof

# run MODE WANT PATTERN SCRIPT ARGS...: run a GPU script with the stand-ins
# in MODE; WANT pass: exit 0; WANT skip: exit 77 and PATTERN (grep -E) in
# its output; WANT fail: exit 1 and PATTERN. Output in $tmp/MODE.N.log.
runs=0
run() {
  local mode=$1 want=$2 pattern=$3 script=$4 status log
  shift 4
  runs=$((runs + 1))
  log=$tmp/$mode.$runs.log
  STANDIN_MODE=$mode timeout 120 bash "$gpu/$script" "$@" >"$log" 2>&1
  status=$?
  if [ "$want" = pass ]; then
    [ "$status" -eq 0 ] || fail "$script on a working stand-in exited $status, not 0: $(tail -n 15 "$log")"
  elif [ "$want" = skip ]; then
    [ "$status" -eq 77 ] && grep -Eq -- "$pattern" "$log" ||
      fail "$script with a part that cannot run exited $status, not 77 with '$pattern': $(tail -n 15 "$log")"
  else
    [ "$status" -eq 1 ] ||
      fail "$script on a broken capture ($mode) exited $status, not 1: $(tail -n 15 "$log")"
    grep -Eq -- "$pattern" "$log" ||
      fail "$script on a broken capture ($mode) does not say '$pattern': $(tail -n 15 "$log")"
  fi
  echo "$script, $mode: exit $status (want $want)"
}

case $check in
faults)
  # One folder for every run: a run must not be scored on what an earlier
  # one left.
  o=$tmp/out
  export FAULTS_KILL_DELAY=0.8
  FAULTS_CASES="sync fork_first abort sigkill" run good pass "" faults.sh "$o" "$fake"
  FAULTS_CASES="sync" run nothing fail "FAIL  sync: no trace" faults.sh "$o" "$fake"
  FAULTS_CASES="sync" run garbage fail "FAIL  sync: trace.mprof does not open" faults.sh "$o" "$fake"
  FAULTS_CASES="sync sigkill" run drop fail \
    "FAIL  sync: 50 launches in the trace, 200 launched" faults.sh "$o" "$fake"
  grep -Eq "FAIL  sigkill: [0-9]+ launches in the trace, [0-9]+ launched \(killed" "$tmp/drop.$runs.log" ||
    fail "faults.sh accepts a killed run that kept a quarter of its launches"
  FAULTS_CASES="sync" run crash fail "FAIL  sync: exit status 139 under mprof, 0 alone" faults.sh "$o" "$fake"
  FAULTS_CASES="sigkill" run stale fail "FAIL  sigkill: [0-9.]+ s lost between" faults.sh "$o" "$fake"
  ;;
verdicts)
  o=$tmp/out
  VERDICTS_TORCH=0 run good pass "" verdicts.sh "$o" "$fake"
  # --library on a trace without library kernels checks nothing: a failure
  python3 "$gpu/score_verdicts.py" --library "$o/bottlenecks.summary.json" >"$tmp/library.log" 2>&1
  status=$?
  [ "$status" -eq 1 ] && grep -q "FAILED: no library kernel in the trace" "$tmp/library.log" ||
    fail "score_verdicts.py --library without library kernels exited $status: $(cat "$tmp/library.log")"
  VERDICTS_TORCH=0 run nocounters fail "FAILED: the PC \+ PM set has no counters" verdicts.sh "$o" "$fake"
  grep -Eq "dram_stream .* NO COUNTERS" "$tmp/nocounters.$runs.log" ||
    fail "verdicts.sh does not name dram_stream's missing counters"
  VERDICTS_TORCH=0 run nothing fail "FAIL  mprof summary of bottlenecks failed" verdicts.sh "$o" "$fake"
  VERDICTS_TORCH=0 run crash fail "FAIL  mprof record of bottlenecks exited 139" verdicts.sh "$o" "$fake"
  # without PyTorch the library check cannot run: skipped, not passed
  if ! python3 -c 'import torch; assert torch.cuda.is_available()' 2>/dev/null; then
    run good skip "SKIP the library check" verdicts.sh "$o" "$fake"
  fi
  ;;
calibrate)
  # The stand-in records the real suite's recordings (samples/); the cases
  # are its kernels, icache_thrash with two planted problems (its fetch
  # stalls and its half-wave grid). good: timings whose gains are the
  # summary's estimates (a bound a little past it); off: the headline's fix
  # of barrier_heavy gains 30 points more than estimated (past its upper
  # bound); wronghead: the tail fix of icache_thrash gains more than its
  # headline's.
  t=$STANDIN_TRACES
  "$mprof" summary --json --all "$src/samples/bottlenecks.mprof" "$src/samples/bottlenecks.pm.mprof" \
    >"$t/calibrate.set.json" || exit 2
  printf '%s\n' "pointer_chase tail_effect" "dram_stream" "fma_chain_one_warp tail_effect" \
    "fma_independent" "bank_conflicts shared_memory" "barrier_heavy synchronisation" \
    "hot_atomics memory_throughput" "icache_thrash instruction_fetch tail_effect" \
    "smem_limited occupancy" "one_block_tail tail_effect" "tiny_kernel launch_overhead" \
    >"$t/calibrate.cases"
  python3 - "$t" <<'PY' || exit 2
import json, sys
t = sys.argv[1]
doc = json.load(open(t + "/calibrate.set.json"))
kernels = {k["short_name"]: k for k in doc["kernels"]["items"]}
def measured(dim):
    g, b = dim["gain"], dim["gain_bound"]
    if g is None or b == "unknown":
        return 0.5
    return g + 0.05 if b == "at_least" else g - 0.05 if b == "at_most" else g
for mode in ("good", "off", "wronghead"):
    lines = []
    for case in open(t + "/calibrate.cases"):
        name, *fixes = case.split()
        k = kernels[name]
        lines.append("TIME %s original 10.0000" % name)
        head = k["verdict"]["dimension"]
        gains = {d: measured(k["dimensions"][d]) for d in fixes}
        if len(fixes) > 1:  # the headline's fix gains more
            for d in fixes:
                if d != head:
                    gains[d] = gains[head] / 2
        if mode == "off" and name == "barrier_heavy":
            gains[head] += 0.30
        if mode == "wronghead" and name == "icache_thrash":
            gains = {d: (0.2 if d == head else 0.6) for d in fixes}
        for d in fixes:
            lines.append("TIME %s %s %.4f" % (name, d, 10.0 * (1 - gains[d])))
    open("%s/calibrate.%s.times" % (t, mode), "w").write("\n".join(lines) + "\n")
PY
  o=$tmp/out
  run good pass "" calibrate.sh "$o" "$fake"
  grep -q '^| barrier_heavy | synchronisation | yes | ' "$o/calibrate.md" ||
    fail "calibrate.sh wrote no markdown row for barrier_heavy: $(head -c 600 "$o/calibrate.md")"
  python3 -c 'import json, sys; d = json.load(open(sys.argv[1])); sys.exit(0 if d["rows"] and not d["failures"] else 1)' \
    "$o/calibrate.json" || fail "calibrate.json has no rows or lists failures"
  run off fail "FAILED: barrier_heavy: the synchronisation fix gains [0-9.]+%, estimated" calibrate.sh "$o" "$fake"
  run wronghead fail "FAILED: icache_thrash: headline instruction_fetch, expected tail_effect \(larger measured gain\)" \
    calibrate.sh "$o" "$fake"
  run nothing fail "FAIL  mprof summary of the calibration traces failed" calibrate.sh "$o" "$fake"
  run crash fail "FAIL  mprof record of calibrate exited 139" calibrate.sh "$o" "$fake"
  ;;
sol_ncu)
  # score_sol.py, the scoring of sol_ncu.sh, on ncu pages made from the
  # recorded suite's own speed of light (samples/, PM-sampled with the
  # default counters): DRAM and L2 sectors one point off, SMs as
  # measured, barrier_heavy's compute bound on the ADU pipe (its breakdown
  # beside the page: scored less that pipe), and once with DRAM 20 points
  # off. The recording has no L1/TEX throughput, which the full check asks
  # for.
  "$mprof" summary --json --all "$src/samples/bottlenecks.mprof" "$src/samples/bottlenecks.pm.mprof" \
    >"$tmp/set.json" || exit 2
  python3 - "$tmp" <<'PY' || exit 2
import csv, json, sys
t = sys.argv[1]
kernels = {k["short_name"]: k for k in json.load(open(t + "/set.json"))["kernels"]["items"]}
for mode, off in (("good", 1.0), ("off", 20.0)):
    for name in ("dram_stream", "barrier_heavy"):
        th = kernels[name]["throughput"]
        pct = lambda key: 100.0 * (th.get(key) or 0.0)
        busiest = max(pct("issue"), pct("tensor"))
        adu = name == "barrier_heavy"
        values = {"DRAM Throughput": pct("dram") + off,
                  "Elapsed Cycles": 1000000.0,
                  "SM Active Cycles": 10000.0 * pct("sm_active"),
                  "Compute (SM) Throughput": busiest + (20.0 if adu else 0.0),
                  "Memory Throughput": pct("dram") + off,
                  "L2 Cache Throughput": 85.0,
                  "L1/TEX Cache Throughput": 17.0,
                  "lts__t_sectors.avg.pct_of_peak_sustained_elapsed":
                      pct("l2") + off}
        with open("%s/%s.%s.details.txt" % (t, name, mode), "w") as f:
            f.write("    Table Name : Compute Throughput Breakdown\n")
            if adu:
                f.write("    SM: Inst Executed Pipe Adu   %%   %.2f\n"
                        % (busiest + 20.0))
            f.write("    SM: Issue Active   %%   %.2f\n" % busiest)
            f.write("    Table Name : Memory Throughput Breakdown\n"
                    "    DRAM: Cycles Active   %   99.00\n")
        with open("%s/%s.%s.csv" % (t, name, mode), "w", newline="") as f:
            w = csv.writer(f)
            w.writerow(["ID", "Kernel Name", "Section Name", "Metric Name",
                        "Metric Unit", "Metric Value"])
            for metric, value in values.items():
                w.writerow(["0", name + "(float*, int)", "GPU Speed Of Light Throughput",
                            metric, "%", "{:,.2f}".format(value)])
PY
  # sol MODE WANT PATTERN [OPTIONS]: score_sol.py's status and words
  sol() {
    local mode=$1 want=$2 pattern=$3 status
    shift 3
    python3 "$gpu/score_sol.py" "$@" "dram_stream=$tmp/dram_stream.$mode.csv=$tmp/set.json" \
      "barrier_heavy=$tmp/barrier_heavy.$mode.csv=$tmp/set.json" >"$tmp/sol.$mode.log" 2>&1
    status=$?
    [ "$status" -eq "$want" ] && grep -Eq -- "$pattern" "$tmp/sol.$mode.log" ||
      fail "score_sol.py ($mode $*) exited $status, not $want with '$pattern': $(cat "$tmp/sol.$mode.log")"
  }
  sol good 0 "\| dram_stream \| DRAM \| [0-9.]+% \| [0-9.]+% \| pass \|" --quantities dram,l2_sectors,sm,compute
  grep -Eq "\| barrier_heavy \| compute \(ncu's less ADU/CBU\) \| [0-9.]+% \| [0-9.]+% \| pass \|" "$tmp/sol.good.log" &&
    grep -Eq "\| dram_stream \| L2 sectors \| [0-9.]+% \| [0-9.]+% \| pass \|" "$tmp/sol.good.log" ||
    fail "score_sol.py did not score L2 sectors, or compute less the ADU pipe: $(cat "$tmp/sol.good.log")"
  sol good 1 "FAILED: dram_stream: mprof sampled no L1/shared" --quantities dram,l1tex
  sol off 1 "FAILED: dram_stream: DRAM [0-9.]+% in mprof, [0-9.]+% in ncu" --quantities dram
  # --report: the same comparison, no FAILED line (suite.sh collects
  # those), and exit 0.
  sol off 0 "^off: dram_stream: DRAM [0-9.]+% in mprof, [0-9.]+% in ncu" --quantities dram --report
  grep -q "FAILED" "$tmp/sol.off.log" && fail "score_sol.py --report wrote FAILED: $(cat "$tmp/sol.off.log")"
  # L2 throughput, when a summary has it, is scored against ncu's L2 Cache
  # Throughput.
  python3 - "$tmp" <<'PY' || exit 2
import json, sys
t = sys.argv[1]
d = json.load(open(t + "/set.json"))
for k in d["kernels"]["items"]:
    k["throughput"]["l2_throughput"] = 0.812
json.dump(d, open(t + "/l2.json", "w"))
PY
  python3 "$gpu/score_sol.py" --quantities dram,l2 \
    "dram_stream=$tmp/dram_stream.good.csv=$tmp/l2.json" >"$tmp/sol.l2.log" 2>&1 &&
    grep -q "| dram_stream | L2 | 81.2% | 85.0% | pass |" "$tmp/sol.l2.log" &&
    grep -Eq "\| dram_stream \| DRAM \| [0-9.]+% \| [0-9.]+% \| pass \|" "$tmp/sol.l2.log" ||
    fail "score_sol.py did not score a summary's L2 throughput: $(cat "$tmp/sol.l2.log")"
  echo "not ncu" >"$tmp/bad.csv"
  python3 "$gpu/score_sol.py" "x=$tmp/bad.csv=$tmp/set.json" >"$tmp/sol.bad.log" 2>&1
  status=$?
  [ "$status" -eq 2 ] && grep -q "no 'Metric Name' column" "$tmp/sol.bad.log" ||
    fail "score_sol.py on a page that is not ncu's exited $status: $(cat "$tmp/sol.bad.log")"
  runs=5
  ;;
programs)
  # The program's stand-in states the launches of a synthetic trace (with
  # made-up SASS); drop and nosamples are that trace recorded badly.
  t=$STANDIN_TRACES
  "$mprof" synth -o "$t/programs.good.mprof" --launches 300 --kernels 3 --seed 4 --sidecar >/dev/null &&
    "$mprof" synth -o "$t/programs.drop.mprof" --launches 75 --kernels 3 --seed 4 --sidecar >/dev/null &&
    "$mprof" synth -o "$t/programs.nosamples.mprof" --launches 300 --kernels 3 --seed 4 --sidecar --pcs 0 >/dev/null &&
    "$mprof" summary --json --all "$t/programs.good.mprof" >"$t/programs.json" || exit 2
  python3 -c '
import json, sys
for k in json.load(open(sys.argv[1]))["kernels"]["items"]:
    if " " not in k["short_name"]:
        print("launches", k["short_name"], k["launches"])' "$t/programs.json" >"$t/programs.claims" || exit 2
  o=$tmp/out
  export PROGRAMS=edges
  run good pass "" programs.sh "$o" "$fake"
  run drop fail "FAILED: layernorm_fwd: [0-9]+ launches in the trace, 116 made" programs.sh "$o" "$fake"
  run nosamples fail "FAILED: no PC samples in the trace" programs.sh "$o" "$fake"
  run nothing fail "FAIL  programs: mprof summary of edges failed" programs.sh "$o" "$fake"
  run crash fail "FAIL  programs: edges exited 0 alone, 139 under mprof" programs.sh "$o" "$fake"
  # a program that states nothing is not a pass
  : >"$t/programs.claims"
  run good fail "FAILED: the program states no launch count" programs.sh "$o" "$fake"
  ;;
blocks)
  # The block producer's stand-in writes tests/test_blocks.c's fixture:
  # 3 launches of tail_spin, every block (good); launch 1 short of a block
  # and a fourth launch without any (drop), as a full buffer leaves them.
  t=$STANDIN_TRACES
  "$real_build/bin/test_blocks" --write-source-complete "$t/blocks.good.source" &&
    "$real_build/bin/test_blocks" --write-source "$t/blocks.drop.source" || exit 2
  device='blocks.producer compute-sanitizer
blocks.device.0.name NVIDIA H200
blocks.device.0.sm_count 132
blocks.device.0.warp_size 32'
  printf '%s\nblocks.blocks 399\n' "$device" >"$t/blocks.good.source.meta"
  printf '%s\nblocks.blocks 398\nblocks.overflow 133\n' "$device" >"$t/blocks.drop.source.meta"
  o=$tmp/out
  export BLOCKS_PARTS="producer probe examples"
  run good pass "" blocks.sh "$o" "$fake"
  cp "$o/probe.mprof" "$tmp/probe.mprof" || fail "blocks.sh wrote no probe.mprof"
  run nothing fail "FAIL  record: exit 1" blocks.sh "$o" "$fake"
  grep -q "FAIL  preload: the producer's .* does not open" "$tmp/nothing.$runs.log" ||
    fail "blocks.sh accepts a preloaded producer that wrote nothing"
  run drop fail "FAIL  probe: TOTAL launches 3, failing [1-9]" blocks.sh "$o" "$fake"
  grep -q "FAIL  inject: the producer counted 398 blocks, the probe launched 399" "$tmp/drop.$runs.log" ||
    fail "blocks.sh accepts an injected producer that lost a block"
  run garbage fail "FAIL  demo: exit" blocks.sh "$o" "$fake"
  run crash fail "FAIL  record: exit 139" blocks.sh "$o" "$fake"
  # check_blocks itself: a trace without launches, a kernel that is not
  # there, a launch count that differs, an unknown option
  "$real_build/bin/check_blocks" "$tmp/probe.mprof" --shared no_such_kernel 0 >"$tmp/cb.log" 2>&1
  [ $? -eq 1 ] && grep -q "SHARED: no kernel named no_such_kernel" "$tmp/cb.log" ||
    fail "check_blocks --shared passes when no kernel matches: $(cat "$tmp/cb.log")"
  "$real_build/bin/check_blocks" "$tmp/probe.mprof" --tail no_such_kernel >"$tmp/cb.log" 2>&1
  [ $? -eq 1 ] && grep -q "TAIL: no kernel named no_such_kernel" "$tmp/cb.log" ||
    fail "check_blocks --tail passes when no kernel matches: $(cat "$tmp/cb.log")"
  "$real_build/bin/check_blocks" "$tmp/probe.mprof" --launches 4 >"$tmp/cb.log" 2>&1
  [ $? -eq 1 ] && grep -q "LAUNCHES: 3 in the trace, 4 launched" "$tmp/cb.log" ||
    fail "check_blocks --launches passes on a trace short of a launch: $(cat "$tmp/cb.log")"
  "$real_build/bin/check_blocks" "$tmp/probe.mprof" --step 32 >"$tmp/cb.log" 2>&1
  [ $? -eq 2 ] || fail "check_blocks accepts an unknown option: $(cat "$tmp/cb.log")"
  ;;
capture_cost)
  # The stand-in programs report a per-launch cost of 0.5 us and a 0.5%
  # slowdown under the recorder, and sleep 1 s under the floor and the
  # recorder alike; slow makes them 3 us and 5.5%.
  t=$STANDIN_TRACES
  "$mprof" synth -o "$t/small_kernels.good.mprof" --launches 200 --kernels 3 --sidecar >/dev/null &&
    "$mprof" synth -o "$t/empty_kernels.good.mprof" --launches 200 --kernels 1 >/dev/null || exit 2
  bin=$tmp/costbin
  mkdir -p "$bin" && : >"$bin/libfloor.so" || exit 2
  for p in small_kernels empty_kernels; do
    "$standins/nvcc" -o "$bin/$p" "$p.cu" || exit 2
  done
  o=$tmp/out
  export COST_BIN=$bin COST_RUNS=1 COST_EMPTY_RUNS=1 COST_SKIP_NCU=1 COST_SKIP_TORCH=1 COST_SKIP_LOOP=1
  run good pass "" capture_cost.sh "$o" "$fake"
  grep -q "ok     per launch <= 1 us .*record adds 0.500 us" "$o/cost.txt" ||
    fail "capture_cost.sh did not hold the per-launch cost to its target"
  run slow fail "MISSED per launch <= 1 us .*record adds 3.000 us, the floor 0.500 us" capture_cost.sh "$o" "$fake"
  grep -q "MISSED kernel slowdown <= 1% .*record +5.50%" "$tmp/slow.$runs.log" ||
    fail "capture_cost.sh accepts a 5.5% kernel slowdown"
  COST_SKIP_EMPTY=1 COST_SKIP_STEADY=1 run crash fail "FAIL  sk_record_1 exited 139" capture_cost.sh "$o" "$fake"
  COST_SKIP_EMPTY=1 COST_SKIP_STEADY=1 run nothing fail "FAIL  sk_record_1 left no trace" capture_cost.sh "$o" "$fake"
  grep -q "MISSED wall: no figure sk_sass_missing" "$tmp/nothing.$runs.log" ||
    fail "capture_cost.sh does not miss the SASS figure of a run without a trace"
  # check_cost.py alone: a part that ran but left no figure is a miss
  printf 'per_launch_record_us 0.5
skipped wall
skipped ncu
skipped steady
skipped torch
skipped loop
' >"$tmp/part.figures"
  python3 "$gpu/check_cost.py" "$tmp/part.figures" >"$tmp/check_cost.log" 2>&1
  [ $? -eq 1 ] && grep -q "MISSED per_launch: no figure per_launch_floor_us" "$tmp/check_cost.log" ||
    fail "check_cost.py passes a part without its figures: $(cat "$tmp/check_cost.log")"
  # the in-loop targets: 2% outside a window and 1.5x the floor inside miss
  printf 'loop_plain_ms 10
loop_floor_ms 11
loop_record_ms 11.5
loop_outside_ms 10.2
skipped per_launch
skipped wall
skipped ncu
skipped steady
skipped torch
' >"$tmp/loop.figures"
  python3 "$gpu/check_cost.py" "$tmp/loop.figures" >"$tmp/check_loop.log" 2>&1
  [ $? -eq 1 ] && grep -q "MISSED PyTorch in-loop time outside a window <= 1%: +2.00%" "$tmp/check_loop.log" &&
    grep -q "MISSED PyTorch in-loop time added <= 1.2x the floor's: record +1.500 ms a step, floor +1.000 ms a step" "$tmp/check_loop.log" ||
    fail "check_cost.py passes in-loop costs over their targets: $(cat "$tmp/check_loop.log")"
  sed -i 's/^loop_record_ms .*/loop_record_ms 11.1/; s/^loop_outside_ms .*/loop_outside_ms 10.05/' "$tmp/loop.figures"
  python3 "$gpu/check_cost.py" "$tmp/loop.figures" >"$tmp/check_loop.log" 2>&1 ||
    fail "check_cost.py misses in-loop costs within their targets: $(cat "$tmp/check_loop.log")"
  ;;
compare_ncu)
  # ncu's Source page as CSV for the second kernel of a synthetic trace
  # (not the summary's first: the one ncu profiled is found by name), its
  # warp-stall samples in mprof's order; then with another order, with no
  # samples, and a kernel name the summary does not have.
  "$mprof" synth -o "$tmp/t.mprof" --launches 300 --kernels 3 --seed 4 --sidecar >/dev/null &&
    "$mprof" summary --json --all --hot 6 "$tmp/t.mprof" >"$tmp/t.json" || exit 2
  python3 - "$tmp/t.json" "$tmp" <<'PY' || exit 2
import json, sys
doc = json.load(open(sys.argv[1]))
items = doc["kernels"]["items"]
# synth gives every kernel the same hot offsets: the first kernel's move
# on by 0x1000, as another kernel's would be elsewhere
for h in items[0]["hot"]["instructions"]:
    h["offset"] = hex(int(str(h["offset"]), 0) + 0x1000)
json.dump(doc, open(sys.argv[1], "w"))
k = items[1]
hot = sorted(k["hot"]["instructions"], key=lambda h: -h["share"])
offsets = [int(str(h["offset"]), 0) for h in hot]
base = 0x7F0000001000
def write(name, samples, last=1):
    # every instruction from the function's first (offset 0) to its EXIT
    with open(f"{sys.argv[2]}/{name}.csv", "w") as f:
        f.write('==PROF== Connected to process 1\n')
        f.write('"Address","Source","Warp Stall Sampling (All Samples)"\n')
        f.write(f'"{base:#x}","MOV R1, c[0x0][0x28]","0"\n')
        for off, n in samples:
            f.write(f'"{base + off:#x}","INSTR","{n}"\n')
        f.write(f'"{base + 0x4000:#x}","EXIT","{last}"\n')
write("good", [(o, 1000 - 10 * i) for i, o in enumerate(offsets)])
# the coldest of mprof's six ranked first by ncu, with three of its own
write("differ", [(offsets[-1], 5000)] + [(0x3000 + 16 * i, 4000) for i in range(3)]
      + [(o, 100) for o in offsets[:-1]])
write("nosamples", [(o, 0) for o in offsets], last=0)
open(f"{sys.argv[2]}/kernel", "w").write(k["short_name"])
open(f"{sys.argv[2]}/first", "w").write(items[0]["short_name"])
PY
  name=$(cat "$tmp/kernel")
  # cmp_ncu WANT PATTERN CSV [NAME]: compare_ncu.py's status and words
  cmp_ncu() {
    local log=$tmp/$3.${4:-$name}.log
    python3 "$gpu/compare_ncu.py" --kernel "${4:-$name}" "$tmp/$3.csv" "$tmp/t.json" 5 >"$log" 2>&1
    local status=$?
    [ "$status" -eq "$1" ] && grep -Eq -- "$2" "$log" ||
      fail "compare_ncu.py on $3 (kernel ${4:-$name}) exited $status, not $1 with '$2': $(cat "$log")"
    runs=$((runs + 1))
  }
  cmp_ncu 0 "the 5 hottest instructions agree" good
  cmp_ncu 1 "the 5 hottest instructions DIFFER" differ
  cmp_ncu 1 "FAILED: ncu sampled no warp stalls" nosamples
  cmp_ncu 1 "FAILED: 0 kernels in .* are named no_such_kernel" good no_such_kernel
  # the summary's first kernel is not the one ncu profiled
  cmp_ncu 1 "the 5 hottest instructions DIFFER" good "$(cat "$tmp/first")"
  python3 "$gpu/compare_ncu.py" "$tmp/good.csv" "$tmp/t.json" 5 >/dev/null 2>&1
  [ $? -eq 2 ] || fail "compare_ncu.py without --kernel does not refuse to guess the kernel"
  ;;
trace_tab)
  # The recordings are the committed samples (gemm_pm: 40 launches with PM
  # samples); drop is gemm recorded short of 30 launches, without PM.
  t=$STANDIN_TRACES
  cp "$src/samples/gemm_pm.mprof" "$t/gemm.good.mprof" &&
    cp "$src/samples/demo.mprof" "$t/demo.good.mprof" &&
    "$mprof" synth -o "$t/gemm.drop.mprof" --launches 10 --kernels 1 >/dev/null || exit 2
  ln -s "$real_build/bin/test_render_trace" "$fake/bin/test_render_trace"
  o=$tmp/out
  export TRACE_TAB_EXTRA="$src/samples/nvtx_step.mprof"
  run good pass "" trace_tab.sh "$o" "$fake"
  run drop fail "FAIL  gemm_pm.mprof: 10 launches in the trace, 40 made" trace_tab.sh "$o" "$fake"
  run nothing fail "FAIL  record gemm_pm left a trace that opens" trace_tab.sh "$o" "$fake"
  run garbage fail "FAIL  record demo left a trace that opens" trace_tab.sh "$o" "$fake"
  run crash fail "FAIL  record gemm_pm: exit 139" trace_tab.sh "$o" "$fake"
  ;;
nvtx_sample)
  # The stand-in python has PyTorch and plays nvtx_step.py: the committed
  # sample (4 steps). A stand-in cc builds the NVTX helper (an empty file).
  printf '#!/bin/sh\nwhile [ $# -gt 1 ]; do [ "$1" = -o ] && : >"$2"; shift; done\n' >"$tmp/path/cc" &&
    chmod +x "$tmp/path/cc" || exit 2
  o=$tmp/out
  export PYTHON=$standins/python NVTX_SKIP_COST=1
  run good pass "" nvtx_sample.sh "$o" "$fake"
  # a trace short of a step: the loop ran 5
  NVTX_STEPS=5 run drop fail "FAIL  'step N' ranges: 4 in the trace, 5 steps run" nvtx_sample.sh "$o" "$fake"
  run nothing fail "FAIL  no trace written" nvtx_sample.sh "$o" "$fake"
  run garbage fail "FAIL  mprof info exits 0" nvtx_sample.sh "$o" "$fake"
  run crash fail "FAIL  record exited 0 \(got 139\)" nvtx_sample.sh "$o" "$fake"
  # without PyTorch: skipped, not passed
  if ! python3 -c 'import torch' 2>/dev/null; then
    PYTHON=python3 run good skip "has no PyTorch; skipping" nvtx_sample.sh "$o" "$fake"
  fi
  ;;
validate_multi)
  # The stand-in multi_gpu writes the committed sample (one GPU, 160
  # launches) and states the launches and event means of that run.
  o=$tmp/out
  run good pass "" validate_multi.sh "$o" "$fake"
  run drop fail "FAIL  saxpy on device 0: 40 launches in the trace, 80 timed" validate_multi.sh "$o" "$fake"
  run nothing fail "FAIL  all: trace is valid" validate_multi.sh "$o" "$fake"
  run garbage fail "FAIL  all: summary --json exit" validate_multi.sh "$o" "$fake"
  run crash fail "FAIL  all: record exits 0" validate_multi.sh "$o" "$fake"
  ;;
pm_sweep)
  # bottlenecks as in verdicts: the committed suite's PC and PM runs;
  # nocounters is a PM-sampled run without counters
  o=$tmp/out
  export PM_INTERVALS=20us PM_TORCH=0
  run good pass "" pm_sweep.sh "$o" "$fake"
  run nocounters fail "FAIL  20us: no PM samples in pm_20us.mprof" pm_sweep.sh "$o" "$fake"
  grep -q "FAIL  exit default: no PM samples" "$tmp/nocounters.$runs.log" ||
    fail "pm_sweep.sh accepts an exit run without PM samples"
  run nothing fail "FAIL  pm_sweep: the PC-sampled run left no trace that opens" pm_sweep.sh "$o" "$fake"
  run crash fail "FAIL  pm_sweep: the PC-sampled run exited 139" pm_sweep.sh "$o" "$fake"
  ;;
sets)
  # faults.sh's fork cases on the stand-ins (fork_first: two traces, a set);
  # the block/CUPTI pair needs gemm under both producers: left out
  o=$tmp/out
  export SETS_CASES="fork fork_first" SETS_PAIR=0
  run good pass "" sets.sh "$o" "$fake"
  grep -q "| fork_first | 2 | 200 / 200 |" "$o/sets.md" ||
    fail "sets.sh does not count fork_first's 200 launches in its 2 traces: $(cat "$o/sets.md")"
  run drop fail "FAIL: faults.sh \(fork fork_first\) exited 1" sets.sh "$o" "$fake"
  run nothing fail "FAIL: fork_first: no trace in" sets.sh "$o" "$fake"
  run crash fail "FAIL: fork: no trace in" sets.sh "$o" "$fake"
  # without PyTorch, the default cases cannot all run: skipped, not passed
  if ! python3 -c 'import torch; assert torch.cuda.is_available()' 2>/dev/null; then
    SETS_CASES= run good skip "SKIP torch_two_ranks and torch_dataloader" sets.sh "$o" "$fake"
  fi
  ;;
validate)
  # The examples' stand-ins write the committed samples and state the
  # launches and means of their kernels there (as EVENT_TIMING lines); the
  # ncu part has its own self-test (compare_ncu).
  t=$STANDIN_TRACES
  for p in demo gemm transformer_forward; do
    cp "$src/samples/$p.mprof" "$t/$p.good.mprof" &&
      cp "$src/samples/$p.mprof.pc.json" "$t/$p.good.mprof.pc.json" &&
      "$mprof" summary --json --all "$t/$p.good.mprof" >"$t/$p.json" || exit 2
    python3 -c '
import json, re, sys
# transformer_forward 1 10: 10 timed passes after an untimed one
passes, timed = map(int, sys.argv[2].split())
for k in json.load(open(sys.argv[1]))["kernels"]["items"]:
    # the examples own kernels (cuBLAS kernels they time as cublas:NAME)
    name = k["name"].split("(")[0]
    if "(" in k["name"] and re.fullmatch(r"[A-Za-z_]\w*", name):
        print("EVENT_TIMING kernel=%s launches=%d mean_us=%.3f" % (name, k["launches"] * timed // passes, k["mean_ns"] / 1000))
if passes != timed:
    print("warmup: %d untimed forward pass (0 kernel launches + 0 cuBLAS calls) before the timed ones" % (passes - timed))
    print("transformer_forward: %d timed passes, 1.000 ms per pass (wall)" % timed)' \
      "$t/$p.json" "$([ $p = transformer_forward ] && echo 11 10 || echo 1 1)" >"$t/$p.events" || exit 2
  done
  o=$tmp/out
  export VALIDATE_NCU=0
  run good pass "" validate.sh "$o" "$fake"
  run drop fail "FAIL  demo: every kernel the program timed is in the trace with its launch count" validate.sh "$o" "$fake"
  grep -Eq "FAILED: saxpy: 10 launches in the trace, 20 timed" "$tmp/drop.$runs.log" ||
    fail "validate.sh does not say which kernel lost launches"
  run nothing fail "FAIL  demo: trace is valid" validate.sh "$o" "$fake"
  run garbage fail "FAIL  gemm: summary --json exit" validate.sh "$o" "$fake"
  run crash fail "FAIL  demo: record exits 0" validate.sh "$o" "$fake"
  # compare_events.py alone: a program that timed nothing is no match
  : >"$tmp/none.txt"
  python3 "$gpu/compare_events.py" "$t/demo.json" "$tmp/none.txt" >"$tmp/events.log" 2>&1
  [ $? -eq 1 ] && grep -q "FAILED: the program printed no EVENT_TIMING line" "$tmp/events.log" ||
    fail "compare_events.py passes a program that timed nothing: $(cat "$tmp/events.log")"
  ;;
validate_source)
  # The instrumented programs' stand-ins write test_source's run (a trace
  # and its .source file, 17 spans overflowed) and state the spans they
  # made; the stand-in recorder merges them as record source does.
  o=$tmp/out
  run good pass "" validate_source.sh "$o" "$fake"
  grep -q "ok    overflow: the program warned on stderr" "$tmp/good.$runs.log" ||
    fail "validate_source.sh did not see the overflow warning"
  run nothing fail "FAIL  gemm_source: trace is valid" validate_source.sh "$o" "$fake"
  grep -q "FAIL  gemm_source: .source file written" "$tmp/nothing.$runs.log" ||
    fail "validate_source.sh accepts a run without its .source file"
  run crash fail "FAIL  gemm_source: record source exits 0 \(exit 139\)" validate_source.sh "$o" "$fake"
  ;;
suite)
  # Stand-in checks: one passes, one fails (a FAIL line), one skips, one
  # outlives its limit. The table must say so and the suite fail; a suite
  # of skips alone is a skip; a budget spent lists the rest as not run.
  d=$tmp/checks
  mkdir -p "$d" || exit 2
  printf '#!/bin/bash\necho "ok    fine"\n' >"$d/good.sh"
  printf '#!/bin/bash\necho "FAIL  launches: 3 of 200"\nexit 1\n' >"$d/bad.sh"
  printf '#!/bin/bash\necho "no GPU here; skipping"\nexit 77\n' >"$d/none.sh"
  printf '#!/bin/bash\nsleep 30\n' >"$d/hang.sh"
  o=$tmp/out
  export GPU_SUITE_DIR=$d
  GPU_SUITE_LIMIT=2 run good fail "\| bad \| failed \(1\) \| [0-9]+ \| FAIL  launches: 3 of 200" suite.sh "$o" "$fake" good bad none hang
  for row in "| good | passed |" "| none | skipped |" "| hang | timed out |" "passed 1, failed 2, skipped 1 of 4"; do
    grep -qF "$row" "$o/suite.md" || fail "suite.sh's table lacks '$row': $(cat "$o/suite.md")"
  done
  run good skip "passed 0, failed 0, skipped 1 of 1" suite.sh "$o" "$fake" none
  run good pass "" suite.sh "$o" "$fake" good
  GPU_SUITE_BUDGET=1 GPU_SUITE_MIN=5 run good fail "\| good \| not run \| 0 \| the budget of 1 s was spent" suite.sh "$o" "$fake" good
  bash "$gpu/suite.sh" "$o" "$fake" no_such_check >/dev/null 2>&1
  [ $? -eq 2 ] || fail "suite.sh runs a check that does not exist"
  unset GPU_SUITE_DIR
  ;;
capture_window)
  # Its own stand-in recorder (capture_mprof) writes the trace of each
  # window asked for without running the program; drop loses a launch of
  # each window.
  cw=$tmp/capture-build
  mkdir -p "$cw/bin" "$cw/lib" && ln -s "$standins/capture_mprof" "$cw/bin/mprof" &&
    : >"$cw/lib/libmprof-cupti.so" || exit 2
  export CAPTURE_STANDIN_TRACE="$real_build/bin/capture_standin_trace" \
    PYTHON="$standins/capture_python" CAPTURE_COST_ROUNDS=2
  o=$tmp/out
  run good pass "" capture_window.sh "$o" "$cw"
  grep -q "ms/step outside the window" "$tmp/good.$runs.log" ||
    fail "capture_window.sh does not report the step time outside the window"
  grep -q "plain_again  *before the window 0.9000 (+0.0%)  after the window 1.1000 (+0.0%)" "$tmp/good.$runs.log" ||
    fail "capture_window.sh does not report the median step times before and after the window"
  run drop fail "FAIL  nvtx: the trace holds 27 launches, not 4 steps x 7 = 28" \
    capture_window.sh "$o" "$cw"
  grep -q "FAIL  kernels: the trace holds 9 launches" "$tmp/drop.$runs.log" ||
    fail "capture_window.sh accepts a kernel window short of a launch"
  ;;
source_lines)
  # source_lines.sh needs nvcc and a GPU; its checker, check_lines.py, is
  # run here on the committed nvcc fixture (tests/data/lines) with samples
  # planted by test_lines, its hot line marked '@hot lines_inline'.
  lines=$tmp/lines
  mkdir -p "$lines/src/lines" "$lines/alone"
  cp "$src/tests/data/lines/lines_kernels.cu" "$lines/src/lines/"
  sed 's|// @square$|// @square @hot lines_inline|' "$src/tests/data/lines/lines_math.cuh" \
    >"$lines/src/lines/lines_math.cuh"
  MPROF_SOURCE_DIR=$src "$real_build/bin/test_lines" --write-trace "$lines/t.mprof" ||
    fail "test_lines --write-trace exited $?"
  cp "$lines/t.mprof" "$lines/bare.mprof"
  "$mprof" sass --source-root "$lines/src" "$lines/t.mprof" >/dev/null 2>&1 || fail "mprof sass exited $?"
  cp "$lines/t.mprof" "$lines/alone/"
  "$mprof" summary "$lines/alone/t.mprof" --by-line --all --json >"$lines/good.json" || fail "summary exited $?"
  "$mprof" summary "$lines/bare.mprof" --by-line --all --json >"$lines/bare.json" || fail "summary exited $?"
  # checker WANT PATTERN ARGS...: check_lines.py's exit status and output.
  checker() {
    local want=$1 pattern=$2 status
    shift 2
    runs=$((runs + 1))
    python3 "$gpu/check_lines.py" "$@" >"$tmp/check.$runs.log" 2>&1
    status=$?
    [ "$status" -eq "$want" ] || fail "check_lines.py $* exited $status, not $want: $(cat "$tmp/check.$runs.log")"
    grep -Eq -- "$pattern" "$tmp/check.$runs.log" ||
      fail "check_lines.py $* does not say '$pattern': $(cat "$tmp/check.$runs.log")"
    echo "check_lines.py $*: exit $status (want $want)"
  }
  checker 0 "ok    lines_inline: lines_math.cuh:8 holds 81.2% of its samples \(code embedded\)" \
    --embedded "$lines/good.json" "$lines/src/lines/lines_math.cuh"
  # The planted line elsewhere: the hottest line is not it.
  sed 's| @hot lines_inline||; s|// @poly-first|// @poly-first @hot lines_inline|' \
    "$lines/src/lines/lines_math.cuh" >"$lines/moved.cuh"
  checker 1 "FAIL  lines_inline: hottest line is lines_math.cuh:8 \(81.2%\), inlined at lines_math.cuh:12, lines_kernels.cu:21, not moved.cuh:12" \
    "$lines/good.json" "$lines/moved.cuh"
  # The planted line calls into a header whose line is the hottest: fine
  # when its inline chain reaches the planted line (the kernel's call)...
  mkdir -p "$lines/call" "$lines/store"
  sed 's|// @inline-call$|// @inline-call @hot lines_inline|' "$src/tests/data/lines/lines_kernels.cu" \
    >"$lines/call/lines_kernels.cu"
  checker 0 "ok    lines_inline: lines_math.cuh:8 holds 81.2% of its samples, inlined at lines_kernels.cu:21 \(code embedded\)" \
    --embedded "$lines/good.json" "$lines/call/lines_kernels.cu"
  # ... not when it does not (the planted line is the kernel's store).
  sed 's|// @inline-store$|// @inline-store @hot lines_inline|' "$src/tests/data/lines/lines_kernels.cu" \
    >"$lines/store/lines_kernels.cu"
  checker 1 "FAIL  lines_inline: hottest line is lines_math.cuh:8 \(81.2%\), inlined at lines_math.cuh:12, lines_kernels.cu:21, not lines_kernels.cu:22" \
    "$lines/good.json" "$lines/store/lines_kernels.cu"
  # The code not embedded: a trace alone would show nothing.
  checker 1 "FAIL  lines_inline: code of lines_math.cuh:8 is 'unknown', not embedded" \
    --embedded "$lines/bare.json" "$lines/src/lines/lines_math.cuh"
  # A kernel the summary lacks, and input that is not JSON.
  sed 's|@hot lines_inline|@hot no_such_kernel|' "$lines/src/lines/lines_math.cuh" >"$lines/lines_math.cuh"
  checker 1 "FAIL  no_such_kernel: not in the summary" "$lines/good.json" "$lines/lines_math.cuh"
  printf 'garbage' >"$lines/garbage.json"
  checker 2 "check_lines: " "$lines/garbage.json" "$lines/src/lines/lines_math.cuh"
  # --headers: code inlined from a header (the fixture's lines_math.cuh, as
  # CUB's are on the GPU) maps to the header's lines, its code embedded.
  checker 0 "ok    lines_inline: 81.2% of its samples on header lines, the hottest lines_math.cuh:8: 'return x \* x \+ 1.0f; // @square @hot lines_inline'" \
    --headers '\.cuh$' "$lines/good.json"
  checker 1 "FAIL  no kernel has a sampled line in a file matching '/cub/'" \
    --headers '/cub/' "$lines/good.json"
  checker 1 "FAIL  lines_inline: lines_math.cuh:8 has no embedded code \('unknown'\)" \
    --headers '\.cuh$' "$lines/bare.json"
  checker 2 "check_lines: " --headers '(' "$lines/good.json"
  ;;
ranks)
  # ranks.sh's checks on two synthetic ranks of 8 NVTX steps (the traces
  # torchrun would leave, 0.mprof and 1.mprof): rank 1 slowed in step 3
  # passes (with the Python check when dask.distributed is here); no
  # straggler, the wrong rank or the wrong step fails and says so.
  t=$STANDIN_TRACES
  ranks_job() { # DIR SLOW_RANK SLOW_STEP (SLOW_RANK -1: none)
    mkdir -p "$1"
    for r in 0 1; do
      slow=""
      [ "$r" = "$2" ] && slow="--slowdown 1000 --slow-kernel 0 --slow-step $3"
      # shellcheck disable=SC2086
      "$mprof" synth -o "$1/$r.mprof" --launches 1600 --steps 8 --seed 5 \
        --timing-seed $((r + 1)) --meta rank=$r $slow >/dev/null ||
        fail "synth of rank $r failed"
    done
  }
  ranks_job "$t/ranks-good" 1 3
  ranks_job "$t/ranks-none" -1 0
  ranks_job "$t/ranks-rank0" 0 3
  ranks_job "$t/ranks-step5" 1 5
  o=$tmp/out
  export RANKS_NO_GPU_CHECK=1
  RANKS_TRACES=$t/ranks-good run good pass "" ranks.sh "$o" "$real_build"
  RANKS_TRACES=$t/ranks-none PYTHON=false run none fail \
    "stragglers \[\], expected rank 1 first" ranks.sh "$o" "$real_build"
  RANKS_TRACES=$t/ranks-rank0 PYTHON=false run rank0 fail \
    "stragglers \[0\], expected rank 1 first" ranks.sh "$o" "$real_build"
  RANKS_TRACES=$t/ranks-step5 PYTHON=false run step5 fail \
    "slow step is 5, expected 3" ranks.sh "$o" "$real_build"
  unset RANKS_NO_GPU_CHECK
  ;;
empty_child)
  # Recorded by the real `mprof record` (its account and its removal of
  # empty traces are what the check reads); the stand-in program plays the
  # producer of each process through the manifest.
  realbuild=$tmp/realbuild
  mkdir -p "$realbuild/bin" "$realbuild/lib"
  ln -s "$real_build/bin/mprof" "$realbuild/bin/mprof"
  : >"$realbuild/lib/libmprof-cupti.so"
  # mprof finds its producer beside its real path, which a build without
  # CUDA lacks: name the stand-in (the stand-in programs never load it).
  export MPROF_CUPTI_LIB="$realbuild/lib/libmprof-cupti.so"
  run good pass "" empty_child.sh "$tmp/good" "$realbuild"
  run busy fail "FAIL  record names both idle workers as empty and removed" \
    empty_child.sh "$tmp/busy" "$realbuild"
  run nothing fail "FAIL  record of the program exits 0" \
    empty_child.sh "$tmp/nothing" "$realbuild"
  ;;
*)
  echo "selftest: no check '$check'" >&2
  exit 2
  ;;
esac

if [ "$failures" -ne 0 ]; then
  echo "selftest $check: $failures failure(s); logs in $tmp" >&2
  exit 1
fi
[ -n "${SELFTEST_KEEP:-}" ] || rm -rf "$tmp"
echo "selftest $check: every broken capture failed the check, the working one passed ($runs runs)"
