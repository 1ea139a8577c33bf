"""Resident memory over many small training steps: a leak per step shows as RSS
that keeps rising. A two-layer MLP (8 -> 32 -> 1, in-place ReLU) trained with
Adam on a fixed batch: forward, MSE loss, backward, optimizer step, zero_grad.
Prints RSS (MiB) every --every steps and the change from the first report
(taken after a warm-up, when allocator pools have settled). Run:

    PYTHONPATH=python LUCID_MLX_DEVICE=cpu python bench/rss_steps.py --steps 100000
    PYTHONPATH=python LUCID_MLX_DEVICE=cpu python bench/rss_steps.py --steps 20000 --device gpu
"""
from __future__ import annotations

import argparse
import os
import time

import numpy as np

import lucid
from lucid import nn, optim


def rss_mib() -> float:
    with open("/proc/self/statm") as f:
        pages = int(f.read().split()[1])
    return pages * os.sysconf("SC_PAGE_SIZE") / 2 ** 20


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=100_000)
    ap.add_argument("--every", type=int, default=0, help="report interval (default: steps / 10)")
    ap.add_argument("--warmup", type=int, default=1000)
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--optimizer", default="Adam", choices=["Adam", "SGD"])
    args = ap.parse_args()
    every = args.every or max(1, args.steps // 10)
    lucid.set_num_threads(1)
    rng = np.random.default_rng(0)
    x = lucid.tensor(rng.standard_normal((16, 8)).astype(np.float32), device=args.device)
    y = lucid.tensor(rng.standard_normal((16, 1)).astype(np.float32), device=args.device)
    model = nn.Sequential(nn.Linear(8, 32), nn.ReLU(inplace=True), nn.Linear(32, 1)).to(args.device)
    kw = dict(lr=1e-3) if args.optimizer == "Adam" else dict(lr=1e-3, momentum=0.9)
    opt = getattr(optim, args.optimizer)(model.parameters(), **kw)

    def step():
        loss = ((model(x) - y) ** 2).mean()
        loss.backward()
        opt.step()
        opt.zero_grad()
        return loss

    for _ in range(args.warmup):
        step()
    base = rss_mib()
    t0 = time.perf_counter()
    print(f"{'step':>9}{'RSS MiB':>10}{'change':>9}{'us/step':>9}")
    print(f"{0:>9}{base:>10.1f}{0.0:>+9.1f}")
    last = t0
    for i in range(1, args.steps + 1):
        loss = step()
        if i % every == 0:
            now = time.perf_counter()
            rss = rss_mib()
            print(f"{i:>9}{rss:>10.1f}{rss - base:>+9.1f}{(now - last) / every * 1e6:>9.0f}", flush=True)
            last = now
    print(f"final loss {loss.item():.6f}; {args.steps} steps in {time.perf_counter() - t0:.1f} s")


if __name__ == "__main__":
    main()
