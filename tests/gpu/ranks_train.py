#!/usr/bin/env python3
"""A data-parallel training loop for tests/gpu/ranks.sh, run by torchrun
with 2 ranks on one GPU (gloo: both ranks share the card, NCCL needs one
card per rank). Every step is an NVTX range "step N": forward, backward,
a gloo all-reduce of the gradients, the optimizer. In step SLOW_STEP, rank
SLOW_RANK also multiplies a 2048 x 2048 matrix EXTRA times (extra GPU
work: the planted straggler), so the other rank waits in the all-reduce.

usage: torchrun --nproc_per_node=2 ranks_train.py [--steps N]
         [--slow-rank R] [--slow-step S] [--extra K]
Prints "rank R steps N" at the end.

SPDX-License-Identifier: MIT
"""
import argparse
import os

import torch
import torch.distributed as dist


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=8)
    ap.add_argument("--slow-rank", type=int, default=1)
    ap.add_argument("--slow-step", type=int, default=3)
    ap.add_argument("--extra", type=int, default=200)
    args = ap.parse_args()
    dist.init_process_group("gloo")
    rank = dist.get_rank()
    dev = torch.device("cuda", int(os.environ.get("LOCAL_RANK", "0")) %
                       torch.cuda.device_count())
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(1024, 1024), torch.nn.ReLU(),
                                torch.nn.Linear(1024, 1024)).to(dev)
    opt = torch.optim.SGD(model.parameters(), lr=1e-3)
    x = torch.randn(512, 1024, device=dev)
    a = torch.randn(2048, 2048, device=dev) / 45.0
    for step in range(args.steps):
        torch.cuda.nvtx.range_push(f"step {step}")
        loss = model(x).square().mean()
        loss.backward()
        if rank == args.slow_rank and step == args.slow_step:
            b = a
            for _ in range(args.extra):
                b = a @ b
        for p in model.parameters():
            dist.all_reduce(p.grad)
        opt.step()
        opt.zero_grad()
        torch.cuda.synchronize()
        torch.cuda.nvtx.range_pop()
    print(f"rank {rank} steps {args.steps}", flush=True)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
