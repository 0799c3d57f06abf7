#!/usr/bin/env python3
"""A long PyTorch training loop with one NVTX range per step, for
tests/gpu/capture_window.sh (`mprof record --capture-range ...`).

Every step is the same work: a small MLP's forward, backward and SGD
update, written out by hand on the calling thread (autograd's backward
thread would launch outside the range), all inside
`torch.cuda.nvtx.range("step")`, with nothing launched between steps, so
that a window of K steps holds exactly K times the launches of one step.
The first --warmup steps are ranges named "warmup"
(cuBLAS set-up and first-time allocations happen there, not in a "step").

usage: capture_loop.py [--steps N] [--warmup W] [--seconds S]
                       [--profiler A:B] [--quiet-window A:B]
  --steps N       "step" ranges to run (default 2000)
  --seconds S     run steps until S seconds passed instead (wall clock of
                  the loop)
  --profiler A:B  torch.cuda.profiler.start() before step A and stop()
                  after step B-1 (0-based, among the "step" ranges)
  --quiet-window A:B  leave steps A..B-1 out of the timing below (where a
                  capture window is expected)

Prints, for the caller to read:
  LOOP steps=N seconds=T        the whole loop, wall clock
  OUTSIDE steps=N ms_per_step=X steps outside --quiet-window, timed in
                                segments between synchronizations
  BEFORE/AFTER steps=N ms_per_step=X  the same, before the quiet window
                                and after it
  RESULT ok                     at the end, when the loss is finite

SPDX-License-Identifier: MIT
"""
import argparse
import math
import sys
import time

import torch


def pair(text):
    a, b = text.split(":")
    return int(a), int(b)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--steps", type=int, default=2000)
    p.add_argument("--warmup", type=int, default=10)
    p.add_argument("--seconds", type=float, default=0.0)
    p.add_argument("--profiler", type=pair, default=None)
    p.add_argument("--quiet-window", type=pair, default=None)
    a = p.parse_args()

    torch.manual_seed(0)
    dev = torch.device("cuda")
    width, batch, lr = 512, 256, 1e-3
    # A two-layer MLP trained by hand (forward, backward, SGD) under
    # no_grad: autograd would run the backward pass on its own thread,
    # outside the step's NVTX range, and every launch of a step must be
    # issued inside it.
    w1 = torch.randn(width, width, device=dev) * width ** -0.5
    w2 = torch.randn(width, 16, device=dev) * width ** -0.5
    x = torch.randn(batch, width, device=dev)
    y = torch.randn(batch, 16, device=dev)

    @torch.no_grad()
    def work():
        h = x @ w1
        act = torch.relu(h)
        out = act @ w2
        diff = out - y
        loss = (diff * diff).mean()
        g_out = diff * (2.0 / diff.numel())
        g_w2 = act.t() @ g_out
        g_a = g_out @ w2.t()
        g_h = g_a * (h > 0)
        g_w1 = x.t() @ g_h
        w1.sub_(lr * g_w1)
        w2.sub_(lr * g_w2)
        return loss

    for _ in range(a.warmup):
        with torch.cuda.nvtx.range("warmup"):
            work()
    torch.cuda.synchronize()

    quiet = a.quiet_window or (-1, -1)
    outside_steps, outside_s = 0, 0.0
    # the same, before the window and after it
    side_steps, side_s = [0, 0], [0.0, 0.0]
    segment_start, segment_steps = None, 0
    loop_start = time.perf_counter()
    step = 0
    loss = None
    while True:
        if a.seconds > 0:
            if time.perf_counter() - loop_start >= a.seconds:
                break
        elif step >= a.steps:
            break
        in_quiet = quiet[0] - 5 <= step < quiet[1] + 5
        if in_quiet and segment_start is not None:
            torch.cuda.synchronize()
            outside_s += time.perf_counter() - segment_start
            outside_steps += segment_steps
            side_s[0] += time.perf_counter() - segment_start
            side_steps[0] += segment_steps
            segment_start, segment_steps = None, 0
        if not in_quiet and segment_start is None:
            torch.cuda.synchronize()
            segment_start, segment_steps = time.perf_counter(), 0
        if a.profiler and step == a.profiler[0]:
            torch.cuda.profiler.start()
        with torch.cuda.nvtx.range("step"):
            loss = work()
        if a.profiler and step == a.profiler[1] - 1:
            torch.cuda.profiler.stop()
        if not in_quiet:
            segment_steps += 1
        step += 1
    torch.cuda.synchronize()
    end = time.perf_counter()
    if segment_start is not None:
        outside_s += end - segment_start
        outside_steps += segment_steps
        after = 1 if step > quiet[0] >= 0 else 0
        side_s[after] += end - segment_start
        side_steps[after] += segment_steps
    print(f"LOOP steps={step} seconds={end - loop_start:.3f}")
    if outside_steps:
        print(f"OUTSIDE steps={outside_steps} "
              f"ms_per_step={1e3 * outside_s / outside_steps:.4f}")
    for word, n, s in zip(("BEFORE", "AFTER"), side_steps, side_s):
        if n:
            print(f"{word} steps={n} ms_per_step={1e3 * s / n:.4f}")
    ok = loss is not None and math.isfinite(float(loss))
    print("RESULT ok" if ok else "RESULT bad loss")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
