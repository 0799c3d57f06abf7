"""A small PyTorch bf16 training loop with one Triton kernel, for
tests/gpu/blocks.sh: cuBLAS GEMMs (nn.Linear forward and backward), PyTorch's
own elementwise and reduction kernels, an AdamW step and a Triton kernel, so
block recording is checked on framework code nobody instrumented.

Usage: python3 blocks_torch.py [STEPS]
"""
import sys
import time

import torch
import triton
import triton.language as tl


@triton.jit
def scaled_relu(x_ptr, out_ptr, n, scale, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    y = tl.maximum(x * scale, 0.0)
    tl.store(out_ptr + offs, y, mask=mask)


def triton_scaled_relu(x, scale):
    out = torch.empty_like(x)
    n = x.numel()
    grid = (triton.cdiv(n, 1024),)
    scaled_relu[grid](x, out, n, scale, BLOCK=1024)
    return out


def main():
    steps = int(sys.argv[1]) if len(sys.argv) > 1 else 3
    torch.manual_seed(0)
    dev = "cuda"
    model = torch.nn.Sequential(
        torch.nn.Linear(1024, 4096), torch.nn.GELU(),
        torch.nn.Linear(4096, 1024)).to(dev, torch.bfloat16)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
    x = torch.randn(2048, 1024, device=dev, dtype=torch.bfloat16)
    target = torch.randn(2048, 1024, device=dev, dtype=torch.bfloat16)
    t0 = time.time()
    for step in range(steps):
        opt.zero_grad(set_to_none=True)
        h = triton_scaled_relu(x, 1.5)
        y = model(h)
        loss = torch.nn.functional.mse_loss(y.float(), target.float())
        loss.backward()
        opt.step()
        print(f"step {step} loss {loss.item():.4f}", flush=True)
    torch.cuda.synchronize()
    print(f"RESULT ok {time.time() - t0:.3f} s", flush=True)


if __name__ == "__main__":
    main()
