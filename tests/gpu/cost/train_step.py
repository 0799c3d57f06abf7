#!/usr/bin/env python3
"""A real-framework workload for tests/gpu/capture_cost.sh.

Twenty bf16 training steps of a small transformer in PyTorch: autocast,
AdamW, cuBLAS GEMMs, a cuDNN convolution, flash attention through
scaled_dot_product_attention, and a Triton kernel (squared ReLU, forward and
backward) inside the MLP. Prints the time of each phase and "RESULT ok" when
the loss went down.

usage: train_step.py [--steps N] [--layers L] [--width D] [--nvtx]
  --nvtx  each step inside torch.cuda.nvtx.range("step") (for capture
          windows: `mprof record --capture-range nvtx:step`)
"""
import argparse
import sys
import time

t_start = time.perf_counter()
import torch
import torch.nn as nn
import torch.nn.functional as F
import triton
import triton.language as tl


@triton.jit
def relu2_forward(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask).to(tl.float32)
    r = tl.maximum(x, 0.0)
    tl.store(y_ptr + offs, (r * r).to(y_ptr.dtype.element_ty), mask=mask)


@triton.jit
def relu2_backward(x_ptr, g_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask).to(tl.float32)
    g = tl.load(g_ptr + offs, mask=mask).to(tl.float32)
    d = 2.0 * tl.maximum(x, 0.0) * g
    tl.store(out_ptr + offs, d.to(out_ptr.dtype.element_ty), mask=mask)


class Relu2(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        x = x.contiguous()
        y = torch.empty_like(x)
        n = x.numel()
        relu2_forward[(triton.cdiv(n, 1024),)](x, y, n, BLOCK=1024)
        ctx.save_for_backward(x)
        return y

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        g = g.contiguous()
        out = torch.empty_like(x)
        n = x.numel()
        relu2_backward[(triton.cdiv(n, 1024),)](x, g, out, n, BLOCK=1024)
        return out


class Block(nn.Module):
    def __init__(self, d, heads):
        super().__init__()
        self.heads = heads
        self.norm1 = nn.LayerNorm(d)
        self.qkv = nn.Linear(d, 3 * d)
        self.proj = nn.Linear(d, d)
        self.norm2 = nn.LayerNorm(d)
        self.up = nn.Linear(d, 4 * d)
        self.down = nn.Linear(4 * d, d)

    def forward(self, x):
        b, t, d = x.shape
        q, k, v = self.qkv(self.norm1(x)).split(d, dim=-1)
        shape = (b, t, self.heads, d // self.heads)
        q, k, v = (z.view(shape).transpose(1, 2) for z in (q, k, v))
        a = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + self.proj(a.transpose(1, 2).reshape(b, t, d))
        return x + self.down(Relu2.apply(self.up(self.norm2(x))))


class Model(nn.Module):
    def __init__(self, d, layers, heads):
        super().__init__()
        # A grouped causal convolution over time: cuDNN's kernels.
        self.mix = nn.Conv1d(d, d, kernel_size=4, padding=3, groups=8)
        self.blocks = nn.ModuleList(Block(d, heads) for _ in range(layers))
        self.out = nn.LayerNorm(d)

    def forward(self, x):
        t = x.shape[1]
        x = x + self.mix(x.transpose(1, 2))[..., :t].transpose(1, 2)
        for blk in self.blocks:
            x = blk(x)
        return self.out(x)


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--steps", type=int, default=20)
    p.add_argument("--layers", type=int, default=4)
    p.add_argument("--width", type=int, default=1024)
    p.add_argument("--batch", type=int, default=8)
    p.add_argument("--seq", type=int, default=1024)
    p.add_argument("--nvtx", action="store_true")
    args = p.parse_args()
    if not torch.cuda.is_available():
        print("train_step: no CUDA device", file=sys.stderr)
        return 2
    t_import = time.perf_counter()
    torch.manual_seed(0)
    torch.backends.cudnn.enabled = True
    dev = torch.device("cuda")
    model = Model(args.width, args.layers, args.width // 64).to(dev)
    opt = torch.optim.AdamW(model.parameters(), lr=3e-4)
    x = torch.randn(args.batch, args.seq, args.width, device=dev)
    target = torch.randn_like(x) * 0.5
    torch.cuda.synchronize()
    t_setup = time.perf_counter()
    losses = []
    step_times = []
    for step in range(args.steps):
        s0 = time.perf_counter()
        if args.nvtx:
            torch.cuda.nvtx.range_push("step")
        with torch.autocast("cuda", dtype=torch.bfloat16):
            loss = F.mse_loss(model(x).float(), target)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        losses.append(loss.item())  # synchronises
        if args.nvtx:
            torch.cuda.nvtx.range_pop()
        step_times.append(time.perf_counter() - s0)
    t_end = time.perf_counter()
    steady = sorted(step_times[2:]) if len(step_times) > 2 else step_times
    print(f"import_s {t_import - t_start:.3f} setup_s {t_setup - t_import:.3f} "
          f"steps_s {t_end - t_setup:.3f} first_step_s {step_times[0]:.3f} "
          f"median_step_ms {1e3 * steady[len(steady) // 2]:.2f} "
          f"p10_step_ms {1e3 * steady[len(steady) // 10]:.2f} "
          f"p90_step_ms {1e3 * steady[len(steady) * 9 // 10]:.2f}")
    print(f"loss {losses[0]:.4f} -> {losses[-1]:.4f}")
    ok = losses[-1] < losses[0]
    print("RESULT " + ("ok" if ok else "loss did not fall"))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
