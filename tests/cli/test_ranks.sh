#!/bin/sh
# mprof ranks on 8 synthetic ranks of a data-parallel job (`mprof synth
# --steps`, rank and world size in META): rank 3 runs gemm_tiled four times
# slower in step 4 with another stall profile; the report must name rank 3,
# step 4 and gemm_tiled, with the diff against the median rank, in XML,
# JSON and text; three stragglers' diffs, opened on 8 threads, are those
# of one; every rank's collectives and steps are counted; steps
# found from the launch pattern alone give the same straggler; bad input
# is one line, exit 2.
# usage: test_ranks.sh MPROF TMPDIR
mprof=$1
tmp=${2:-/tmp}/ranks.$$
. "$(dirname "$0")/common.sh"
mkdir -p "$tmp/run" "$tmp/pattern" "$tmp/many"

synth_rank() { # DIR RANK [EXTRA...]
  dir=$1 rank=$2
  shift 2
  slow=""
  [ "$rank" = 3 ] && slow="--slowdown 300 --slow-kernel 0 --slow-step 4 --slow-scenario barrier"
  [ "$dir" = "$tmp/many" ] && [ "$rank" -gt 3 ] &&
    slow="--slowdown $((rank * 40)) --slow-kernel 0 --slow-step $rank --slow-scenario barrier"
  # shellcheck disable=SC2086
  "$mprof" synth -o "$dir/rank$rank.mprof" --launches 4000 --steps 10 \
    --seed 7 --timing-seed $((rank + 1)) --meta rank="$rank" \
    --meta world_size=8 $slow "$@" >/dev/null ||
    fail "synth of rank $rank failed"
}
for r in 0 1 2 3 4 5 6 7; do
  synth_rank "$tmp/run" $r
  synth_rank "$tmp/pattern" $r --streams 1 --steps-unmarked
  synth_rank "$tmp/many" $r
done

# The JSON report: the planted straggler, step and kernel, and the diff.
"$mprof" ranks --json "$tmp/run" >"$tmp/ranks.json" 2>"$tmp/err" ||
  fail "ranks --json failed: $(cat "$tmp/err")"
python3 - "$tmp/ranks.json" <<'EOF' || fail "the JSON report is wrong"
import json, sys
d = json.load(open(sys.argv[1]))
job = d["job"]
assert job["ranks"] == 8 and job["steps"] == 10 and job["collectives"] == 1, job
assert job["stragglers"] == 1, d["stragglers"]
s = d["stragglers"][0]
assert s["rank"] == 3 and s["step"] == 4 and s["slow_steps"] == 1, s
assert s["kernel"]["short_name"].startswith("gemm_tiled"), s["kernel"]
# Four times slower in that step: about three times the median's time more.
assert s["kernel"]["kernel_ns"] > 3 * s["kernel"]["median_kernel_ns"], s
assert s["excess"] > 0.3, s
assert s["median_rank"] != 3 and s["path"].endswith("rank3.mprof"), s
diff = s["diff"]
assert diff["change"] == "slower" and diff["significant"] == 1, diff
# The barrier profile planted on it: barrier stalls took over from the
# median rank's long_scoreboard.
stalls = {x["reason"]: x for x in diff["stalls"]}
assert stalls["barrier"]["median_share"] < 0.05, stalls
assert stalls["barrier"]["straggler_share"] > 0.5, stalls
assert stalls["long_scoreboard"]["straggler_share"] < 0.05, stalls
assert "rank 3" in s["summary"] and "step 4" in s["summary"], s["summary"]
ranks = d["ranks"]
assert [r["rank"] for r in ranks] == list(range(8)), [r["rank"] for r in ranks]
for r in ranks:
    assert r["step_source"] == "nvtx" and r["step_count"] == 10, r
    assert r["straggler"] == (r["rank"] == 3), r
    # Ten all-reduce kernels of 40 us each, nothing beside them.
    assert r["comm_ns"] == 400000 and r["overlap_share"] == 0, r
    assert r["busy_ns"] + r["idle_ns"] == r["window_ns"], r
    for st in r["steps"]:
        assert st["launches"] == 401, st
        assert st["busy_ns"] == st["compute_ns"] + st["comm_ns"], st
        assert st["idle_cause"] == "", st
    # The 30 us after each step's all-reduce, the host in no CUDA call (the
    # last step's window ends with its all-reduce).
    for st in r["steps"][:-1]:
        assert st["idle_cause_ns"] >= 28000, st
EOF

# XML and text say the same.
expect 0 '<straggler rank="3" path="[^"]*rank3.mprof" step="4"' \
  "$mprof" ranks --xml "$tmp/run"
expect 0 "rank 3 is [0-9]*% slower than the median, rank [0-9], in step 4" \
  "$mprof" ranks --human "$tmp/run"
grep -q "gemm_tiled<64, 64, 8> took .* its barrier stalls went from" "$tmp/out" ||
  fail "the text report names no kernel or stall: $(head -c 400 "$tmp/out")"
grep -q '^     3 .*\.\.\.\.[*#]\.\.\.\.\.$' "$tmp/out" ||
  fail "the heat map does not mark rank 3's step 4: $(cat "$tmp/out")"
# A glob and -j 1 give the same report; --no-diff leaves the diff out.
"$mprof" ranks --json -j 1 "$tmp/run/rank*.mprof" >"$tmp/glob.json" ||
  fail "ranks of a glob failed"
cmp -s "$tmp/ranks.json" "$tmp/glob.json" ||
  fail "a glob and -j 1 give another report than the directory"
expect 0 '<diff/>' "$mprof" ranks --xml --no-diff "$tmp/run"
# A higher threshold than the planted excess finds nobody.
expect 0 'stragglers="0"' "$mprof" ranks --xml --threshold 500 "$tmp/run"

# Ranks 3 to 7 straggle, each in its own step: the three largest are
# diffed against their median ranks, whose traces are opened once each on
# 8 threads, and the report is the one of a single thread.
"$mprof" ranks --json -j 1 "$tmp/many" >"$tmp/many1.json" ||
  fail "ranks -j 1 of five stragglers failed"
"$mprof" ranks --json -j 8 "$tmp/many" >"$tmp/many8.json" ||
  fail "ranks -j 8 of five stragglers failed"
cmp -s "$tmp/many1.json" "$tmp/many8.json" ||
  fail "-j 8 gives another report than -j 1 for five stragglers"
python3 - "$tmp/many8.json" <<'EOF' || fail "the five stragglers' diffs are wrong"
import json, sys
d = json.load(open(sys.argv[1]))
s = d["stragglers"]
assert sorted((x["rank"], x["step"]) for x in s) == \
    [(3, 4), (4, 4), (5, 5), (6, 6), (7, 7)], [(x["rank"], x["step"]) for x in s]
# Largest excess first; the first three carry a diff against their median
# rank (which straggles in a step of its own, so over the whole trace the
# change may be noise), the others none.
ex = [x["score_ns"] - x["median_score_ns"] for x in s]
assert ex == sorted(ex, reverse=True), ex
for x in s[:3]:
    assert x["diff"] and x["diff"]["error"] is None, x
    assert x["diff"]["change"] in ("slower", "noise"), x
    assert "over the whole trace its mean per launch" in x["summary"], x
for x in s[3:]:
    assert "change" not in x["diff"], x
EOF

# Without step ranges, the repeating launch pattern marks the steps.
"$mprof" ranks --json "$tmp/pattern" >"$tmp/pattern.json" ||
  fail "ranks of the unmarked steps failed"
python3 - "$tmp/pattern.json" <<'EOF' || fail "pattern steps are wrong"
import json, sys
d = json.load(open(sys.argv[1]))
for r in d["ranks"]:
    assert r["step_source"] == "pattern" and r["step_count"] == 10, r
    # One stream: each launch's cudaLaunchKernel call (1 us) lies in the
    # idle gap before it, so a step's window (to the next step's first
    # launch) holds 401 of them, the last step's 400.
    calls = [st["idle_in_calls_ns"] for st in r["steps"]]
    assert calls == [401000] * 9 + [400000], calls
s = d["stragglers"]
assert len(s) == 1 and s[0]["rank"] == 3 and s[0]["step"] == 4, s
assert s[0]["kernel"]["short_name"].startswith("gemm_tiled"), s
EOF

# Bad input: one line, exit 2.
expect_one_line 2 "no traces given" "$mprof" ranks
expect_one_line 2 "threshold needs a percentage" "$mprof" ranks \
  --threshold x "$tmp/run"
cp "$tmp/run/rank2.mprof" "$tmp/run2.mprof"
expect_one_line 2 "both rank 2: give one trace per rank" "$mprof" ranks \
  "$tmp/run" "$tmp/run2.mprof"
printf 'not a trace' >"$tmp/bad.mprof"
expect_one_line 2 "bad.mprof" "$mprof" ranks "$tmp/run/rank0.mprof" \
  "$tmp/bad.mprof"
expect_one_line 2 "unknown option '--bogus'" "$mprof" ranks --bogus \
  "$tmp/run"

finish ranks
