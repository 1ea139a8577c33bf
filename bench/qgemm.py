"""int8 GEMM: lucid's Q.qmatmul (u8 x s8 -> quint8, per-channel weights, bias,
requantized) against lucid's fp32 matmul and PyTorch's quantized Linear
(torch.ao.nn.quantized.Linear on fbgemm / x86, prepacked weights), one thread
and all threads, ratios from the same run. Prints the CPU model and flags.

GOP/s counts 2*M*N*K. Both int8 sides use prepacked weights (lucid:
Q.prepack_weight, as a quantized Linear would hold them; PyTorch: its
Linear's packed params) and quantized uint8 activations in, quint8 out. The
C++ bench (lucid_kernel_tests) shows the kernels alone.

PyTorch may live in another environment without lucid. Then either point
$LUCID_TORCH_SITE at its site-packages (a plain run then measures all three,
shape by shape), or run
    <python with torch> bench/qgemm.py --torch-only --json torch.json
    python bench/qgemm.py --merge torch.json
(the second prints lucid's figures next to PyTorch's, from another moment).

Usage: python bench/qgemm.py [--quick] [--7bit] [--threads N] [--json PATH] [--torch-only] [--merge PATH]
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import sys

import numpy as np

os.environ.setdefault("LUCID_MLX_DEVICE", "cpu")

from _timing import import_torch, seconds  # noqa: E402

MS = [1, 16, 64, 256, 1024]
NKS = [256, 1024, 4096]
QUICK_MS = [1, 64, 256]
QUICK_NKS = [256, 1024]
SX, ZX, SY, ZY = 0.02, 128, 0.5, 128


def cpu_info():
    model, flags = platform.processor() or platform.machine(), []
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name") and model in ("", platform.machine(), platform.processor()):
                    model = line.split(":", 1)[1].strip()
                if line.startswith("flags"):
                    flags = line.split(":", 1)[1].split()
                    break
    except OSError:
        pass
    keep = [f for f in flags if f in ("avx2", "fma", "avx_vnni", "amx_tile", "amx_int8", "asimddp", "i8mm")
            or f.startswith("avx512")]
    return model, keep


XMAX = 256  # activation codes drawn from [0, XMAX); --7bit sets 128


def data(m, n, k):
    rng = np.random.default_rng(m * 7 + n * 3 + k)
    x = rng.integers(0, XMAX, (m, k)).astype(np.uint8)
    w = rng.integers(-127, 128, (n, k)).astype(np.int8)
    sw = rng.uniform(0.001, 0.01, n).astype(np.float32)
    b = rng.standard_normal(n).astype(np.float32)
    return x, w, sw, b


def torch_cases(shapes, threads, budget):
    import torch
    import torch.ao.nn.quantized as nnq

    engines = torch.backends.quantized.supported_engines
    torch.backends.quantized.engine = "x86" if "x86" in engines else "fbgemm"
    out = {}
    for t in threads:
        torch.set_num_threads(t)
        for m, n, k in shapes:
            x, w, sw, b = data(m, n, k)
            lin = nnq.Linear(k, n, dtype=torch.qint8)
            qw = torch.quantize_per_channel(torch.from_numpy((w.astype(np.float32) * sw[:, None])),
                                            torch.from_numpy(sw.astype(np.float64)), torch.zeros(n, dtype=torch.long),
                                            0, torch.qint8)
            lin.set_weight_bias(qw, torch.from_numpy(b))
            lin.scale, lin.zero_point = SY, ZY
            xq = torch.quantize_per_tensor(torch.from_numpy((x.astype(np.float32) - ZX) * SX), SX, ZX, torch.quint8)
            out[f"{m}x{n}x{k}/t{t}"] = seconds(lambda: lin(xq), budget, t)
    return {"torch": out, "torch_version": torch.__version__, "torch_engine": torch.backends.quantized.engine}


def lucid_cases(shapes, threads, budget):
    import lucid
    import lucid.quantization as Q

    int8, fp32 = {}, {}
    saved = lucid.get_num_threads()
    for t in threads:
        lucid.set_num_threads(t)
        for m, n, k in shapes:
            x, w, sw, b = data(m, n, k)
            xq, swt, bt = lucid.tensor(x), lucid.tensor(sw), lucid.tensor(b)
            wq = Q.prepack_weight(lucid.tensor(w))
            key = f"{m}x{n}x{k}/t{t}"
            int8[key] = seconds(lambda: Q.qmatmul(xq, SX, ZX, wq, swt, 0, bias=bt, out_scale=SY, out_zp=ZY), budget, t)
            xf = lucid.tensor((x.astype(np.float32) - ZX) * SX)
            wt = lucid.tensor(np.ascontiguousarray((w.astype(np.float32) * sw[:, None]).T))
            fp32[key] = seconds(lambda: xf @ wt, budget, t)
    lucid.set_num_threads(saved)
    return {"lucid_int8": int8, "lucid_fp32": fp32, "engine": lucid.backends.quantized.engine,
            "engines_available": lucid.backends.quantized.available}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="fewer shapes (M in 1,64,256; N=K in 256,1024)")
    ap.add_argument("--json", help="write the figures here")
    ap.add_argument("--torch-only", action="store_true", help="time only PyTorch (for an env without lucid)")
    ap.add_argument("--merge", help="PyTorch figures from a --torch-only run")
    ap.add_argument("--threads", type=int, default=0, help="the 'all threads' count (default: all cores, at most 4)")
    ap.add_argument("--7bit", dest="seven", action="store_true",
                    help="activation codes in [0, 127], as reduce_range=True produces (lucid then uses its "
                         "vpmaddubsw kernel on AVX2; PyTorch's speed does not depend on the values)")
    args = ap.parse_args()
    global XMAX
    XMAX = 128 if args.seven else 256
    ms, nks = (QUICK_MS, QUICK_NKS) if args.quick else (MS, NKS)
    shapes = [(m, nk, nk) for m in ms for nk in nks]  # N = K: the grid along its diagonal
    all_threads = args.threads or min(4, os.cpu_count() or 1)
    threads = sorted({1, all_threads})
    budget = 0.15 if args.quick else 0.3
    model, flags = cpu_info()
    res = {"cpu": model, "flags": flags, "threads": threads, "activations": f"[0, {XMAX - 1}]"}

    if args.torch_only:
        res.update(torch_cases(shapes, threads, budget))
    elif args.merge:
        res.update(lucid_cases(shapes, threads, budget))
        with open(args.merge) as f:
            res.update({k: v for k, v in json.load(f).items() if k.startswith("torch")})
    elif import_torch() is None:
        res.update(lucid_cases(shapes, threads, budget))
        print("(torch not importable here: set $LUCID_TORCH_SITE, or run its part with --torch-only and pass --merge)")
    else:
        # Both here: shape by shape, lucid then PyTorch, so each ratio comes from
        # the same moment of a shared machine.
        for t in threads:
            for shape in shapes:
                for part in (lucid_cases([shape], [t], budget), torch_cases([shape], [t], budget)):
                    for name, value in part.items():
                        if isinstance(value, dict):
                            res.setdefault(name, {}).update(value)
                        else:
                            res[name] = value

    print(f"CPU: {model}\nflags: {' '.join(flags)}\nactivation codes in [0, {XMAX - 1}]")
    if "engine" in res:
        print(f"lucid engine: {res['engine']} (available: {', '.join(res['engines_available'])})")
    if "torch_version" in res:
        print(f"torch {res['torch_version']}, quantized engine {res['torch_engine']}")
    hdr = f"{'M':>5} {'N=K':>5} {'thr':>3} | {'int8 GOP/s':>10} {'fp32 GOP/s':>10} {'torch GOP/s':>11} | " \
          f"{'int8/fp32':>9} {'int8/torch':>10}"
    print(hdr + "\n" + "-" * len(hdr))
    for t in threads:
        for m, n, k in shapes:
            key = f"{m}x{n}x{k}/t{t}"
            ops = 2.0 * m * n * k / 1e9
            li, lf, tq = (res.get(s, {}).get(key) for s in ("lucid_int8", "lucid_fp32", "torch"))
            g = lambda s: f"{ops / s:10.1f}" if s else f"{'-':>10}"  # noqa: E731
            r = lambda a, b: f"{b / a:9.2f}x" if a and b else f"{'-':>10}"  # noqa: E731
            print(f"{m:>5} {n:>5} {t:>3} | {g(li)} {g(lf)} {g(tq):>11} | {r(li, lf)} {r(li, tq):>10}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(res, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
