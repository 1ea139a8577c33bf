"""Observer forward throughput on the CPU stream, one thread, against PyTorch's
``torch.ao.quantization`` observers in the same run (when ``import torch`` works).

Each observer sees the same 16M-element float32 tensor (a (64, 262144) view for
per-channel observers, ch_axis=0, and a (262144, 64) one with ch_axis=1) once
to set its range, then is timed on further calls (best of 3 rounds). The last
column is PyTorch's time over lucid's (> 1: lucid is faster). Targets
(issue 8): MinMax and per-channel >= 2x PyTorch, Histogram >= 1x.

To run PyTorch from its own environment next to lucid, put that environment's
site-packages after lucid on the path:
    PYTHONPATH=python:<venv>/lib/python3.X/site-packages python bench/observers.py

Usage: python bench/observers.py [--size N] [--repeat N] [--json PATH]
"""
from __future__ import annotations

import argparse
import json
import os
import platform

import numpy as np

os.environ.setdefault("LUCID_MLX_DEVICE", "cpu")  # only the CPU stream is timed

import lucid  # noqa: E402
from lucid import quantization as Q  # noqa: E402

from _timing import best_time  # noqa: E402

try:
    import torch
    from torch.ao.quantization import observer as tobs
except ImportError:  # the table then has lucid's column only
    torch = None

# (row, lucid factory, torch factory or None, layout, calls per timing round)
CASES = [
    ("MinMaxObserver", lambda: Q.MinMaxObserver(), lambda: tobs.MinMaxObserver(), "flat", 10),
    ("MovingAverageMinMaxObserver", lambda: Q.MovingAverageMinMaxObserver(),
     lambda: tobs.MovingAverageMinMaxObserver(), "flat", 10),
    ("PerChannelMinMaxObserver ch_axis=0", lambda: Q.PerChannelMinMaxObserver(ch_axis=0),
     lambda: tobs.PerChannelMinMaxObserver(ch_axis=0), "rows", 10),
    ("PerChannelMinMaxObserver ch_axis=1", lambda: Q.PerChannelMinMaxObserver(ch_axis=1),
     lambda: tobs.PerChannelMinMaxObserver(ch_axis=1), "cols", 5),
    ("MovingAveragePerChannel ch_axis=0", lambda: Q.MovingAveragePerChannelMinMaxObserver(ch_axis=0),
     lambda: tobs.MovingAveragePerChannelMinMaxObserver(ch_axis=0), "rows", 10),
    ("HistogramObserver", lambda: Q.HistogramObserver(), lambda: tobs.HistogramObserver(), "flat", 2),
    ("PercentileObserver (lucid)", lambda: Q.PercentileObserver(), None, "flat", 2),
    ("MSEObserver (lucid)", lambda: Q.MSEObserver(), None, "flat", 2),
]


def _shaped(x, layout: str):
    n = x.shape[0]
    return {"flat": x, "rows": x.reshape(64, n // 64), "cols": x.reshape(n // 64, 64)}[layout]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--size", type=int, default=16 * 1024 * 1024, help="elements (a multiple of 64)")
    ap.add_argument("--repeat", type=float, default=1.0, help="scales the calls per timing round")
    ap.add_argument("--json", help="write the table here")
    args = ap.parse_args()
    n = args.size // 64 * 64
    lucid.set_num_threads(1)
    data = np.random.default_rng(0).standard_normal(n).astype(np.float32)
    x = lucid.tensor(data)
    xt = None
    if torch is not None:
        torch.set_num_threads(1)
        xt = torch.from_numpy(data)
    print(f"observer forward, {n:,} float32 elements, 1 thread, CPU stream "
          f"({platform.machine()}, torch {'%s' % torch.__version__ if torch else 'not importable'})")
    print(f"{'observer':38s} {'lucid ms':>9s} {'lucid GB/s':>10s} {'torch ms':>9s} {'torch/lucid':>11s}")
    rows = []
    for name, make, make_t, layout, calls in CASES:
        reps = max(1, int(calls * args.repeat))
        obs, xs = make(), _shaped(x, layout)
        obs(xs)
        t_lucid = best_time(lambda: obs(xs), reps)
        t_torch = None
        if torch is not None and make_t is not None:
            tob, xts = make_t(), _shaped(xt, layout)
            tob(xts)
            t_torch = best_time(lambda: tob(xts), reps)
        ratio = t_torch / t_lucid if t_torch else None
        print(f"{name:38s} {t_lucid * 1e3:9.2f} {4 * n / t_lucid / 1e9:10.2f} "
              f"{(t_torch * 1e3 if t_torch else float('nan')):9.2f} "
              f"{(f'{ratio:.2f}x' if ratio else '-'):>11s}")
        rows.append({"observer": name, "lucid_s": t_lucid, "torch_s": t_torch, "torch_over_lucid": ratio})
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"elements": n, "threads": 1, "torch": torch.__version__ if torch else None, "rows": rows}, f,
                      indent=2)


if __name__ == "__main__":
    main()
