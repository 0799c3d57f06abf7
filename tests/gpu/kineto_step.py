#!/usr/bin/env python3
"""A few steps of a small PyTorch training loop, for tests/gpu/kineto.sh.

Each measured step runs inside an NVTX range "step N" (what mprof's Kineto
export turns into ProfilerStep#N); with --torch-trace FILE the same steps
also run under torch.profiler, which writes its Kineto trace to FILE and
names them ProfilerStep#N itself. Warm-up steps run first, outside both.

Usage: kineto_step.py [--steps N] [--warmup W] [--torch-trace FILE]
"""
import argparse

import torch


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--steps", type=int, default=5)
    ap.add_argument("--warmup", type=int, default=2)
    ap.add_argument("--torch-trace", metavar="FILE")
    args = ap.parse_args()
    torch.manual_seed(0)
    torch.backends.cudnn.benchmark = False
    dev = torch.device("cuda")
    model = torch.nn.Sequential(
        torch.nn.Linear(512, 1024), torch.nn.GELU(),
        torch.nn.LayerNorm(1024), torch.nn.Linear(1024, 256)).to(dev)
    opt = torch.optim.SGD(model.parameters(), lr=1e-3)
    x = torch.randn(64, 512, device=dev)
    y = torch.randn(64, 256, device=dev)

    def step():
        opt.zero_grad(set_to_none=True)
        loss = torch.nn.functional.mse_loss(model(x), y)
        loss.backward()
        opt.step()

    for _ in range(args.warmup):
        step()
    torch.cuda.synchronize()

    def measured(prof=None):
        for i in range(args.steps):
            torch.cuda.nvtx.range_push("step %d" % i)
            step()
            torch.cuda.synchronize()
            torch.cuda.nvtx.range_pop()
            if prof is not None:
                prof.step()

    if args.torch_trace:
        acts = [torch.profiler.ProfilerActivity.CPU,
                torch.profiler.ProfilerActivity.CUDA]
        # A schedule makes torch.profiler mark ProfilerStep#N (as training
        # scripts use it); without one it records no step spans.
        sched = torch.profiler.schedule(wait=0, warmup=0, active=args.steps,
                                        repeat=1)
        with torch.profiler.profile(
                activities=acts, schedule=sched,
                on_trace_ready=lambda p: p.export_chrome_trace(
                    args.torch_trace)) as prof:
            measured(prof)
    else:
        measured()


if __name__ == "__main__":
    main()
