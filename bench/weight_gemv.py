"""Weight-only GEMV (M = 1 decoding) on the CPU stream, every packed weight format in one run.

For y = x @ W.T with W N x K (default 4096 x 4096), one thread and all threads:
  fp32          lucid.nn.functional.linear on float32 weights (OpenBLAS sgemv), the baseline
  int4 g128     Q.int4_weight_only_linear, float activations (packed int4 + float scales / zero points)
  fp8 e4m3      Float8Linear's product, per-row scale (_C.float8_weight_linear, what its forward calls)
  fp8 e5m2      the same with E5M2 codes
  mxfp8, mxfp4, nvfp4   QuantizedLinearMX's product (Q.block_weight_linear), MLX's layout
  mlx int4 / int8 g64   QuantizedLinearMLX's product (Q.group_quantized_linear): MLX's
                affine words with float scales and biases per group of 64
and for each: the time, fp32 / format (target >= 2), and format / stream (target <= 1.25),
where stream is the time numpy takes to read the same number of bytes (the packed
codes plus their scales): the fastest of a uint64 max-reduction and a copy into a
preallocated buffer (with all threads: that many numpy threads over slices).

Decoding reads each weight once per token from memory, not from cache: by default every
timed call (lucid's and numpy's alike) goes to the next of enough copies of the weights
to exceed --cold-mb (96 MB, past this CPU's last-level cache); --warm times one copy
over and over (cache-resident when it fits).

    PYTHONPATH=python python bench/weight_gemv.py [--n 4096] [--k 4096] [--warm] [--budget 1.0]
"""
from __future__ import annotations

import argparse
import concurrent.futures as cf
import itertools
import os

import numpy as np

os.environ.setdefault("LUCID_MLX_DEVICE", "cpu")

import lucid  # noqa: E402
from lucid import _C  # noqa: E402
from lucid import quantization as Q  # noqa: E402
from lucid.nn import functional as F  # noqa: E402
from _timing import cpu_description, seconds  # noqa: E402


def _copies(nbytes, cold_mb, warm):
    return 1 if warm else max(1, -(-int(cold_mb * 2**20) // max(nbytes, 1)))


def _rotating(fn, operands):
    """A call that runs fn on the next operand set each time."""
    it = itertools.cycle(operands)
    return lambda: fn(*next(it))


def _formats(rng, n, k, group):
    """name -> (make one operand set, the call on it, packed bytes)."""
    out = {}

    def fp32():
        return (lucid.tensor(rng.standard_normal((n, k)).astype(np.float32) * 0.02),)
    out["fp32"] = (fp32, lambda x, w: F.linear(x, w), n * k * 4)

    def int4():
        codes = rng.integers(-8, 8, (n, k)).astype(np.int8)
        scale = (rng.random((n, k // group)) * 0.01 + 1e-3).astype(np.float32)
        return Q.pack_int4(lucid.tensor(codes)), lucid.tensor(scale)
    out[f"int4 g{group}"] = (int4, lambda x, p, s: Q.int4_weight_only_linear(x, p, s, group_size=group),
                             n * k // 2 + n * (k // group) * 4)  # float scales (symmetric: no zero points read)

    for qd in ("float8_e4m3fn", "float8_e5m2"):
        def fp8():
            c = rng.integers(0, 256, (n, k)).astype(np.uint8)
            c[(c & 0x7F) >= 0x7C] &= 0xF0  # finite codes
            return lucid.tensor(c), lucid.tensor((rng.random(n) * 0.01 + 1e-3).astype(np.float32))
        out["fp8 " + qd[7:11]] = (fp8, lambda x, c, s, qd=qd: _C.float8_weight_linear(x, c, s, qd), n * k + n * 4)

    for mode, bits, g in (("mxfp8", 8, 32), ("mxfp4", 4, 32), ("nvfp4", 4, 16)):
        def block(bits=bits, g=g, mode=mode):
            words = rng.integers(0, 2**32, (n, k * bits // 32), dtype=np.uint64).astype(np.uint32)
            if mode == "mxfp8":
                b = words.view(np.uint8)
                b[(b & 0x7F) == 0x7F] &= 0xF0
            lo, hi = (0x20, 0x60) if mode == "nvfp4" else (118, 132)
            scales = rng.integers(lo, hi, (n, k // g)).astype(np.uint8)
            return lucid.tensor(words.view(np.int32)), lucid.tensor(scales)
        out[mode] = (block, lambda x, w, s, mode=mode: Q.block_weight_linear(x, w, s, mode),
                     n * k * bits // 8 + n * (k // g))

    for bits in (4, 8):
        def affine(bits=bits):
            words = rng.integers(0, 2**32, (n, k * bits // 32), dtype=np.uint64).astype(np.uint32)
            scales = (rng.random((n, k // 64)) * 0.01 + 1e-3).astype(np.float32)
            biases = (rng.random((n, k // 64)) * -0.05).astype(np.float32)
            return lucid.tensor(words.view(np.int32)), lucid.tensor(scales), lucid.tensor(biases)
        out[f"mlx int{bits} g64"] = (affine, lambda x, w, s, b, bits=bits: Q.group_quantized_linear(x, w, s, b, 64,
                                                                                                   bits),
                                     n * k * bits // 8 + n * (k // 64) * 8)
    return out


def _stream_time(nbytes, copies, threads, budget):
    """Seconds for numpy to read nbytes (the fastest of a max-reduction and a copy)."""
    words = -(-nbytes // 8)
    srcs = [np.random.default_rng(i).integers(0, 2**62, words, dtype=np.uint64) for i in range(copies)]
    dst = np.empty(words, np.uint64)
    cuts = np.linspace(0, words, threads + 1).astype(np.int64)
    pool = cf.ThreadPoolExecutor(threads) if threads > 1 else None

    def over_slices(op):
        def run(src):
            if pool is None:
                return op(src, 0, words)
            list(pool.map(lambda i: op(src, cuts[i], cuts[i + 1]), range(threads)))
        return run

    def reduce_(src, a, b):
        return src[a:b].max()

    def copy_(src, a, b):
        np.copyto(dst[a:b], src[a:b])

    best = min(seconds(_rotating(over_slices(op), [(s,) for s in srcs]), budget, threads)
               for op in (reduce_, copy_))
    if pool is not None:
        pool.shutdown()
    return best


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--n", type=int, default=4096)
    p.add_argument("--k", type=int, default=4096)
    p.add_argument("--group", type=int, default=128, help="int4 group size")
    p.add_argument("--warm", action="store_true", help="time one copy of the weights (cache-resident)")
    p.add_argument("--cold-mb", type=float, default=96.0)
    p.add_argument("--budget", type=float, default=1.0, help="seconds per measurement")
    p.add_argument("--formats", default=None, help="comma-separated subset (fp32 always runs)")
    a = p.parse_args(argv)
    rng = np.random.default_rng(0)
    fmts = _formats(rng, a.n, a.k, a.group)
    names = list(fmts) if a.formats is None else ["fp32"] + [f for f in a.formats.split(",") if f != "fp32"]
    all_threads = lucid.get_num_threads()
    print(f"CPU: {cpu_description()}")
    print(f"weight-only GEMV, M=1, N={a.n}, K={a.k}; "
          + ("warm (one copy of the weights)" if a.warm else f"cold (weights rotated over > {a.cold_mb:.0f} MB)"))
    x = lucid.tensor(rng.standard_normal((1, a.k)).astype(np.float32))
    operands = {}
    for name in names:
        make, _, nbytes = fmts[name]
        operands[name] = [make() for _ in range(_copies(nbytes, a.cold_mb, a.warm))]
    print(f"{'threads':>7s} {'format':>10s} {'MB':>6s} {'ms':>8s} {'stream ms':>9s} {'fp32/fmt':>9s} "
          f"{'fmt/stream':>10s}")
    for threads in sorted({1, all_threads}):
        lucid.set_num_threads(threads)
        t32 = None
        for name in names:
            _, call, nbytes = fmts[name]
            ops = operands[name]
            t = seconds(_rotating(lambda *o, call=call: call(x, *o), ops), a.budget, threads)
            ts = _stream_time(nbytes, len(ops), threads, a.budget)
            t32 = t if name == "fp32" else t32
            print(f"{threads:7d} {name:>10s} {nbytes / 1e6:6.1f} {t * 1e3:8.3f} {ts * 1e3:9.3f} "
                  f"{t32 / t:9.2f} {t / ts:10.2f}")
    lucid.set_num_threads(all_threads)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
