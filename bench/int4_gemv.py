"""int4 weight-only GEMV (M = 1 decoding) on the CPU stream.

For y = x @ W.T with W 4096 x 4096, prints, one thread and all threads:
  lucid int4_weight_only_linear   packed int4 weights (8 MB) + group-128 scales,
                                  float activations (act f32) and activations
                                  quantized per row to int8 (act_dtype="qint8")
  lucid fp32 linear               the same product with float32 weights (64 MB),
                                  lucid.nn.functional.linear (OpenBLAS sgemm/sgemv)
  memcpy of the packed weights    numpy copy of the same 8 MB into a preallocated
                                  buffer: the time to stream them once
and the ratios the targets of issue 10 name, for each activation type:
fp32 / int4 (>= 2) and int4 / memcpy (<= 1.2).

Usage: python bench/int4_gemv.py [--n N] [--k K] [--group G] [--repeat R]
"""
from __future__ import annotations

import argparse
import os
import platform

import numpy as np

os.environ.setdefault("LUCID_MLX_DEVICE", "cpu")

import lucid  # noqa: E402
from lucid import quantization as Q  # noqa: E402
from lucid.nn import functional as F  # noqa: E402
from _timing import best_time  # noqa: E402


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--n", type=int, default=4096)
    p.add_argument("--k", type=int, default=4096)
    p.add_argument("--group", type=int, default=128)
    p.add_argument("--repeat", type=int, default=20)
    a = p.parse_args(argv)
    rng = np.random.default_rng(0)
    codes = rng.integers(-8, 8, (a.n, a.k)).astype(np.int8)
    scale = (rng.random((a.n, a.k // a.group)) * 0.01 + 1e-3).astype(np.float32)
    packed = Q.pack_int4(lucid.tensor(codes))
    s = lucid.tensor(scale)
    w32 = lucid.tensor((codes.astype(np.float32) * np.repeat(scale, a.group, axis=1)).astype(np.float32))
    x = lucid.tensor(rng.standard_normal((1, a.k)).astype(np.float32))
    src = packed.numpy()
    dst = np.empty_like(src)
    all_threads = lucid.get_num_threads()
    print(f"int4 weight-only GEMV, M=1, N={a.n}, K={a.k}, group {a.group}; {platform.machine()}, "
          f"{os.cpu_count()} cores; packed weights {src.nbytes / 1e6:.1f} MB, fp32 {a.n * a.k * 4 / 1e6:.1f} MB")
    print(f"{'threads':>7s} {'act':>5s} {'int4 ms':>9s} {'fp32 ms':>9s} {'memcpy ms':>10s} {'fp32/int4':>10s} "
          f"{'int4/memcpy':>12s}")
    for threads in sorted({1, all_threads}):
        lucid.set_num_threads(threads)
        t32 = best_time(lambda: F.linear(x, w32), a.repeat)
        tc = best_time(lambda: np.copyto(dst, src), a.repeat)
        for act in (None, "qint8"):
            t4 = best_time(lambda: Q.int4_weight_only_linear(x, packed, s, group_size=a.group, act_dtype=act),
                           a.repeat)
            print(f"{threads:7d} {act or 'f32':>5s} {t4 * 1e3:9.3f} {t32 * 1e3:9.3f} {tc * 1e3:10.3f} "
                  f"{t32 / t4:10.2f} {t4 / tc:12.2f}")
    # Batched rows (prefill): compute-bound, dequantize-then-sgemm on the CPU stream.
    xm = lucid.tensor(rng.standard_normal((64, a.k)).astype(np.float32))
    lucid.set_num_threads(1)
    t4 = best_time(lambda: Q.int4_weight_only_linear(xm, packed, s, group_size=a.group), 3)
    t8 = best_time(lambda: Q.int4_weight_only_linear(xm, packed, s, group_size=a.group, act_dtype="qint8"), 3)
    t32 = best_time(lambda: F.linear(xm, w32), 3)
    print(f"M=64, one thread: int4 {t4 * 1e3:.2f} ms (act qint8 {t8 * 1e3:.2f} ms), fp32 {t32 * 1e3:.2f} ms, "
          f"fp32/int4 {t32 / t4:.2f} (qint8 {t32 / t8:.2f})")
    lucid.set_num_threads(all_threads)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
