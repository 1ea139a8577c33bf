"""Decompositions and solvers: lucid's CPU stream (LAPACK from scipy-openblas32)
and GPU stream (mlx.core.linalg) against numpy.linalg, in the same run, on
float32 matrices (a batch of B matrices of n x n, well conditioned).

Prints milliseconds per call and the ratio to numpy. One thread by default (the
clock is then this thread's CPU time; numpy's BLAS is limited to one thread
too when threadpoolctl is present, else the figures say so). Run:

    PYTHONPATH=python LUCID_MLX_DEVICE=cpu python bench/linalg.py --n 128 --batch 8
"""
from __future__ import annotations

import argparse
import json

import numpy as np

from _timing import seconds

import lucid
import lucid.linalg as LA


def _cases(a, b, spd):
    return [
        ("inv", lambda x, y, s: LA.inv(x), lambda: np.linalg.inv(a)),
        ("solve", lambda x, y, s: LA.solve(x, y), lambda: np.linalg.solve(a, b)),
        ("slogdet", lambda x, y, s: LA.slogdet(x), lambda: np.linalg.slogdet(a)),
        ("cholesky", lambda x, y, s: LA.cholesky(s), lambda: np.linalg.cholesky(spd)),
        ("eigh", lambda x, y, s: LA.eigh(s), lambda: np.linalg.eigh(spd)),
        ("svd", lambda x, y, s: LA.svd(x, full_matrices=False), lambda: np.linalg.svd(a, full_matrices=False)),
        ("qr", lambda x, y, s: LA.qr(x), lambda: np.linalg.qr(a)),
    ]


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--n", type=int, default=128)
    p.add_argument("--batch", type=int, default=8)
    p.add_argument("--budget", type=float, default=0.3, help="seconds per measurement")
    p.add_argument("--json")
    args = p.parse_args()
    lucid.set_num_threads(1)
    try:
        from threadpoolctl import threadpool_limits
        threadpool_limits(1)
    except ImportError:
        print("(threadpoolctl missing: numpy's BLAS may use several threads)")
    rng = np.random.default_rng(0)
    n, bsz = args.n, args.batch
    a = (rng.standard_normal((bsz, n, n)) + 3 * np.sqrt(n) * np.eye(n)).astype(np.float32)
    b = rng.standard_normal((bsz, n, 4)).astype(np.float32)
    m = rng.standard_normal((bsz, n, n)).astype(np.float32)
    spd = (m @ m.transpose(0, 2, 1) + n * np.eye(n)).astype(np.float32)
    streams = {"cpu": "cpu"}
    if lucid.gpu.is_available():
        streams["gpu"] = "gpu"
    rows = []
    print(f"{bsz} x ({n}, {n}) float32, one thread; ms per call")
    print(f"{'op':<10}{'numpy':>10}" + "".join(f"{s:>10}{s + '/np':>9}" for s in streams))
    for name, fn, ref in _cases(a, b, spd):
        t_np = seconds(ref, args.budget, 1)
        row = {"op": name, "numpy_ms": t_np * 1e3}
        line = f"{name:<10}{t_np * 1e3:>10.3f}"
        for s, dev in streams.items():
            x, y, sp = (lucid.tensor(v, device=dev) for v in (a, b, spd))

            def run(fn=fn, x=x, y=y, sp=sp):
                lucid.eval(*[t for t in _flat(fn(x, y, sp))])

            t = seconds(run, args.budget, 1 if dev == "cpu" else 2)
            row[f"{s}_ms"] = t * 1e3
            line += f"{t * 1e3:>10.3f}{t / t_np:>9.2f}"
        rows.append(row)
        print(line)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1)


def _flat(out):
    return list(out) if isinstance(out, tuple) else [out]


if __name__ == "__main__":
    main()
