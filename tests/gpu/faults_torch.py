"""PyTorch programs for tests/gpu/faults.sh.

  python3 faults_torch.py ranks       under torch.distributed.run: gloo
                                      all-reduce between ranks, CUDA work in
                                      each
  python3 faults_torch.py dataloader  a DataLoader with two worker processes
                                      (forked after CUDA started) feeding a
                                      CUDA model
  python3 faults_torch.py loop SECS   a training-like loop for SECS seconds,
                                      printing "step N at T" (for SIGKILL)

Each prints how many steps it ran, so traces can be checked against it.
"""
import os
import sys
import time

import torch


def work(x, w):
    for _ in range(4):
        x = torch.relu(x @ w)
    return x


def ranks():
    import torch.distributed as dist

    dist.init_process_group("gloo")
    rank = dist.get_rank()
    x = torch.randn(512, 512, device="cuda")
    w = torch.randn(512, 512, device="cuda") / 22.6
    steps = 20
    for _ in range(steps):
        x = work(x, w)
        total = x.sum().cpu()
        dist.all_reduce(total)
    torch.cuda.synchronize()
    print(f"rank {rank} pid {os.getpid()} steps {steps}", flush=True)
    dist.destroy_process_group()


class Squares(torch.utils.data.Dataset):
    def __len__(self):
        return 256

    def __getitem__(self, i):
        return torch.full((256,), float(i))


def dataloader():
    w = torch.randn(256, 256, device="cuda") / 16
    loader = torch.utils.data.DataLoader(Squares(), batch_size=16, num_workers=2)
    batches = 0
    for batch in loader:
        work(batch.cuda(non_blocking=True), w).sum().item()
        batches += 1
    torch.cuda.synchronize()
    print(f"batches {batches}", flush=True)


def loop(seconds):
    x = torch.randn(1024, 1024, device="cuda")
    w = torch.randn(1024, 1024, device="cuda") / 32
    end = time.monotonic() + seconds
    step = 0
    while time.monotonic() < end:
        x = work(x, w)
        x.sum().item()
        step += 1
        print(f"step {step} at {time.monotonic():.3f}", flush=True)
    print(f"steps {step}", flush=True)


if __name__ == "__main__":
    mode = sys.argv[1]
    if mode == "ranks":
        ranks()
    elif mode == "dataloader":
        dataloader()
    elif mode == "loop":
        loop(float(sys.argv[2]))
    else:
        sys.exit(f"unknown mode {mode}")
