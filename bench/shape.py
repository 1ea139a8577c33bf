"""Shape and indexing ops: lucid (both streams) against numpy and, when
importable, torch (CPU), on one float32 matrix of N x N.

Prints microseconds per call and the ratio to numpy; ``--json PATH`` also
writes the figures. The first rows are per-call overhead (views: no data
moves on the CPU stream); the rest move N*N elements. Run:

    PYTHONPATH=python LUCID_MLX_DEVICE=cpu python bench/shape.py --n 1000
"""
from __future__ import annotations

import argparse
import json

import numpy as np

from _timing import best_time

import lucid


def _time(fn, repeat: int) -> float:
    return best_time(fn, repeat) * 1e6


def _cases(n, rng):
    a = rng.standard_normal((n, n)).astype(np.float32)
    rows = rng.integers(0, n, n)
    cols = rng.integers(0, n, (n, n))
    mask = a > 0

    def lucid_ops(dev):
        x = lucid.tensor(a, device=dev)
        ri, ci, m = lucid.tensor(rows, device=dev), lucid.tensor(cols, device=dev), lucid.tensor(mask, device=dev)
        sync = (lambda t: t.eval()) if dev == "gpu" else (lambda t: t)
        return {
            "x[1:, ::2]": lambda: sync(x[1:, ::2]),
            "reshape": lambda: sync(x.reshape(n // 2, 2 * n)),
            "permute": lambda: sync(x.permute(1, 0)),
            "T.contiguous()": lambda: sync(x.T.contiguous()),
            "cat dim=1": lambda: sync(lucid.cat([x, x], 1)),
            "index_select": lambda: sync(x.index_select(0, ri)),
            "gather dim=1": lambda: sync(x.gather(1, ci)),
            "x[mask]": lambda: sync(x[m]),
            "x[::-1] (copy)": lambda: sync(x[::-1]),
        }

    numpy_ops = {
        "x[1:, ::2]": lambda: a[1:, ::2],
        "reshape": lambda: a.reshape(n // 2, 2 * n),
        "permute": lambda: a.transpose(1, 0),
        "T.contiguous()": lambda: np.ascontiguousarray(a.T),
        "cat dim=1": lambda: np.concatenate([a, a], 1),
        "index_select": lambda: np.take(a, rows, 0),
        "gather dim=1": lambda: np.take_along_axis(a, cols, 1),
        "x[mask]": lambda: a[mask],
        "x[::-1] (copy)": lambda: a[::-1].copy(),
    }
    torch_ops = None
    try:
        import torch

        t, tr, tc, tm = (torch.from_numpy(v) for v in (a, rows, cols, mask))
        torch_ops = {
            "x[1:, ::2]": lambda: t[1:, ::2],
            "reshape": lambda: t.reshape(n // 2, 2 * n),
            "permute": lambda: t.permute(1, 0),
            "T.contiguous()": lambda: t.T.contiguous(),
            "cat dim=1": lambda: torch.cat([t, t], 1),
            "index_select": lambda: t.index_select(0, tr),
            "gather dim=1": lambda: t.gather(1, tc),
            "x[mask]": lambda: t[tm],
            "x[::-1] (copy)": lambda: t.flip(0),
        }
    except ImportError:
        pass
    return lucid_ops, numpy_ops, torch_ops


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=1000)
    ap.add_argument("--repeat", type=int, default=20)
    ap.add_argument("--json")
    args = ap.parse_args()
    lucid_ops, numpy_ops, torch_ops = _cases(args.n, np.random.default_rng(0))
    streams = {"cpu": lucid_ops("cpu")}
    if lucid.gpu.is_available():
        streams["gpu"] = lucid_ops("gpu")
    results = []
    head = f"{'op':18s}" + "".join(f"{'lucid-' + s:>18s}" for s in streams) + f"{'numpy':>12s}"
    head += f"{'torch':>12s}" if torch_ops else ""
    print(f"N = {args.n}, float32, microseconds per call (ratio to numpy)")
    print(head)
    for name, np_fn in numpy_ops.items():
        base = _time(np_fn, args.repeat)
        row = {"op": name, "numpy_us": base}
        line = f"{name:18s}"
        for s, ops in streams.items():
            us = _time(ops[name], args.repeat)
            row[f"lucid_{s}_us"] = us
            line += f"{us:9.1f} ({us / base:5.1f}x)"
        line += f"{base:12.1f}"
        if torch_ops:
            us = _time(torch_ops[name], args.repeat)
            row["torch_us"] = us
            line += f"{us:12.1f}"
        results.append(row)
        print(line)
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"n": args.n, "threads": lucid.get_num_threads(), "results": results}, f, indent=2)


if __name__ == "__main__":
    main()
