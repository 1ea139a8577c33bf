"""Optimizer step time: lucid (both streams) vs torch (CPU) when importable, and a
numpy implementation of the same update, on one parameter of N float32 values.

Prints a table of milliseconds per step and the ratio to numpy; ``--json PATH``
also writes the figures. Run:

    PYTHONPATH=python LUCID_MLX_DEVICE=cpu python bench/optim.py --n 1000000
"""
from __future__ import annotations

import argparse
import json

import numpy as np

from _timing import best_time

import lucid
from lucid import nn, optim


def _time(fn, repeat: int) -> float:
    return best_time(fn, repeat) * 1e3


def numpy_step(name, x, g, state, lr=1e-3):
    if name == "SGD":
        buf = state.get("buf")
        state["buf"] = g.copy() if buf is None else 0.9 * buf + g
        x -= lr * state["buf"]
    else:
        t = state["t"] = state.get("t", 0) + 1
        m = state["m"] = 0.9 * state.get("m", 0) + 0.1 * g
        v = state["v"] = 0.999 * state.get("v", 0) + 0.001 * g * g
        x -= lr / (1 - 0.9 ** t) * m / (np.sqrt(v) / np.sqrt(1 - 0.999 ** t) + 1e-8)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=1_000_000)
    ap.add_argument("--repeat", type=int, default=20)
    ap.add_argument("--json")
    args = ap.parse_args()
    rng = np.random.default_rng(0)
    x0 = rng.standard_normal(args.n).astype(np.float32)
    g0 = rng.standard_normal(args.n).astype(np.float32)
    rows = []
    for name, kw in [("SGD", dict(lr=1e-3, momentum=0.9)), ("Adam", dict(lr=1e-3))]:
        x, state = x0.copy(), {}
        t_np = _time(lambda: numpy_step(name, x, g0, state), args.repeat)
        row = {"optimizer": name, "n": args.n, "numpy_ms": t_np}
        for dev in ("cpu", "gpu"):
            p = nn.Parameter(lucid.tensor(x0, device=dev))
            p.grad = lucid.tensor(g0, device=dev)
            opt = getattr(optim, name)([p], **kw)
            row[f"lucid_{dev}_ms"] = _time(opt.step, args.repeat)
        try:
            import torch

            tp = torch.tensor(x0, requires_grad=True)
            tp.grad = torch.tensor(g0)
            topt = getattr(torch.optim, name)([tp], **kw)
            row["torch_ms"] = _time(topt.step, args.repeat)
        except ImportError:
            pass
        rows.append(row)
    cols = [c for c in ("numpy_ms", "lucid_cpu_ms", "lucid_gpu_ms", "torch_ms") if c in rows[0]]
    print(f"{'optimizer':<10}{'n':>10}" + "".join(f"{c:>15}" for c in cols) + f"{'cpu/numpy':>11}")
    for r in rows:
        print(f"{r['optimizer']:<10}{r['n']:>10}" + "".join(f"{r[c]:>15.3f}" for c in cols)
              + f"{r['lucid_cpu_ms'] / r['numpy_ms']:>11.2f}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1)


if __name__ == "__main__":
    main()
