"""The newer grids' kernels on the CPU stream against numpy's float32 -> int8 astype
bandwidth, measured in the same run: quantize onto float8_e4m3fn / float8_e5m2 /
float4_e2m1fn / qint16 / qint2 (x float32 in, 1- or 2-byte codes out), dequantize
from each float grid, fake_quantize onto each float grid (forward; forward and
backward for float8_e4m3fn), and quantize_mx / dequantize_mx (mxfp8, mxfp4,
nvfp4, affine 4-bit g64) of an (N, 4096) weight. Each case's best of ``--repeat`` runs, with one thread and with
every thread of the pool; the last column is bandwidth / astype int8's
(bytes: input read + output written), astype timed in turn with each case.

Usage: python bench/float_grids.py [--size N] [--repeat N]
"""
from __future__ import annotations

import argparse
import os
import time

import numpy as np

os.environ.setdefault("LUCID_MLX_DEVICE", "cpu")

import lucid  # noqa: E402
from lucid import quantization as Q  # noqa: E402
from _timing import cpu_description  # noqa: E402


def _best(fn, repeat):
    t = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        t = min(t, time.perf_counter() - t0)
    return t


def _best_alternating(fn, base, repeat):
    """Best times of ``fn`` and ``base``, run in turn ``repeat`` times each: a slow
    phase of a shared machine then meets both, not one of them."""
    t, tb = float("inf"), float("inf")
    for _ in range(repeat):
        tb = min(tb, _best(base, 1))
        t = min(t, _best(fn, 1))
    return t, tb




def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--size", type=int, default=1 << 22)
    ap.add_argument("--repeat", type=int, default=5)
    a = ap.parse_args()
    n = a.size - a.size % 4096
    x_np = (np.random.default_rng(0).standard_normal(n) * 40).astype(np.float32)
    x = lucid.tensor(x_np)
    w = x.reshape(-1, 4096)
    c8 = Q.quantize(x, 0.5, 0, Q.float8_e4m3fn)
    c5 = Q.quantize(x, 0.5, 0, Q.float8_e5m2)
    c4 = Q.quantize(x, 8.0, 0, Q.float4_e2m1fn)
    mx = {m: Q.quantize_mx(w, m) for m in ("mxfp8", "mxfp4", "nvfp4")}
    aff = Q.quantize_mx(w, "affine", 64, 4)
    xg = lucid.tensor(x_np, requires_grad=True)

    def fq_fwd_bwd():
        xg.grad = None
        Q.fake_quantize(xg, 0.5, 0, -448, 448, qdtype=Q.float8_e4m3fn).backward(ones)

    ones = lucid.ones(n)
    cases = [
        ("quantize float8_e4m3fn", lambda: Q.quantize(x, 0.5, 0, Q.float8_e4m3fn), 5),
        ("quantize float8_e5m2", lambda: Q.quantize(x, 0.5, 0, Q.float8_e5m2), 5),
        ("quantize float4_e2m1fn", lambda: Q.quantize(x, 8.0, 0, Q.float4_e2m1fn), 5),
        ("dequantize float8_e4m3fn", lambda: Q.dequantize(c8, 0.5, 0, qdtype=Q.float8_e4m3fn), 5),
        ("dequantize float8_e5m2", lambda: Q.dequantize(c5, 0.5, 0, qdtype=Q.float8_e5m2), 5),
        ("dequantize float4_e2m1fn", lambda: Q.dequantize(c4, 8.0, 0, qdtype=Q.float4_e2m1fn), 5),
        ("fake_quantize float8_e4m3fn", lambda: Q.fake_quantize(x, 0.5, 0, -448, 448, qdtype=Q.float8_e4m3fn), 9),
        ("fake_quantize float8_e5m2", lambda: Q.fake_quantize(x, 0.5, 0, -57344, 57344, qdtype=Q.float8_e5m2), 9),
        ("fake_quantize float4_e2m1fn", lambda: Q.fake_quantize(x, 8.0, 0, -6, 6, qdtype=Q.float4_e2m1fn), 9),
        ("fake_quantize e4m3fn fwd+bwd", fq_fwd_bwd, 18),
        ("quantize qint16", lambda: Q.quantize(x, 0.01, 3, Q.qint16), 6),
        ("quantize qint2", lambda: Q.quantize(x, 30.0, 0, Q.qint2), 5),
        ("quantize_mx mxfp8", lambda: Q.quantize_mx(w, "mxfp8"), 5),
        ("quantize_mx mxfp4", lambda: Q.quantize_mx(w, "mxfp4"), 4.5),
        ("quantize_mx nvfp4", lambda: Q.quantize_mx(w, "nvfp4"), 4.5),
        ("quantize_mx affine b4 g64", lambda: Q.quantize_mx(w, "affine", 64, 4), 4.5),
        ("dequantize_mx mxfp8", lambda: Q.dequantize_mx(*mx["mxfp8"], mode="mxfp8"), 5),
        ("dequantize_mx mxfp4", lambda: Q.dequantize_mx(*mx["mxfp4"], mode="mxfp4"), 4.5),
        ("dequantize_mx nvfp4", lambda: Q.dequantize_mx(*mx["nvfp4"], mode="nvfp4"), 4.5),
        ("dequantize_mx affine b4 g64", lambda: Q.dequantize_mx(*aff, group_size=64, bits=4), 4.5),
    ]
    print(f"CPU: {cpu_description()}; {n:,} float32 elements; best of {a.repeat}")
    before = lucid.get_num_threads()
    for threads in (1, before):
        lucid.set_num_threads(threads)
        astype = lambda: x_np.astype(np.int8)  # noqa: E731
        base = _best(astype, a.repeat)
        print(f"\nthreads={threads}   numpy astype int8 (baseline): {base * 1e3:8.2f} ms  {5 * n / base / 1e9:6.2f} GB/s")
        print("  (each ratio is against astype timed in turn with that case)")
        for name, fn, bpe in cases:
            t, tb = _best_alternating(fn, astype, a.repeat)
            bw = bpe * n / t / 1e9
            print(f"  {name:30s} {t * 1e3:8.2f} ms  {bw:6.2f} GB/s  {bw / (5 * n / tb / 1e9):5.2f}x")
    lucid.set_num_threads(before)


if __name__ == "__main__":
    main()
