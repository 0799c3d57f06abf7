#!/usr/bin/env python3
"""A Triton kernel whose time is on one Python line, for
tests/gpu/source_lines.sh: mprof must map its samples to the line marked
`@hot triton_fma` of this file (Triton's PTX carries .loc lines of the
Python source), and embed that line's text in the trace.

usage: triton_lines.py [--launches N]

The loop body is one line of eight dependent multiply-adds, so the loop's
own counter and branch (the `for` line) are a small share.

SPDX-License-Identifier: MIT
"""
import argparse
import sys

import torch
import triton
import triton.language as tl


@triton.jit
def triton_fma(x_ptr, out_ptr, n, iters, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0.0)
    acc = x
    for _ in range(iters):
        acc = ((((((((acc * 0.999 + x) * 0.999 + x) * 0.999 + x) * 0.999 + x) * 0.999 + x) * 0.999 + x) * 0.999 + x) * 0.999 + x)  # @hot triton_fma
    tl.store(out_ptr + offs, acc, mask=mask)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--launches", type=int, default=20)
    a = p.parse_args()
    n = 1 << 20
    x = torch.rand(n, device="cuda")
    out = torch.empty_like(x)
    grid = (triton.cdiv(n, 256),)
    for _ in range(a.launches):
        triton_fma[grid](x, out, n, 2000, BLOCK=256)
    torch.cuda.synchronize()
    ok = bool(torch.isfinite(out).all())
    print("TRITON_LINES ok" if ok else "TRITON_LINES bad result")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
