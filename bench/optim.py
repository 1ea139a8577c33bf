"""Optimizer step time on one thread: SGD-momentum and Adam over many parameters.

Columns (milliseconds per step, one run, same data):
  per-op     lucid, every parameter through lucid ops (the path before the fused
             step; also what the GPU stream and half-precision parameters run)
  fused      lucid, one multi-tensor C++ call per parameter group (_C.sgd_step_ /
             _C.adam_step_), contiguous float32 CPU parameters
  torch      PyTorch's foreach step (foreach=True), when torch imports
  numpy      the same update written with numpy, parameter by parameter
and the ratios fused / torch and fused / per-op. The default case is the one in
issue 11: 100 parameters whose sizes are log-spaced from 1k to 1M elements.
torch is found in this Python or in --torch-site (default $LUCID_TORCH_SITE: a
site-packages folder with a torch for this Python, appended after lucid's numpy). Run:

    PYTHONPATH=python LUCID_MLX_DEVICE=cpu python bench/optim.py
    PYTHONPATH=python LUCID_MLX_DEVICE=cpu python bench/optim.py --params 20 --max 100000 --repeat 5
"""
from __future__ import annotations

import argparse
import json

import numpy as np

from _timing import best_time, import_torch

import lucid
from lucid import nn, optim
from lucid.optim import optimizer as _optimizer

CONFIGS = [("SGD", dict(lr=1e-3, momentum=0.9)), ("Adam", dict(lr=1e-3))]



def numpy_step(name, xs, gs, states):
    for x, g, state in zip(xs, gs, states):
        if name == "SGD":
            buf = state.get("buf")
            state["buf"] = g.copy() if buf is None else 0.9 * buf + g
            x -= 1e-3 * state["buf"]
        else:
            t = state["t"] = state.get("t", 0) + 1
            m = state["m"] = 0.9 * state.get("m", 0) + 0.1 * g
            v = state["v"] = 0.999 * state.get("v", 0) + 0.001 * g * g
            x -= 1e-3 / (1 - 0.9 ** t) * m / (np.sqrt(v) / np.sqrt(1 - 0.999 ** t) + 1e-8)


def lucid_step_time(name, kw, x0, g0, fused, repeat, device="cpu"):
    ps = [nn.Parameter(lucid.tensor(x, device=device)) for x in x0]
    for p, g in zip(ps, g0):
        p.grad = lucid.tensor(g, device=device)
    opt = getattr(optim, name)(ps, **kw)
    _optimizer.FUSED = fused
    try:
        return best_time(opt.step, repeat) * 1e3
    finally:
        _optimizer.FUSED = True


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--params", type=int, default=100)
    ap.add_argument("--min", type=int, default=1_000, help="smallest parameter (elements)")
    ap.add_argument("--max", type=int, default=1_000_000, help="largest parameter (elements)")
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--gpu", action="store_true", help="also time the GPU stream (per-op path)")
    ap.add_argument("--torch-site", default=None, help="site-packages holding torch (default: $LUCID_TORCH_SITE)")
    ap.add_argument("--json")
    args = ap.parse_args()
    lucid.set_num_threads(1)
    torch = import_torch(args.torch_site)
    if torch is not None:
        torch.set_num_threads(1)
    sizes = np.unique(np.geomspace(args.min, args.max, args.params).round().astype(int))
    sizes = np.resize(sizes, args.params)
    rng = np.random.default_rng(0)
    x0 = [rng.standard_normal(n).astype(np.float32) for n in sizes]
    g0 = [rng.standard_normal(n).astype(np.float32) for n in sizes]
    print(f"{args.params} parameters, {sizes.min()}..{sizes.max()} elements, {int(sizes.sum())} in all; one thread")
    rows = []
    for name, kw in CONFIGS:
        row = {"optimizer": name, "params": args.params, "elements": int(sizes.sum())}
        row["per_op_ms"] = lucid_step_time(name, kw, x0, g0, False, args.repeat)
        row["fused_ms"] = lucid_step_time(name, kw, x0, g0, True, args.repeat)
        if args.gpu:
            row["gpu_per_op_ms"] = lucid_step_time(name, kw, x0, g0, False, args.repeat, "gpu")
        if torch is not None:
            tps = [torch.tensor(x, requires_grad=True) for x in x0]
            for p, g in zip(tps, g0):
                p.grad = torch.tensor(g)
            topt = getattr(torch.optim, name)(tps, foreach=True, **kw)
            with torch.no_grad():
                row["torch_ms"] = best_time(topt.step, args.repeat) * 1e3
        xs, states = [x.copy() for x in x0], [{} for _ in x0]
        row["numpy_ms"] = best_time(lambda: numpy_step(name, xs, g0, states), args.repeat) * 1e3
        rows.append(row)
    cols = [c for c in ("per_op_ms", "fused_ms", "gpu_per_op_ms", "torch_ms", "numpy_ms") if c in rows[0]]
    ratios = (["fused/torch"] if "torch_ms" in rows[0] else []) + ["fused/per-op"]
    print(f"{'optimizer':<10}" + "".join(f"{c:>15}" for c in cols) + "".join(f"{r:>14}" for r in ratios))
    for r in rows:
        line = f"{r['optimizer']:<10}" + "".join(f"{r[c]:>15.2f}" for c in cols)
        if "torch_ms" in r:
            line += f"{r['fused_ms'] / r['torch_ms']:>14.2f}"
        print(line + f"{r['fused_ms'] / r['per_op_ms']:>14.2f}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1)


if __name__ == "__main__":
    main()
