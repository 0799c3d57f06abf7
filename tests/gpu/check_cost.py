#!/usr/bin/env python3
"""Hold the figures tests/gpu/capture_cost.sh measured to the capture-cost
targets (docs/validation/H200.md, "Capture cost").

Usage: check_cost.py COST.figures

COST.figures has one "NAME VALUE" line per figure, and "skipped PART" for
each part left out on purpose (COST_SKIP_*). Each target is met directly,
or, where CUPTI alone (the floor: a minimal CUPTI subscriber with the same
activity kinds and sampling, measured in the same run) is already above
it, by record staying within FLOOR_RULE times the floor: what mprof adds
beyond CUPTI is its own. Prints one line per target, "ok" or "MISSED" with
the figure; exit 1 when a target is missed or a figure it needs is not
there (a run that produced nothing is no pass), 2 on a bad file.

SPDX-License-Identifier: MIT
"""
import sys

FLOOR_RULE = 1.2
PER_LAUNCH_US = 1.0     # added per kernel launch
SLOWDOWN_PCT = 1.0      # kernel time under PC sampling
WALL_RATIO = 1.2        # record added / floor added, cuBLAS program
NCU_RATIO = 200.0       # ncu added / record added
TORCH_PCT = 10.0        # PyTorch training wall time added, or
TORCH_S = 2.0           # ... at most this many seconds
TORCH_MB = 20.0         # PyTorch trace + sidecar
OUTSIDE_PCT = 1.0       # in-loop time added outside a capture window
LOOP_RATIO = 1.2        # in-loop time record added / floor added


def read(path):
    figures, skipped = {}, set()
    with open(path) as f:
        for n, line in enumerate(f, 1):
            parts = line.split()
            if not parts:
                continue
            if len(parts) != 2:
                raise ValueError(f"line {n}: '{line.strip()}' is not NAME VALUE")
            if parts[0] == "skipped":
                skipped.add(parts[1])
            else:
                figures[parts[0]] = float(parts[1])
    return figures, skipped


def main(argv):
    if len(argv) != 2:
        print(__doc__.strip().splitlines()[3], file=sys.stderr)
        return 2
    try:
        fig, skipped = read(argv[1])
    except (OSError, ValueError) as e:
        print(f"check_cost: {argv[1]}: {e}", file=sys.stderr)
        return 2
    missed = 0

    def result(ok, target, detail):
        nonlocal missed
        missed += not ok
        print(f"{'ok    ' if ok else 'MISSED'} {target}: {detail}")

    def need(part, *names):
        """The figures of a part, or None (a failure unless skipped)."""
        if part in skipped:
            print(f"skip   {part}: left out (COST_SKIP_*)")
            return None
        absent = [n for n in names if n not in fig]
        if absent:
            result(False, part, f"no figure {', '.join(absent)}: the run "
                   "that measures it failed or did not run")
            return None
        return [fig[n] for n in names]

    v = need("per_launch", "per_launch_record_us", "per_launch_floor_us")
    if v:
        rec, floor = v
        ok = rec <= PER_LAUNCH_US or (floor > PER_LAUNCH_US and
                                      rec <= FLOOR_RULE * floor)
        result(ok, f"per launch <= {PER_LAUNCH_US:g} us (or <= "
               f"{FLOOR_RULE:g}x a floor above it)",
               f"record adds {rec:.3f} us, the floor {floor:.3f} us")

    v = need("wall", "sk_record_added_s", "sk_floor_added_s")
    if v:
        rec, floor = v
        ratio = rec / floor if floor > 0 else float("inf")
        # A record run no slower than plain adds nothing to hold.
        result(ratio <= WALL_RATIO or rec <= 0,
               f"cuBLAS program: record added <= {WALL_RATIO:g}x the "
               "floor's", f"record +{rec:.3f} s, floor +{floor:.3f} s: "
               f"{ratio:.2f}x")

    v = need("ncu", "ncu_added_s", "sk_record_added_s", "sk_floor_added_s")
    if v:
        ncu, rec, floor = v
        ratio = ncu / rec if rec > 0 else float("inf")
        floor_ratio = ncu / floor if floor > 0 else float("inf")
        ok = ratio >= NCU_RATIO or (floor_ratio < NCU_RATIO and
                                    floor > 0 and rec <= FLOOR_RULE * floor)
        result(ok, f"ncu added >= {NCU_RATIO:g}x record added (or record "
               f"within {FLOOR_RULE:g}x a floor that rules it out)",
               f"ncu +{ncu:.3f} s: {ratio:.1f}x record, {floor_ratio:.1f}x "
               "the floor")

    v = need("steady", "steady_record_pct", "steady_floor_pct")
    if v:
        rec, floor = v
        ok = rec <= SLOWDOWN_PCT or (floor > SLOWDOWN_PCT and
                                     rec <= FLOOR_RULE * floor)
        result(ok, f"kernel slowdown <= {SLOWDOWN_PCT:g}% (or <= "
               f"{FLOOR_RULE:g}x a floor above it)",
               f"record {rec:+.2f}%, the floor {floor:+.2f}%")

    v = need("torch", "torch_record_s", "torch_plain_s", "torch_size_mb")
    if v:
        rec, plain, mb = v
        added = rec - plain
        pct = 100 * added / plain if plain > 0 else float("inf")
        result(pct <= TORCH_PCT or added <= TORCH_S,
               f"PyTorch wall <= {TORCH_PCT:g}% or <= {TORCH_S:g} s added",
               f"+{added:.2f} s, {pct:+.1f}%")
        result(mb <= TORCH_MB, f"PyTorch trace + sidecar <= {TORCH_MB:g} MB",
               f"{mb:.2f} MB")

    v = need("loop", "loop_plain_ms", "loop_floor_ms", "loop_record_ms",
             "loop_outside_ms")
    if v:
        plain, floor, rec, outside = v
        pct = 100 * (outside - plain) / plain if plain > 0 else float("inf")
        result(pct <= OUTSIDE_PCT,
               f"PyTorch in-loop time outside a window <= {OUTSIDE_PCT:g}%",
               f"{pct:+.2f}%")
        added, floor_added = rec - plain, floor - plain
        ok = added <= LOOP_RATIO * max(floor_added, 0.0) or added <= 0
        result(ok, f"PyTorch in-loop time added <= {LOOP_RATIO:g}x the "
               "floor's", f"record +{added:.3f} ms a step, floor "
               f"+{floor_added:.3f} ms a step")

    for part, name in (("wall", "sk_sass_missing"),
                       ("torch", "torch_sass_missing")):
        v = need(part, name)
        if v:
            result(v[0] == 0, f"{name.split('_')[0]}: SASS for every "
                   "sampled function", f"{v[0]:.0f} sampled without SASS")

    print(f"check_cost: {missed} target(s) missed")
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
