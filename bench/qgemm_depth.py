"""int8 GEMM against depth: prepacked Q.qmatmul (u8 x s8 -> quint8, requantized)
with each engine this CPU can run, at K from 1024 to 4096, printed as GOP/s and
as a ratio to the same engine's 1024^3 product in the same run.

The driver cuts K past 1024 into blocks (k_block() in csrc/cpu/qgemm.cpp); a
deep product should then run near the 1024^3 rate. The ratio is what to
compare across builds: on a shared machine whose speed drifts between runs,
it cancels the drift that absolute figures carry. One thread, CPU time of
the calling thread.

Usage: PYTHONPATH=python python bench/qgemm_depth.py [--engines amx,avx512vnni] [--budget SECONDS]
"""
from __future__ import annotations

import argparse
import os

import numpy as np

os.environ.setdefault("LUCID_MLX_DEVICE", "cpu")

from _timing import cpu_description, seconds  # noqa: E402

SHAPES = [(1024, 1024, 1024), (64, 4096, 4096), (256, 4096, 4096), (1024, 4096, 4096), (256, 1024, 2048)]


def main() -> None:
    import lucid
    import lucid.quantization as Q
    from lucid.backends import quantized

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--engines", default="", help="comma-separated (default: every available one but reference)")
    ap.add_argument("--budget", type=float, default=1.0, help="seconds of timing per shape")
    args = ap.parse_args()
    engines = [e for e in args.engines.split(",") if e] or [e for e in quantized.available
                                                            if e not in ("auto", "reference")]
    print(cpu_description())
    lucid.set_num_threads(1)
    rng = np.random.default_rng(0)
    print(f"{'engine':>11} {'M':>5} {'N':>5} {'K':>5} | {'GOP/s':>7} {'vs 1024^3':>9}")
    for eng in engines:
        quantized.engine = eng
        base = None
        for m, n, k in SHAPES:
            x = lucid.tensor(rng.integers(0, 256, (m, k)).astype(np.uint8))
            wq = Q.prepack_weight(lucid.tensor(rng.integers(-128, 128, (n, k)).astype(np.int8)))
            t = seconds(lambda: Q.qmatmul(x, 0.02, 3, wq, 0.01, 0, out_scale=0.5, out_zp=1), args.budget, 1)
            gops = 2 * m * n * k / t / 1e9
            base = base or gops
            print(f"{eng:>11} {m:5d} {n:5d} {k:5d} | {gops:7.1f} {gops / base:8.2f}x")
    quantized.engine = "auto"


if __name__ == "__main__":
    main()
