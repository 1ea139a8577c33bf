"""Forward latency of converted (static int8) models against lucid's own float model,
per stream, with PyTorch's float and converted models beside them when torch is
importable (same weights, same calibration batches).

    python bench/quantized_modules.py [--reps 20] [--json out.json]

Models: a 3-layer MLP (1024 wide, batch 64) and the digits CNN of
examples/train_digits.py (batch 64, untrained weights: speed only). One thread
everywhere (lucid's pool, BLAS, torch.set_num_threads(1)).

Then the non-conv ops of an int8 ResNet on the CPU stream, at ResNet-18's first stage
(16 x 64 x 56 x 56 quint8 codes): the 3x3 stride-2 max pool, QFunctional.add_relu (the
fused kernel, and the composite dequantize / add / relu / quantize it replaces) and
PyTorch's quantized max_pool2d / add_relu on the same codes; and the Python cost of
one quantized Conv2d call on a tiny input (the module against the bare Q.qconv2d call
it makes). ``--ops`` runs only this part.
"""
from __future__ import annotations

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")

import argparse  # noqa: E402
import importlib.util  # noqa: E402
import json  # noqa: E402
import pathlib  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402

import lucid  # noqa: E402
import lucid.quantization as Q  # noqa: E402
from lucid import nn  # noqa: E402

from _timing import import_torch  # noqa: E402

torch = import_torch()  # optional: this Python's, or $LUCID_TORCH_SITE's; else lucid's numbers alone
if torch is not None:
    import torch.ao.quantization as tq  # noqa: E402


def median_ms(fn, reps, clock=time.perf_counter):
    for _ in range(3):
        fn()
    times = []
    for _ in range(reps):
        t0 = clock()
        out = fn()
        if out is not None:
            lucid.eval(out)
        times.append(clock() - t0)
    return 1000 * float(np.median(times))


def mlp():
    return nn.Sequential(nn.Linear(1024, 1024), nn.ReLU(), nn.Linear(1024, 1024), nn.ReLU(), nn.Linear(1024, 1024))


def digits():
    path = pathlib.Path(__file__).resolve().parents[1] / "examples" / "train_digits.py"
    spec = importlib.util.spec_from_file_location("train_digits_example", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod.make_model()


CASES = {"mlp-1024 b64": (mlp, (64, 1024), []), "digits-cnn b64": (digits, (64, 1, 8, 8), [["0", "1", "2"], ["4", "5"]])}


def lucid_models(build, shape, fuse):
    lucid.manual_seed(0)
    float_model = Q.QuantWrapper(build()).eval()
    fused = Q.fuse_modules(float_model, [[f"module.{n}" for n in group] for group in fuse]) if fuse else float_model
    fused.qconfig = Q.get_default_qconfig("x86")
    prepared = Q.prepare(fused)
    calib = [np.random.RandomState(i).randn(*shape).astype(np.float32) for i in range(2)]
    for b in calib:
        prepared(lucid.tensor(b))
    return float_model, Q.convert(prepared), calib


def torch_models(float_model, shape, fuse, calib):
    class Wrap(torch.nn.Module):
        def __init__(self, inner):
            super().__init__()
            self.quant, self.module, self.dequant = tq.QuantStub(), inner, tq.DeQuantStub()

        def forward(self, x):
            return self.dequant(self.module(self.quant(x)))

    inner = float_model.module
    layers = []
    for m in inner:
        name = type(m).__name__
        if name == "Linear":
            t = torch.nn.Linear(m.in_features, m.out_features)
        elif name == "Conv2d":
            t = torch.nn.Conv2d(m.in_channels, m.out_channels, m.kernel_size, padding=m.padding)
        elif name == "BatchNorm2d":
            t = torch.nn.BatchNorm2d(m.num_features)
        else:
            t = {"ReLU": torch.nn.ReLU, "MaxPool2d": lambda: torch.nn.MaxPool2d(2), "Flatten": torch.nn.Flatten}[name]()
        with torch.no_grad():
            for k, v in m.state_dict().items():
                getattr(t, k).copy_(torch.tensor(v.numpy()))
        layers.append(t)
    tf = Wrap(torch.nn.Sequential(*layers)).eval()
    fused = tq.fuse_modules(tf, [[f"module.{n}" for n in group] for group in fuse]) if fuse else tf
    fused.qconfig = tq.get_default_qconfig("x86")
    prepared = tq.prepare(fused)
    for b in calib:
        prepared(torch.tensor(b))
    return tf, tq.convert(prepared)


def op_rows(reps):
    """(name, lucid ms, torch ms or None) for the non-conv ops and the per-call overhead;
    this thread's CPU time (one thread, CPU stream), so a shared machine's other
    processes do not count."""
    from lucid.nn import quantized as nnq

    def median_ms(fn, reps):
        return _median_ms(fn, reps, time.thread_time)

    rng = np.random.default_rng(0)
    shape = (16, 64, 56, 56)
    a_np, b_np = (rng.integers(0, 256, shape).astype(np.uint8) for _ in range(2))
    a = Q.QTensor(lucid.tensor(a_np), 0.05, 60, Q.quint8)
    b = Q.QTensor(lucid.tensor(b_np), 0.03, 128, Q.quint8)
    qf = nnq.QFunctional(0.06, 0)
    pool = nnq.MaxPool2d(3, 2, 1)

    def composite():
        return Q.quantize_per_tensor(nn.functional.relu(a.dequantize() + b.dequantize()), 0.06, 0, Q.quint8).int_repr()

    rows = [("max_pool2d 3x3/2 pad 1", median_ms(lambda: pool(a).int_repr(), reps)),
            ("add_relu (fused)", median_ms(lambda: qf.add_relu(a, b).int_repr(), reps)),
            ("add_relu (composite)", median_ms(composite, reps))]
    torch_ms = [None] * 3
    if torch is not None:
        ta = torch._make_per_tensor_quantized_tensor(torch.from_numpy(a_np), 0.05, 60)
        tb = torch._make_per_tensor_quantized_tensor(torch.from_numpy(b_np), 0.03, 128)
        tpool = torch.nn.MaxPool2d(3, 2, 1)
        torch_ms = [median_ms(lambda: (tpool(ta), None)[1], reps),
                    median_ms(lambda: (torch.ops.quantized.add_relu(ta, tb, 0.06, 0), None)[1], reps), None]
    out = [(n, ms, t) for (n, ms), t in zip(rows, torch_ms)]
    # Per-call Python cost: a 1x8x4x4 input, so the kernel itself is a few microseconds.
    conv = nnq.Conv2d(8, 8, 3, padding=1)
    x = Q.QTensor(lucid.tensor(rng.integers(0, 256, (1, 8, 4, 4)).astype(np.uint8)), 0.05, 3, Q.quint8)
    w = conv._packed_weight()

    def bare():
        return Q.qconv2d(x.int_repr(), x.q_scale(), x.q_zero_point(), w, conv.weight_scale, conv.weight_zero_point,
                         bias=conv.bias_float, stride=conv.stride, padding=conv.padding, dilation=conv.dilation,
                         groups=1, out_scale=conv.scale, out_zp=conv.zero_point, out_qdtype=conv.out_qdtype)

    out.append(("Conv2d module call, 1x8x4x4", median_ms(lambda: conv(x).int_repr(), reps * 10), None))
    out.append(("  its bare Q.qconv2d call", median_ms(bare, reps * 10), None))
    return out


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=20)
    parser.add_argument("--json")
    parser.add_argument("--ops", action="store_true", help="only the per-op rows")
    args = parser.parse_args()
    lucid.set_num_threads(1)
    if torch is not None:
        torch.set_num_threads(1)
        torch.backends.quantized.engine = "x86"
    results = []
    if args.ops:
        print(f"{'op (CPU stream, one thread)':32s} {'lucid ms':>9s} {'torch ms':>9s} {'torch/lucid':>11s}")
        for name, ms, t in op_rows(args.reps):
            extra = f" {t:9.3f} {t / ms:11.2f}" if t is not None else ""
            print(f"{name:32s} {ms:9.3f}{extra}", flush=True)
            results.append({"op": name, "lucid_ms": ms, "torch_ms": t})
        if args.json:
            with open(args.json, "w") as f:
                json.dump(results, f, indent=2)
        return
    print(f"{'model':16s} {'stream':6s} {'float ms':>9s} {'int8 ms':>9s} {'int8/float':>10s}"
          + ("  torch float ms  torch int8 ms" if torch is not None else ""))
    for name, (build, shape, fuse) in CASES.items():
        fm, qm, calib = lucid_models(build, shape, fuse)
        x_np = np.random.RandomState(9).randn(*shape).astype(np.float32)
        tms = None
        if torch is not None:
            tf, tqm = torch_models(fm, shape, fuse, calib)
            xt = torch.tensor(x_np)
            with torch.no_grad():
                tms = (median_ms(lambda: (tf(xt), None)[1], args.reps), median_ms(lambda: (tqm(xt), None)[1], args.reps))
        for device in ("cpu", "gpu"):
            x = lucid.tensor(x_np, device=device)
            fm.to(device)
            qm.to(device)
            with lucid.no_grad():
                f_ms = median_ms(lambda: fm(x), args.reps)
                q_ms = median_ms(lambda: qm(x), args.reps)
            row = {"model": name, "stream": device, "float_ms": f_ms, "int8_ms": q_ms}
            line = f"{name:16s} {device:6s} {f_ms:9.2f} {q_ms:9.2f} {q_ms / f_ms:10.2f}"
            if tms is not None and device == "cpu":
                row.update(torch_float_ms=tms[0], torch_int8_ms=tms[1])
                line += f"  {tms[0]:14.2f}  {tms[1]:13.2f}"
            results.append(row)
            print(line, flush=True)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=2)


_median_ms = median_ms

if __name__ == "__main__":
    main()
