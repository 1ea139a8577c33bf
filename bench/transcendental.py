"""sin / cos / tanh / exp on the CPU stream next to numpy, one thread.

lucid's float32 transcendentals are its own vectorized code
(csrc/cpu/elementwise_math.h); numpy's are its SIMD loops. Both sides
allocate their output, as a plain call does. Prints each best-of-N time and
the ratio numpy / lucid (above 1: lucid is faster). Timings alternate
between the two libraries so machine load hits both alike.

    PYTHONPATH=python python bench/transcendental.py [--n 16777216] [--repeats 7]
"""
from __future__ import annotations

import argparse
import time

import numpy as np

import lucid


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--n", type=int, default=1 << 24)
    parser.add_argument("--repeats", type=int, default=7)
    args = parser.parse_args()
    lucid.set_num_threads(1)
    rng = np.random.default_rng(0)
    inputs = {
        "normal": rng.standard_normal(args.n).astype(np.float32),
        "uniform(-100,100)": rng.uniform(-100, 100, args.n).astype(np.float32),
    }
    print(f"{'op':6} {'input':18} {'lucid ms':>9} {'numpy ms':>9} {'numpy/lucid':>12}")
    for name in ("sin", "cos", "tanh", "exp"):
        for label, a in inputs.items():
            if name in ("tanh", "exp") and label != "normal":
                continue
            la = lucid.tensor(a)
            lfn, nfn = getattr(lucid, name), getattr(np, name)
            lfn(la), nfn(a)  # warm up
            best_l = best_n = float("inf")
            for _ in range(args.repeats):
                t0 = time.perf_counter()
                lfn(la)
                t1 = time.perf_counter()
                nfn(a)
                t2 = time.perf_counter()
                best_l, best_n = min(best_l, t1 - t0), min(best_n, t2 - t1)
            print(f"{name:6} {label:18} {best_l * 1e3:9.1f} {best_n * 1e3:9.1f} {best_n / best_l:12.2f}")


if __name__ == "__main__":
    main()
