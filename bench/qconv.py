"""Quantized 2-D convolution: lucid's Q.qconv2d (uint8 x int8 -> quint8,
per-channel weights, bias, requantized) against PyTorch's quantized Conv2d
(torch.ao.nn.quantized.Conv2d on fbgemm / x86, prepacked weights), both on
NCHW quint8 input, one thread and all threads, ratios from the same run.

Shapes: the digits CNN's first layer (1 -> 16 channels, 3x3, 28x28, padding
1) and a ResNet basic block's convolution (64 -> 64, 3x3, 56x56, padding 1),
each at batch 1 and 8, and the 3x3 convolutions of ResNet-18's four stages at
a 112 x 112 input and batch 16 (64 channels at 28x28 to 512 at 4x4; not with
--quick). GOP/s counts 2 * N * O * (C * kh * kw) * oh * ow. Both sides' weights
are packed once, before timing (lucid: Q.prepack_conv_weight, as its converted
models hold them; PyTorch: the module's prepacked weight).

PyTorch may live in another environment without lucid. Then either point
$LUCID_TORCH_SITE at its site-packages (a plain run then times both, interleaved),
or run
    <python with torch> bench/qconv.py --torch-only --json torch.json
    python bench/qconv.py --merge torch.json

Usage: python bench/qconv.py [--quick] [--7bit] [--threads N] [--json PATH] [--torch-only] [--merge PATH]
"""
from __future__ import annotations

import argparse
import json
import os
import sys

import numpy as np

os.environ.setdefault("LUCID_MLX_DEVICE", "cpu")

from _timing import import_torch, seconds  # noqa: E402
from qgemm import cpu_info  # noqa: E402

# (name, batch, C, O, H = W, k, padding)
SHAPES = [("digits", 1, 1, 16, 28, 3, 1), ("digits", 8, 1, 16, 28, 3, 1),
          ("resnet", 1, 64, 64, 56, 3, 1), ("resnet", 8, 64, 64, 56, 3, 1),
          ("r18-112", 16, 64, 64, 28, 3, 1), ("r18-112", 16, 128, 128, 14, 3, 1),
          ("r18-112", 16, 256, 256, 7, 3, 1), ("r18-112", 16, 512, 512, 4, 3, 1)]
QUICK = [s for s in SHAPES if s[0] == "digits" or (s[0] == "resnet" and s[1] == 1)]
SX, ZX, SY, ZY = 0.02, 128, 0.5, 128
XMAX = 256  # activation codes drawn from [0, XMAX); --7bit sets 128 (and ZX 64)


def key(shape, t):
    name, n, c, o, h, k, p = shape
    return f"{name} b{n} {c}->{o} {k}x{k} {h}x{h}/t{t}"


def gop(shape):
    _, n, c, o, h, k, p = shape
    oh = h + 2 * p - k + 1
    return 2.0 * n * o * c * k * k * oh * oh / 1e9


def data(shape):
    _, n, c, o, h, k, _ = shape
    rng = np.random.default_rng(n * 7 + c * 3 + o + h)
    x = rng.integers(0, XMAX, (n, c, h, h)).astype(np.uint8)
    w = rng.integers(-127, 128, (o, c, k, k)).astype(np.int8)
    sw = rng.uniform(0.001, 0.01, o).astype(np.float32)
    b = rng.standard_normal(o).astype(np.float32)
    return x, w, sw, b


def torch_conv(torch, shape):
    import torch.ao.nn.quantized as nnq
    _, n, c, o, h, k, p = shape
    x, w, sw, b = data(shape)
    conv = nnq.Conv2d(c, o, k, padding=p)
    qw = torch.quantize_per_channel(torch.from_numpy(w.astype(np.float32) * sw[:, None, None, None]),
                                    torch.from_numpy(sw.astype(np.float64)), torch.zeros(o, dtype=torch.long), 0,
                                    torch.qint8)
    conv.set_weight_bias(qw, torch.from_numpy(b))
    conv.scale, conv.zero_point = SY, ZY
    xq = torch.quantize_per_tensor(torch.from_numpy((x.astype(np.float32) - ZX) * SX), SX, ZX, torch.quint8)
    return lambda: conv(xq)


def lucid_conv(shape):
    import lucid
    import lucid.quantization as Q
    _, n, c, o, h, k, p = shape
    x, w, sw, b = data(shape)
    xq, swt, bt = lucid.tensor(x), lucid.tensor(sw), lucid.tensor(b)
    wq = Q.prepack_conv_weight(lucid.tensor(w))
    return lambda: Q.qconv2d(xq, SX, ZX, wq, swt, 0, bias=bt, padding=p, out_scale=SY, out_zp=ZY)


def run(shapes, threads, budget, sides, torch):
    """sides: which of "lucid", "torch" to time; both: interleaved per shape."""
    out = {s: {} for s in sides}
    if "torch" in sides:
        engines = torch.backends.quantized.supported_engines
        torch.backends.quantized.engine = "x86" if "x86" in engines else "fbgemm"
    for t in threads:
        if "lucid" in sides:
            import lucid
            lucid.set_num_threads(t)
        if "torch" in sides:
            torch.set_num_threads(t)
        for shape in shapes:
            fns = {"lucid": lucid_conv(shape) if "lucid" in sides else None,
                   "torch": torch_conv(torch, shape) if "torch" in sides else None}
            for side in sides:
                out[side][key(shape, t)] = seconds(fns[side], budget, t)
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="batch 1 only for the ResNet shape")
    ap.add_argument("--json", help="write the figures here")
    ap.add_argument("--torch-only", action="store_true", help="time only PyTorch (for an env without lucid)")
    ap.add_argument("--merge", help="PyTorch figures from a --torch-only run")
    ap.add_argument("--threads", type=int, default=0, help="the 'all threads' count (default: all cores, at most 4)")
    ap.add_argument("--7bit", dest="seven", action="store_true", help="activation codes in [0, 127]")
    args = ap.parse_args()
    global XMAX, ZX
    XMAX = 128 if args.seven else 256
    ZX = 64 if args.seven else 128  # the zero point is the padding code: inside [0, 127] for 7-bit codes
    shapes = QUICK if args.quick else SHAPES
    all_threads = args.threads or min(4, os.cpu_count() or 1)
    threads = sorted({1, all_threads})
    budget = 0.15 if args.quick else 0.3
    model, flags = cpu_info()
    res = {"cpu": model, "flags": flags, "threads": threads, "activations": f"[0, {XMAX - 1}]"}

    if args.torch_only:
        import torch
        res.update(run(shapes, threads, budget, ["torch"], torch))
        res["torch_version"] = torch.__version__
    else:
        torch = None if args.merge else import_torch()
        res.update(run(shapes, threads, budget, ["lucid", "torch"] if torch is not None else ["lucid"], torch))
        if torch is not None:
            res["torch_version"] = torch.__version__
        elif args.merge:
            with open(args.merge) as f:
                res.update({k: v for k, v in json.load(f).items() if k.startswith("torch")})
        else:
            print("(torch not importable here: set $LUCID_TORCH_SITE, or run --torch-only and pass --merge)")

    print(f"CPU: {model}\nflags: {' '.join(flags)}\nactivation codes in [0, {XMAX - 1}]")
    if "torch_version" in res:
        print(f"torch {res['torch_version']}" + (" (merged from another run)" if args.merge else " (same run)"))
    hdr = f"{'shape':>30} {'thr':>3} | {'lucid GOP/s':>11} {'torch GOP/s':>11} | {'lucid/torch':>11}"
    print(hdr + "\n" + "-" * len(hdr))
    for t in threads:
        for shape in shapes:
            k = key(shape, t)
            li, tq = res.get("lucid", {}).get(k), res.get("torch", {}).get(k)
            g = lambda s: f"{gop(shape) / s:11.1f}" if s else f"{'-':>11}"  # noqa: E731
            r = f"{tq / li:10.2f}x" if li and tq else f"{'-':>11}"
            print(f"{k.split('/')[0]:>30} {t:>3} | {g(li)} {g(tq)} | {r}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(res, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
