#!/usr/bin/env python3
"""A small PyTorch bf16 training loop annotated with NVTX, for
tests/gpu/nvtx_sample.sh (the NVTX sample and `mprof summary --by-range`).

Ranges:
- "setup" (torch.cuda.nvtx.range_push/pop), opened before the program's
  first CUDA call: building the model on the GPU happens inside it;
- per step "step N" > "forward" > "block I" > "attention" / "mlp",
  then "backward" and "optimizer" (torch.cuda.nvtx.range);
- per step a start/end range "batch" in the domain "data" with the colour
  0xFFFF8000, around making the batch: through libnvtx_domain.so
  (tests/gpu/nvtx_domain.c, NVTX v3), else the `nvtx` package, else
  torch.cuda.nvtx.range_start (no domain, no colour), as the first line
  printed says.

usage: nvtx_step.py [--steps N] [--helper PATH/libnvtx_domain.so]
Prints "RESULT ok" at the end when the loss is finite.

SPDX-License-Identifier: MIT
"""
import argparse
import ctypes
import math
import sys

import torch
import torch.nn.functional as F

DOMAIN = "data"
COLOR = 0xFFFF8000  # ARGB: opaque orange


class DomainRanges:
    """Start/end ranges in DOMAIN with COLOR, by the first way available."""

    def __init__(self, helper):
        self.how = None
        if helper:
            try:
                lib = ctypes.CDLL(helper)
                lib.nvtx_domain_range_start.restype = ctypes.c_uint64
                lib.nvtx_domain_range_start.argtypes = [
                    ctypes.c_char_p, ctypes.c_char_p, ctypes.c_uint32]
                lib.nvtx_domain_range_end.restype = None
                lib.nvtx_domain_range_end.argtypes = [
                    ctypes.c_char_p, ctypes.c_uint64]
                self.lib = lib
                self.how = "libnvtx_domain"
            except OSError as e:
                print(f"nvtx_step: {helper}: {e}")
        if self.how is None:
            try:
                import nvtx  # the `nvtx` package from PyPI
                self.nvtx = nvtx
                self.how = "nvtx package"
            except ImportError:
                self.how = "torch range_start (no domain, no colour)"
        print(f"nvtx_step: domain ranges through {self.how}")

    def start(self, name):
        if self.how == "libnvtx_domain":
            return self.lib.nvtx_domain_range_start(
                DOMAIN.encode(), name.encode(), COLOR)
        if self.how == "nvtx package":
            return self.nvtx.start_range(message=name, color=COLOR & 0xFFFFFF,
                                         domain=DOMAIN)
        return torch.cuda.nvtx.range_start(name)

    def end(self, rid):
        if self.how == "libnvtx_domain":
            self.lib.nvtx_domain_range_end(DOMAIN.encode(), rid)
        elif self.how == "nvtx package":
            self.nvtx.end_range(rid)
        else:
            torch.cuda.nvtx.range_end(rid)


class Block(torch.nn.Module):
    def __init__(self, d, heads):
        super().__init__()
        self.heads = heads
        self.ln1 = torch.nn.LayerNorm(d)
        self.qkv = torch.nn.Linear(d, 3 * d)
        self.proj = torch.nn.Linear(d, d)
        self.ln2 = torch.nn.LayerNorm(d)
        self.fc1 = torch.nn.Linear(d, 4 * d)
        self.fc2 = torch.nn.Linear(4 * d, d)

    def forward(self, x):
        b, t, d = x.shape
        with torch.cuda.nvtx.range("attention"):
            q, k, v = self.qkv(self.ln1(x)).split(d, dim=2)
            q, k, v = (y.view(b, t, self.heads, d // self.heads).transpose(1, 2)
                       for y in (q, k, v))
            a = F.scaled_dot_product_attention(q, k, v, is_causal=True)
            x = x + self.proj(a.transpose(1, 2).reshape(b, t, d))
        with torch.cuda.nvtx.range("mlp"):
            return x + self.fc2(F.gelu(self.fc1(self.ln2(x))))


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--steps", type=int, default=4)
    p.add_argument("--helper", default="")
    args = p.parse_args()
    ranges = DomainRanges(args.helper)
    # Opened before any CUDA call: the recording must keep it.
    torch.cuda.nvtx.range_push("setup")
    if not torch.cuda.is_available():
        torch.cuda.nvtx.range_pop()
        print("nvtx_step: no GPU")
        return 0
    torch.manual_seed(0)
    layers = [Block(512, 8) for _ in range(3)]
    model = torch.nn.Sequential(*layers).cuda().to(torch.bfloat16)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
    torch.cuda.synchronize()
    torch.cuda.nvtx.range_pop()
    loss = None
    for step in range(args.steps):
        with torch.cuda.nvtx.range(f"step {step}"):
            rid = ranges.start("batch")
            x = torch.randn(8, 256, 512, device="cuda", dtype=torch.bfloat16)
            ranges.end(rid)
            opt.zero_grad(set_to_none=True)
            with torch.cuda.nvtx.range("forward"):
                y = x
                for i, block in enumerate(layers):
                    with torch.cuda.nvtx.range(f"block {i}"):
                        y = block(y)
                loss = y.float().pow(2).mean()
            with torch.cuda.nvtx.range("backward"):
                loss.backward()
            with torch.cuda.nvtx.range("optimizer"):
                opt.step()
    torch.cuda.synchronize()
    value = loss.item()
    print(f"loss {value:.4f}")
    if not math.isfinite(value):
        return 1
    print("RESULT ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
