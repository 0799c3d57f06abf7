"""A small PyTorch bf16 training loop: library GEMMs (cuBLAS), fused
attention (scaled_dot_product_attention), layer norms and an optimizer.

mprof's verdicts must give library kernels advice a caller can act on
(shapes, batching, precision, fusion), never register advice. Used by
tests/gpu/verdicts.sh; prints RESULT ok at the end.

SPDX-License-Identifier: MIT
"""
import sys

import torch
import torch.nn.functional as F


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
        q, k, v = self.qkv(self.ln1(x)).split(d, dim=2)
        q, k, v = (y.view(b, t, self.heads, d // self.heads).transpose(1, 2)
                   for y in (q, k, v))
        a = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + self.proj(a.transpose(1, 2).reshape(b, t, d))
        return x + self.fc2(F.gelu(self.fc1(self.ln2(x))))


def main():
    if not torch.cuda.is_available():
        print("torch_step: no GPU")
        return 0
    steps = int(sys.argv[1]) if len(sys.argv) > 1 else 10
    torch.manual_seed(0)
    model = torch.nn.Sequential(*[Block(1024, 16) for _ in range(4)]).cuda()
    model = model.to(torch.bfloat16)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
    x = torch.randn(16, 512, 1024, device="cuda", dtype=torch.bfloat16)
    for _ in range(steps):
        opt.zero_grad(set_to_none=True)
        loss = model(x).float().pow(2).mean()
        loss.backward()
        opt.step()
    torch.cuda.synchronize()
    print(f"loss {loss.item():.4f}")
    print("RESULT ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
