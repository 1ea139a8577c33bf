"""Quantization primitives on the CPU stream: time and effective bandwidth, against numpy.

For 16M float32 elements (a 4096 x 4096 tensor), single-threaded and with
every thread of the pool, prints each primitive's best time over a few runs
and its effective bandwidth, (bytes read + bytes written) / time, counting
only the tensors the operation must touch:

  quantize            x float32 in, codes int8 out                    5 B/element
  dequantize          codes int8 in, float32 out                      5 B/element
  fake_quantize fwd   x in, y out (float32), 1-byte STE mask saved     9 B/element
  fake_quantize bwd   dy in, saved mask in, dx out                    9 B/element

The baseline is the machine's own float32 -> int8 conversion, numpy's
``x.astype(np.int8)`` over the same data (5 B/element), and next to it the
numpy composite ``np.clip(np.rint(x / s) + z, qmin, qmax).astype(np.int8)``
(numpy is single-threaded in both). For the float-output primitives two
more numpy rows help read the figures: ``q.astype(np.float32)`` and the
dequantize composite ``(q.astype(np.float32) - z) * s``; a fresh 64 MB output
costs page faults that a 16 MB one does not. The last column is each
bandwidth divided by astype int8's.

The one-pass copies that issue 10's targets name are numpy copies into
preallocated buffers (no page faults, like lucid's reused allocations):
``np.copyto(y, x)`` float32 -> float32 (8 B/element) and int8 -> float32
(5 B/element). Each case keeps its best of ``--repeat`` consecutive runs (its buffers
reused: the steady state of a model); the three cheap baselines run first and
again last and keep their best. On a shared machine, run it twice. A summary
prints the targets' ratios: quantize vs astype int8 (>= 0.9), dequantize vs
the int8 -> float32 copy and fake_quantize vs the float32 copy, in GB/s
(>= 0.8), and per-channel / per-group time against per-tensor (<= 1.1).

Usage: python bench/quantization.py [--json PATH] [--repeat N] [--size N]
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import time

import numpy as np

os.environ.setdefault("LUCID_MLX_DEVICE", "cpu")  # only the CPU stream is timed; keeps imports quiet

import lucid  # noqa: E402
from lucid import quantization as Q  # noqa: E402

ROWS, COLS = 4096, 4096
BASELINES = ("numpy astype int8 (baseline)", "numpy copyto f32 -> f32", "numpy copyto int8 -> f32")
SCALE, ZP = 0.0173, 3
GROUP = 128


def _lucid_cases(x_np: np.ndarray):
    x = lucid.tensor(x_np)
    n = x_np.size
    rows = x_np.shape[0]
    s_ch = lucid.tensor(np.full(rows, SCALE, np.float32) * np.linspace(1, 2, rows, dtype=np.float32))
    z_ch = lucid.tensor(np.full(rows, ZP, np.int32))
    s_g = lucid.tensor(np.full((rows, COLS // GROUP), SCALE, np.float32))
    z_g = lucid.tensor(np.full((rows, COLS // GROUP), ZP, np.int32))
    codes = Q.quantize(x, SCALE, ZP, Q.qint8)
    dy = lucid.tensor(np.random.default_rng(1).standard_normal(x_np.shape).astype(np.float32))

    def backward_setup():
        xr = lucid.tensor(x_np, requires_grad=True)
        return xr, Q.fake_quantize(xr, SCALE, ZP, -128, 127)

    return [
        ("quantize per-tensor", 5 * n, lambda: Q.quantize(x, SCALE, ZP, Q.qint8), None),
        ("quantize per-channel", 5 * n, lambda: Q.quantize(x, s_ch, z_ch, Q.qint8, ch_axis=0), None),
        ("quantize per-group", 5 * n, lambda: Q.quantize(x, s_g, z_g, Q.qint8, group_size=GROUP, axis=-1), None),
        ("dequantize per-tensor", 5 * n, lambda: Q.dequantize(codes, SCALE, ZP), None),
        ("dequantize per-channel", 5 * n, lambda: Q.dequantize(codes, s_ch, z_ch, ch_axis=0), None),
        ("dequantize per-group", 5 * n, lambda: Q.dequantize(codes, s_g, z_g, group_size=GROUP, axis=-1), None),
        ("fake_quantize forward", 9 * n, lambda: Q.fake_quantize(x, SCALE, ZP, -128, 127), None),
        ("fake_quantize fwd per-channel", 9 * n, lambda: Q.fake_quantize(x, s_ch, z_ch, -128, 127, ch_axis=0), None),
        ("fake_quantize fwd per-group", 9 * n,
         lambda: Q.fake_quantize(x, s_g, z_g, -128, 127, group_size=GROUP, axis=-1), None),
        ("fake_quantize backward", 9 * n, lambda state: state[1].backward(dy), backward_setup),
    ]


def _numpy_cases(x_np: np.ndarray):
    n = x_np.size
    s, z = np.float32(SCALE), np.float32(ZP)
    codes = x_np.astype(np.int8)
    y32 = np.empty_like(x_np)
    return [
        ("numpy astype int8 (baseline)", 5 * n, lambda: x_np.astype(np.int8), None),
        ("numpy clip(rint(x/s)+z).astype", 5 * n,
         lambda: np.clip(np.rint(x_np / s) + z, -128, 127).astype(np.int8), None),
        # Float-output references for dequantize / fake_quantize, which write 4 bytes per element.
        ("numpy int8 astype float32", 5 * n, lambda: codes.astype(np.float32), None),
        ("numpy (q.astype(f32) - z) * s", 5 * n, lambda: (codes.astype(np.float32) - z) * s, None),
        # One-pass copies into preallocated buffers: the targets' baselines.
        ("numpy copyto f32 -> f32", 8 * n, lambda: np.copyto(y32, x_np), None),
        ("numpy copyto int8 -> f32", 5 * n, lambda: np.copyto(y32, codes, casting="unsafe"), None),
    ]


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--json", metavar="PATH")
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--size", type=int, default=ROWS * COLS, help="elements (a multiple of 4096)")
    args = p.parse_args(argv)
    rows = args.size // COLS
    # Values within int8 range after scaling, so astype's conversion is defined.
    x_np = (np.random.default_rng(0).standard_normal((rows, COLS)) * 0.6).astype(np.float32)
    all_threads = lucid.get_num_threads()
    cases = [(name, 1, nbytes, fn, setup) for name, nbytes, fn, setup in _numpy_cases(x_np)]
    for threads in sorted({1, all_threads}):
        cases += [(name, threads, nbytes, fn, setup) for name, nbytes, fn, setup in _lucid_cases(x_np)]
    best = [float("inf")] * len(cases)
    # Each case: its best of `repeat` consecutive runs (buffers reused, as in
    # a model: the steady state). The cheap baselines run both first and last
    # and keep their best, so a quiet spell anywhere in the run counts for them.
    cheap = [i for i, c in enumerate(cases) if c[0] in BASELINES]

    def block(i):
        name, threads, nbytes, fn, setup = cases[i]
        lucid.set_num_threads(threads)
        for rnd in range(args.repeat + 1):  # run 0 warms up
            state = setup() if setup else None
            start = time.perf_counter()
            fn(state) if setup else fn()
            if rnd:
                best[i] = min(best[i], time.perf_counter() - start)

    for i in range(len(cases)):
        block(i)
    for i in cheap:
        block(i)
    lucid.set_num_threads(all_threads)
    results = [{"op": name, "threads": threads, "seconds": t, "bytes": nbytes, "gb_per_s": nbytes / t / 1e9}
               for (name, threads, nbytes, _, _), t in zip(cases, best)]
    base = results[0]["gb_per_s"] * 1e9
    for r in results:
        r["vs_astype"] = r["bytes"] / r["seconds"] / base
    print(f"lucid quantization, CPU stream, {x_np.size:,} float32 elements, {platform.machine()} "
          f"{platform.system()}, {os.cpu_count()} cores, best of {args.repeat}")
    print(f"{'op':34s} {'threads':>7s} {'ms':>9s} {'GB/s':>8s} {'vs astype':>10s}")
    for r in results:
        print(f"{r['op']:34s} {r['threads']:7d} {r['seconds'] * 1e3:9.2f} {r['gb_per_s']:8.2f} {r['vs_astype']:10.2f}")
    index = {(c[0], c[1]): i for i, c in enumerate(cases)}

    def vs(op, baseline):
        """GB/s of `op` over GB/s of `baseline`, one thread."""
        i, b = index[(op, 1)], index[(baseline, 1)]
        return (cases[i][2] / best[i]) / (cases[b][2] / best[b])

    def rel(op, ref):
        return best[index[(op, 1)]] / best[index[(ref, 1)]]

    print("\ntargets (one thread):")
    summary = [("quantize / numpy astype int8 (GB/s, >= 0.9)", vs("quantize per-tensor", BASELINES[0])),
               ("dequantize / copyto int8->f32 (GB/s, >= 0.8)", vs("dequantize per-tensor", BASELINES[2])),
               ("fake_quantize fwd / copyto f32 (GB/s, >= 0.8)", vs("fake_quantize forward", BASELINES[1])),
               ("fake_quantize bwd / copyto f32 (GB/s, >= 0.8)", vs("fake_quantize backward", BASELINES[1]))]
    for op in ("quantize", "dequantize"):
        for mode in ("per-channel", "per-group"):
            summary.append((f"{op} {mode} / per-tensor (time, <= 1.1)", rel(f"{op} {mode}", f"{op} per-tensor")))
    for mode in ("per-channel", "per-group"):
        summary.append((f"fake_quantize {mode} / per-tensor (time, <= 1.1)",
                        rel(f"fake_quantize fwd {mode}", "fake_quantize forward")))
    for label, ratio in summary:
        print(f"  {label:50s} {ratio:6.2f}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"elements": int(x_np.size), "machine": platform.machine(), "results": results}, f, indent=1)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
