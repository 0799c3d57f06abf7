#!/usr/bin/env python3
"""A small PyTorch bf16 training loop with NVTX ranges, for
tests/gpu/kill_loop.sh, which SIGKILLs it under `mprof record`.

Ranges (torch.cuda.nvtx.range_push/pop): "train" around the whole loop,
then per step "step N" > "forward" / "backward" / "optimizer". A kill
during the loop therefore always finds "train" open, and usually one step
and one of its phases.

Prints "step N" for every step (flushed), so the caller knows the loop
runs; "steps N" at the end when not killed.

usage: kill_loop_train.py [--seconds S] [--dim D] [--layers L]

SPDX-License-Identifier: MIT
"""
import argparse
import math
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

nvtx = torch.cuda.nvtx


class Block(nn.Module):
    def __init__(self, dim, heads):
        super().__init__()
        self.heads = heads
        self.norm1 = nn.LayerNorm(dim)
        self.qkv = nn.Linear(dim, 3 * dim)
        self.proj = nn.Linear(dim, dim)
        self.norm2 = nn.LayerNorm(dim)
        self.up = nn.Linear(dim, 4 * dim)
        self.down = nn.Linear(4 * dim, dim)

    def forward(self, x):
        b, t, d = x.shape
        q, k, v = self.qkv(self.norm1(x)).chunk(3, dim=-1)
        q, k, v = (y.view(b, t, self.heads, d // self.heads).transpose(1, 2)
                   for y in (q, k, v))
        a = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + self.proj(a.transpose(1, 2).reshape(b, t, d))
        return x + self.down(F.gelu(self.up(self.norm2(x))))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--seconds", type=float, default=300.0)
    ap.add_argument("--dim", type=int, default=256)
    ap.add_argument("--layers", type=int, default=2)
    args = ap.parse_args()
    torch.manual_seed(0)
    nvtx.range_push("train")
    model = nn.Sequential(*[Block(args.dim, 4) for _ in range(args.layers)],
                          nn.Linear(args.dim, 1)).cuda()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
    x = torch.randn(16, 128, args.dim, device="cuda")
    target = torch.randn(16, 128, 1, device="cuda")
    end = time.monotonic() + args.seconds
    step = 0
    while time.monotonic() < end:
        step += 1
        nvtx.range_push(f"step {step}")
        nvtx.range_push("forward")
        with torch.autocast("cuda", dtype=torch.bfloat16):
            loss = F.mse_loss(model(x).float(), target)
        nvtx.range_pop()
        nvtx.range_push("backward")
        loss.backward()
        nvtx.range_pop()
        nvtx.range_push("optimizer")
        opt.step()
        opt.zero_grad(set_to_none=True)
        nvtx.range_pop()
        nvtx.range_pop()
        if step % 10 == 1:
            value = loss.item()  # keeps the GPU queue short
            if not math.isfinite(value):
                raise SystemExit(f"loss {value} at step {step}")
        print(f"step {step}", flush=True)
    nvtx.range_pop()
    torch.cuda.synchronize()
    print(f"steps {step}", flush=True)


if __name__ == "__main__":
    main()
